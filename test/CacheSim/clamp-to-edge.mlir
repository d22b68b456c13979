// A read with clamp_to_edge may lie past the image: the simulator reads
// the edge's texel, as the device's sampler does. 16 work-items read
// texels x = l + 8 of a 16-texel row: items 8..15 read past it, at x = 15.
// The 16 reads touch texels 8..15, two 4x1-texel lines: 2 misses. Without
// clamp_to_edge such a read is an error (errors.mlir, BOUNDS).
// RUN: fbl-cachesim %s | FileCheck %s

// CHECK: texture cache 256 B, 4-way, 4x1-texel lines
// CHECK: past_edge 16x1x1 16x1x1 1/1 16 2 87.5 0

!t = tensor<1x64xf32, #fbl.channel_packed<packed = 1>>
!o = tensor<4xf32, #fbl.channel_packed<packed = 0>>
module attributes {fbl.target = #fbl.target<"adreno-a740", cache_line_texels = [4, 1], cache_bytes = 256, cache_ways = 4, compute_units = 1, wave_size = 16>} {
  func.func @edge(%a: !t) -> !o {
    %e = tensor.empty() : !o
    %r = fbl.dispatch @past_edge ins(%a : !t) outs(%e : !o)
        grid [16, 1, 1] workgroup [16, 1, 1] {
    ^bb0(%in: !t, %out: !o):
      %l = fbl.work_item_id 0
      %c0 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %x = arith.addi %l, %c8 : index
      %t = fbl.load_texel %in[%c0, %c0, %x] {clamp_to_edge} : !t
    } -> !o
    return %r : !o
  }
}
