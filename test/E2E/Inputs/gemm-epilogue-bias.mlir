// A linear layer with a bias and GELU, then one with a bias and a residual
// add, every size ragged (126 x 190 x 250: none a multiple of 4; the H200 preset takes its local-tiled kernel, with ragged last tiles): the first
// GEMM's kernel computes gelu(x·w1 + b1) and stores x·w1 too (the
// activation's backward reads it), the second computes y·w2 + b2 + x as its
// result's only reader; the biases are read one texel per 4x4 block. Run by
// test/E2E/gemm-epilogue-bias.test against the oracle.

#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
func.func @linear_bias_gelu(%x: tensor<126x190xf32> {fbl.param}, %w1: tensor<190x250xf32> {fbl.param},
                            %b1: tensor<250xf32> {fbl.param}, %w2: tensor<250x190xf32> {fbl.param},
                            %b2: tensor<190xf32> {fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %rsqrt2 = arith.constant 0.707106769 : f32
  %e1 = tensor.empty() : tensor<126x250xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<126x250xf32>) -> tensor<126x250xf32>
  %xw = linalg.matmul ins(%x, %w1 : tensor<126x190xf32>, tensor<190x250xf32>)
      outs(%z1 : tensor<126x250xf32>) -> tensor<126x250xf32>
  %h = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%xw, %b1 : tensor<126x250xf32>, tensor<250xf32>) outs(%e1 : tensor<126x250xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %p = arith.addf %v, %b : f32
    %s = arith.mulf %p, %rsqrt2 : f32
    %er = math.erf %s : f32
    %t = arith.addf %er, %one : f32
    %hp = arith.mulf %p, %half : f32
    %g = arith.mulf %hp, %t : f32
    linalg.yield %g : f32
  } -> tensor<126x250xf32>
  %e2 = tensor.empty() : tensor<126x190xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<126x190xf32>) -> tensor<126x190xf32>
  %hw = linalg.matmul ins(%h, %w2 : tensor<126x250xf32>, tensor<250x190xf32>)
      outs(%z2 : tensor<126x190xf32>) -> tensor<126x190xf32>
  %out = linalg.generic {indexing_maps = [#id, #col, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%hw, %b2, %x : tensor<126x190xf32>, tensor<190xf32>, tensor<126x190xf32>) outs(%e2 : tensor<126x190xf32>) {
  ^bb0(%v: f32, %b: f32, %r: f32, %o: f32):
    %p = arith.addf %v, %b : f32
    %q = arith.addf %p, %r : f32
    linalg.yield %q : f32
  } -> tensor<126x190xf32>
  %se = tensor.empty() : tensor<f32>
  %sz = linalg.fill ins(%zero : f32) outs(%se : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, affine_map<(i, j) -> ()>],
                          iterator_types = ["reduction", "reduction"]}
      ins(%out : tensor<126x190xf32>) outs(%sz : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %a = arith.addf %acc, %sq : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %loss : tensor<f32>
}
