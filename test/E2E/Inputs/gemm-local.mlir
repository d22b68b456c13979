// GEMMs at work-group-tile sizes (M, N multiples of 64, K of 16): on a
// target with local_tiled_gemm their forward and backward contractions
// (NN, NT, TN, batched) stage tiles in local memory. Run by
// test/E2E/kernel-kinds.test against the oracle.

#nt_b = affine_map<(m, n, k) -> (n, k)>
#nn_a = affine_map<(m, n, k) -> (m, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @gemm_local(%x: tensor<64x48xf32>, %w: tensor<48x64xf32> {fbl.param},
                      %v: tensor<64x64xf32> {fbl.param},
                      %q: tensor<2x64x16xf32> {fbl.param},
                      %k: tensor<2x64x16xf32> {fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %y = linalg.matmul ins(%x, %w : tensor<64x48xf32>, tensor<48x64xf32>)
      outs(%z : tensor<64x64xf32>) -> tensor<64x64xf32>
  // y2 = y · (x·w)ᵀ-shaped product: an NT contraction with a parameter.
  %e2 = tensor.empty() : tensor<64x64xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %p = linalg.matmul indexing_maps = [#nn_a, #nt_b, affine_map<(m, n, k) -> (m, n)>]
      ins(%y, %v : tensor<64x64xf32>, tensor<64x64xf32>)
      outs(%z2 : tensor<64x64xf32>) -> tensor<64x64xf32>
  // Batched Q·Kᵀ.
  %e3 = tensor.empty() : tensor<2x64x64xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x64x64xf32>) -> tensor<2x64x64xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>,
                                            affine_map<(b, m, n, k) -> (b, n, k)>,
                                            affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<2x64x16xf32>, tensor<2x64x16xf32>)
      outs(%z3 : tensor<2x64x64xf32>) -> tensor<2x64x64xf32>
  %se = tensor.empty() : tensor<f32>
  %sz = linalg.fill ins(%zero : f32) outs(%se : tensor<f32>) -> tensor<f32>
  %l1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                        iterator_types = ["reduction", "reduction"]}
      ins(%p : tensor<64x64xf32>) outs(%sz : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> ()>],
                       iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%s : tensor<2x64x64xf32>) outs(%l1 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
