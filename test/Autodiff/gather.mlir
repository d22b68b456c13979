// Embedding lookups as torch-mlir emits them: a gather from a trainable
// table (scatter-add gradient) and from a frozen table (no gradient), with
// integer index math and a cf.assert the gradient leaves alone.
// GRADCHECK-ARG: 2 ints 0 6
// RUN: %gradcheck %s | FileCheck %s
// CHECK: GRADCHECK PASS

#id = affine_map<(n, d) -> (n, d)>
#tok = affine_map<(n, d) -> (n)>
func.func @embed(%table: tensor<6x4xf32> {fbl.param}, %frozen: tensor<6x4xf32>,
                 %ids: tensor<5xi64>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %first = tensor.extract %ids[%c0] : tensor<5xi64>
  %c6 = arith.constant 6 : i64
  %ok = arith.cmpi slt, %first, %c6 : i64
  cf.assert %ok, "token id out of range"
  %e = tensor.empty() : tensor<5x4xf32>
  %emb = linalg.generic {indexing_maps = [#tok, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<5xi64>) outs(%e : tensor<5x4xf32>) {
  ^bb0(%id: i64, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 1 : index
    %v = tensor.extract %table[%row, %col] : tensor<6x4xf32>
    %w = tensor.extract %frozen[%row, %col] : tensor<6x4xf32>
    %p = arith.mulf %v, %w : f32
    %s = arith.addf %p, %v : f32
    linalg.yield %s : f32
  } -> tensor<5x4xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, affine_map<(n, d) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%emb : tensor<5x4xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = math.tanh %a : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
