// LoRA-style training: only the adapter A (argument 1) is differentiated;
// the frozen base weight W gets no gradient and @lora_grad returns one.
// GRADCHECK-OPTIONS: wrt=1
// RUN: %gradcheck %s | FileCheck %s
// RUN: fbl-opt %s -fbl-autodiff="wrt=1" | FileCheck %s --check-prefix=IR
// CHECK: arg1: 8 elements
// CHECK-NOT: arg0:
// CHECK: GRADCHECK PASS
// IR: func.func @lora_grad({{.*}}) -> (tensor<f32>, tensor<4x2xf32>)

func.func @lora(%w: tensor<4x4xf32> {fbl.param}, %a: tensor<4x2xf32> {fbl.param},
                %bt: tensor<2x4xf32>, %x: tensor<3x4xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %base = linalg.matmul ins(%x, %w : tensor<3x4xf32>, tensor<4x4xf32>) outs(%z : tensor<3x4xf32>) -> tensor<3x4xf32>
  %e2 = tensor.empty() : tensor<3x2xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<3x2xf32>) -> tensor<3x2xf32>
  %xa = linalg.matmul ins(%x, %a : tensor<3x4xf32>, tensor<4x2xf32>) outs(%z2 : tensor<3x2xf32>) -> tensor<3x2xf32>
  %y = linalg.matmul ins(%xa, %bt : tensor<3x2xf32>, tensor<2x4xf32>) outs(%base : tensor<3x4xf32>) -> tensor<3x4xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
