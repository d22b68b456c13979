// RUN: fbl-opt %s -split-input-file -fbl-lower-to-kernels -fbl-plan-memory | FileCheck %s

// On a half_storage target the frozen input and the intermediates store f16
// (two bytes per element: 512 bytes where f32 takes 640); the trained parameter, the optimizer
// state it updates and the step's results keep f32.
// CHECK-LABEL: func.func @step
// CHECK-SAME: %arg0: {{.*}} {fbl.param}
// CHECK-SAME: %arg1: {{.*}} {fbl.storage = f16}
// CHECK-SAME: %arg2: {{.*}} {fbl.name = "m"}
// CHECK-SAME: fbl.memory_plan = {objects = 2 : i64, peak_bytes = 512 : i64, unplanned_bytes = 512 : i64}
// CHECK: %[[E0:.*]] = tensor.empty() {fbl.slot = 0 : i64, fbl.storage = f16}
// CHECK: %[[H:.*]] = fbl.dispatch @k0_generic ins(%arg0, %arg1 : {{.*}}) outs(%[[E0]]
// CHECK: %[[E1:.*]] = tensor.empty() {fbl.slot = 1 : i64} :
// CHECK: fbl.dispatch @k1_generic ins(%[[H]], %arg2 : {{.*}}) outs(%[[E1]]
#cp = #fbl.channel_packed<packed = 1>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"mali-g710">} {
  func.func @step(%w: tensor<4x8xf32, #cp> {fbl.param},
                  %frozen: tensor<4x8xf32, #cp>,
                  %m: tensor<4x8xf32, #cp> {fbl.name = "m"})
      -> tensor<4x8xf32, #cp> attributes {fbl.updates = array<i64: 2>} {
    %e0 = tensor.empty() : tensor<4x8xf32, #cp>
    %h = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%w, %frozen : tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>) outs(%e0 : tensor<4x8xf32, #cp>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.mulf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<4x8xf32, #cp>
    %e1 = tensor.empty() : tensor<4x8xf32, #cp>
    %n = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%h, %m : tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>) outs(%e1 : tensor<4x8xf32, #cp>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<4x8xf32, #cp>
    return %n : tensor<4x8xf32, #cp>
  }
}

// -----

// A max over an f32 parameter keeps f32, so the max gradient's equality test
// against the parameter holds bit for bit; the exp after it stores f16. A
// table computed from indices alone (RoPE angles, positions) keeps f32.
// CHECK-LABEL: func.func @exact
// The max starts from its fill's constant (no fill kernel, no f16 init).
// CHECK-NOT: _fill
// CHECK: tensor.empty() {fbl.slot = {{[0-9]+}} : i64} : tensor<4xf32
// CHECK-NEXT: fbl.dispatch @k{{[0-9]+}}_generic ins(%arg0 : {{.*}}) outs
// CHECK: tensor.empty() {fbl.slot = {{[0-9]+}} : i64, fbl.storage = f16} : tensor<4x8xf32
// CHECK-NEXT: fbl.dispatch @k{{[0-9]+}}_generic ins(%arg0, %{{.*}}) outs
// CHECK: tensor.empty() {fbl.slot = {{[0-9]+}} : i64} : tensor<4x8xf32
// CHECK-NEXT: %[[ANGLES:.*]] = fbl.dispatch @k{{[0-9]+}}_generic outs
#cp = #fbl.channel_packed<packed = 1>
#cp0 = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
module attributes {fbl.target = #fbl.target<"adreno-a740">} {
  func.func @exact(%x: tensor<4x8xf32, #cp> {fbl.param}) -> tensor<4x8xf32, #cp> {
    %ninf = arith.constant 0xFF800000 : f32
    %r0 = tensor.empty() : tensor<4xf32, #cp0>
    %init = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<4xf32, #cp0>) -> tensor<4xf32, #cp0>
    %mx = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<4x8xf32, #cp>) outs(%init : tensor<4xf32, #cp0>) {
    ^bb0(%a: f32, %acc: f32):
      %m = arith.maximumf %a, %acc : f32
      linalg.yield %m : f32
    } -> tensor<4xf32, #cp0>
    %e = tensor.empty() : tensor<4x8xf32, #cp>
    %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %mx : tensor<4x8xf32, #cp>, tensor<4xf32, #cp0>) outs(%e : tensor<4x8xf32, #cp>) {
    ^bb0(%a: f32, %m: f32, %o: f32):
      %d = arith.subf %a, %m : f32
      %r = math.exp %d : f32
      linalg.yield %r : f32
    } -> tensor<4x8xf32, #cp>
    %e2 = tensor.empty() : tensor<4x8xf32, #cp>
    %angles = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
        outs(%e2 : tensor<4x8xf32, #cp>) {
    ^bb0(%o: f32):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %p = arith.muli %i, %j : index
      %pi = arith.index_cast %p : index to i64
      %pf = arith.sitofp %pi : i64 to f32
      %c = arith.constant 300.5 : f32
      %a = arith.mulf %pf, %c : f32
      linalg.yield %a : f32
    } -> tensor<4x8xf32, #cp>
    %e3 = tensor.empty() : tensor<4x8xf32, #cp>
    %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%ex, %angles : tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>) outs(%e3 : tensor<4x8xf32, #cp>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %c = math.cos %b : f32
      %r = arith.mulf %a, %c : f32
      linalg.yield %r : f32
    } -> tensor<4x8xf32, #cp>
    return %s : tensor<4x8xf32, #cp>
  }
}

// -----

// The updated parameter (f32, a result) takes the slot of the dead f16
// activation h by widening it: h then stores f32 too, and the step needs
// 384 bytes instead of 448 for a new object.
// CHECK-LABEL: func.func @widen
// CHECK-SAME: fbl.memory_plan = {objects = 2 : i64, peak_bytes = 384 : i64
// CHECK: tensor.empty() {fbl.slot = 0 : i64} :
// CHECK: tensor.empty() {fbl.slot = 1 : i64, fbl.storage = f16} :
// CHECK: tensor.empty() {fbl.slot = 0 : i64} :
#cp = #fbl.channel_packed<packed = 1>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"mali-g710">} {
  func.func @widen(%w: tensor<4x8xf32, #cp> {fbl.param}, %x: tensor<4x8xf32, #cp>)
      -> tensor<4x8xf32, #cp> attributes {fbl.updates = array<i64: 0>} {
    %e0 = tensor.empty() : tensor<4x8xf32, #cp>
    %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<4x8xf32, #cp>) outs(%e0 : tensor<4x8xf32, #cp>) {
    ^bb0(%a: f32, %o: f32):
      %r = math.exp %a : f32
      linalg.yield %r : f32
    } -> tensor<4x8xf32, #cp>
    %e1 = tensor.empty() : tensor<4x8xf32, #cp>
    %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%h : tensor<4x8xf32, #cp>) outs(%e1 : tensor<4x8xf32, #cp>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.addf %a, %a : f32
      linalg.yield %r : f32
    } -> tensor<4x8xf32, #cp>
    %e2 = tensor.empty() : tensor<4x8xf32, #cp>
    %n = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%w, %g : tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>) outs(%e2 : tensor<4x8xf32, #cp>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.subf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<4x8xf32, #cp>
    return %n : tensor<4x8xf32, #cp>
  }
}
