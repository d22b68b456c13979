// Every failure is one line and exit code 1, never a silent zero.
// RUN: not fbl-cachesim %s --kernel=unknown_op 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not fbl-cachesim %s --kernel=float_address 2>&1 | FileCheck %s --check-prefix=FLOAT
// RUN: not fbl-cachesim %s --kernel=no_range 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not fbl-cachesim %s --kernel=out_of_bounds 2>&1 | FileCheck %s --check-prefix=BOUNDS
// RUN: not fbl-cachesim %s --kernel=divergent 2>&1 | FileCheck %s --check-prefix=BARRIER
// RUN: not fbl-cachesim %s --kernel=global_array 2>&1 | FileCheck %s --check-prefix=ARRAY
// RUN: not fbl-cachesim %s --kernel=nonesuch 2>&1 | FileCheck %s --check-prefix=KERNEL
// RUN: not fbl-cachesim %s --target=adreno-a999 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not fbl-cachesim %s --target='#fbl.target<"my-gpu">' 2>&1 | FileCheck %s --check-prefix=ATTR
// RUN: not fbl-cachesim %s --target='#fbl.buffer' 2>&1 | FileCheck %s --check-prefix=NOTTARGET
// RUN: not fbl-cachesim %s --kernel=unknown_op --min-spearman=0.9 2>&1 | FileCheck %s --check-prefix=COMPARE
// RUN: not fbl-cachesim %s --groups=-5 2>&1 | FileCheck %s --check-prefix=GROUPS

// UNKNOWN: errors.mlir:{{[0-9]+}}:{{[0-9]+}}: error: fbl-cachesim: kernel @unknown_op: cannot interpret 'math.ctlz'
// UNKNOWN-NOT: {{.}}
// FLOAT: errors.mlir:{{[0-9]+}}:{{[0-9]+}}: error: fbl-cachesim: kernel @float_address: an address depends on float data computed by 'arith.fptosi'
// RANGE: error: fbl-cachesim: kernel @no_range: the index read from in0 has no recorded range (fbl.input_range on the function argument it comes from)
// BOUNDS: fbl-cachesim: error: kernel @out_of_bounds: 'fbl.load_texel': work-item (15, 0, 0) accesses texel [0, 0, 16] outside in0 (1 x 8 x 16 texels)
// BARRIER: fbl-cachesim: error: kernel @divergent: 4 work-items of a group ended without reaching the barrier the others wait at
// ARRAY: error: fbl-cachesim: kernel @global_array: only static local-memory (memory space 3) arrays
// KERNEL: fbl-cachesim: error: no kernel @nonesuch in the module
// TARGET: fbl-cachesim: error: --target: unknown target 'adreno-a999' (presets: adreno-a740, mali-g710, pocl-cpu, nvidia-h200; or give #fbl.target<...>)
// ATTR: error: target 'my-gpu' is not a preset (adreno-a740, mali-g710, pocl-cpu, nvidia-h200); give 'max_image_width'
// ATTR-NOT: {{.}}
// NOTTARGET: fbl-cachesim: error: --target: '#fbl.buffer' is not an #fbl.target attribute
// COMPARE: fbl-cachesim: error: --min-spearman needs --compare
// GROUPS: fbl-cachesim: error: --groups must be 0 (all) or a positive count

!t = tensor<8x64xf32, #fbl.channel_packed<packed = 1>>
!ids = tensor<16xi64, #fbl.buffer>
!o = tensor<4xf32, #fbl.channel_packed<packed = 0>>
module attributes {fbl.target = #fbl.target<"adreno-a740">} {
  func.func @kernels(%a: !t, %ids: !ids) -> (!o, !o, !o, !o, !o, !o) {
    %e = tensor.empty() : !o
    %k0 = fbl.dispatch @unknown_op ins(%a : !t) outs(%e : !o)
        grid [16, 1, 1] workgroup [16, 1, 1] {
    ^bb0(%in: !t, %out: !o):
      %l = fbl.work_item_id 0
      %c0 = arith.constant 0 : index
      %i = arith.index_cast %l : index to i32
      %z = math.ctlz %i : i32
      %zi = arith.index_cast %z : i32 to index
      %t = fbl.load_texel %in[%c0, %c0, %zi] : !t
    } -> !o
    %k1 = fbl.dispatch @float_address ins(%a : !t) outs(%e : !o)
        grid [16, 1, 1] workgroup [16, 1, 1] {
    ^bb0(%in: !t, %out: !o):
      %l = fbl.work_item_id 0
      %c0 = arith.constant 0 : index
      %t = fbl.load_texel %in[%c0, %c0, %l] : !t
      %v = vector.extract %t[0] : f32 from vector<4xf32>
      %f = math.floor %v : f32
      %j = arith.fptosi %f : f32 to i32
      %x = arith.index_cast %j : i32 to index
      %u = fbl.load_texel %in[%c0, %c0, %x] : !t
    } -> !o
    %k2 = fbl.dispatch @no_range ins(%ids, %a : !ids, !t) outs(%e : !o)
        grid [16, 1, 1] workgroup [16, 1, 1] {
    ^bb0(%in: !ids, %tab: !t, %out: !o):
      %l = fbl.work_item_id 0
      %c0 = arith.constant 0 : index
      %id = fbl.load_element %in[%l] : !ids -> i64
      %row = arith.index_cast %id : i64 to index
      %t = fbl.load_texel %tab[%c0, %row, %l] : !t
    } -> !o
    %k3 = fbl.dispatch @out_of_bounds ins(%a : !t) outs(%e : !o)
        grid [16, 1, 1] workgroup [16, 1, 1] {
    ^bb0(%in: !t, %out: !o):
      %l = fbl.work_item_id 0
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %x = arith.addi %l, %c1 : index
      %t = fbl.load_texel %in[%c0, %c0, %x] : !t
    } -> !o
    %k4 = fbl.dispatch @divergent ins(%a : !t) outs(%e : !o)
        grid [8, 1, 1] workgroup [8, 1, 1] {
    ^bb0(%in: !t, %out: !o):
      %l = fbl.local_id 0
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %first = arith.cmpi ult, %l, %c4 : index
      scf.if %first {
        fbl.barrier
      }
      %t = fbl.load_texel %in[%c0, %c0, %l] : !t
    } -> !o
    %k5 = fbl.dispatch @global_array ins(%a : !t) outs(%e : !o)
        grid [8, 1, 1] workgroup [8, 1, 1] {
    ^bb0(%in: !t, %out: !o):
      %m = memref.alloca() : memref<8xindex>
    } -> !o
    return %k0, %k1, %k2, %k3, %k4, %k5 : !o, !o, !o, !o, !o, !o
  }
}
