// RMSNorm as importers write it: the mean of squares reduced with keepdim
// into tensor<2x3x1xf32> through (d0, d1, d2) -> (d0, d1, 0), then read back
// as a broadcast through the same map. fbl-autodiff folds the unit dim away
// first; the gradients must match finite differences of the original form.
// RUN: %gradcheck %s | FileCheck %s
// CHECK: GRADCHECK PASS
// GRADCHECK-ARG: 0 uniform -1 1
// GRADCHECK-ARG: 1 uniform 0.5 1.5
// GRADCHECK-ARG: 2 uniform -1 1

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#keep = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#ch = affine_map<(d0, d1, d2) -> (d2)>
func.func @rmsnorm(%x: tensor<2x3x8xf32> {fbl.param}, %g: tensor<8xf32> {fbl.param},
                   %t: tensor<2x3x8xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %inv_d = arith.constant 0.125 : f32
  %eps = arith.constant 1.0e-5 : f32
  // ms = mean(x * x, dim=-1, keepdim=True)
  %se = tensor.empty() : tensor<2x3x1xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%se : tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %ss = linalg.generic {indexing_maps = [#id, #keep], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x3x8xf32>) outs(%s0 : tensor<2x3x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<2x3x1xf32>
  // y = x * rsqrt(ms + eps) * g
  %ye = tensor.empty() : tensor<2x3x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #keep, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %ss, %g : tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<8xf32>) outs(%ye : tensor<2x3x8xf32>) {
  ^bb0(%a: f32, %s: f32, %w: f32, %o: f32):
    %m = arith.mulf %s, %inv_d : f32
    %me = arith.addf %m, %eps : f32
    %r = math.rsqrt %me : f32
    %n = arith.mulf %a, %r : f32
    %v = arith.mulf %n, %w : f32
    linalg.yield %v : f32
  } -> tensor<2x3x8xf32>
  // loss = sum((y - t)^2)
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #id, affine_map<(d0, d1, d2) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%y, %t : tensor<2x3x8xf32>, tensor<2x3x8xf32>) outs(%l0 : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %d = arith.subf %a, %b : f32
    %d2 = arith.mulf %d, %d : f32
    %r = arith.addf %acc, %d2 : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
