// Convolution-style index maps in linalg.generic, as importers write them:
// a 1-D convolution x[i + k] w[k], a strided read x[2 i], a shifted read
// x[i + 1] and a dilated, strided window x[2 i + 2 k]. fbl-autodiff reads
// each window position as a strided slice (lib/Autodiff/
// DecomposeConvolution.cpp); the gradients of x and w against finite
// differences.
// RUN: %gradcheck %s | FileCheck %s
// CHECK: GRADCHECK PASS
// GRADCHECK-ARG: 0 uniform -1 1
// GRADCHECK-ARG: 1 uniform -1 1

func.func @windows(%x: tensor<9xf32> {fbl.param}, %w: tensor<3xf32> {fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e7 = tensor.empty() : tensor<7xf32>
  %z7 = linalg.fill ins(%zero : f32) outs(%e7 : tensor<7xf32>) -> tensor<7xf32>
  %conv = linalg.generic {indexing_maps = [affine_map<(i, k) -> (i + k)>, affine_map<(i, k) -> (k)>, affine_map<(i, k) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x, %w : tensor<9xf32>, tensor<3xf32>) outs(%z7 : tensor<7xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<7xf32>
  %e3 = tensor.empty() : tensor<3xf32>
  %strided = linalg.generic {indexing_maps = [affine_map<(i) -> (2 * i + 1)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x, %w : tensor<9xf32>, tensor<3xf32>) outs(%e3 : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<3xf32>
  %shifted = linalg.generic {indexing_maps = [affine_map<(i) -> (i + 1)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x, %conv : tensor<9xf32>, tensor<7xf32>) outs(%e7 : tensor<7xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %t = math.tanh %p : f32
    linalg.yield %t : f32
  } -> tensor<7xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  %dilated = linalg.generic {indexing_maps = [affine_map<(i, k) -> (2 * i + 2 * k)>, affine_map<(i, k) -> (k)>, affine_map<(i, k) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x, %w : tensor<9xf32>, tensor<3xf32>) outs(%z3 : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l1 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%shifted : tensor<7xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%strided, %dilated : tensor<3xf32>, tensor<3xf32>) outs(%l1 : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %t = math.tanh %m : f32
    %r = arith.addf %acc, %t : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
