// linalg.transpose, linalg.broadcast, linalg.fill from a parameter,
// tensor.expand_shape / collapse_shape, extract_slice / insert_slice.
// RUN: %gradcheck %s | FileCheck %s
// CHECK: GRADCHECK PASS

func.func @index_ops(%x: tensor<2x6xf32> {fbl.param}, %b: tensor<3xf32> {fbl.param},
                     %s: tensor<f32> {fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  // transpose [2, 6] -> [6, 2]
  %te = tensor.empty() : tensor<6x2xf32>
  %t = linalg.transpose ins(%x : tensor<2x6xf32>) outs(%te : tensor<6x2xf32>) permutation = [1, 0]
  // reshape [6, 2] -> [2, 3, 2] -> [2, 6]... via expand then collapse
  %r = tensor.expand_shape %t [[0, 1], [2]] output_shape [2, 3, 2] : tensor<6x2xf32> into tensor<2x3x2xf32>
  %c = tensor.collapse_shape %r [[0], [1, 2]] : tensor<2x3x2xf32> into tensor<2x6xf32>
  // broadcast the bias over rows: [3] -> [2, 3]
  %be = tensor.empty() : tensor<2x3xf32>
  %bb = linalg.broadcast ins(%b : tensor<3xf32>) outs(%be : tensor<2x3xf32>) dimensions = [0]
  // a slice of c, scaled by the bias, put back into c
  %sl = tensor.extract_slice %c[0, 1] [2, 3] [1, 2] : tensor<2x6xf32> to tensor<2x3xf32>
  %p = linalg.mul ins(%sl, %bb : tensor<2x3xf32>, tensor<2x3xf32>) outs(%be : tensor<2x3xf32>) -> tensor<2x3xf32>
  %ins = tensor.insert_slice %p into %c[0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x6xf32>
  // a fill from a parameter scalar, added in
  %sv = tensor.extract %s[] : tensor<f32>
  %fe = tensor.empty() : tensor<2x6xf32>
  %f = linalg.fill ins(%sv : f32) outs(%fe : tensor<2x6xf32>) -> tensor<2x6xf32>
  %sum = linalg.add ins(%ins, %f : tensor<2x6xf32>, tensor<2x6xf32>) outs(%fe : tensor<2x6xf32>) -> tensor<2x6xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%sum : tensor<2x6xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %a = arith.addf %acc, %sq : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
