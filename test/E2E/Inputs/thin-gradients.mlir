// Weight gradients with few outputs summed over many rows, as LoRA's
// adapters have them: h = x . a (a: 780 x 8) and y = h . b (b: 8 x 772)
// over 2052 tokens. The gradients of a and b reduce 2052 rows into 6240
// and 6176 outputs: fbl-split-reductions splits them where the target's
// cost model finds two stages faster.
#id2 = affine_map<(i, j) -> (i, j)>
#row2 = affine_map<(i, j) -> (i)>
#id1 = affine_map<(i) -> (i)>
#all1 = affine_map<(i) -> ()>
func.func @model(%x: tensor<2052x780xf32>, %a: tensor<780x8xf32> {fbl.param},
                 %b: tensor<8x772xf32> {fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2052x8xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2052x8xf32>) -> tensor<2052x8xf32>
  %h = linalg.matmul ins(%x, %a : tensor<2052x780xf32>, tensor<780x8xf32>) outs(%f1 : tensor<2052x8xf32>) -> tensor<2052x8xf32>
  %e2 = tensor.empty() : tensor<2052x772xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2052x772xf32>) -> tensor<2052x772xf32>
  %y = linalg.matmul ins(%h, %b : tensor<2052x8xf32>, tensor<8x772xf32>) outs(%f2 : tensor<2052x772xf32>) -> tensor<2052x772xf32>
  // loss = sum_t (sum_j y[t, j])^2: row sums first, so that the oracle's
  // fp32 sums stay short (a sequential sum of 1.6M squares drifts by 1e-3).
  %er = tensor.empty() : tensor<2052xf32>
  %r0 = linalg.fill ins(%zero : f32) outs(%er : tensor<2052xf32>) -> tensor<2052xf32>
  %rows = linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<2052x772xf32>) outs(%r0 : tensor<2052xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<2052xf32>
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id1, #all1], iterator_types = ["reduction"]}
      ins(%rows : tensor<2052xf32>) outs(%l0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
