// Token ids whose valid range does not start at 0 (id 0 is reserved, as a
// padding id is): the asserts give [1, 7), the range the runtime checks and
// fbl-run --random-inputs draws from (test/Runtime/input-range.test).
#id = affine_map<(n, d) -> (n, d)>
func.func @embed(%table: tensor<7x4xf32> {fbl.param}, %ids: tensor<5xi64>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %first = tensor.extract %ids[%c0] : tensor<5xi64>
  %c1 = arith.constant 1 : i64
  %positive = arith.cmpi sge, %first, %c1 : i64
  cf.assert %positive, "id 0 is padding"
  %e = tensor.empty() : tensor<5x4xf32>
  %emb = linalg.generic {indexing_maps = [affine_map<(n, d) -> (n)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<5xi64>) outs(%e : tensor<5x4xf32>) {
  ^bb0(%i: i64, %o: f32):
    %row = arith.index_cast %i : i64 to index
    %col = linalg.index 1 : index
    %v = tensor.extract %table[%row, %col] : tensor<7x4xf32>
    linalg.yield %v : f32
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
