// RUN: fbl-opt %s -split-input-file -fbl-classify-ops | FileCheck %s

// A joint training step written by hand (no fbl-autodiff markers): the
// phases come from the data flow alone.
// CHECK-LABEL: func.func @sgd_step
// CHECK: linalg.matmul {fbl.phase = "forward"}
// CHECK: linalg.generic {{.*}} attrs =  {fbl.phase = "forward"}
// CHECK: math.tanh
// The seed and the tanh' that reads the forward pre-activation: class II.
// CHECK: linalg.fill {fbl.class = 1 : i64, fbl.phase = "backward"}
// CHECK: linalg.generic {{.*}} attrs =  {fbl.class = 2 : i64, fbl.phase = "backward", fbl.reuse = [{access = {innermost = 1 : i64, reduced = array<i64>}, conflict = false, forward = {innermost = 1 : i64, reduced = array<i64>}, operand = 1 : i64}]}
// A transpose of the gradient: no forward value, re-indexed: class III.
// CHECK: linalg.transpose {{.*}} {fbl.class = 3 : i64, fbl.phase = "backward"}
// dW = Xᵀ·dY reduces X over its rows and walks them innermost; the forward
// reduced and walked its columns: class IV.
// CHECK: linalg.matmul indexing_maps = {{.*}} {fbl.class = 4 : i64, fbl.phase = "backward", fbl.reuse = [{access = {innermost = 0 : i64, reduced = array<i64: 0>}, conflict = true, forward = {innermost = 1 : i64, reduced = array<i64: 1>}, operand = 0 : i64}]}
// The update reads the parameter and the gradient: optimizer.
// CHECK: linalg.generic {{.*}} attrs =  {fbl.phase = "optimizer"}
// CHECK: return
#id = affine_map<(i, j) -> (i, j)>
func.func @sgd_step(%w: tensor<4x3xf32> {fbl.param}, %x: tensor<2x4xf32>) -> (tensor<f32>, tensor<4x3xf32>, tensor<3x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %lr = arith.constant 0.1 : f32
  %e = tensor.empty() : tensor<2x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %y = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x3xf32>) outs(%z : tensor<2x3xf32>) -> tensor<2x3xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<2x3xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%a : tensor<2x3xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  // backward
  %seed = linalg.fill ins(%one : f32) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %dy = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%seed, %y : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%g: f32, %v: f32, %o: f32):
    %t = math.tanh %v : f32
    %t2 = arith.mulf %t, %t : f32
    %d = arith.subf %one, %t2 : f32
    %r = arith.mulf %g, %d : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  %te = tensor.empty() : tensor<3x2xf32>
  %dyt = linalg.transpose ins(%dy : tensor<2x3xf32>) outs(%te : tensor<3x2xf32>) permutation = [1, 0]
  %we = tensor.empty() : tensor<4x3xf32>
  %wz = linalg.fill ins(%zero : f32) outs(%we : tensor<4x3xf32>) -> tensor<4x3xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(i, j, b) -> (b, i)>, affine_map<(i, j, b) -> (b, j)>, affine_map<(i, j, b) -> (i, j)>]
      ins(%x, %dy : tensor<2x4xf32>, tensor<2x3xf32>) outs(%wz : tensor<4x3xf32>) -> tensor<4x3xf32>
  // optimizer
  %w2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w, %dw : tensor<4x3xf32>, tensor<4x3xf32>) outs(%we : tensor<4x3xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %s = arith.mulf %g, %lr : f32
    %r = arith.subf %p, %s : f32
    linalg.yield %r : f32
  } -> tensor<4x3xf32>
  return %loss, %w2, %dyt : tensor<f32>, tensor<4x3xf32>, tensor<3x2xf32>
}

// -----

// A function whose first result is not a scalar loss is not classified.
// CHECK-LABEL: func.func @not_training
// CHECK-NOT: fbl.phase
func.func @not_training(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
