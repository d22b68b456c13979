// GEMMs whose sizes are whole texels but not whole work-group tiles: on the
// H200 preset (64x64 tiles, 8- or 16-deep slices) the local-tiled kernel
// covers them with ragged last tiles and slices (at most an eighth more
// along each side). Forward and backward: the linear layer's NN product
// (124 x 252 x 188), its NT input gradient (124 x 188 x 252) and TN weight
// gradient (188 x 252 x 124), all three ragged in M, N and K; a GEMM
// accumulating into an input (C0 + A·B); and batched Q·Kᵀ over 60
// positions (60 x 60 x 44). Run by test/E2E/gemm-ragged.test against the
// oracle.

#mn = affine_map<(m, n, k) -> (m, n)>
func.func @gemm_ragged(%x: tensor<124x188xf32> {fbl.param}, %w: tensor<188x252xf32> {fbl.param},
                       %c0: tensor<124x252xf32> {fbl.param},
                       %q: tensor<2x60x44xf32> {fbl.param},
                       %k: tensor<2x60x44xf32> {fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  // y = c0 + x·w: C's init is read (a parameter, so its gradient flows).
  %y = linalg.matmul ins(%x, %w : tensor<124x188xf32>, tensor<188x252xf32>)
      outs(%c0 : tensor<124x252xf32>) -> tensor<124x252xf32>
  %e3 = tensor.empty() : tensor<2x60x60xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x60x60xf32>) -> tensor<2x60x60xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, kk) -> (b, m, kk)>,
                                            affine_map<(b, m, n, kk) -> (b, n, kk)>,
                                            affine_map<(b, m, n, kk) -> (b, m, n)>]
      ins(%q, %k : tensor<2x60x44xf32>, tensor<2x60x44xf32>)
      outs(%z3 : tensor<2x60x60xf32>) -> tensor<2x60x60xf32>
  %se = tensor.empty() : tensor<f32>
  %sz = linalg.fill ins(%zero : f32) outs(%se : tensor<f32>) -> tensor<f32>
  %l1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                        iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<124x252xf32>) outs(%sz : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> ()>],
                       iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%s : tensor<2x60x60xf32>) outs(%l1 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
