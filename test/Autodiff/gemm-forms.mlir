// Matmul NN/NT/TN with an accumulating init at sizes the register-tiled GEMM
// kernel takes (multiples of 4).
// RUN: %gradcheck %s | FileCheck %s
// CHECK: GRADCHECK PASS

#nn_a = affine_map<(m, n, k) -> (m, k)>
#nt_b = affine_map<(m, n, k) -> (n, k)>
#tn_a = affine_map<(m, n, k) -> (k, m)>
#kn_b = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @gemm_forms(%a: tensor<8x12xf32> {fbl.param}, %b: tensor<12x16xf32> {fbl.param},
                   %bt: tensor<16x12xf32> {fbl.param}, %at: tensor<12x8xf32> {fbl.param},
                   %c: tensor<8x16xf32> {fbl.param}) -> tensor<f32> {
  %nn = linalg.matmul ins(%a, %b : tensor<8x12xf32>, tensor<12x16xf32>) outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
  %nt = linalg.matmul indexing_maps = [#nn_a, #nt_b, #mn]
      ins(%a, %bt : tensor<8x12xf32>, tensor<16x12xf32>) outs(%nn : tensor<8x16xf32>) -> tensor<8x16xf32>
  %tn = linalg.matmul indexing_maps = [#tn_a, #kn_b, #mn]
      ins(%at, %b : tensor<12x8xf32>, tensor<12x16xf32>) outs(%nt : tensor<8x16xf32>) -> tensor<8x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%tn : tensor<8x16xf32>) outs(%z : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %sq = arith.mulf %x, %x : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
