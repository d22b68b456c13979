// tm_tensor.attention as torch-mlir lowers aten.scaled_dot_product_attention
// (batch and head dims, an additive f32 mask), on a trainable path:
// fbl-autodiff decomposes it into batch matmuls and a row softmax before
// differentiating, so Q, K and V get gradients. Key and value rows (5)
// differ from query rows (3), and the value width (3) from the head dim
// (4), so a swapped operand changes the shapes or the numbers.
// RUN: %gradcheck %s | FileCheck %s
// CHECK: GRADCHECK PASS
// RUN: fbl-opt %s --fbl-autodiff | FileCheck %s --check-prefix=DECOMPOSED
// DECOMPOSED-LABEL: func.func @attention(
// DECOMPOSED-NOT: tm_tensor.attention
// DECOMPOSED: tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2], [3]] : tensor<2x2x3x4xf32> into tensor<4x3x4xf32>
// DECOMPOSED: linalg.batch_matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins({{.*}} : tensor<4x3x4xf32>, tensor<4x5x4xf32>)
// DECOMPOSED: arith.maximumf
// DECOMPOSED: math.exp
// DECOMPOSED: linalg.batch_matmul ins({{.*}} : tensor<4x3x5xf32>, tensor<4x5x3xf32>)
// DECOMPOSED: tensor.expand_shape {{.*}} output_shape [2, 2, 3, 3] : tensor<4x3x3xf32> into tensor<2x2x3x3xf32>
// GRADCHECK-ARG: 0 uniform -1 1
// GRADCHECK-ARG: 1 uniform -1 1
// GRADCHECK-ARG: 2 uniform -1 1
// GRADCHECK-ARG: 3 uniform -2 0
// GRADCHECK-ARG: 4 uniform -1 1

module {
  func.func @attention(%q: tensor<2x2x3x4xf32> {fbl.param},
                       %k: tensor<2x2x5x4xf32> {fbl.param},
                       %v: tensor<2x2x5x3xf32> {fbl.param},
                       %mask: tensor<2x2x3x5xf32>,
                       %w: tensor<2x2x3x3xf32>) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %init = tensor.empty() : tensor<2x2x3x3xf32>
    %o = tm_tensor.attention ins(%q, %k, %v, %mask : tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>, tensor<2x2x3x5xf32>) outs(%init : tensor<2x2x3x3xf32>) -> tensor<2x2x3x3xf32>
    %le = tensor.empty() : tensor<f32>
    %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
        ins(%o, %w : tensor<2x2x3x3xf32>, tensor<2x2x3x3xf32>) outs(%lz : tensor<f32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %t = math.tanh %m : f32
      %s = arith.addf %acc, %t : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
