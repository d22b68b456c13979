// tensor.concat as upstream decomposes it: two trainable halves inserted into
// a tensor.empty, whose elements outside the slices are never read. The
// kernels must not read the unallocated destination (test/E2E/concat.test).
// RUN: %gradcheck %s | FileCheck %s
// CHECK: GRADCHECK PASS
// GRADCHECK-ARG: 0 uniform -1 1
// GRADCHECK-ARG: 1 uniform -1 1
// GRADCHECK-ARG: 2 uniform -2 2

func.func @concat(%a: tensor<3xf32> {fbl.param}, %b: tensor<2xf32> {fbl.param}, %w: tensor<5xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5xf32>
  %i0 = tensor.insert_slice %a into %e[0] [3] [1] : tensor<3xf32> into tensor<5xf32>
  %i1 = tensor.insert_slice %b into %i0[3] [2] [1] : tensor<2xf32> into tensor<5xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(n) -> (n)>, affine_map<(n) -> (n)>, affine_map<(n) -> ()>], iterator_types = ["reduction"]}
      ins(%i1, %w : tensor<5xf32>, tensor<5xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %t = math.tanh %p : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
