// A batch-1 classifier head as models emit it: logits [1, 1] from a
// matmul, reduced over the class dim into [1, 1] and collapsed to the
// scalar loss (tensor.collapse_shape with no groups), then expanded back.
// Unit dims to a scalar are a buffer view; the layouts around it are
// images, so the collapse moves through a one-element buffer.
#id2 = affine_map<(i, j) -> (i, j)>
#keep = affine_map<(i, j) -> (i, 0)>
func.func @model(%x: tensor<1x6xf32>, %w: tensor<6x3xf32> {fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3xf32>) -> tensor<1x3xf32>
  %y = linalg.matmul ins(%x, %w : tensor<1x6xf32>, tensor<6x3xf32>) outs(%f : tensor<1x3xf32>) -> tensor<1x3xf32>
  %es = tensor.empty() : tensor<1x1xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%es : tensor<1x1xf32>) -> tensor<1x1xf32>
  %s = linalg.generic {indexing_maps = [#id2, #keep], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<1x3xf32>) outs(%s0 : tensor<1x1xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<1x1xf32>
  %l = tensor.collapse_shape %s [] : tensor<1x1xf32> into tensor<f32>
  return %l : tensor<f32>
}
