// RUN: fbl-opt %s -split-input-file -fbl-set-target=target=mali-g710 | FileCheck %s --check-prefix=PRESET
// RUN: fbl-opt %s -split-input-file -fbl-set-target=fallback=pocl-cpu | FileCheck %s --check-prefix=FALLBACK
// RUN: fbl-opt %s -split-input-file '-fbl-set-target=target={#fbl.target<"nvidia-h200", local_tiled_gemm = false>}' | FileCheck %s --check-prefix=ATTR
// RUN: fbl-opt %s -split-input-file -fbl-set-target | FileCheck %s --check-prefix=NONE

// A module without a target.
// PRESET-LABEL: module attributes {fbl.target = #fbl.target<"mali-g710">}
// FALLBACK-LABEL: module attributes {fbl.target = #fbl.target<"pocl-cpu">}
// ATTR: module attributes {fbl.target = #fbl.target<"nvidia-h200", max_image_width = 32768, {{.*}}, local_tiled_gemm = false>}
// NONE-NOT: fbl.target
// NONE-LABEL: func.func @bare
module {
  func.func @bare() {
    return
  }
}

// -----

// A module with its own target: target= replaces it, fallback= keeps it.
// PRESET-LABEL: module attributes {fbl.target = #fbl.target<"mali-g710">}
// FALLBACK-LABEL: module attributes {fbl.target = #fbl.target<"adreno-a740">}
// NONE-LABEL: module attributes {fbl.target = #fbl.target<"adreno-a740">}
module attributes {fbl.target = #fbl.target<"adreno-a740">} {
  func.func @own() {
    return
  }
}
