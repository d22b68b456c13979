// A multi-head self-attention block (sequence 4, hidden 8, 2 heads of 4):
// projections, head split and merge as reshapes + transposes, scaled
// Q·Kᵀ with a transposed-operand batch_matmul, softmax, P·V, output
// projection and a residual. The forward model fbl trains:
//   fbl-opt examples/attention.mlir --fbl-autodiff

#bmk = affine_map<(b, m, n, k) -> (b, m, k)>
#bnk = affine_map<(b, m, n, k) -> (b, n, k)>
#bmn = affine_map<(b, m, n, k) -> (b, m, n)>
#id2 = affine_map<(i, j) -> (i, j)>
#id3 = affine_map<(b, i, j) -> (b, i, j)>
func.func @attention(%x: tensor<4x8xf32>,
                     %wq: tensor<8x8xf32> {fbl.param}, %wk: tensor<8x8xf32> {fbl.param},
                     %wv: tensor<8x8xf32> {fbl.param}, %wo: tensor<8x8xf32> {fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.5 : f32
  %inv = arith.constant 0.03125 : f32
  %pe = tensor.empty() : tensor<4x8xf32>
  %pz = linalg.fill ins(%zero : f32) outs(%pe : tensor<4x8xf32>) -> tensor<4x8xf32>
  %q = linalg.matmul ins(%x, %wq : tensor<4x8xf32>, tensor<8x8xf32>) outs(%pz : tensor<4x8xf32>) -> tensor<4x8xf32>
  %k = linalg.matmul ins(%x, %wk : tensor<4x8xf32>, tensor<8x8xf32>) outs(%pz : tensor<4x8xf32>) -> tensor<4x8xf32>
  %v = linalg.matmul ins(%x, %wv : tensor<4x8xf32>, tensor<8x8xf32>) outs(%pz : tensor<4x8xf32>) -> tensor<4x8xf32>
  // Head split: [S, H*D] -> [S, H, D] -> [H, S, D].
  %he = tensor.empty() : tensor<2x4x4xf32>
  %q3 = tensor.expand_shape %q [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  %qh = linalg.transpose ins(%q3 : tensor<4x2x4xf32>) outs(%he : tensor<2x4x4xf32>) permutation = [1, 0, 2]
  %k3 = tensor.expand_shape %k [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  %kh = linalg.transpose ins(%k3 : tensor<4x2x4xf32>) outs(%he : tensor<2x4x4xf32>) permutation = [1, 0, 2]
  %v3 = tensor.expand_shape %v [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  %vh = linalg.transpose ins(%v3 : tensor<4x2x4xf32>) outs(%he : tensor<2x4x4xf32>) permutation = [1, 0, 2]
  // Scores Q·Kᵀ / sqrt(D), softmax over keys.
  %sz = linalg.fill ins(%zero : f32) outs(%he : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = linalg.batch_matmul indexing_maps = [#bmk, #bnk, #bmn]
      ins(%qh, %kh : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%sz : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %ss = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x4x4xf32>) outs(%he : tensor<2x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %scale : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %p = linalg.softmax dimension(2) ins(%ss : tensor<2x4x4xf32>) outs(%he : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o = linalg.batch_matmul ins(%p, %vh : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%sz : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  // Head merge: [H, S, D] -> [S, H, D] -> [S, H*D].
  %me = tensor.empty() : tensor<4x2x4xf32>
  %om = linalg.transpose ins(%o : tensor<2x4x4xf32>) outs(%me : tensor<4x2x4xf32>) permutation = [1, 0, 2]
  %o2 = tensor.collapse_shape %om [[0], [1, 2]] : tensor<4x2x4xf32> into tensor<4x8xf32>
  %y = linalg.matmul ins(%o2, %wo : tensor<4x8xf32>, tensor<8x8xf32>) outs(%pz : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.add ins(%x, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%pe : tensor<4x8xf32>) -> tensor<4x8xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id2, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%r : tensor<4x8xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %w = arith.mulf %sq, %inv : f32
    %t = arith.addf %acc, %w : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  return %loss : tensor<f32>
}
