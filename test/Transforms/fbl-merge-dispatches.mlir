// RUN: fbl-opt %s -split-input-file -fbl-lower-to-kernels -fbl-merge-dispatches -fbl-plan-memory | FileCheck %s --check-prefixes=CHECK,PRE
// RUN: fbl-opt %s -split-input-file -fbl-lower-to-kernels -fbl-plan-memory -fbl-merge-dispatches | FileCheck %s --check-prefixes=CHECK,PLANNED

// Two kernels on different inputs, work-groups of 8x8: one launch of 64-item
// groups, the first kernel's two, then the second's four. Each member's body
// sees the group, local and global ids it had.
// CHECK-LABEL: func.func @independent
// CHECK: %[[E0:.*]] = tensor.empty() {fbl.slot = 0 : i64}
// CHECK: %[[E1:.*]] = tensor.empty() {fbl.slot = 1 : i64}
// CHECK: %[[M:.*]]:2 = fbl.dispatch @k0_merged ins(%arg0, %arg1 : {{.*}}) outs(%[[E0]], %[[E1]] : {{.*}}) grid [384, 1, 1] workgroup [64, 1, 1]
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: %[[G:.*]] = fbl.group_id 0
// CHECK-NEXT: %[[L:.*]] = fbl.local_id 0
// CHECK: %[[FIRST:.*]] = arith.cmpi ult, %[[G]], %c2
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK: %[[LX:.*]] = arith.remui %[[L]], %c8
// CHECK: math.exp
// CHECK: fbl.store_texel {{.*}}, %arg4
// CHECK: %[[AFTER:.*]] = arith.cmpi uge, %[[G]], %c2
// CHECK-NEXT: scf.if %[[AFTER]] {
// CHECK-NEXT: %[[R:.*]] = arith.subi %[[G]], %c2
// CHECK: math.tanh
// CHECK: fbl.store_texel {{.*}}, %arg5
// CHECK-NOT: fbl.dispatch
// CHECK: return %[[M]]#0, %[[M]]#1
#cp = #fbl.channel_packed<packed = 1>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @independent(%x: tensor<8x64xf32, #cp>, %y: tensor<16x64xf32, #cp>)
      -> (tensor<8x64xf32, #cp>, tensor<16x64xf32, #cp>) {
    %e0 = tensor.empty() : tensor<8x64xf32, #cp>
    %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<8x64xf32, #cp>) outs(%e0 : tensor<8x64xf32, #cp>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.exp %v : f32
      linalg.yield %r : f32
    } -> tensor<8x64xf32, #cp>
    %e1 = tensor.empty() : tensor<16x64xf32, #cp>
    %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%y : tensor<16x64xf32, #cp>) outs(%e1 : tensor<16x64xf32, #cp>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.tanh %v : f32
      linalg.yield %r : f32
    } -> tensor<16x64xf32, #cp>
    return %a, %b : tensor<8x64xf32, #cp>, tensor<16x64xf32, #cp>
  }
}

// -----

// b reads a: two launches, in order.
// CHECK-LABEL: func.func @chain
// CHECK: fbl.dispatch @k0_generic
// CHECK: fbl.dispatch @k1_generic
// CHECK-NOT: _merged
#cp = #fbl.channel_packed<packed = 1>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @chain(%x: tensor<8x64xf32, #cp>) -> tensor<8x64xf32, #cp> {
    %e0 = tensor.empty() : tensor<8x64xf32, #cp>
    %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<8x64xf32, #cp>) outs(%e0 : tensor<8x64xf32, #cp>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.exp %v : f32
      linalg.yield %r : f32
    } -> tensor<8x64xf32, #cp>
    %e1 = tensor.empty() : tensor<8x64xf32, #cp>
    %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%a : tensor<8x64xf32, #cp>) outs(%e1 : tensor<8x64xf32, #cp>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.tanh %v : f32
      linalg.yield %r : f32
    } -> tensor<8x64xf32, #cp>
    return %b : tensor<8x64xf32, #cp>
  }
}

// -----

