// Waves of 4 work-items issue one access each per turn, round-robin; a
// barrier holds the group until all 8 items arrive. Wave 0 (items 0-3)
// reads rows 0 and 1 before the barrier, wave 1 (items 4-7) only row 0:
// with the barrier, wave 1 waits while wave 0 reads row 1, and both read
// row 2 after it; without it (@free), wave 1 reads row 2 while wave 0 is
// still on row 1.
// RUN: fbl-cachesim %s --trace | FileCheck %s

// CHECK:      @held read in0 [0, 0, 0] item (0, 0, 0) miss
// CHECK-NEXT: @held read in0 [0, 0, 1] item (1, 0, 0) hit
// CHECK-NEXT: @held read in0 [0, 0, 2] item (2, 0, 0) hit
// CHECK-NEXT: @held read in0 [0, 0, 3] item (3, 0, 0) hit
// CHECK-NEXT: @held read in0 [0, 0, 4] item (4, 0, 0) miss
// CHECK-NEXT: @held read in0 [0, 0, 5] item (5, 0, 0) hit
// CHECK-NEXT: @held read in0 [0, 0, 6] item (6, 0, 0) hit
// CHECK-NEXT: @held read in0 [0, 0, 7] item (7, 0, 0) hit
// CHECK-NEXT: @held read in0 [0, 1, 0] item (0, 0, 0) miss
// CHECK-NEXT: @held read in0 [0, 1, 1] item (1, 0, 0) hit
// CHECK-NEXT: @held read in0 [0, 1, 2] item (2, 0, 0) hit
// CHECK-NEXT: @held read in0 [0, 1, 3] item (3, 0, 0) hit
// CHECK-NEXT: @held read in0 [0, 2, 0] item (0, 0, 0) miss
// CHECK-NEXT: @held read in0 [0, 2, 1] item (1, 0, 0) hit
// CHECK-NEXT: @held read in0 [0, 2, 2] item (2, 0, 0) hit
// CHECK-NEXT: @held read in0 [0, 2, 3] item (3, 0, 0) hit
// CHECK-NEXT: @held read in0 [0, 2, 4] item (4, 0, 0) miss
// CHECK-NEXT: @held read in0 [0, 2, 5] item (5, 0, 0) hit
// CHECK-NEXT: @held read in0 [0, 2, 6] item (6, 0, 0) hit
// CHECK-NEXT: @held read in0 [0, 2, 7] item (7, 0, 0) hit

// CHECK:      @free read in0 [0, 0, 7] item (7, 0, 0) hit
// CHECK-NEXT: @free read in0 [0, 1, 0] item (0, 0, 0) miss
// CHECK-NEXT: @free read in0 [0, 1, 1] item (1, 0, 0) hit
// CHECK-NEXT: @free read in0 [0, 1, 2] item (2, 0, 0) hit
// CHECK-NEXT: @free read in0 [0, 1, 3] item (3, 0, 0) hit
// CHECK-NEXT: @free read in0 [0, 2, 4] item (4, 0, 0) miss
// CHECK-NEXT: @free read in0 [0, 2, 5] item (5, 0, 0) hit
// CHECK-NEXT: @free read in0 [0, 2, 6] item (6, 0, 0) hit
// CHECK-NEXT: @free read in0 [0, 2, 7] item (7, 0, 0) hit
// CHECK-NEXT: @free read in0 [0, 2, 0] item (0, 0, 0) miss

// Local memory carries addresses across the barrier: item l stores
// 3l mod 8, then reads its neighbour's value, x = 3(l + 1) mod 8.
// CHECK:      @exchange read in0 [0, 3, 3] item (0, 0, 0) miss
// CHECK-NEXT: @exchange read in0 [0, 3, 6] item (1, 0, 0) miss
// CHECK-NEXT: @exchange read in0 [0, 3, 1] item (2, 0, 0) hit
// CHECK-NEXT: @exchange read in0 [0, 3, 4] item (3, 0, 0) hit
// CHECK-NEXT: @exchange read in0 [0, 3, 7] item (4, 0, 0) hit
// CHECK-NEXT: @exchange read in0 [0, 3, 2] item (5, 0, 0) hit
// CHECK-NEXT: @exchange read in0 [0, 3, 5] item (6, 0, 0) hit
// CHECK-NEXT: @exchange read in0 [0, 3, 0] item (7, 0, 0) hit

!t = tensor<8x32xf32, #fbl.channel_packed<packed = 1>>
!o = tensor<4xf32, #fbl.channel_packed<packed = 0>>
module attributes {fbl.target = #fbl.target<"mali-g710", cache_line_texels = [4, 1], compute_units = 1, wave_size = 4>} {
  func.func @sync(%a: !t) -> (!o, !o, !o) {
    %e = tensor.empty() : !o
    %h = fbl.dispatch @held ins(%a : !t) outs(%e : !o)
        grid [8, 1, 1] workgroup [8, 1, 1] {
    ^bb0(%in: !t, %out: !o):
      %l = fbl.local_id 0
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %a0 = fbl.load_texel %in[%c0, %c0, %l] : !t
      %first = arith.cmpi ult, %l, %c4 : index
      scf.if %first {
        %a1 = fbl.load_texel %in[%c0, %c1, %l] : !t
      }
      fbl.barrier
      %a2 = fbl.load_texel %in[%c0, %c2, %l] : !t
    } -> !o
    %f = fbl.dispatch @free ins(%a : !t) outs(%e : !o)
        grid [8, 1, 1] workgroup [8, 1, 1] {
    ^bb0(%in: !t, %out: !o):
      %l = fbl.local_id 0
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %a0 = fbl.load_texel %in[%c0, %c0, %l] : !t
      %first = arith.cmpi ult, %l, %c4 : index
      scf.if %first {
        %a1 = fbl.load_texel %in[%c0, %c1, %l] : !t
      }
      %a2 = fbl.load_texel %in[%c0, %c2, %l] : !t
    } -> !o
    %x = fbl.dispatch @exchange ins(%a : !t) outs(%e : !o)
        grid [8, 1, 1] workgroup [8, 1, 1] {
    ^bb0(%in: !t, %out: !o):
      %shared = memref.alloca() : memref<8xindex, 3>
      %l = fbl.local_id 0
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %c8 = arith.constant 8 : index
      %m = arith.muli %l, %c3 : index
      %v = arith.remui %m, %c8 : index
      memref.store %v, %shared[%l] : memref<8xindex, 3>
      fbl.barrier
      %n = arith.addi %l, %c1 : index
      %next = arith.remui %n, %c8 : index
      %w = memref.load %shared[%next] : memref<8xindex, 3>
      %t = fbl.load_texel %in[%c0, %c3, %w] : !t
    } -> !o
    return %h, %f, %x : !o, !o, !o
  }
}
