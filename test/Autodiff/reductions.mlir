// Sum, max and min reductions; log-sum-exp with its max shift; softmax
// written as generics (as torch-mlir emits it) and as linalg.softmax.
// RUN: %gradcheck %s | FileCheck %s
// CHECK: GRADCHECK PASS

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @reductions(%x: tensor<3x5xf32> {fbl.param}, %y: tensor<3x5xf32> {fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %pinf = arith.constant 0x7F800000 : f32
  %re = tensor.empty() : tensor<3xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%re : tensor<3xf32>) -> tensor<3xf32>
  %mx = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<3x5xf32>) outs(%mx0 : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  } -> tensor<3xf32>
  // log-sum-exp: mx + log(sum(exp(x - mx)))
  %s0 = linalg.fill ins(%zero : f32) outs(%re : tensor<3xf32>) -> tensor<3xf32>
  %se = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %mx : tensor<3x5xf32>, tensor<3xf32>) outs(%s0 : tensor<3xf32>) {
  ^bb0(%a: f32, %m: f32, %acc: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    %s = arith.addf %acc, %e : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  %lse = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                         iterator_types = ["parallel"]}
      ins(%se, %mx : tensor<3xf32>, tensor<3xf32>) outs(%re : tensor<3xf32>) {
  ^bb0(%s: f32, %m: f32, %o: f32):
    %l = math.log %s : f32
    %r = arith.addf %l, %m : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  // A min reduction of y.
  %mn0 = linalg.fill ins(%pinf : f32) outs(%re : tensor<3xf32>) -> tensor<3xf32>
  %mn = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<3x5xf32>) outs(%mn0 : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.minimumf %acc, %a : f32
    linalg.yield %m : f32
  } -> tensor<3xf32>
  // softmax(y) as linalg.softmax, weighted by x.
  %ye = tensor.empty() : tensor<3x5xf32>
  %p = linalg.softmax dimension(1) ins(%y : tensor<3x5xf32>) outs(%ye : tensor<3x5xf32>) -> tensor<3x5xf32>
  %px = linalg.mul ins(%p, %x : tensor<3x5xf32>, tensor<3x5xf32>) outs(%ye : tensor<3x5xf32>) -> tensor<3x5xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l1 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                        iterator_types = ["reduction"]}
      ins(%lse, %mn : tensor<3xf32>, tensor<3xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %ab = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %ab : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%px : tensor<3x5xf32>) outs(%l1 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
