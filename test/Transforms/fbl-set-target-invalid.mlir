// RUN: not fbl-opt %s -fbl-set-target=target=snapdragon 2>&1 | FileCheck %s --check-prefix=NAME
// RUN: not fbl-opt %s '-fbl-set-target=target={#fbl.target<"gpu", fp16 = true>}' 2>&1 | FileCheck %s --check-prefix=FIELDS
// RUN: not fbl-opt %s '-fbl-set-target=target={#fbl.buffer}' 2>&1 | FileCheck %s --check-prefix=KIND
// RUN: not fbl-opt %s -fbl-materialize-rtile 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not fbl-opt %s -fbl-lower-to-kernels 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not fbl-opt %s -fbl-training-report 2>&1 | FileCheck %s --check-prefix=MISSING

// NAME: error: unknown target 'snapdragon'; presets: adreno-a740, mali-g710, pocl-cpu, nvidia-h200
// FIELDS: error: invalid target attribute '#fbl.target<"gpu", fp16 = true>': target 'gpu' is not a preset
// KIND: error: invalid target attribute '#fbl.buffer'
// Passes that need a target and find none say how to set one (and do not
// crash on a module that has never seen the fbl dialect).
// MISSING: error: no target: set fbl.target on the module or pass target=NAME (adreno-a740, mali-g710, pocl-cpu, nvidia-h200)
module {
}
