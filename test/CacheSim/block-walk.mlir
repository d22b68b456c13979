// One work-item walks an 8x8-texel block twice, row by row, through 4x2-texel
// lines: a pass touches 8 lines (2 per two rows), each first at the start of
// an even row. A fully associative cache of 8 lines keeps them all: only
// the first pass misses (8 of 128). One of 4 lines holds the last four a
// pass used when the next pass starts over: both passes miss every line
// (16).
// RUN: fbl-cachesim %s --target='#fbl.target<"mali-g710", cache_line_texels = [4, 2], cache_bytes = 1024, cache_ways = 8, compute_units = 1>' | FileCheck %s --check-prefix=FITS
// RUN: fbl-cachesim %s --target='#fbl.target<"mali-g710", cache_line_texels = [4, 2], cache_bytes = 512, cache_ways = 4, compute_units = 1>' | FileCheck %s --check-prefix=SPILLS

// FITS: walk 1x1x1 1x1x1 1/1 128 8 93.8 0
// SPILLS: walk 1x1x1 1x1x1 1/1 128 16 87.5 0

!t = tensor<8x32xf32, #fbl.channel_packed<packed = 1>>
!o = tensor<4xf32, #fbl.channel_packed<packed = 0>>
module {
  func.func @block(%a: !t) -> !o {
    %e = tensor.empty() : !o
    %r = fbl.dispatch @walk ins(%a : !t) outs(%e : !o)
        grid [1, 1, 1] workgroup [1, 1, 1] {
    ^bb0(%in: !t, %out: !o):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c8 = arith.constant 8 : index
      scf.for %pass = %c0 to %c2 step %c1 {
        scf.for %y = %c0 to %c8 step %c1 {
          scf.for %x = %c0 to %c8 step %c1 {
            %t = fbl.load_texel %in[%c0, %y, %x] : !t
          }
        }
      }
    } -> !o
    return %r : !o
  }
}
