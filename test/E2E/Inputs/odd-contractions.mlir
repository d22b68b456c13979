// Contractions whose sizes are not multiples of 4: an MLP with widths 70,
// 130, 97 and 66, and a batch matmul reading its B transposed over 101
// positions, as attention's scores over an odd sequence.
#id2 = affine_map<(i, j) -> (i, j)>
#all2 = affine_map<(i, j) -> ()>
#id3 = affine_map<(b, i, j) -> (b, i, j)>
#all3 = affine_map<(b, i, j) -> ()>
func.func @model(%x: tensor<70x130xf32>, %w1: tensor<130x97xf32> {fbl.param},
                 %w2: tensor<97x66xf32> {fbl.param},
                 %q: tensor<2x101x32xf32> {fbl.param},
                 %k: tensor<2x101x32xf32> {fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<70x97xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<70x97xf32>) -> tensor<70x97xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<70x130xf32>, tensor<130x97xf32>) outs(%f1 : tensor<70x97xf32>) -> tensor<70x97xf32>
  %g = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<70x97xf32>) outs(%e1 : tensor<70x97xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.tanh %a : f32
    linalg.yield %t : f32
  } -> tensor<70x97xf32>
  %e2 = tensor.empty() : tensor<70x66xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<70x66xf32>) -> tensor<70x66xf32>
  %y = linalg.matmul ins(%g, %w2 : tensor<70x97xf32>, tensor<97x66xf32>) outs(%f2 : tensor<70x66xf32>) -> tensor<70x66xf32>
  %e3 = tensor.empty() : tensor<2x101x101xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x101x101xf32>) -> tensor<2x101x101xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, kk) -> (b, m, kk)>, affine_map<(b, m, n, kk) -> (b, n, kk)>, affine_map<(b, m, n, kk) -> (b, m, n)>]
      ins(%q, %k : tensor<2x101x32xf32>, tensor<2x101x32xf32>) outs(%f3 : tensor<2x101x101xf32>) -> tensor<2x101x101xf32>
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l1 = linalg.generic {indexing_maps = [#id2, #all2], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<70x66xf32>) outs(%l0 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id3, #all3], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%s : tensor<2x101x101xf32>) outs(%l1 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = math.tanh %a : f32
    %r = arith.addf %acc, %t : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
