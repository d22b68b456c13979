// Matmul in all operand forms, plus an accumulating init.
// RUN: %gradcheck %s | FileCheck %s
// CHECK: GRADCHECK PASS

#nn_a = affine_map<(m, n, k) -> (m, k)>
#nt_b = affine_map<(m, n, k) -> (n, k)>
#tn_a = affine_map<(m, n, k) -> (k, m)>
#kn_b = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @matmuls(%a: tensor<3x4xf32> {fbl.param}, %b: tensor<4x5xf32> {fbl.param},
                   %bt: tensor<5x4xf32> {fbl.param}, %at: tensor<4x3xf32> {fbl.param},
                   %c: tensor<3x5xf32> {fbl.param}) -> tensor<f32> {
  %nn = linalg.matmul ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) outs(%c : tensor<3x5xf32>) -> tensor<3x5xf32>
  %nt = linalg.matmul indexing_maps = [#nn_a, #nt_b, #mn]
      ins(%a, %bt : tensor<3x4xf32>, tensor<5x4xf32>) outs(%nn : tensor<3x5xf32>) -> tensor<3x5xf32>
  %tn = linalg.matmul indexing_maps = [#tn_a, #kn_b, #mn]
      ins(%at, %b : tensor<4x3xf32>, tensor<4x5xf32>) outs(%nt : tensor<3x5xf32>) -> tensor<3x5xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%tn : tensor<3x5xf32>) outs(%z : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %sq = arith.mulf %x, %x : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
