// batch_matmul, plain and with a transposed operand.
// RUN: %gradcheck %s | FileCheck %s
// CHECK: GRADCHECK PASS

func.func @bmm_tiled(%q: tensor<2x8x12xf32> {fbl.param}, %k: tensor<2x16x12xf32> {fbl.param},
               %v: tensor<2x16x8xf32> {fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  // Q·Kᵀ through transposed-operand indexing maps.
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>,
                                            affine_map<(b, m, n, k) -> (b, n, k)>,
                                            affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<2x8x12xf32>, tensor<2x16x12xf32>) outs(%z : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %e2 = tensor.empty() : tensor<2x8x8xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o = linalg.batch_matmul ins(%s, %v : tensor<2x8x16xf32>, tensor<2x16x8xf32>) outs(%z2 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> ()>],
                       iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%o : tensor<2x8x8xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %t = math.tanh %x : f32
    %s2 = arith.addf %acc, %t : f32
    linalg.yield %s2 : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
