// RUN: fbl-opt %s -split-input-file -fbl-fuse-elementwise | FileCheck %s

// A single-use chain bias-add -> tanh -> scale becomes one generic.
// CHECK-LABEL: func.func @chain
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8xf32>)
// CHECK: arith.addf
// CHECK: math.tanh
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
// CHECK: return %[[G]]
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
func.func @chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %cst = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %r = arith.addf %v, %w : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.tanh %v : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.mulf %v, %cst : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

// An activation that is also returned (the backward pass re-reads it) stays
// its own op: nothing is computed twice.
// CHECK-LABEL: func.func @shared
// CHECK: %[[A:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: %[[B:.*]] = linalg.generic
// CHECK-SAME: ins(%[[A]] :
// CHECK: return %[[A]], %[[B]]
#id = affine_map<(i) -> (i)>
func.func @shared(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.mulf %v, %v : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %a, %b : tensor<8xf32>, tensor<8xf32>
}

// -----

// A transpose feeding a matmul is not fused: the contraction keeps its
// acc + a * b body for the GEMM kernel (layout selection makes the
// transpose a view instead).
// CHECK-LABEL: func.func @contraction
// CHECK: %[[T:.*]] = linalg.generic
// CHECK: linalg.matmul ins(%[[T]], %arg1
#id = affine_map<(i, j) -> (i, j)>
#tr = affine_map<(i, j) -> (j, i)>
func.func @contraction(%x: tensor<8x4xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %cst = arith.constant 0.0 : f32
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.matmul ins(%t, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %m : tensor<4x8xf32>
}

// -----

// Into a reduction: exp is fused into the row sum of a softmax.
// CHECK-LABEL: func.func @into_reduction
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: math.exp
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
#id = affine_map<(i, j) -> (i, j)>
#red = affine_map<(i, j) -> (i)>
func.func @into_reduction(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %cst = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4x8xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.addf %v, %o : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// A named elementwise consumer (the linalg.add that sums two gradient
// contributions) takes its single-use producers too: the row broadcast and
// the scaling become one generic with the add.
// CHECK-LABEL: func.func @into_named_add
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<4xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.add
// CHECK: return %[[G]]
#id2 = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (i)>
func.func @into_named_add(%x: tensor<4x8xf32>, %r: tensor<4xf32>) -> tensor<4x8xf32> {
  %cst = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [#col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %v, %cst : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %s = linalg.add ins(%x, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

// A named transpose stays as written (fbl-fold-index-transforms reads it).
// CHECK-LABEL: func.func @transpose_stays
// CHECK: linalg.transpose
func.func @transpose_stays(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x4xf32>
  %t = linalg.transpose ins(%x : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) permutation = [1, 0]
  return %t : tensor<8x4xf32>
}

// -----

// A norm's mean: the row sum's [4] result expanded to the keepdim [4, 1],
// scaled there, collapsed back for the [4, 8] broadcast. The scale is
// collapsed to [4], the reshapes cancel, and it fuses into the centering.
// CHECK-LABEL: func.func @keepdim_scale
// CHECK:       %[[SUM:.*]] = linalg.generic
// CHECK-SAME:    iterator_types = ["parallel", "reduction"]
// CHECK-NOT:   tensor.expand_shape
// CHECK-NOT:   tensor.collapse_shape
// CHECK:       %[[C:.*]] = linalg.generic
// CHECK-SAME:    ins(%arg0, %[[SUM]] : tensor<4x8xf32>, tensor<4xf32>)
// CHECK:         arith.mulf
// CHECK:         arith.subf
// CHECK-NOT:   linalg.generic
// CHECK:       return %[[C]]
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (i)>
func.func @keepdim_scale(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 0.125 : f32
  %e0 = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %k = tensor.expand_shape %sum [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  %e1 = tensor.empty() : tensor<4x1xf32>
  %mean = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%k : tensor<4x1xf32>) outs(%e1 : tensor<4x1xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.mulf %v, %inv : f32
    linalg.yield %r : f32
  } -> tensor<4x1xf32>
  %m = tensor.collapse_shape %mean [[0, 1]] : tensor<4x1xf32> into tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %c = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<4x8xf32>, tensor<4xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %r = arith.subf %v, %w : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}

// -----

// A reshape that splits a dim (not a unit dim) stays: collapsing the
// generic would change how it indexes its operand.
// CHECK-LABEL: func.func @split_stays
// CHECK:       tensor.expand_shape
// CHECK-SAME:    into tensor<2x4xf32>
// CHECK:       linalg.generic
// CHECK-SAME:    ins(%{{.*}} : tensor<2x4xf32>)
#id2 = affine_map<(i, j) -> (i, j)>
func.func @split_stays(%x: tensor<8xf32>) -> tensor<2x4xf32> {
  %two = arith.constant 2.0 : f32
  %k = tensor.expand_shape %x [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  %e = tensor.empty() : tensor<2x4xf32>
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%k : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.mulf %v, %two : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

// -----

// A softmax's `exp(x - max)` read by the row sum and by the normalization:
// it reads one tensor of its size (x) and the row maxima, broadcast, so each
// reader computes it again from x instead of reading it back. Two ops stay,
// each reading x and the maxima, each with its own exp.
// CHECK-LABEL: func.func @recomputed
// CHECK: %[[S:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%arg0, %arg1 : tensor<4x16xf32>, tensor<4xf32>)
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%arg0, %arg1, %[[S]] : tensor<4x16xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.divf
// CHECK-NOT: linalg.generic
// CHECK: return %[[P]]
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @recomputed(%x: tensor<4x16xf32>, %m: tensor<4xf32>) -> tensor<4x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %ex = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<4x16xf32>, tensor<4xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%v: f32, %mx: f32, %o: f32):
    %d = arith.subf %v, %mx : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %se = tensor.empty() : tensor<4xf32>
  %s0 = linalg.fill ins(%z : f32) outs(%se : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%ex : tensor<4x16xf32>) outs(%s0 : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %s : tensor<4x16xf32>, tensor<4xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%v: f32, %t: f32, %o: f32):
    %r = arith.divf %v, %t : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  return %p : tensor<4x16xf32>
}

// -----

// A producer of two tensors of its size (a residual sum) read twice: each
// reader computing it again would read both, more than the one result it
// reads now. It stays an op of its own.
// CHECK-LABEL: func.func @two_whole_inputs
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 :
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} ins(%[[A]] :
// CHECK: linalg.generic {{.*}} ins(%[[A]] :
#id1 = affine_map<(i) -> (i)>
func.func @two_whole_inputs(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%x, %y : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.mulf %v, %v : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %b, %c : tensor<8xf32>, tensor<8xf32>
}

// -----

// A GELU read by the next layer's matmul and by its own backward: the
// matmul cannot take it (a contraction's body stays acc + a * b), so it is
// stored once and both read it.
// CHECK-LABEL: func.func @read_by_matmul
// CHECK: %[[G:.*]] = linalg.generic
// CHECK: math.erf
// CHECK: linalg.matmul ins(%[[G]], %arg1 :
// CHECK: linalg.generic {{.*}} ins(%[[G]] :
#id = affine_map<(i, j) -> (i, j)>
func.func @read_by_matmul(%h: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.erf %v : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = linalg.matmul ins(%g, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.mulf %v, %v : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  return %y, %d : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A sum over a unit dim, after autodiff folded the dim away: an elementwise
// op that reads its init (acc + x). Fused into its reader, upstream fusion
// keeps its result as a result of the fused op, which reads its inits (no
// kernel computes that); fused further into a sum, that result would be
// indexed by a reduction loop (no valid op). It stays its own op.
// CHECK-LABEL: func.func @reads_its_init
// CHECK: %[[A:[0-9]+]] = linalg.generic {{.*}} outs(%{{[0-9a-z_]+}} : tensor<8xf32>) {
// CHECK: arith.addf %out, %in : f32
// CHECK: %[[G:[0-9]+]] = linalg.generic {{.*}} ins(%[[A]] : tensor<8xf32>)
// CHECK: math.tanh
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[G]], %arg1 :
#id1 = affine_map<(i) -> (i)>
#all = affine_map<(i) -> ()>
func.func @reads_its_init(%x: tensor<8xf32>, %t: tensor<8xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%v: f32, %out: f32):
    %r = arith.addf %out, %v : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %g = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%s : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.tanh %v : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id1, #id1, #all], iterator_types = ["reduction"]}
      ins(%g, %t : tensor<8xf32>, tensor<8xf32>) outs(%l0 : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.addf %acc, %p : f32
    linalg.yield %q : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
