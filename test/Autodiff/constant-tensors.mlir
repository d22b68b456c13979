// Constant tensors in a forward, as importers write position tables, masks
// and fixed scales: a non-splat f32 constant read as an operand, another
// read with tensor.extract in a body, a splat one, and an i64 constant of
// ids gathering rows. After layout selection each is a kernel that writes
// its values (fbl-lower-to-kernels; the emitter prints the data as a
// __constant array); test/E2E/importer-forms.test runs it on the device.
// RUN: %gradcheck %s | FileCheck %s
// CHECK: GRADCHECK PASS

#id = affine_map<(n, d) -> (n, d)>
#col = affine_map<(n, d) -> (d)>
func.func @constants(%x: tensor<3x4xf32> {fbl.param}, %table: tensor<5x4xf32> {fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant dense<[0.5, -1.0, 2.0, 0.25]> : tensor<4xf32>
  %shift = arith.constant dense<[[0.1, 0.2, 0.3, 0.4], [-0.1, -0.2, -0.3, -0.4], [1.0, 0.0, -1.0, 0.5]]> : tensor<3x4xf32>
  %half = arith.constant dense<0.5> : tensor<3x4xf32>
  %ids = arith.constant dense<[4, 0, 2]> : tensor<3xi64>
  %e = tensor.empty() : tensor<3x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %scale, %half : tensor<3x4xf32>, tensor<4xf32>, tensor<3x4xf32>) outs(%e : tensor<3x4xf32>) {
  ^bb0(%a: f32, %s: f32, %h: f32, %o: f32):
    %n = linalg.index 0 : index
    %d = linalg.index 1 : index
    %b = tensor.extract %shift[%n, %d] : tensor<3x4xf32>
    %id = tensor.extract %ids[%n] : tensor<3xi64>
    %row = arith.index_cast %id : i64 to index
    %t = tensor.extract %table[%row, %d] : tensor<5x4xf32>
    %m = arith.mulf %a, %s : f32
    %p = arith.addf %m, %b : f32
    %q = arith.mulf %p, %t : f32
    %r = arith.mulf %q, %h : f32
    linalg.yield %r : f32
  } -> tensor<3x4xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, affine_map<(n, d) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = math.tanh %a : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
