// The checker itself: a hand-written gradient that is off by a factor of two
// must fail (fbl-autodiff leaves a module that has its _grad alone).
// RUN: not %gradcheck %s | FileCheck %s
// CHECK: arg0: 3 elements, {{.*}} 3 out of tolerance
// CHECK: GRADCHECK FAIL

func.func @square(%x: tensor<3xf32> {fbl.param}) -> tensor<f32> {
  %le = tensor.empty() : tensor<f32>
  %zero = arith.constant 0.0 : f32
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%x : tensor<3xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// Wrong: d/dx sum(x^2) is 2x, not x.
func.func @square_grad(%x: tensor<3xf32> {fbl.param}) -> (tensor<f32>, tensor<3xf32>) {
  %l = func.call @square(%x) : (tensor<3xf32>) -> tensor<f32>
  return %l, %x : tensor<f32>, tensor<3xf32>
}
