// A row-major copy of a 64x8-texel image on the Adreno-class cache (4x2-texel
// lines, 16 KiB, 4-way: 32 sets) with one compute unit: the 4 work-groups of
// 16x8 items fit in one resident set (1024 / 128 = 8 groups). Each of the
// 512 texels is fetched once; the 16 x 4 = 64 lines of the image spread over
// the 32 sets two per set, so only their first touch misses.
//   time = 8 us launch + (512 x 1.5 + 64 x 6 + 512 x 1.5) ns = 9.92 us.
// RUN: fbl-cachesim %s | FileCheck %s
// RUN: fbl-cachesim %s --json | FileCheck %s --check-prefix=JSON
// The preset's 6 compute units, a sample of 1 group: unit 0 runs group 0 of
// 4 (16 x 4 = 16 lines of 128 texels), scaled by 4; the time spreads over
// the 4 units used. (Grids no larger than the sample run whole.)
// RUN: fbl-cachesim %s --target=adreno-a740 --groups=1 | FileCheck %s --check-prefix=SAMPLE
// RUN: fbl-cachesim %s --target=adreno-a740 --groups=4 | FileCheck %s --check-prefix=WHOLE

// CHECK: target adreno-a740: compute units 1, wave 64, resident work-items 1024 per unit; texture cache 16384 B, 4-way, 4x2-texel lines
// CHECK: @copy
// CHECK-NEXT: kernel
// CHECK-NEXT: copy 64x8x1 16x8x1 4/4 512 64 87.5 512 9.92
// CHECK-NEXT: total @copy: 1 kernels, 512 fetches, 64 misses (87.5% hits), 512 writes, 9.92 us

// SAMPLE: copy 64x8x1 16x8x1 1/4 512 64 87.5 512 8.48
// WHOLE: copy 64x8x1 16x8x1 4/4 512 64 87.5 512 8.48

// JSON:      "fetches": 512.0,
// JSON:      "groups": 4,
// JSON:      "groups_simulated": 4,
// JSON:      "misses": 64.0,
// JSON:      "simulated": {
// JSON-NEXT:   "buffer_misses": 0,
// JSON-NEXT:   "buffer_reads": 0,
// JSON-NEXT:   "buffer_writes": 0,
// JSON-NEXT:   "instructions":
// JSON-NEXT:   "texel_fetches": 512,
// JSON-NEXT:   "texel_misses": 64,
// JSON-NEXT:   "texel_writes": 512,
// JSON-NEXT:   "work_items": 512
// JSON:      "time_ns": 9920.0,

!t = tensor<8x256xf32, #fbl.channel_packed<packed = 1>>
module attributes {fbl.target = #fbl.target<"adreno-a740", compute_units = 1>} {
  func.func @copy(%a: !t) -> !t {
    %e = tensor.empty() : !t
    %r = fbl.dispatch @copy ins(%a : !t) outs(%e : !t)
        grid [64, 8, 1] workgroup [16, 8, 1] {
    ^bb0(%in: !t, %out: !t):
      %x = fbl.work_item_id 0
      %y = fbl.work_item_id 1
      %c0 = arith.constant 0 : index
      %t = fbl.load_texel %in[%c0, %y, %x] : !t
      fbl.store_texel %t, %out[%c0, %y, %x] : !t
    } -> !t
    return %r : !t
  }
}
