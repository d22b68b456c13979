// A two-layer MLP with GELU and softmax cross-entropy, written the way
// torch-mlir lowers it to linalg on tensors. The forward model fbl trains:
//   fbl-opt examples/mlp.mlir --fbl-autodiff
// GRADCHECK-ARG: 1 ints 0 5

#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
#row = affine_map<(i, j) -> (i)>
func.func @mlp(%x: tensor<4x6xf32>, %labels: tensor<4xi64>,
               %w1: tensor<6x8xf32> {fbl.param}, %b1: tensor<8xf32> {fbl.param},
               %w2: tensor<8x5xf32> {fbl.param}, %b2: tensor<5xf32> {fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %rsqrt2 = arith.constant 0.707106769 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %inv_n = arith.constant 0.25 : f32
  // h = x W1 + b1
  %he = tensor.empty() : tensor<4x8xf32>
  %hz = linalg.fill ins(%zero : f32) outs(%he : tensor<4x8xf32>) -> tensor<4x8xf32>
  %xw = linalg.matmul ins(%x, %w1 : tensor<4x6xf32>, tensor<6x8xf32>) outs(%hz : tensor<4x8xf32>) -> tensor<4x8xf32>
  // a = gelu(h + b1) = 0.5 h (1 + erf(h / sqrt 2))
  %a = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%xw, %b1 : tensor<4x8xf32>, tensor<8xf32>) outs(%he : tensor<4x8xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %h = arith.addf %v, %b : f32
    %s = arith.mulf %h, %rsqrt2 : f32
    %e = math.erf %s : f32
    %p = arith.addf %e, %one : f32
    %hh = arith.mulf %h, %half : f32
    %g = arith.mulf %hh, %p : f32
    linalg.yield %g : f32
  } -> tensor<4x8xf32>
  // z = a W2 + b2
  %ze = tensor.empty() : tensor<4x5xf32>
  %zz = linalg.fill ins(%zero : f32) outs(%ze : tensor<4x5xf32>) -> tensor<4x5xf32>
  %aw = linalg.matmul ins(%a, %w2 : tensor<4x8xf32>, tensor<8x5xf32>) outs(%zz : tensor<4x5xf32>) -> tensor<4x5xf32>
  %z = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%aw, %b2 : tensor<4x5xf32>, tensor<5xf32>) outs(%ze : tensor<4x5xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  // cross-entropy: mean_i(logsumexp(z_i) - z_i[label_i])
  %re = tensor.empty() : tensor<4xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%re : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%z : tensor<4x5xf32>) outs(%m0 : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%re : tensor<4xf32>) -> tensor<4xf32>
  %se = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%z, %m : tensor<4x5xf32>, tensor<4xf32>) outs(%s0 : tensor<4xf32>) {
  ^bb0(%v: f32, %mx: f32, %acc: f32):
    %d = arith.subf %v, %mx : f32
    %e = math.exp %d : f32
    %r = arith.addf %acc, %e : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %nll = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                         iterator_types = ["parallel"]}
      ins(%se, %m, %labels : tensor<4xf32>, tensor<4xf32>, tensor<4xi64>) outs(%re : tensor<4xf32>) {
  ^bb0(%s: f32, %mx: f32, %lab: i64, %o: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %lab : i64 to index
    %zl = tensor.extract %z[%i, %c] : tensor<4x5xf32>
    %l = math.log %s : f32
    %lse = arith.addf %l, %mx : f32
    %r = arith.subf %lse, %zl : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%nll : tensor<4xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %w = arith.mulf %v, %inv_n : f32
    %r = arith.addf %acc, %w : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %loss : tensor<f32>
}
