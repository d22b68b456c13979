// Softmax as importers write it: max and sum reduced with keepdim into
// tensor<4x1xf32> through (d0, d1) -> (d0, 0) and read back as broadcasts
// through the same map, after a matmul, with a weighted-sum loss.
// fbl-autodiff folds the unit dim away first; the gradients must match
// finite differences of the original form.
// RUN: %gradcheck %s | FileCheck %s
// CHECK: GRADCHECK PASS
// GRADCHECK-ARG: 0 uniform -1 1
// GRADCHECK-ARG: 1 uniform -1 1
// GRADCHECK-ARG: 2 uniform 0 1

#id = affine_map<(d0, d1) -> (d0, d1)>
#keep = affine_map<(d0, d1) -> (d0, 0)>
func.func @softmax_keepdim(%x: tensor<4x6xf32>, %w: tensor<6x8xf32> {fbl.param},
                           %t: tensor<4x8xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %ze = tensor.empty() : tensor<4x8xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%ze : tensor<4x8xf32>) -> tensor<4x8xf32>
  %z = linalg.matmul ins(%x, %w : tensor<4x6xf32>, tensor<6x8xf32>) outs(%z0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  // m = max(z, dim=-1, keepdim=True)
  %ke = tensor.empty() : tensor<4x1xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%ke : tensor<4x1xf32>) -> tensor<4x1xf32>
  %m = linalg.generic {indexing_maps = [#id, #keep], iterator_types = ["parallel", "reduction"]}
      ins(%z : tensor<4x8xf32>) outs(%m0 : tensor<4x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4x1xf32>
  // e = exp(z - m)
  %e = linalg.generic {indexing_maps = [#id, #keep, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z, %m : tensor<4x8xf32>, tensor<4x1xf32>) outs(%ze : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  // s = sum(e, dim=-1, keepdim=True)
  %s0 = linalg.fill ins(%zero : f32) outs(%ke : tensor<4x1xf32>) -> tensor<4x1xf32>
  %s = linalg.generic {indexing_maps = [#id, #keep], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<4x8xf32>) outs(%s0 : tensor<4x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x1xf32>
  // p = e / s
  %p = linalg.generic {indexing_maps = [#id, #keep, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<4x8xf32>, tensor<4x1xf32>) outs(%ze : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  // loss = sum(p * t)
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #id, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%p, %t : tensor<4x8xf32>, tensor<4x8xf32>) outs(%l0 : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %pt = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %pt : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
