// A gather from a 1-D table: its scatter-add gradient indexes the table
// only through token ids, so no loop of the nest is parallel and the kernel
// runs it on one work-item (test/E2E/kernel-kinds.test).
// GRADCHECK-ARG: 1 ints 0 6
// RUN: %gradcheck %s | FileCheck %s
// CHECK: GRADCHECK PASS

#tok = affine_map<(n) -> (n)>
func.func @embed_1d(%table: tensor<6xf32> {fbl.param}, %ids: tensor<5xi64>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5xf32>
  %emb = linalg.generic {indexing_maps = [#tok, #tok], iterator_types = ["parallel"]}
      ins(%ids : tensor<5xi64>) outs(%e : tensor<5xf32>) {
  ^bb0(%id: i64, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %v = tensor.extract %table[%row] : tensor<6xf32>
    linalg.yield %v : f32
  } -> tensor<5xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#tok, affine_map<(n) -> ()>], iterator_types = ["reduction"]}
      ins(%emb : tensor<5xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = math.tanh %a : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
