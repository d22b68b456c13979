// Sums into a scalar that fbl-split-reductions cuts as one row: a weighted
// sum of squares over a flattened vector of 4099 elements (a prime: on the
// H200 preset the cost model may cut it in ragged chunks, the last one
// masked), and a loss over 2052 x 4 whose 2052 partial sums are a row too
// (2052 = 2^2 x 3^3 x 19: whole-texel chunks of 108 or 76, or ragged ones),
// plus a softmax over 4 x 300 whose exp(x - max) its row sum and its
// normalization compute again (fbl-fuse-elementwise). Run by
// test/E2E/vector-sums.test against the oracle.

#id1 = affine_map<(i) -> (i)>
#all1 = affine_map<(i) -> ()>
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#all2 = affine_map<(i, j) -> ()>
func.func @vector_sums(%v: tensor<4099xf32> {fbl.param}, %w: tensor<4099xf32>,
                       %t: tensor<2052x4xf32> {fbl.param},
                       %s: tensor<4x300xf32> {fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -3.0e38 : f32
  %se = tensor.empty() : tensor<f32>
  %sz = linalg.fill ins(%zero : f32) outs(%se : tensor<f32>) -> tensor<f32>
  // sum_i w_i v_i^2
  %l1 = linalg.generic {indexing_maps = [#id1, #id1, #all1], iterator_types = ["reduction"]}
      ins(%v, %w : tensor<4099xf32>, tensor<4099xf32>) outs(%sz : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %m = arith.mulf %sq, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  // sum_ij t_ij^2 / 8
  %c8 = arith.constant 0.125 : f32
  %l2 = linalg.generic {indexing_maps = [#id2, #all2], iterator_types = ["reduction", "reduction"]}
      ins(%t : tensor<2052x4xf32>) outs(%l1 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %q = arith.mulf %sq, %c8 : f32
    %r = arith.addf %acc, %q : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  // softmax(s) weighted by position, summed
  %me = tensor.empty() : tensor<4xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%me : tensor<4xf32>) -> tensor<4xf32>
  %mx = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<4x300xf32>) outs(%mi : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %ee = tensor.empty() : tensor<4x300xf32>
  %ex = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s, %mx : tensor<4x300xf32>, tensor<4xf32>) outs(%ee : tensor<4x300xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<4x300xf32>
  %zi = linalg.fill ins(%zero : f32) outs(%me : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%ex : tensor<4x300xf32>) outs(%zi : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %l3 = linalg.generic {indexing_maps = [#id2, #row, #all2], iterator_types = ["reduction", "reduction"]}
      ins(%ex, %sum : tensor<4x300xf32>, tensor<4xf32>) outs(%l2 : tensor<f32>) {
  ^bb0(%a: f32, %z: f32, %acc: f32):
    %p = arith.divf %a, %z : f32
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    %pj = arith.mulf %p, %jf : f32
    %r = arith.addf %acc, %pj : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l3 : tensor<f32>
}
