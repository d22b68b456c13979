// --compare sets the cost model's fbl.estimate beside the simulation and
// ranks the kernels that have one by both. Simulated (as in
// transposed-read.mlir): @rows and @rows_again 64 misses, 8.77 us;
// @columns 256, 9.92 us; @single 1, 8.01 us. The estimates below rank them
// the same way, ties included: both correlations are 1. Made to put
// @columns second lowest (the sed), the estimate's ranks (3.5, 2, 1, 3.5)
// against the simulator's (2.5, 4, 1, 2.5) correlate by 1.5 / 4.5.
// RUN: fbl-cachesim %s --compare --min-spearman=0.9 | FileCheck %s
// RUN: fbl-cachesim %s --compare --json | FileCheck %s --check-prefix=JSON
// RUN: sed -e 's/misses = 40/misses = 5/' -e 's/time_ns = 3.0e+03/time_ns = 1.5e+03/' %s > %t.mlir
// RUN: fbl-cachesim %t.mlir --compare | FileCheck %s --check-prefix=SWAPPED
// RUN: not fbl-cachesim %t.mlir --compare --min-spearman=0.9 2>&1 | FileCheck %s --check-prefix=BELOW

// CHECK: kernel grid group groups fetches misses hit% writes time us model fetch model miss model us
// CHECK-NEXT: rows 16x1x1 16x1x1 1/1 256 64 75.0 0 8.77 256 10 2.00
// CHECK-NEXT: columns 16x1x1 16x1x1 1/1 256 256 0.0 0 9.92 256 40 3.00
// CHECK-NEXT: single 1x1x1 1x1x1 1/1 1 1 0.0 0 8.01 1 1 1.00
// CHECK-NEXT: rows_again 16x1x1 16x1x1 1/1 256 64 75.0 0 8.77 256 10 2.00
// CHECK-NEXT: unestimated 1x1x1 1x1x1 1/1 1 1 0.0 0 8.01 - - -
// CHECK: spearman over 4 kernels with fbl.estimate: misses 1.000, time 1.000

// JSON:      "estimate": {
// JSON-NEXT:   "fetches": 256.0,
// JSON-NEXT:   "misses": 10.0,
// JSON-NEXT:   "time_ns": 2000.0,
// JSON-NEXT:   "writes": 0.0
// JSON:      "spearman": {
// JSON-NEXT:   "kernels": 4,
// JSON-NEXT:   "misses": 1.0,
// JSON-NEXT:   "time": 1.0
// JSON-NEXT: },

// SWAPPED: spearman over 4 kernels with fbl.estimate: misses 0.333, time 0.333
// BELOW: fbl-cachesim: error: spearman of misses is 0.333 over 4 kernels, below --min-spearman=0.9

!t = tensor<16x64xf32, #fbl.channel_packed<packed = 1>>
!o = tensor<4xf32, #fbl.channel_packed<packed = 0>>
module attributes {fbl.target = #fbl.target<"adreno-a740", cache_line_texels = [4, 1], cache_bytes = 256, cache_ways = 4, compute_units = 1, wave_size = 16, step_ps = 1>} {
  func.func @walk(%a: !t) -> (!o, !o, !o, !o, !o) {
    %e = tensor.empty() : !o
    %r = fbl.dispatch @rows ins(%a : !t) outs(%e : !o)
        grid [16, 1, 1] workgroup [16, 1, 1] attributes {fbl.estimate = {fetches = 256 : i64, misses = 10 : i64, writes = 0 : i64, time_ns = 2.0e+03 : f64}} {
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
        grid [16, 1, 1] workgroup [16, 1, 1] attributes {fbl.estimate = {fetches = 256 : i64, misses = 40 : i64, writes = 0 : i64, time_ns = 3.0e+03 : f64}} {
    ^bb0(%in: !t, %out: !o):
      %l = fbl.work_item_id 0
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      scf.for %j = %c0 to %c16 step %c1 {
        %t = fbl.load_texel %in[%c0, %l, %j] : !t
      }
    } -> !o
    %s = fbl.dispatch @single ins(%a : !t) outs(%e : !o)
        grid [1, 1, 1] workgroup [1, 1, 1] attributes {fbl.estimate = {fetches = 1 : i64, misses = 1 : i64, writes = 0 : i64, time_ns = 1.0e+03 : f64}} {
    ^bb0(%in: !t, %out: !o):
      %c0 = arith.constant 0 : index
      %t = fbl.load_texel %in[%c0, %c0, %c0] : !t
    } -> !o
    %r2 = fbl.dispatch @rows_again ins(%a : !t) outs(%e : !o)
        grid [16, 1, 1] workgroup [16, 1, 1] attributes {fbl.estimate = {fetches = 256 : i64, misses = 10 : i64, writes = 0 : i64, time_ns = 2.0e+03 : f64}} {
    ^bb0(%in: !t, %out: !o):
      %l = fbl.work_item_id 0
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      scf.for %j = %c0 to %c16 step %c1 {
        %t = fbl.load_texel %in[%c0, %j, %l] : !t
      }
    } -> !o
    %u = fbl.dispatch @unestimated ins(%a : !t) outs(%e : !o)
        grid [1, 1, 1] workgroup [1, 1, 1] {
    ^bb0(%in: !t, %out: !o):
      %c0 = arith.constant 0 : index
      %t = fbl.load_texel %in[%c0, %c0, %c0] : !t
    } -> !o
    return %r, %c, %s, %r2, %u : !o, !o, !o, !o, !o
  }
}
