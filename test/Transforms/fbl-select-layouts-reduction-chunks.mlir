// RUN: fbl-opt %s --fbl-training-pipeline="policy=reuse-forward kernels=false" | FileCheck %s
// RUN: fbl-opt %s --fbl-training-pipeline="policy=explicit-transpose kernels=false" | FileCheck %s
// RUN: fbl-opt %s --fbl-training-pipeline="policy=fblayout kernels=false" | FileCheck %s

// fbl-split-reductions cuts the rows of a loss into chunks with a
// tensor.expand_shape (fbl.reduction_chunks): the shape of its kernel, not a
// reshape of the model. Every policy lays the chunks out as a view of the
// rows, so no baseline pays a copy for how fbl shapes a reduction.

// CHECK-LABEL: func.func @loss_grad
// CHECK-NOT:   fbl.relayout
// CHECK:       fbl.reshape_view
// CHECK-NOT:   fbl.relayout
// CHECK:       return
module attributes {fbl.target = #fbl.target<"nvidia-h200">} {
  func.func @loss(%x: tensor<128x2048xf32> {fbl.param}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                         iterator_types = ["reduction", "reduction"]}
        ins(%x : tensor<128x2048xf32>) outs(%init : tensor<f32>) {
    ^bb0(%v: f32, %acc: f32):
      %sq = arith.mulf %v, %v : f32
      %r = arith.addf %acc, %sq : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
