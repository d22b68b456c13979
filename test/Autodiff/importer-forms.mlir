// The forms torch-mlir writes for an RMSNorm and a rotate-half, which
// fbl-autodiff rewrites before differentiating (lib/Autodiff/ImporterForms.cpp):
// `x.pow(2)` as math.fpowi, the epsilon as an f64 constant truncated in the
// body, and cat(-x2, x1) as tensor.concat on a trainable path.
// RUN: %gradcheck %s | FileCheck %s
// CHECK: GRADCHECK PASS

#id = affine_map<(n, d) -> (n, d)>
#row = affine_map<(n, d) -> (n, 0)>
#col = affine_map<(n, d) -> (d)>
func.func @norm_rotate(%x: tensor<3x6xf32> {fbl.param}, %w: tensor<6xf32> {fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %eps64 = arith.constant 1.0e-05 : f64
  %two = arith.constant 2 : i32
  %e1 = tensor.empty() : tensor<3x1xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<3x1xf32>) -> tensor<3x1xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<3x6xf32>) outs(%z1 : tensor<3x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = math.fpowi %a, %two : f32, i32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<3x1xf32>
  %e = tensor.empty() : tensor<3x6xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %ss, %w : tensor<3x6xf32>, tensor<3x1xf32>, tensor<6xf32>) outs(%e : tensor<3x6xf32>) {
  ^bb0(%a: f32, %s: f32, %g: f32, %o: f32):
    %inv = arith.constant 0.16666667 : f32
    %m = arith.mulf %s, %inv : f32
    %eps = arith.truncf %eps64 : f64 to f32
    %v = arith.addf %m, %eps : f32
    %r = math.rsqrt %v : f32
    %n = arith.mulf %a, %r : f32
    %t = arith.mulf %n, %g : f32
    linalg.yield %t : f32
  } -> tensor<3x6xf32>
  %x1 = tensor.extract_slice %y[0, 0] [3, 3] [1, 1] : tensor<3x6xf32> to tensor<3x3xf32>
  %x2 = tensor.extract_slice %y[0, 3] [3, 3] [1, 1] : tensor<3x6xf32> to tensor<3x3xf32>
  %eh = tensor.empty() : tensor<3x3xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x2 : tensor<3x3xf32>) outs(%eh : tensor<3x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<3x3xf32>
  %rot = tensor.concat dim(1) %neg, %x1 : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x6xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #id, affine_map<(n, d) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y, %rot : tensor<3x6xf32>, tensor<3x6xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.mulf %a, %a : f32
    %t = math.tanh %p : f32
    %u = arith.addf %t, %q : f32
    %s = arith.addf %acc, %u : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
