// tm_tensor.attention with an i1 mask (false masks a score out) built from
// the indices, rank 3 (no head dim), and one row masked out whole: key j is
// seen by query i when j < i, so query 0 sees nothing and, as torch-mlir
// defines it, gets zeros (no nan in the result or the gradient).
// RUN: %gradcheck %s | FileCheck %s
// CHECK: GRADCHECK PASS
// GRADCHECK-ARG: 0 uniform -1 1
// GRADCHECK-ARG: 1 uniform -1 1
// GRADCHECK-ARG: 2 uniform -1 1
// GRADCHECK-ARG: 3 uniform -1 1

module {
  func.func @causal(%q: tensor<2x4x4xf32> {fbl.param},
                    %k: tensor<2x4x4xf32> {fbl.param},
                    %v: tensor<2x4x4xf32> {fbl.param},
                    %w: tensor<2x4x4xf32>) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %me = tensor.empty() : tensor<2x4x4xi1>
    %mask = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
        outs(%me : tensor<2x4x4xi1>) {
    ^bb0(%o: i1):
      %i = linalg.index 1 : index
      %j = linalg.index 2 : index
      %seen = arith.cmpi ult, %j, %i : index
      linalg.yield %seen : i1
    } -> tensor<2x4x4xi1>
    %init = tensor.empty() : tensor<2x4x4xf32>
    %o = tm_tensor.attention ins(%q, %k, %v, %mask : tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xi1>) outs(%init : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
    %le = tensor.empty() : tensor<f32>
    %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]}
        ins(%o, %w : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%lz : tensor<f32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %t = math.tanh %m : f32
      %s = arith.addf %acc, %t : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
