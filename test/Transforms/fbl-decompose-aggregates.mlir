// RUN: fbl-opt %s -split-input-file -fbl-decompose-aggregates | FileCheck %s

// linalg.softmax becomes max, exp(x - max), sum and divide generics; the
// op producing the result keeps the softmax's fbl.phase.

// CHECK-DAG:   #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[ROW:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @softmax_rows(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<4x8xf32>
// CHECK:         %[[OUT:.+]] = tensor.empty() : tensor<4x8xf32>
// CHECK:         %[[RED:.+]] = tensor.empty() : tensor<4xf32>
// CHECK:         %[[NAN:.+]] = arith.constant 0xFFC00000 : f32
// CHECK:         %[[MAXINIT:.+]] = linalg.fill ins(%[[NAN]] : f32) outs(%[[RED]] : tensor<4xf32>)
// CHECK:         %[[MAX:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<4x8xf32>) outs(%[[MAXINIT]] : tensor<4xf32>) {
// CHECK:           arith.maxnumf
// CHECK:         %[[EXP:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[MAX]] : tensor<4x8xf32>, tensor<4xf32>) outs(%[[OUT]] : tensor<4x8xf32>) {
// CHECK:           %[[D:.+]] = arith.subf
// CHECK-NEXT:      math.exp %[[D]]
// CHECK:         %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[SUMINIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[RED]] : tensor<4xf32>)
// CHECK:         %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[EXP]] : tensor<4x8xf32>) outs(%[[SUMINIT]] : tensor<4xf32>) {
// CHECK:           arith.addf
// CHECK:         %[[R:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[EXP]], %[[SUM]] : tensor<4x8xf32>, tensor<4xf32>) outs(%[[OUT]] : tensor<4x8xf32>) attrs = {fbl.phase = "forward"} {
// CHECK:           arith.divf
// CHECK-NOT:     linalg.softmax
// CHECK:         return %[[R]]
func.func @softmax_rows(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.softmax {fbl.phase = "forward"} dimension(1) ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Along dim 0 the reductions run over rows; without fbl.phase none is set.

// CHECK-DAG:   #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[COL:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @softmax_cols(
// CHECK-NOT:     fbl.phase
// CHECK:         linalg.generic {indexing_maps = [#[[ID]], #[[COL]]], iterator_types = ["reduction", "parallel"]}
// CHECK:           arith.maxnumf
// CHECK:         linalg.generic {indexing_maps = [#[[ID]], #[[COL]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK:           math.exp
// CHECK:         linalg.generic {indexing_maps = [#[[ID]], #[[COL]]], iterator_types = ["reduction", "parallel"]}
// CHECK:           arith.addf
// CHECK:         linalg.generic {indexing_maps = [#[[ID]], #[[COL]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK:           arith.divf
// CHECK-NOT:     fbl.phase
// CHECK:         return
func.func @softmax_cols(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.softmax dimension(0) ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