// p reads a; q is independent of both. Merged before the memory plan, q
// shares a's launch (level 1). After the plan q takes a's image, which p
// reads: q must follow p, and nothing merges.
// CHECK-LABEL: func.func @reused_memory
// PRE: fbl.dispatch @k0_merged ins(%arg0, %arg1 :
// PRE: fbl.dispatch @k1_generic
// PRE: fbl.dispatch @k3_generic
// PLANNED: tensor.empty() {fbl.slot = 0 : i64}
// PLANNED: fbl.dispatch @k0_generic
// PLANNED: fbl.dispatch @k1_generic
// PLANNED: tensor.empty() {fbl.slot = 0 : i64}
// PLANNED: fbl.dispatch @k2_generic
// PLANNED: fbl.dispatch @k3_generic
// PLANNED-NOT: _merged
#cp = #fbl.channel_packed<packed = 1>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @reused_memory(%x: tensor<8x64xf32, #cp>, %y: tensor<8x64xf32, #cp>)
      -> (tensor<8x64xf32, #cp>, tensor<8x64xf32, #cp>) {
    %e0 = tensor.empty() : tensor<8x64xf32, #cp>
    %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<8x64xf32, #cp>) outs(%e0 : tensor<8x64xf32, #cp>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.exp %v : f32
      linalg.yield %r : f32
    } -> tensor<8x64xf32, #cp>
    %e1 = tensor.empty() : tensor<8x64xf32, #cp>
    %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%a : tensor<8x64xf32, #cp>) outs(%e1 : tensor<8x64xf32, #cp>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.tanh %v : f32
      linalg.yield %r : f32
    } -> tensor<8x64xf32, #cp>
    %e2 = tensor.empty() : tensor<8x64xf32, #cp>
    %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%y : tensor<8x64xf32, #cp>) outs(%e2 : tensor<8x64xf32, #cp>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.sin %v : f32
      linalg.yield %r : f32
    } -> tensor<8x64xf32, #cp>
    %e3 = tensor.empty() : tensor<8x64xf32, #cp>
    %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%p, %q : tensor<8x64xf32, #cp>, tensor<8x64xf32, #cp>) outs(%e3 : tensor<8x64xf32, #cp>) {
    ^bb0(%v: f32, %w: f32, %o: f32):
      %r = arith.addf %v, %w : f32
      linalg.yield %r : f32
    } -> tensor<8x64xf32, #cp>
    return %s, %p : tensor<8x64xf32, #cp>, tensor<8x64xf32, #cp>
  }
}

// -----

