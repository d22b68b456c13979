// One wave of 16 work-items walks a 16x16-texel image, four steps per
// cache line, through a fully associative cache of four 4x1-texel lines.
// Row-major (@rows: item l reads texel (y = j, x = l) at step j): a step's
// 16 reads cover 4 lines, each missed once: 256 fetches, 64 misses.
// Transposed (@columns: item l reads (y = l, x = j)): a step touches 16
// lines, the cache keeps 4, so the line an item comes back to at the next
// step is long gone: all 256 miss. With 16 lines of cache (the second run)
// the four steps over a line column reuse it: 64 misses, as row-major.
// RUN: fbl-cachesim %s | FileCheck %s --check-prefix=SMALL
// RUN: fbl-cachesim %s --target='#fbl.target<"adreno-a740", cache_line_texels = [4, 1], cache_bytes = 1024, cache_ways = 16, compute_units = 1, wave_size = 16>' | FileCheck %s --check-prefix=LARGE

// SMALL: texture cache 256 B, 4-way, 4x1-texel lines
// SMALL: rows 16x1x1 16x1x1 1/1 256 64 75.0 0
// SMALL: columns 16x1x1 16x1x1 1/1 256 256 0.0 0

// LARGE: texture cache 1024 B, 16-way, 4x1-texel lines
// LARGE: rows 16x1x1 16x1x1 1/1 256 64 75.0 0
// LARGE: columns 16x1x1 16x1x1 1/1 256 64 75.0 0

!t = tensor<16x64xf32, #fbl.channel_packed<packed = 1>>
!o = tensor<4xf32, #fbl.channel_packed<packed = 0>>
module attributes {fbl.target = #fbl.target<"adreno-a740", cache_line_texels = [4, 1], cache_bytes = 256, cache_ways = 4, compute_units = 1, wave_size = 16>} {
  func.func @walk(%a: !t) -> (!o, !o) {
    %e = tensor.empty() : !o
    %r = fbl.dispatch @rows ins(%a : !t) outs(%e : !o)
        grid [16, 1, 1] workgroup [16, 1, 1] {
    ^bb0(%in: !t, %out: !o):
      %l = fbl.work_item_id 0
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      scf.for %j = %c0 to %c16 step %c1 {
        %t = fbl.load_texel %in[%c0, %j, %l] : !t
      }
    } -> !o
    %c = fbl.dispatch @columns ins(%a : !t) outs(%e : !o)
        grid [16, 1, 1] workgroup [16, 1, 1] {
    ^bb0(%in: !t, %out: !o):
      %l = fbl.work_item_id 0
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      scf.for %j = %c0 to %c16 step %c1 {
        %t = fbl.load_texel %in[%c0, %l, %j] : !t
      }
    } -> !o
    return %r, %c : !o, !o
  }
}
