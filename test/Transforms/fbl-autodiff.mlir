// RUN: fbl-opt %s -split-input-file -fbl-autodiff -mlir-print-local-scope | FileCheck %s

// The gradients of a matmul are the two transposed contractions, as
// linalg.generic over the forward iteration space (m, n, k): dA reduces n,
// dB reduces m.
// CHECK-LABEL: func.func @matmul_grads_are_transposed_contractions_grad
// CHECK-SAME: -> (tensor<f32>, tensor<3x4xf32>, tensor<4x5xf32>)
// CHECK: %[[DY:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<f32>) outs(%{{.*}} : tensor<3x5xf32>)
// CHECK: %[[DA:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%arg1, %[[DY]] : tensor<4x5xf32>, tensor<3x5xf32>)
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: %[[DB:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2, d1)>], iterator_types = ["reduction", "parallel", "parallel"]} ins(%arg0, %[[DY]] : tensor<3x4xf32>, tensor<3x5xf32>)
// CHECK: return %{{.*}}, %[[DA]], %[[DB]]
func.func @matmul_grads_are_transposed_contractions(%a: tensor<3x4xf32> {fbl.param}, %b: tensor<4x5xf32> {fbl.param}, %c: tensor<3x5xf32>) -> tensor<f32> {
  %0 = linalg.matmul ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) outs(%c : tensor<3x5xf32>) -> tensor<3x5xf32>
  %e = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%0 : tensor<3x5xf32>) outs(%e : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A broadcast operand's gradient is reduced back to its own shape.
// CHECK-LABEL: func.func @bias_grad_reduces_the_broadcast_dim_grad
// CHECK: %[[DY:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<f32>) outs(%{{.*}} : tensor<3x5xf32>)
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
// CHECK-SAME: ins(%[[DY]] : tensor<3x5xf32>) outs(%{{.*}} : tensor<5xf32>)
func.func @bias_grad_reduces_the_broadcast_dim(%x: tensor<3x5xf32>, %b: tensor<5xf32> {fbl.param}) -> tensor<f32> {
  %e = tensor.empty() : tensor<3x5xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<3x5xf32>, tensor<5xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<3x5xf32>
  %le = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x5xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The scalar body is differentiated symbolically: d tanh = (1 - tanh^2).
// CHECK-LABEL: func.func @tanh_body_grad
// CHECK: linalg.generic
// CHECK: %[[T:.*]] = math.tanh %{{.*}} : f32
// CHECK: %[[SQ:.*]] = arith.mulf %[[T]], %[[T]] : f32
// CHECK: %[[D:.*]] = arith.subf %{{.*}}, %[[SQ]] : f32
// CHECK: arith.mulf %{{.*}}, %[[D]] : f32
func.func @tanh_body(%x: tensor<4xf32> {fbl.param}) -> tensor<f32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.tanh %a : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %le = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%y : tensor<4xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A max reduction sends the gradient to the elements equal to the maximum.
// CHECK-LABEL: func.func @max_reduction_grad
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[MAX]], %{{.*}} : tensor<2x3xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %[[M:.*]]: f32, %[[DY:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK:   %[[EQ:.*]] = arith.cmpf oeq, %[[X]], %[[M]] : f32
// CHECK:   arith.select %[[EQ]], %[[DY]], %{{.*}} : f32
func.func @max_reduction(%x: tensor<2x3xf32> {fbl.param}, %init: tensor<2xf32>) -> tensor<f32> {
  %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<2x3xf32>) outs(%init : tensor<2xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %le = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%m : tensor<2xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Reshapes and transposes are undone on the gradient.
// CHECK-LABEL: func.func @reshape_and_transpose_grad
// CHECK: %[[T:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d0, d2)>]
// CHECK: tensor.collapse_shape %[[T]] {{\[}}[0], [1, 2]] : tensor<4x2x3xf32> into tensor<4x6xf32>
func.func @reshape_and_transpose(%x: tensor<4x6xf32> {fbl.param}) -> tensor<f32> {
  %r = tensor.expand_shape %x [[0], [1, 2]] output_shape [4, 2, 3] : tensor<4x6xf32> into tensor<4x2x3xf32>
  %e = tensor.empty() : tensor<2x4x3xf32>
  %t = linalg.transpose ins(%r : tensor<4x2x3xf32>) outs(%e : tensor<2x4x3xf32>) permutation = [1, 0, 2]
  %le = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%t : tensor<2x4x3xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// An extracted slice scatters its gradient into zeros of the source.
// CHECK-LABEL: func.func @slice_grad
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x6xf32>)
// CHECK: tensor.insert_slice %{{.*}} into %[[Z]][1, 0] [2, 3] [1, 2] : tensor<2x3xf32> into tensor<4x6xf32>
func.func @slice(%x: tensor<4x6xf32> {fbl.param}) -> tensor<f32> {
  %s = tensor.extract_slice %x[1, 0] [2, 3] [1, 2] : tensor<4x6xf32> to tensor<2x3xf32>
  %le = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%s : tensor<2x3xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// tensor.concat's inserts: each source's gradient is its region of the
// result's gradient, sliced from that gradient itself. The destination's
// gradient (the result's with each inserted region zeroed, one insert after
// another) is not read: inserts outside a slice's region are looked through.
// CHECK-LABEL: func.func @concat_grad
// CHECK: %[[D:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x8xf32>)
// CHECK-NOT: tensor.insert_slice
// CHECK-DAG: %[[GC:.*]] = tensor.extract_slice %[[D]][0, 5] [2, 3] [1, 1]
// CHECK-DAG: %[[GB:.*]] = tensor.extract_slice %[[D]][0, 3] [2, 2] [1, 1]
// CHECK-DAG: %[[GA:.*]] = tensor.extract_slice %[[D]][0, 0] [2, 3] [1, 1]
// CHECK-NOT: tensor.insert_slice
// CHECK: return %{{.*}}, %[[GA]], %[[GB]], %[[GC]]
func.func @concat(%a: tensor<2x3xf32> {fbl.param}, %b: tensor<2x2xf32> {fbl.param}, %c: tensor<2x3xf32> {fbl.param}, %w: tensor<2x8xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<2x8xf32>
  %0 = tensor.insert_slice %a into %e[0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x8xf32>
  %1 = tensor.insert_slice %b into %0[0, 3] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x8xf32>
  %2 = tensor.insert_slice %c into %1[0, 5] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x8xf32>
  %le = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%2, %w : tensor<2x8xf32>, tensor<2x8xf32>) outs(%le : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// linalg.softmax: dx = y * (dy - sum(dy * y)).
// CHECK-LABEL: func.func @softmax_grad
// CHECK: %[[Y:.*]] = linalg.softmax dimension(1)
// CHECK: %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}}, %[[Y]] : tensor<2x5xf32>, tensor<2x5xf32>) outs(%{{.*}} : tensor<2xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[Y]], %{{.*}}, %[[S]] : tensor<2x5xf32>, tensor<2x5xf32>, tensor<2xf32>)
// CHECK:   arith.subf
// CHECK:   arith.mulf
func.func @softmax(%x: tensor<2x5xf32> {fbl.param}, %w: tensor<2x5xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<2x5xf32>
  %y = linalg.softmax dimension(1) ins(%x : tensor<2x5xf32>) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  %le = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y, %w : tensor<2x5xf32>, tensor<2x5xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A gather from a trainable table becomes a scatter-add over the iteration
// space; the frozen table and the index math stay primal-only.
// CHECK-LABEL: func.func @gather_grad
// CHECK-SAME: -> (tensor<f32>, tensor<10x4xf32>)
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<10x4xf32>)
// CHECK:   scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<10x4xf32>)
// CHECK:     %[[ID:.*]] = tensor.extract %arg2[%[[I]]] : tensor<3xi64>
// CHECK:     %[[ROW:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK:     %[[OLD:.*]] = tensor.extract %[[ACC]][%[[ROW]], %[[J]]] : tensor<10x4xf32>
// CHECK:     %[[NEW:.*]] = arith.addf %[[OLD]], %{{.*}} : f32
// CHECK:     tensor.insert %[[NEW]] into %[[ACC]][%[[ROW]], %[[J]]] : tensor<10x4xf32>
func.func @gather(%table: tensor<10x4xf32> {fbl.param}, %frozen: tensor<10x4xf32>, %ids: tensor<3xi64>) -> tensor<f32> {
  %e = tensor.empty() : tensor<3x4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(n, d) -> (n)>, affine_map<(n, d) -> (n, d)>], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<3xi64>) outs(%e : tensor<3x4xf32>) {
  ^bb0(%id: i64, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 1 : index
    %v = tensor.extract %table[%row, %col] : tensor<10x4xf32>
    %w = tensor.extract %frozen[%row, %col] : tensor<10x4xf32>
    %s = arith.addf %v, %w : f32
    linalg.yield %s : f32
  } -> tensor<3x4xf32>
  %le = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(n, d) -> (n, d)>, affine_map<(n, d) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%g : tensor<3x4xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A value used twice gets the sum of both contributions; forward values the
// gradient does not need (the unused %dead) are gone from the gradient.
// CHECK-LABEL: func.func @fan_out_accumulates_grad
// CHECK-NOT: math.exp
// CHECK: %[[SUM:.*]] = linalg.add ins(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>)
// CHECK: return %{{.*}}, %[[SUM]]
func.func @fan_out_accumulates(%x: tensor<4xf32> {fbl.param}) -> tensor<f32> {
  %e = tensor.empty() : tensor<4xf32>
  %dead = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %sq = linalg.mul ins(%x, %x : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %le = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%sq : tensor<4xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A parameter the loss does not depend on gets a zero gradient.
// CHECK-LABEL: func.func @unused_param_grad
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2xf32>)
// CHECK: return %{{.*}}, %{{.*}}, %[[Z]] : tensor<f32>, tensor<3xf32>, tensor<2xf32>
func.func @unused_param(%x: tensor<3xf32> {fbl.param}, %u: tensor<2xf32> {fbl.param}) -> tensor<f32> {
  %le = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%x : tensor<3xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Functions that are not forward models are left alone.
// CHECK-LABEL: func.func @not_a_model
// CHECK-NOT: @not_a_model_grad
func.func @not_a_model(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}

// -----

// A module that already holds the backward keeps it: nothing is added.
// CHECK-LABEL: func.func @model
// CHECK: func.func private @model_grad()
// CHECK-NOT: func.func
func.func @model(%x: tensor<f32> {fbl.param}) -> tensor<f32> {
  return %x : tensor<f32>
}
func.func private @model_grad() -> ()
