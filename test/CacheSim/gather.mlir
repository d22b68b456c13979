// A gather: work-item l reads a row id from an i64 buffer (through a
// reshape view of the function argument, whose fbl.input_range says ids lie
// in [0, 3]) and the texel (row, l) of a 16x8-texel table. The ids are
// pseudo-random inside the range; with 4x4-texel lines every row in [0, 3]
// falls in the first line row, so the 16 texel fetches touch exactly the 4
// lines of that row: 4 misses, whatever the ids. The 16 ids (8 bytes each)
// fill two 64-byte buffer lines: 2 misses.
// RUN: fbl-cachesim %s --json | FileCheck %s
// RUN: fbl-cachesim %s --trace | FileCheck %s --check-prefix=TRACE

// CHECK:      "buffer_misses": 2,
// CHECK-NEXT: "buffer_reads": 16,
// CHECK-NEXT: "buffer_writes": 0,
// CHECK:      "texel_fetches": 16,
// CHECK-NEXT: "texel_misses": 4,
// CHECK-NEXT: "texel_writes": 0,

// TRACE:      @gather read in0 [0] line 0 item (0, 0, 0) miss
// TRACE-NEXT: @gather read in0 [1] line 0 item (1, 0, 0) hit
// TRACE-COUNT-6: @gather read in0 [{{[0-9]+}}] line 0 item ({{[0-9]+}}, 0, 0) hit
// TRACE-NEXT: @gather read in0 [8] line 1 item (8, 0, 0) miss
// TRACE-COUNT-7: @gather read in0 [{{[0-9]+}}] line 1 item ({{[0-9]+}}, 0, 0) hit
// TRACE-NEXT: @gather read in1 [0, {{[0-3]}}, 0] item (0, 0, 0) miss
// TRACE-COUNT-15: @gather read in1 [0, {{[0-3]}}, {{[0-9]+}}] item

!ids = tensor<2x8xi64, #fbl.buffer>
!flat = tensor<16xi64, #fbl.buffer>
!t = tensor<8x64xf32, #fbl.channel_packed<packed = 1>>
!o = tensor<4xf32, #fbl.channel_packed<packed = 0>>
module attributes {fbl.target = #fbl.target<"adreno-a740", cache_line_texels = [4, 4], compute_units = 1>} {
  func.func @lookup(%ids: !ids {fbl.input_range = {min = 0 : i64, max = 3 : i64, message = "row"}},
                    %table: !t) -> !o {
    %flat = fbl.reshape_view %ids [[0, 1]] : !ids -> !flat
    %e = tensor.empty() : !o
    %r = fbl.dispatch @gather ins(%flat, %table : !flat, !t) outs(%e : !o)
        grid [16, 1, 1] workgroup [16, 1, 1] {
    ^bb0(%in: !flat, %tab: !t, %out: !o):
      %l = fbl.work_item_id 0
      %c0 = arith.constant 0 : index
      %id = fbl.load_element %in[%l] : !flat -> i64
      %row = arith.index_cast %id : i64 to index
      %t = fbl.load_texel %tab[%c0, %row, %l] : !t
    } -> !o
    return %r : !o
  }
}
