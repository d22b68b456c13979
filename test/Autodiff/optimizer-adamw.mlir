// One AdamW step from zero moments at step 1 (bias-corrected).
// GRADCHECK-OPTIONS: optimizer=adamw lr=0.01 weight-decay=0.05
// RUN: %gradcheck %s | FileCheck %s
// CHECK: adamw step arg0: worst err/tol
// CHECK: adamw step arg1: worst err/tol
// CHECK: GRADCHECK PASS

func.func @model(%w: tensor<3x2xf32> {fbl.param}, %b: tensor<2xf32> {fbl.param}, %x: tensor<4x3xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y, %b : tensor<4x2xf32>, tensor<2xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %s = arith.addf %a, %c : f32
    %t = math.tanh %s : f32
    %r = arith.addf %acc, %t : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
