// An embedding lookup whose ids are read inside the body at `n floordiv 2`
// (each id feeds two consecutive rows of the output), the index computed by
// affine.apply as importers write it, and once more by arith.floordivsi:
// fbl-autodiff expands both into plain arith before differentiating
// (lib/Autodiff/ImporterForms.cpp). test/E2E/importer-forms.test runs it on
// the device.
// GRADCHECK-ARG: 1 ints 0 6
// RUN: %gradcheck %s | FileCheck %s
// CHECK: GRADCHECK PASS

#id = affine_map<(n, d) -> (n, d)>
func.func @gather_floordiv(%table: tensor<6x4xf32> {fbl.param},
                           %ids: tensor<5xi64>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<10x4xf32>
  %emb = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<10x4xf32>) {
  ^bb0(%o: f32):
    %n = linalg.index 0 : index
    %d = linalg.index 1 : index
    %h = affine.apply affine_map<(n) -> (n floordiv 2)>(%n)
    %id = tensor.extract %ids[%h] : tensor<5xi64>
    %row = arith.index_cast %id : i64 to index
    %v = tensor.extract %table[%row, %d] : tensor<6x4xf32>
    // The same id again, through arith.floordivsi.
    %h2 = arith.floordivsi %n, %c2 : index
    %id2 = tensor.extract %ids[%h2] : tensor<5xi64>
    %row2 = arith.index_cast %id2 : i64 to index
    %w = tensor.extract %table[%row2, %d] : tensor<6x4xf32>
    %p = arith.mulf %v, %w : f32
    linalg.yield %p : f32
  } -> tensor<10x4xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, affine_map<(n, d) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%emb : tensor<10x4xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = math.tanh %a : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