// Two independent GEMMs of one tile (the H200 preset's local-tiled kernel):
// one launch, their local tiles declared once (a work-group runs one of
// them), the barriers inside each member's branch. The preset's two GEMM
// variants merge likewise: variant i of the launch is made of the members'
// variants i (the second writes fma()).
// CHECK-LABEL: func.func @two_gemms
// CHECK: fbl.dispatch @k{{[0-9]+}}_merged ins(%arg0, %arg1, %arg2, %arg3 :
// CHECK-SAME: workgroup [64, 1, 1]
// CHECK: fbl.group_id 0
// CHECK-COUNT-2: memref.alloca() : memref<2x16x8xvector<4xf32>, 3>
// CHECK-NOT: memref.alloca
// CHECK: scf.if
// CHECK: fbl.barrier
// CHECK: scf.if
// CHECK: fbl.barrier
// CHECK: } variants {
// CHECK: fbl.group_id 0
// CHECK-COUNT-2: memref.alloca() : memref<2x16x8xvector<4xf32>, 3>
// CHECK-NOT: memref.alloca
// CHECK-NOT: math.fma
// CHECK: }, {
// CHECK: fbl.group_id 0
// CHECK: scf.if
// CHECK: math.fma
// CHECK: scf.if
// CHECK: math.fma
// CHECK: } -> tensor<64x64xf32
// CHECK-NOT: fbl.dispatch
#cp = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"nvidia-h200">} {
  func.func @two_gemms(%a: tensor<64x64xf32, #cp>, %b: tensor<64x64xf32, #cp>,
                       %c: tensor<64x64xf32, #cp>, %d: tensor<64x64xf32, #cp>)
      -> (tensor<64x64xf32, #cp>, tensor<64x64xf32, #cp>) {
    %z = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<64x64xf32, #cp>
    %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<64x64xf32, #cp>) -> tensor<64x64xf32, #cp>
    %p = linalg.matmul ins(%a, %b : tensor<64x64xf32, #cp>, tensor<64x64xf32, #cp>) outs(%f0 : tensor<64x64xf32, #cp>) -> tensor<64x64xf32, #cp>
    %e1 = tensor.empty() : tensor<64x64xf32, #cp>
    %f1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<64x64xf32, #cp>) -> tensor<64x64xf32, #cp>
    %q = linalg.matmul ins(%c, %d : tensor<64x64xf32, #cp>, tensor<64x64xf32, #cp>) outs(%f1 : tensor<64x64xf32, #cp>) -> tensor<64x64xf32, #cp>
    return %p, %q : tensor<64x64xf32, #cp>, tensor<64x64xf32, #cp>
  }
}

// -----

// The same on a device that miscompiles members sharing a local array
// (shared_local_memory = 0, as the PoCL preset says): each member declares
// its own tiles, the first member's, then the second's.
// CHECK-LABEL: func.func @two_gemms_own_local_memory
// CHECK: fbl.dispatch @k{{[0-9]+}}_merged
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: fbl.group_id 0
// CHECK-NEXT: fbl.local_id 0
// CHECK-NEXT: %[[A0:.*]] = memref.alloca() : memref<2x16x8xvector<4xf32>, 3>
// CHECK-NEXT: %[[A1:.*]] = memref.alloca() : memref<2x16x8xvector<4xf32>, 3>
// CHECK-NEXT: %[[B0:.*]] = memref.alloca() : memref<2x16x8xvector<4xf32>, 3>
// CHECK-NEXT: %[[B1:.*]] = memref.alloca() : memref<2x16x8xvector<4xf32>, 3>
// CHECK-NOT: memref.alloca
// CHECK: scf.if
// CHECK: memref.store {{.*}}, %[[A0]]
// CHECK-NOT: %[[B0]]
// CHECK: scf.if
// CHECK: memref.store {{.*}}, %[[B0]]
// CHECK: } variants {
#cp = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"nvidia-h200", shared_local_memory = 0>} {
  func.func @two_gemms_own_local_memory(%a: tensor<64x64xf32, #cp>, %b: tensor<64x64xf32, #cp>,
                       %c: tensor<64x64xf32, #cp>, %d: tensor<64x64xf32, #cp>)
      -> (tensor<64x64xf32, #cp>, tensor<64x64xf32, #cp>) {
    %z = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<64x64xf32, #cp>
    %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<64x64xf32, #cp>) -> tensor<64x64xf32, #cp>
    %p = linalg.matmul ins(%a, %b : tensor<64x64xf32, #cp>, tensor<64x64xf32, #cp>) outs(%f0 : tensor<64x64xf32, #cp>) -> tensor<64x64xf32, #cp>
    %e1 = tensor.empty() : tensor<64x64xf32, #cp>
    %f1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<64x64xf32, #cp>) -> tensor<64x64xf32, #cp>
    %q = linalg.matmul ins(%c, %d : tensor<64x64xf32, #cp>, tensor<64x64xf32, #cp>) outs(%f1 : tensor<64x64xf32, #cp>) -> tensor<64x64xf32, #cp>
    return %p, %q : tensor<64x64xf32, #cp>, tensor<64x64xf32, #cp>
  }
}

// -----

// Kernels merge only with kernels of as many variants. The 4096-element
// GEMM takes gemm_tile, with the preset's three variants; the 16384-element
// one the class's tile, the same but for its stores after 8 k steps, which
// make the variant [8, 0] its own body: two variants. Two launches.
// CHECK-LABEL: func.func @gemms_of_other_variants
// CHECK: fbl.dispatch @k{{[0-9]+}}_gemm_local
// CHECK: } variants {
// CHECK: }, {
// CHECK: }, {
// CHECK: } -> tensor<64x64xf32
// CHECK: fbl.dispatch @k{{[0-9]+}}_gemm_local
// CHECK: } variants {
// CHECK: }, {
// CHECK-NOT: }, {
// CHECK: } -> tensor<128x128xf32
// CHECK-NOT: _merged
#cp = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"nvidia-h200", gemm_tile = [8, 2, 16], gemm_tile_classes = [[16384, 8, 2, 16, 8, 1, 8]]>} {
  func.func @gemms_of_other_variants(%a: tensor<64x64xf32, #cp>, %b: tensor<64x64xf32, #cp>,
                                     %c: tensor<128x64xf32, #cp>, %d: tensor<64x128xf32, #cp>)
      -> (tensor<64x64xf32, #cp>, tensor<128x128xf32, #cp>) {
    %z = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<64x64xf32, #cp>
    %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<64x64xf32, #cp>) -> tensor<64x64xf32, #cp>
    %p = linalg.matmul ins(%a, %b : tensor<64x64xf32, #cp>, tensor<64x64xf32, #cp>) outs(%f0 : tensor<64x64xf32, #cp>) -> tensor<64x64xf32, #cp>
    %e1 = tensor.empty() : tensor<128x128xf32, #cp>
    %f1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<128x128xf32, #cp>) -> tensor<128x128xf32, #cp>
    %q = linalg.matmul ins(%c, %d : tensor<128x64xf32, #cp>, tensor<64x128xf32, #cp>) outs(%f1 : tensor<128x128xf32, #cp>) -> tensor<128x128xf32, #cp>
    return %p, %q : tensor<64x64xf32, #cp>, tensor<128x128xf32, #cp>
  }
}

// -----

// A tile class with own_launch: its GEMMs (the 128x128 ones, marked
// fbl.own_launch by fbl-lower-to-kernels) run in launches of their own,
// while the two 64x64 GEMMs of gemm_tile still share one, which lists
// both in its fbl.gemm (batch, m, n, k and the tile's rows and columns
// each, in member order).
// CHECK-LABEL: func.func @own_launch
// CHECK: fbl.dispatch @k{{[0-9]+}}_gemm_local {{.*}}outs({{.*}}tensor<128x128xf32{{.*}}fbl.gemm = array<i64: 1, 128, 128, 64, 64, 64>, fbl.own_launch
// CHECK: fbl.dispatch @k{{[0-9]+}}_gemm_local {{.*}}outs({{.*}}tensor<128x128xf32{{.*}}fbl.own_launch
// CHECK: fbl.dispatch @k{{[0-9]+}}_merged {{.*}}outs({{.*}}tensor<64x64xf32{{.*}}tensor<64x64xf32{{.*}}attributes {fbl.gemm = array<i64: 1, 64, 64, 64, 64, 64, 1, 64, 64, 64, 64, 64>}
// CHECK-NOT: fbl.dispatch
#cp = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"nvidia-h200", gemm_tile = [8, 2, 16], gemm_tile_classes = [[16384, 8, 2, 16, 8, 1, 0, 2, 1]]>} {
  func.func @own_launch(%a: tensor<64x64xf32, #cp>, %b: tensor<64x64xf32, #cp>,
                        %c: tensor<128x64xf32, #cp>, %d: tensor<64x128xf32, #cp>)
      -> (tensor<128x128xf32, #cp>, tensor<128x128xf32, #cp>, tensor<64x64xf32, #cp>, tensor<64x64xf32, #cp>) {
    %z = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<128x128xf32, #cp>
    %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<128x128xf32, #cp>) -> tensor<128x128xf32, #cp>
    %p = linalg.matmul ins(%c, %d : tensor<128x64xf32, #cp>, tensor<64x128xf32, #cp>) outs(%f0 : tensor<128x128xf32, #cp>) -> tensor<128x128xf32, #cp>
    %e1 = tensor.empty() : tensor<128x128xf32, #cp>
    %f1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<128x128xf32, #cp>) -> tensor<128x128xf32, #cp>
    %q = linalg.matmul ins(%c, %d : tensor<128x64xf32, #cp>, tensor<64x128xf32, #cp>) outs(%f1 : tensor<128x128xf32, #cp>) -> tensor<128x128xf32, #cp>
    %e2 = tensor.empty() : tensor<64x64xf32, #cp>
    %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<64x64xf32, #cp>) -> tensor<64x64xf32, #cp>
    %r = linalg.matmul ins(%a, %b : tensor<64x64xf32, #cp>, tensor<64x64xf32, #cp>) outs(%f2 : tensor<64x64xf32, #cp>) -> tensor<64x64xf32, #cp>
    %e3 = tensor.empty() : tensor<64x64xf32, #cp>
    %f3 = linalg.fill ins(%z : f32) outs(%e3 : tensor<64x64xf32, #cp>) -> tensor<64x64xf32, #cp>
    %s = linalg.matmul ins(%b, %a : tensor<64x64xf32, #cp>, tensor<64x64xf32, #cp>) outs(%f3 : tensor<64x64xf32, #cp>) -> tensor<64x64xf32, #cp>
    return %p, %q, %r, %s : tensor<128x128xf32, #cp>, tensor<128x128xf32, #cp>, tensor<64x64xf32, #cp>, tensor<64x64xf32, #cp>
  }
}

// -----

// Small kernels (fewer work-groups than the target's compute units) that
// only the results read wait for the end of the step: @k1's row sums of %p
// would run beside the tanh, @k2's after it, each nearly alone; deferred,
// they share one launch after the tanh.
// CHECK-LABEL: func.func @deferred
// CHECK: fbl.dispatch @k0_generic
// CHECK: math.tanh
// CHECK: fbl.dispatch @k1_merged {{.*}}grid [256, 1, 1] workgroup [32, 1, 1]
// CHECK-NOT: fbl.dispatch
// CHECK: return
#cp = #fbl.channel_packed<packed = 1>
#v = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
module attributes {fbl.target = #fbl.target<"nvidia-h200">} {
  func.func @deferred(%x: tensor<512x512xf32, #cp>, %p: tensor<512x512xf32, #cp>)
      -> (tensor<512x512xf32, #cp>, tensor<512xf32, #v>, tensor<512xf32, #v>) {
    %e0 = tensor.empty() : tensor<512x512xf32, #cp>
    %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<512x512xf32, #cp>) outs(%e0 : tensor<512x512xf32, #cp>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.tanh %v : f32
      linalg.yield %r : f32
    } -> tensor<512x512xf32, #cp>
    %zero = arith.constant 0.0 : f32
    %e1 = tensor.empty() : tensor<512xf32, #v>
    %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<512xf32, #v>) -> tensor<512xf32, #v>
    %s1 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%p : tensor<512x512xf32, #cp>) outs(%z1 : tensor<512xf32, #v>) {
    ^bb0(%v: f32, %o: f32):
      %r = arith.addf %v, %o : f32
      linalg.yield %r : f32
    } -> tensor<512xf32, #v>
    %e2 = tensor.empty() : tensor<512xf32, #v>
    %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<512xf32, #v>) -> tensor<512xf32, #v>
    %s2 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%a : tensor<512x512xf32, #cp>) outs(%z2 : tensor<512xf32, #v>) {
    ^bb0(%v: f32, %o: f32):
      %r = arith.addf %v, %o : f32
      linalg.yield %r : f32
    } -> tensor<512xf32, #v>
    return %a, %s1, %s2 : tensor<512x512xf32, #cp>, tensor<512xf32, #v>, tensor<512xf32, #v>
  }
}

// -----

// What a kernel that stays in place reads cannot wait: @k1's sums feed
// @k2's scaling of tanh(%x), which fills the device, so @k1 stays before
// it, beside the tanh (another work-group size: no merge).
// CHECK-LABEL: func.func @feeds_a_large_kernel
// CHECK: fbl.dispatch @k0_generic
// CHECK: math.tanh
// CHECK: fbl.dispatch @k1_generic
// CHECK: fbl.dispatch @k2_generic
// CHECK: fbl.dispatch @k3_generic
// CHECK-NOT: fbl.dispatch
// CHECK: return
#cp = #fbl.channel_packed<packed = 1>
#v = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
module attributes {fbl.target = #fbl.target<"nvidia-h200">} {
  func.func @feeds_a_large_kernel(%x: tensor<512x512xf32, #cp>, %p: tensor<512x512xf32, #cp>)
      -> (tensor<512x512xf32, #cp>, tensor<512x512xf32, #cp>, tensor<512xf32, #v>) {
    %e0 = tensor.empty() : tensor<512x512xf32, #cp>
    %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<512x512xf32, #cp>) outs(%e0 : tensor<512x512xf32, #cp>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.tanh %v : f32
      linalg.yield %r : f32
    } -> tensor<512x512xf32, #cp>
    %zero = arith.constant 0.0 : f32
    %e1 = tensor.empty() : tensor<512xf32, #v>
    %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<512xf32, #v>) -> tensor<512xf32, #v>
    %s1 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%p : tensor<512x512xf32, #cp>) outs(%z1 : tensor<512xf32, #v>) {
    ^bb0(%v: f32, %o: f32):
      %r = arith.addf %v, %o : f32
      linalg.yield %r : f32
    } -> tensor<512xf32, #v>
    %e2 = tensor.empty() : tensor<512x512xf32, #cp>
    %b = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%a, %s1 : tensor<512x512xf32, #cp>, tensor<512xf32, #v>) outs(%e2 : tensor<512x512xf32, #cp>) {
    ^bb0(%v: f32, %s: f32, %o: f32):
      %r = arith.mulf %v, %s : f32
      linalg.yield %r : f32
    } -> tensor<512x512xf32, #cp>
    %e3 = tensor.empty() : tensor<512xf32, #v>
    %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<512xf32, #v>) -> tensor<512xf32, #v>
    %s3 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%b : tensor<512x512xf32, #cp>) outs(%z3 : tensor<512xf32, #v>) {
    ^bb0(%v: f32, %o: f32):
      %r = arith.addf %v, %o : f32
      linalg.yield %r : f32
    } -> tensor<512xf32, #v>
    return %a, %b, %s3 : tensor<512x512xf32, #cp>, tensor<512x512xf32, #cp>, tensor<512xf32, #v>
  }
}

// -----

// Three independent kernels where the target lets a kernel write two images:
// the first two share a launch, the third runs in its own (a merged kernel
// takes every member's outputs; NVIDIA's driver builds one past its limit
// and faults the queue when it runs).
// CHECK-LABEL: func.func @write_image_limit
// CHECK: fbl.dispatch @k0_merged ins(%arg0, %arg1 : {{.*}}) outs({{[^,]*}}, {{[^,]*}} : {{.*}})
// CHECK: fbl.dispatch @k2_generic ins(%arg2 : {{.*}})
// CHECK-NOT: fbl.dispatch
#cp = #fbl.channel_packed<packed = 1>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu", max_write_image_args = 2>} {
  func.func @write_image_limit(%x: tensor<8x64xf32, #cp>, %y: tensor<8x64xf32, #cp>, %z: tensor<8x64xf32, #cp>)
      -> (tensor<8x64xf32, #cp>, tensor<8x64xf32, #cp>, tensor<8x64xf32, #cp>) {
    %e0 = tensor.empty() : tensor<8x64xf32, #cp>
    %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<8x64xf32, #cp>) outs(%e0 : tensor<8x64xf32, #cp>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.exp %v : f32
      linalg.yield %r : f32
    } -> tensor<8x64xf32, #cp>
    %e1 = tensor.empty() : tensor<8x64xf32, #cp>
    %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%y : tensor<8x64xf32, #cp>) outs(%e1 : tensor<8x64xf32, #cp>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.tanh %v : f32
      linalg.yield %r : f32
    } -> tensor<8x64xf32, #cp>
    %e2 = tensor.empty() : tensor<8x64xf32, #cp>
    %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%z : tensor<8x64xf32, #cp>) outs(%e2 : tensor<8x64xf32, #cp>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.sin %v : f32
      linalg.yield %r : f32
    } -> tensor<8x64xf32, #cp>
    return %a, %b, %c : tensor<8x64xf32, #cp>, tensor<8x64xf32, #cp>, tensor<8x64xf32, #cp>
  }
}

// -----

// Three kernels reading one input where the target lets a kernel read two
// images: an input the members share is passed once, so all three fit (one
// read image, three write images).
// CHECK-LABEL: func.func @shared_input_counted_once
// CHECK: fbl.dispatch @k0_merged ins(%arg0 : {{.*}}) outs({{[^,]*}}, {{[^,]*}}, {{[^,]*}} : {{.*}})
// CHECK-NOT: fbl.dispatch
#cp = #fbl.channel_packed<packed = 1>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu", max_read_image_args = 2, max_write_image_args = 3>} {
  func.func @shared_input_counted_once(%x: tensor<8x64xf32, #cp>)
      -> (tensor<8x64xf32, #cp>, tensor<8x64xf32, #cp>, tensor<8x64xf32, #cp>) {
    %e0 = tensor.empty() : tensor<8x64xf32, #cp>
    %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<8x64xf32, #cp>) outs(%e0 : tensor<8x64xf32, #cp>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.exp %v : f32
      linalg.yield %r : f32
    } -> tensor<8x64xf32, #cp>
    %e1 = tensor.empty() : tensor<8x64xf32, #cp>
    %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<8x64xf32, #cp>) outs(%e1 : tensor<8x64xf32, #cp>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.tanh %v : f32
      linalg.yield %r : f32
    } -> tensor<8x64xf32, #cp>
    %e2 = tensor.empty() : tensor<8x64xf32, #cp>
    %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<8x64xf32, #cp>) outs(%e2 : tensor<8x64xf32, #cp>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.sin %v : f32
      linalg.yield %r : f32
    } -> tensor<8x64xf32, #cp>
    return %a, %b, %c : tensor<8x64xf32, #cp>, tensor<8x64xf32, #cp>, tensor<8x64xf32, #cp>
  }
}
