// RUN: fbl-opt %s -fbl-lower-to-kernels -fbl-plan-memory | FileCheck %s

// a = exp(x), b = a + a, c = b * b: a is dead once b is written, so c takes
// a's image; b stays live while c reads it. The result lives past the step.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: fbl.memory_plan = {objects = 2 : i64, peak_bytes = 384 : i64, unplanned_bytes = 512 : i64}
// CHECK: %[[E0:.*]] = tensor.empty() {fbl.slot = 0 : i64}
// CHECK: %[[A:.*]] = fbl.dispatch @k0_generic ins(%arg0 : {{.*}}) outs(%[[E0]]
// CHECK: %[[E1:.*]] = tensor.empty() {fbl.slot = 1 : i64}
// CHECK: %[[B:.*]] = fbl.dispatch @k1_generic ins(%[[A]] : {{.*}}) outs(%[[E1]]
// CHECK: %[[E2:.*]] = tensor.empty() {fbl.slot = 0 : i64}
// CHECK: fbl.dispatch @k2_generic ins(%[[B]] : {{.*}}) outs(%[[E2]]
#cp = #fbl.channel_packed<packed = 1>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @chain(%x: tensor<4x8xf32, #cp>) -> tensor<4x8xf32, #cp> {
    %e0 = tensor.empty() : tensor<4x8xf32, #cp>
    %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<4x8xf32, #cp>) outs(%e0 : tensor<4x8xf32, #cp>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.exp %v : f32
      linalg.yield %r : f32
    } -> tensor<4x8xf32, #cp>
    %e1 = tensor.empty() : tensor<4x8xf32, #cp>
    %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%a : tensor<4x8xf32, #cp>) outs(%e1 : tensor<4x8xf32, #cp>) {
    ^bb0(%v: f32, %o: f32):
      %r = arith.addf %v, %v : f32
      linalg.yield %r : f32
    } -> tensor<4x8xf32, #cp>
    %e2 = tensor.empty() : tensor<4x8xf32, #cp>
    %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%b : tensor<4x8xf32, #cp>) outs(%e2 : tensor<4x8xf32, #cp>) {
    ^bb0(%v: f32, %o: f32):
      %r = arith.mulf %v, %v : f32
      linalg.yield %r : f32
    } -> tensor<4x8xf32, #cp>
    return %c : tensor<4x8xf32, #cp>
  }
}
