// The bundled example verifies against its target and keeps its views.
// RUN: fbl-opt %fbl_src_root/examples/attention_layouts.mlir -canonicalize | FileCheck %s
// RUN: fbl-translate --fbl-to-layout-json %fbl_src_root/examples/attention_layouts.mlir | FileCheck %s --check-prefix=REPORT

// CHECK-LABEL: func.func @attention_scores
// CHECK-COUNT-2: linalg.matmul
// CHECK: fbl.reshape_view
// CHECK: fbl.transpose_view
// CHECK: fbl.reshape_view
// CHECK: fbl.transpose_view
// CHECK: linalg.batch_matmul

// REPORT: "target": "adreno-a740"
// REPORT: "views": 4,
// REPORT: "over_target_limits": 0,
