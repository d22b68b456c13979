// RUN: fbl-opt %s -split-input-file -fbl-split-reductions | FileCheck %s
// RUN: fbl-opt %s -split-input-file -fbl-split-reductions=min-elements=100000 | FileCheck %s --check-prefix=KEEP

// A mean-square loss over 64x32: partial sums along rows (parallel), then
// their sum added to the init.
// CHECK-LABEL: func.func @loss
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<64xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<64xf32>)
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%arg0 : tensor<64x32xf32>) outs(%[[F]] : tensor<64xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[T:.*]] = linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} ins(%[[P]] : tensor<64xf32>) outs(%arg1 : tensor<f32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[OUT]], %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: return %[[T]]
// KEEP-LABEL: func.func @loss
// KEEP: iterator_types = ["reduction", "reduction"]
// KEEP-NOT: linalg.generic
func.func @loss(%x: tensor<64x32xf32>, %init: tensor<f32>) -> tensor<f32> {
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<64x32xf32>) outs(%init : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A max: the partials start from -inf.
// CHECK-LABEL: func.func @max
// KEEP-LABEL: func.func @max
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
func.func @max(%x: tensor<64x32xf32>, %init: tensor<f32>) -> tensor<f32> {
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<64x32xf32>) outs(%init : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Not split: the body reads the accumulator twice (no single combiner).
// CHECK-LABEL: func.func @not_a_combiner
// CHECK: iterator_types = ["reduction", "reduction"]
// CHECK-NOT: linalg.generic
func.func @not_a_combiner(%x: tensor<64x32xf32>, %init: tensor<f32>) -> tensor<f32> {
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<64x32xf32>) outs(%init : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.mulf %acc, %acc : f32
    %r = arith.addf %a, %v : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Not split: a row reduction already runs in parallel.
// CHECK-LABEL: func.func @rows
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK-NOT: linalg.generic
func.func @rows(%x: tensor<64x32xf32>, %init: tensor<64xf32>) -> tensor<64xf32> {
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x32xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  return %l : tensor<64xf32>
}
