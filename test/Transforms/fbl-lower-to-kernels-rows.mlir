// RUN: fbl-opt %s -split-input-file -fbl-lower-to-kernels="rows=true" | FileCheck %s
// RUN: fbl-opt %s -split-input-file -fbl-lower-to-kernels | FileCheck %s --check-prefix=OFF
// RUN: fbl-opt %s -split-input-file -fbl-lower-to-kernels="rows=true row-pairs=false" | FileCheck %s --check-prefix=UNPAIRED

// A softmax over rows of 10 (two whole texels and a half) is one kernel: a
// work-group takes two neighbouring rows (their texels share the device's
// image tiles) with 4 work-items (one texel of each row each); the maximum
// and the sum of both rows are reduced together in local memory, the
// normalized rows stored texel by texel. A work-item holds its texels in
// registers: the three passes read x once. Without `rows`, three kernels.
// The estimate: x's 18 texels are fetched once and miss once; y's 18
// texels are written; a work-item reads and writes 36 texels over 12
// work-items and takes 2 halvings for each of the 2 reductions: 7 accesses.

// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<6x10xf32, #fbl.channel_packed<packed = 1>>
// CHECK:         %[[Y:.+]] = fbl.dispatch @k0_rows ins(%[[X]] : {{.*}}) outs(%{{.*}} : tensor<6x10xf32, #fbl.channel_packed<packed = 1>>) grid [12, 1, 1] workgroup [4, 1, 1]
// CHECK-SAME:    {fbl.estimate = {fetches = 18 : i64, item_accesses = 7.000000e+00 : f64, misses = 6 : i64, multiplies = 0 : i64, time_ns = {{.*}}, writes = 18 : i64}}
// CHECK:           memref.alloca() : memref<8xf32, 3>
// CHECK:           fbl.local_id 0
// CHECK:           %[[G:.+]] = fbl.group_id 0
// CHECK:           %[[FIRST:.+]] = arith.muli %[[G]], %c2
// CHECK:           %[[R0:.+]] = arith.addi %[[FIRST]], %c0
// CHECK:           %[[R1:.+]] = arith.addi %[[FIRST]], %c1
// The maximum: the work-item's texel of each row, then two levels of
// halving for both.
// CHECK-NOT:       scf.for
// CHECK:           %[[Y0:.+]] = arith.addi %{{.*}}, %[[R0]]
// CHECK:           fbl.load_texel %{{.*}}[%{{.*}}, %[[Y0]], %{{.*}}] : tensor<6x10xf32, #fbl.channel_packed<packed = 1>>
// CHECK-COUNT-4:   arith.maxnumf
// CHECK:           %[[Y1:.+]] = arith.addi %{{.*}}, %[[R1]]
// CHECK:           fbl.load_texel %{{.*}}[%{{.*}}, %[[Y1]], %{{.*}}] : tensor<6x10xf32, #fbl.channel_packed<packed = 1>>
// CHECK-COUNT-4:   arith.maxnumf
// CHECK-NOT:       fbl.load_texel
// CHECK:           fbl.barrier
// CHECK:           scf.if
// CHECK:             arith.maxnumf
// CHECK:           fbl.barrier
// CHECK:           scf.if
// CHECK:             arith.maxnumf
// CHECK:           fbl.barrier
// The sum of exp(x - max), then the normalization stored, from the texel
// the work-item holds.
// CHECK-NOT:       fbl.load_texel
// CHECK-COUNT-4:   math.exp
// CHECK-NOT:       fbl.load_texel
// CHECK:           fbl.barrier
// CHECK-NOT:       fbl.load_texel
// CHECK:           arith.divf
// CHECK-NOT:       fbl.load_texel
// CHECK:           fbl.store_texel
// CHECK-NOT:     fbl.dispatch
// CHECK:         return %[[Y]]

// With row-pairs=false, a work-group per row.
// UNPAIRED-LABEL: func.func @softmax(
// UNPAIRED:         fbl.dispatch @k0_rows {{.*}} grid [24, 1, 1] workgroup [4, 1, 1]
// UNPAIRED:           memref.alloca() : memref<4xf32, 3>
// UNPAIRED-COUNT-1:   fbl.load_texel
// UNPAIRED-NOT:       fbl.load_texel
// UNPAIRED:           fbl.store_texel

// OFF-LABEL: func.func @softmax(
// OFF:         fbl.dispatch @k0_generic
// OFF:         fbl.dispatch @k1_generic
// OFF:         fbl.dispatch @k2_generic
// OFF-NOT:     fbl.dispatch @k{{[0-9]+}}_rows
#p1 = #fbl.channel_packed<packed = 1>
#p0 = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @softmax(%x: tensor<6x10xf32, #p1>) -> tensor<6x10xf32, #p1> {
    %nan = arith.constant 0x7FC00000 : f32
    %zero = arith.constant 0.0 : f32
    %re = tensor.empty() : tensor<6xf32, #p0>
    %m0 = linalg.fill ins(%nan : f32) outs(%re : tensor<6xf32, #p0>) -> tensor<6xf32, #p0>
    %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<6x10xf32, #p1>) outs(%m0 : tensor<6xf32, #p0>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.maxnumf %a, %acc : f32
      linalg.yield %r : f32
    } -> tensor<6xf32, #p0>
    %s0 = linalg.fill ins(%zero : f32) outs(%re : tensor<6xf32, #p0>) -> tensor<6xf32, #p0>
    %s = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x, %m : tensor<6x10xf32, #p1>, tensor<6xf32, #p0>) outs(%s0 : tensor<6xf32, #p0>) {
    ^bb0(%a: f32, %mx: f32, %acc: f32):
      %d = arith.subf %a, %mx : f32
      %e = math.exp %d : f32
      %r = arith.addf %e, %acc : f32
      linalg.yield %r : f32
    } -> tensor<6xf32, #p0>
    %ye = tensor.empty() : tensor<6x10xf32, #p1>
    %y = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %m, %s : tensor<6x10xf32, #p1>, tensor<6xf32, #p0>, tensor<6xf32, #p0>) outs(%ye : tensor<6x10xf32, #p1>) {
    ^bb0(%a: f32, %mx: f32, %sum: f32, %o: f32):
      %d = arith.subf %a, %mx : f32
      %e = math.exp %d : f32
      %r = arith.divf %e, %sum : f32
      linalg.yield %r : f32
    } -> tensor<6x10xf32, #p1>
    return %y : tensor<6x10xf32, #p1>
  }
}

// -----

// A norm: the mean and the reciprocal deviation are per-row ops between the
// reductions (every work-item computes them), the gain a vector along the
// row. A sum starting from a constant other than zero adds it once, after
// the work-group's partials.

// CHECK-LABEL: func.func @norm(
// CHECK:         fbl.dispatch @k0_rows {{.*}} grid [32, 1, 1] workgroup [8, 1, 1]
// CHECK:           memref.alloca() : memref<16xf32, 3>
// CHECK:           fbl.load_texel %{{.*}} : tensor<8x32xf32, #fbl.channel_packed<packed = 1>>
// CHECK:           fbl.barrier
// CHECK-COUNT-3:   fbl.barrier
// CHECK:           memref.load
// CHECK:           arith.addf %cst{{.*}}, %{{.*}} : f32
// CHECK:           arith.mulf
// CHECK-NOT:       fbl.load_texel %{{.*}} : tensor<8x32xf32
// CHECK:           math.rsqrt
// CHECK-NOT:       fbl.load_texel %{{.*}} : tensor<8x32xf32
// CHECK:           fbl.load_texel %{{.*}} : tensor<32xf32
// CHECK-NOT:       fbl.load_texel %{{.*}} : tensor<8x32xf32
// CHECK:           fbl.store_texel
// CHECK-NOT:     fbl.dispatch
#p1 = #fbl.channel_packed<packed = 1>
#p0 = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
#v = affine_map<(i) -> (i)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @norm(%x: tensor<8x32xf32, #p1>, %g: tensor<32xf32, #p0>) -> tensor<8x32xf32, #p1> {
    %half = arith.constant 0.5 : f32
    %zero = arith.constant 0.0 : f32
    %inv = arith.constant 0.03125 : f32
    %re = tensor.empty() : tensor<8xf32, #p0>
    %s0 = linalg.fill ins(%half : f32) outs(%re : tensor<8xf32, #p0>) -> tensor<8xf32, #p0>
    %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<8x32xf32, #p1>) outs(%s0 : tensor<8xf32, #p0>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<8xf32, #p0>
    %mu = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
        ins(%s : tensor<8xf32, #p0>) outs(%re : tensor<8xf32, #p0>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.mulf %a, %inv : f32
      linalg.yield %r : f32
    } -> tensor<8xf32, #p0>
    %v0 = linalg.fill ins(%zero : f32) outs(%re : tensor<8xf32, #p0>) -> tensor<8xf32, #p0>
    %var = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x, %mu : tensor<8x32xf32, #p1>, tensor<8xf32, #p0>) outs(%v0 : tensor<8xf32, #p0>) {
    ^bb0(%a: f32, %m: f32, %acc: f32):
      %d = arith.subf %a, %m : f32
      %q = arith.mulf %d, %d : f32
      %r = arith.addf %acc, %q : f32
      linalg.yield %r : f32
    } -> tensor<8xf32, #p0>
    %rs = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
        ins(%var : tensor<8xf32, #p0>) outs(%re : tensor<8xf32, #p0>) {
    ^bb0(%a: f32, %o: f32):
      %r = math.rsqrt %a : f32
      linalg.yield %r : f32
    } -> tensor<8xf32, #p0>
    %ye = tensor.empty() : tensor<8x32xf32, #p1>
    %y = linalg.generic {indexing_maps = [#id, #row, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %mu, %rs, %g : tensor<8x32xf32, #p1>, tensor<8xf32, #p0>, tensor<8xf32, #p0>, tensor<32xf32, #p0>) outs(%ye : tensor<8x32xf32, #p1>) {
    ^bb0(%a: f32, %m: f32, %r: f32, %gg: f32, %o: f32):
      %d = arith.subf %a, %m : f32
      %n = arith.mulf %d, %r : f32
      %w = arith.mulf %n, %gg : f32
      linalg.yield %w : f32
    } -> tensor<8x32xf32, #p1>
    return %y : tensor<8x32xf32, #p1>
  }
}

// -----

// A reduction something else reads too (here: returned) is stored by the
// row kernel, a texel of 4 rows per work-group (6 rows: 2 groups).

// CHECK-LABEL: func.func @reduction_read_elsewhere(
// CHECK:         %[[K:.+]]:2 = fbl.dispatch @k0_rows {{.*}} grid [8, 1, 1] workgroup [4, 1, 1]
// CHECK-NOT:     fbl.dispatch
// CHECK:         return %[[K]]#0, %[[K]]#1
#p1 = #fbl.channel_packed<packed = 1>
#p0 = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @reduction_read_elsewhere(%x: tensor<6x12xf32, #p1>) -> (tensor<6x12xf32, #p1>, tensor<6xf32, #p0>) {
    %zero = arith.constant 0.0 : f32
    %re = tensor.empty() : tensor<6xf32, #p0>
    %s0 = linalg.fill ins(%zero : f32) outs(%re : tensor<6xf32, #p0>) -> tensor<6xf32, #p0>
    %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<6x12xf32, #p1>) outs(%s0 : tensor<6xf32, #p0>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<6xf32, #p0>
    %ye = tensor.empty() : tensor<6x12xf32, #p1>
    %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %s : tensor<6x12xf32, #p1>, tensor<6xf32, #p0>) outs(%ye : tensor<6x12xf32, #p1>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.divf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<6x12xf32, #p1>
    return %y, %s : tensor<6x12xf32, #p1>, tensor<6xf32, #p0>
  }
}

// -----

// An elementwise reader whose result is packed along a row dim (a texel
// holds 4 rows): a work-group takes 4 rows and stores texels of them, one
// per element along the row.

// CHECK-LABEL: func.func @packed_across_rows(
// CHECK:         fbl.dispatch @k0_rows {{.*}} grid [8, 1, 1] workgroup [4, 1, 1]
// CHECK-COUNT-4:   fbl.store_texel %{{.*}} : tensor<6x12xf32, #fbl.channel_packed<packed = 0>>
// CHECK-NOT:     fbl.dispatch
#p1 = #fbl.channel_packed<packed = 1>
#p0 = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @packed_across_rows(%x: tensor<6x12xf32, #p1>) -> tensor<6x12xf32, #p0> {
    %zero = arith.constant 0.0 : f32
    %re = tensor.empty() : tensor<6xf32, #p0>
    %s0 = linalg.fill ins(%zero : f32) outs(%re : tensor<6xf32, #p0>) -> tensor<6xf32, #p0>
    %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<6x12xf32, #p1>) outs(%s0 : tensor<6xf32, #p0>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<6xf32, #p0>
    %ye = tensor.empty() : tensor<6x12xf32, #p0>
    %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %s : tensor<6x12xf32, #p1>, tensor<6xf32, #p0>) outs(%ye : tensor<6x12xf32, #p0>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.divf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<6x12xf32, #p0>
    return %y : tensor<6x12xf32, #p0>
  }
}

// -----

// Two readers of one reduction, the second also reading a tensor computed
// after the first (a backward pass reading a forward statistic and the
// gradient): the second cannot join the first's kernel, so each kernel
// computes the maximum. (Row kernels are numbered first: they are built
// before the other kernels.)

// CHECK-LABEL: func.func @statistic_read_twice(
// CHECK:         %[[Y:.+]] = fbl.dispatch @k0_rows
// CHECK:           arith.maximumf
// CHECK:           fbl.store_texel
// CHECK:         %[[D:.+]] = fbl.dispatch @k2_generic ins(%[[Y]]
// CHECK:         fbl.dispatch @k1_rows ins(%{{.*}}, %[[D]]
// CHECK:           arith.maximumf
// CHECK:           fbl.store_texel
// CHECK-NOT:     fbl.dispatch
#p1 = #fbl.channel_packed<packed = 1>
#p0 = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @statistic_read_twice(%x: tensor<6x12xf32, #p1>) -> tensor<6x12xf32, #p1> {
    %ninf = arith.constant 0xFF800000 : f32
    %re = tensor.empty() : tensor<6xf32, #p0>
    %m0 = linalg.fill ins(%ninf : f32) outs(%re : tensor<6xf32, #p0>) -> tensor<6xf32, #p0>
    %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<6x12xf32, #p1>) outs(%m0 : tensor<6xf32, #p0>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.maximumf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<6xf32, #p0>
    %ye = tensor.empty() : tensor<6x12xf32, #p1>
    %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %m : tensor<6x12xf32, #p1>, tensor<6xf32, #p0>) outs(%ye : tensor<6x12xf32, #p1>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.subf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<6x12xf32, #p1>
    %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%y : tensor<6x12xf32, #p1>) outs(%ye : tensor<6x12xf32, #p1>) {
    ^bb0(%a: f32, %o: f32):
      %r = math.tanh %a : f32
      linalg.yield %r : f32
    } -> tensor<6x12xf32, #p1>
    %g = linalg.generic {indexing_maps = [#id, #row, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %m, %d : tensor<6x12xf32, #p1>, tensor<6xf32, #p0>, tensor<6x12xf32, #p1>) outs(%ye : tensor<6x12xf32, #p1>) {
    ^bb0(%a: f32, %b: f32, %dd: f32, %o: f32):
      %e = arith.subf %a, %b : f32
      %r = arith.mulf %e, %dd : f32
      linalg.yield %r : f32
    } -> tensor<6x12xf32, #p1>
    return %g : tensor<6x12xf32, #p1>
  }
}

// -----

// A norm's statistic read outside (by a sum over the rows: its weight's
// gradient) is stored by the row kernel. Its image packs 4 rows into a
// texel, so a work-group takes 4 neighbouring rows (10 rows: 3 groups, the
// last with 2 rows): 4 partials per work-item, 4 trees, one texel of
// statistics stored by the first work-item. The normalized rows, packed
// along the rows too, are stored as texels of the 4 rows.

// CHECK-LABEL: func.func @stored_statistic(
// CHECK:         %[[K:.+]]:2 = fbl.dispatch @k0_rows {{.*}} outs(%{{.*}}, %{{.*}} : tensor<10x16xf32, #fbl.channel_packed<packed = 0>>, tensor<10xf32, #fbl.channel_packed<packed = 0>>) grid [12, 1, 1] workgroup [4, 1, 1]
// CHECK:           memref.alloca() : memref<16xf32, 3>
// CHECK-COUNT-4:   fbl.load_texel %{{.*}} : tensor<10x16xf32, #fbl.channel_packed<packed = 1>>
// CHECK-NOT:       fbl.load_texel
// CHECK:           scf.if
// CHECK:             fbl.store_texel %{{.*}} : tensor<10xf32, #fbl.channel_packed<packed = 0>>
// CHECK-NOT:       fbl.load_texel
// CHECK-COUNT-4:   fbl.store_texel %{{.*}} : tensor<10x16xf32, #fbl.channel_packed<packed = 0>>
// CHECK:         fbl.dispatch @k1_generic ins(%{{.*}}, %[[K]]#1 :
#p1 = #fbl.channel_packed<packed = 1>
#p0 = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @stored_statistic(%x: tensor<10x16xf32, #p1>) -> (tensor<10x16xf32, #p0>, tensor<16xf32, #p0>) {
    %zero = arith.constant 0.0 : f32
    %re = tensor.empty() : tensor<10xf32, #p0>
    %s0 = linalg.fill ins(%zero : f32) outs(%re : tensor<10xf32, #p0>) -> tensor<10xf32, #p0>
    %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<10x16xf32, #p1>) outs(%s0 : tensor<10xf32, #p0>) {
    ^bb0(%a: f32, %acc: f32):
      %q = arith.mulf %a, %a : f32
      %r = arith.addf %acc, %q : f32
      linalg.yield %r : f32
    } -> tensor<10xf32, #p0>
    %ye = tensor.empty() : tensor<10x16xf32, #p0>
    %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %s : tensor<10x16xf32, #p1>, tensor<10xf32, #p0>) outs(%ye : tensor<10x16xf32, #p0>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = math.rsqrt %b : f32
      %n = arith.mulf %a, %r : f32
      linalg.yield %n : f32
    } -> tensor<10x16xf32, #p0>
    %ge = tensor.empty() : tensor<16xf32, #p0>
    %g0 = linalg.fill ins(%zero : f32) outs(%ge : tensor<16xf32, #p0>) -> tensor<16xf32, #p0>
    %g = linalg.generic {indexing_maps = [#id, #row, #col], iterator_types = ["reduction", "parallel"]}
        ins(%x, %s : tensor<10x16xf32, #p1>, tensor<10xf32, #p0>) outs(%g0 : tensor<16xf32, #p0>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %r = math.rsqrt %b : f32
      %n = arith.mulf %a, %r : f32
      %t = arith.addf %acc, %n : f32
      linalg.yield %t : f32
    } -> tensor<16xf32, #p0>
    return %y, %g : tensor<10x16xf32, #p0>, tensor<16xf32, #p0>
  }
}

// -----

// A sum read back along the row by one op and along the other dim by
// another (over [12, 6]: its rows are columns there, which no row kernel
// computing the sum holds): the row kernel of the first stores it, and the
// second, after it, reads what it stored.

// CHECK-LABEL: func.func @read_across(
// CHECK:         %[[K:.+]]:2 = fbl.dispatch @k0_rows ins(%arg0 :
// CHECK:         %[[T:.+]] = fbl.dispatch @k1_generic ins(%arg0, %[[K]]#1 :
// CHECK-NOT:     fbl.dispatch
// CHECK:         return %[[K]]#0, %[[T]]
#p1 = #fbl.channel_packed<packed = 1>
#p0 = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#tr = affine_map<(j, i) -> (i, j)>
#col = affine_map<(j, i) -> (i)>
#id2 = affine_map<(j, i) -> (j, i)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @read_across(%x: tensor<6x12xf32, #p1>) -> (tensor<6x12xf32, #p1>, tensor<12x6xf32, #p1>) {
    %zero = arith.constant 0.0 : f32
    %re = tensor.empty() : tensor<6xf32, #p0>
    %s0 = linalg.fill ins(%zero : f32) outs(%re : tensor<6xf32, #p0>) -> tensor<6xf32, #p0>
    %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<6x12xf32, #p1>) outs(%s0 : tensor<6xf32, #p0>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<6xf32, #p0>
    %ye = tensor.empty() : tensor<6x12xf32, #p1>
    %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %s : tensor<6x12xf32, #p1>, tensor<6xf32, #p0>) outs(%ye : tensor<6x12xf32, #p1>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.divf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<6x12xf32, #p1>
    %te = tensor.empty() : tensor<12x6xf32, #p1>
    %t = linalg.generic {indexing_maps = [#tr, #col, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%x, %s : tensor<6x12xf32, #p1>, tensor<6xf32, #p0>) outs(%te : tensor<12x6xf32, #p1>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.mulf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<12x6xf32, #p1>
    return %y, %t : tensor<6x12xf32, #p1>, tensor<12x6xf32, #p1>
  }
}

// -----

// A statistic read outside and by two kernels (the second reads a tensor
// computed after the first): the first kernel stores it, the second reads
// it back from there instead of computing it again, once per row, before
// its walk along the row (it is the same all along).

// CHECK-LABEL: func.func @stored_and_read_twice(
// CHECK:         %[[K:.+]]:2 = fbl.dispatch @k0_rows ins(%arg0 :
// CHECK:         %[[D:.+]] = fbl.dispatch @k2_generic ins(%[[K]]#0 :
// CHECK:         fbl.dispatch @k1_rows ins(%arg0, %[[K]]#1, %[[D]] :
// CHECK:           fbl.load_texel %arg2[
// CHECK-NOT:       fbl.load_texel %arg2[
// CHECK:           fbl.store_texel
// CHECK:         return
#p1 = #fbl.channel_packed<packed = 1>
#p0 = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @stored_and_read_twice(%x: tensor<6x12xf32, #p1>) -> (tensor<6x12xf32, #p1>, tensor<6xf32, #p0>) {
    %zero = arith.constant 0.0 : f32
    %re = tensor.empty() : tensor<6xf32, #p0>
    %s0 = linalg.fill ins(%zero : f32) outs(%re : tensor<6xf32, #p0>) -> tensor<6xf32, #p0>
    %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<6x12xf32, #p1>) outs(%s0 : tensor<6xf32, #p0>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<6xf32, #p0>
    %ye = tensor.empty() : tensor<6x12xf32, #p1>
    %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %s : tensor<6x12xf32, #p1>, tensor<6xf32, #p0>) outs(%ye : tensor<6x12xf32, #p1>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.subf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<6x12xf32, #p1>
    %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%y : tensor<6x12xf32, #p1>) outs(%ye : tensor<6x12xf32, #p1>) {
    ^bb0(%a: f32, %o: f32):
      %r = math.tanh %a : f32
      linalg.yield %r : f32
    } -> tensor<6x12xf32, #p1>
    %g = linalg.generic {indexing_maps = [#id, #row, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %s, %d : tensor<6x12xf32, #p1>, tensor<6xf32, #p0>, tensor<6x12xf32, #p1>) outs(%ye : tensor<6x12xf32, #p1>) {
    ^bb0(%a: f32, %b: f32, %dd: f32, %o: f32):
      %e = arith.subf %a, %b : f32
      %r = arith.mulf %e, %dd : f32
      linalg.yield %r : f32
    } -> tensor<6x12xf32, #p1>
    return %g, %s : tensor<6x12xf32, #p1>, tensor<6xf32, #p0>
  }
}

// -----

// A single row whose unit dims folded away: its reductions are sums of a
// vector into a scalar, its per-row op has no loops. One work-group
// computes it all; the scalar read outside (returned) is stored by its
// first work-item. A constant that the reduction's body and the sink's read
// is cloned once, at the kernel's top level, before the reduction: the
// work-item holds its texel, which the sink reads again.

// CHECK-LABEL: func.func @single_row(
// CHECK:         %[[K:.+]]:2 = fbl.dispatch @k0_rows {{.*}} grid [4, 1, 1] workgroup [4, 1, 1]
// CHECK:           fbl.load_texel %{{.*}} : tensor<12xf32
// CHECK:           %[[C:.+]] = arith.constant 0.0833{{[0-9]+}} : f32
// CHECK:           arith.mulf %{{.*}}, %[[C]] : f32
// CHECK:           fbl.store_texel %{{.*}} : tensor<f32, #fbl.channel_packed<packed = 0>>
// CHECK-NOT:       fbl.load_texel
// CHECK:           arith.mulf %{{.*}}, %[[C]] : f32
// CHECK-NOT:     fbl.dispatch
// CHECK:         return %[[K]]#0, %[[K]]#1
#p0 = #fbl.channel_packed<packed = 0>
#v = affine_map<(j) -> (j)>
#s = affine_map<(j) -> ()>
#none = affine_map<() -> ()>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @single_row(%x: tensor<12xf32, #p0>) -> (tensor<12xf32, #p0>, tensor<f32, #p0>) {
    %zero = arith.constant 0.0 : f32
    %invl = arith.constant 0.0833333358 : f32
    %re = tensor.empty() : tensor<f32, #p0>
    %s0 = linalg.fill ins(%zero : f32) outs(%re : tensor<f32, #p0>) -> tensor<f32, #p0>
    %s = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]}
        ins(%x : tensor<12xf32, #p0>) outs(%s0 : tensor<f32, #p0>) {
    ^bb0(%a: f32, %acc: f32):
      %m = arith.mulf %a, %invl : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<f32, #p0>
    %mu = linalg.generic {indexing_maps = [#none, #none], iterator_types = []}
        ins(%s : tensor<f32, #p0>) outs(%re : tensor<f32, #p0>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.mulf %a, %a : f32
      linalg.yield %r : f32
    } -> tensor<f32, #p0>
    %ye = tensor.empty() : tensor<12xf32, #p0>
    %y = linalg.generic {indexing_maps = [#v, #s, #v], iterator_types = ["parallel"]}
        ins(%x, %mu : tensor<12xf32, #p0>, tensor<f32, #p0>) outs(%ye : tensor<12xf32, #p0>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.subf %a, %b : f32
      %r = arith.mulf %d, %invl : f32
      linalg.yield %r : f32
    } -> tensor<12xf32, #p0>
    return %y, %mu : tensor<12xf32, #p0>, tensor<f32, #p0>
  }
}

// -----

// Five rows of 8, two a work-group: the last work-group's second row is
// past the end. It reads the last row again (its index clamped), and
// nothing of it is stored: its texels are stored under its row's guard.

// CHECK-LABEL: func.func @odd_rows_paired(
// CHECK:         fbl.dispatch @k0_rows {{.*}} grid [6, 1, 1] workgroup [2, 1, 1]
// CHECK:           %[[G:.+]] = fbl.group_id 0
// CHECK:           %[[FIRST:.+]] = arith.muli %[[G]], %c2
// CHECK:           %[[NEXT:.+]] = arith.addi %[[FIRST]], %c1
// CHECK:           %[[VALID:.+]] = arith.cmpi ult, %[[NEXT]], %c5
// CHECK:           %[[R1:.+]] = arith.select %[[VALID]], %[[NEXT]], %c4
// CHECK:           fbl.load_texel %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : tensor<5x8xf32
// CHECK:           %[[Y1:.+]] = arith.addi %{{.*}}, %[[R1]]
// CHECK:           fbl.load_texel %{{.*}}[%{{.*}}, %[[Y1]], %{{.*}}] : tensor<5x8xf32
// CHECK:           scf.if %[[VALID]] {
// CHECK:             fbl.store_texel
// CHECK-NOT:     fbl.dispatch
#p1 = #fbl.channel_packed<packed = 1>
#p0 = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @odd_rows_paired(%x: tensor<5x8xf32, #p1>) -> tensor<5x8xf32, #p1> {
    %zero = arith.constant 0.0 : f32
    %re = tensor.empty() : tensor<5xf32, #p0>
    %s0 = linalg.fill ins(%zero : f32) outs(%re : tensor<5xf32, #p0>) -> tensor<5xf32, #p0>
    %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<5x8xf32, #p1>) outs(%s0 : tensor<5xf32, #p0>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    } -> tensor<5xf32, #p0>
    %ye = tensor.empty() : tensor<5x8xf32, #p1>
    %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %s : tensor<5x8xf32, #p1>, tensor<5xf32, #p0>) outs(%ye : tensor<5x8xf32, #p1>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.divf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<5x8xf32, #p1>
    return %y : tensor<5x8xf32, #p1>
  }
}

// -----

// The same over a row of 5000 (1250 texels): a work-item's 10 turns are
// more texels than it holds (kRowKernelHeldTexels), so each pass walks the
// row in a loop and reads it again. The constant is cloned at the kernel's
// top level, before the reduction's loop: the sink's loop comes after that
// one, not inside it.

// CHECK-LABEL: func.func @long_row_walked_in_loops(
// CHECK:         %[[K:.+]]:2 = fbl.dispatch @k0_rows {{.*}} grid [128, 1, 1] workgroup [128, 1, 1]
// CHECK:           %[[C:.+]] = arith.constant 2.000000e-04 : f32
// CHECK-NEXT:      scf.for
// CHECK:             fbl.load_texel %{{.*}} : tensor<5000xf32
// CHECK:             arith.mulf %{{.*}}, %[[C]] : f32
// CHECK:           fbl.store_texel %{{.*}} : tensor<f32, #fbl.channel_packed<packed = 0>>
// CHECK:           scf.for
// CHECK:             fbl.load_texel %{{.*}} : tensor<5000xf32
// CHECK:             arith.mulf %{{.*}}, %[[C]] : f32
// CHECK-NOT:     fbl.dispatch
// CHECK:         return %[[K]]#0, %[[K]]#1
#p0 = #fbl.channel_packed<packed = 0>
#v = affine_map<(j) -> (j)>
#s = affine_map<(j) -> ()>
#none = affine_map<() -> ()>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @long_row_walked_in_loops(%x: tensor<5000xf32, #p0>) -> (tensor<5000xf32, #p0>, tensor<f32, #p0>) {
    %zero = arith.constant 0.0 : f32
    %invl = arith.constant 2.000000e-04 : f32
    %re = tensor.empty() : tensor<f32, #p0>
    %s0 = linalg.fill ins(%zero : f32) outs(%re : tensor<f32, #p0>) -> tensor<f32, #p0>
    %s = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]}
        ins(%x : tensor<5000xf32, #p0>) outs(%s0 : tensor<f32, #p0>) {
    ^bb0(%a: f32, %acc: f32):
      %m = arith.mulf %a, %invl : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<f32, #p0>
    %mu = linalg.generic {indexing_maps = [#none, #none], iterator_types = []}
        ins(%s : tensor<f32, #p0>) outs(%re : tensor<f32, #p0>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.mulf %a, %a : f32
      linalg.yield %r : f32
    } -> tensor<f32, #p0>
    %ye = tensor.empty() : tensor<5000xf32, #p0>
    %y = linalg.generic {indexing_maps = [#v, #s, #v], iterator_types = ["parallel"]}
        ins(%x, %mu : tensor<5000xf32, #p0>, tensor<f32, #p0>) outs(%ye : tensor<5000xf32, #p0>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.subf %a, %b : f32
      %r = arith.mulf %d, %invl : f32
      linalg.yield %r : f32
    } -> tensor<5000xf32, #p0>
    return %y, %mu : tensor<5000xf32, #p0>, tensor<f32, #p0>
  }
}

// -----

// The sum of a split-K product's two chunks is a reduction over a "row" of
// 2 for each output element; the op that adds it to the normalization's
// statistic reads a row value along its row (the statistic) and is its
// elementwise reader, not a per-row op of the chunks' sum: the statistic
// and its reader are one row kernel after the sum's own kernel.

// CHECK-LABEL: func.func @chunk_sum_then_norm(
// CHECK:         %[[C:.+]] = fbl.dispatch @k{{[0-9]+}}_generic ins(%arg0 :
// CHECK:         %[[K:.+]] = fbl.dispatch @k{{[0-9]+}}_rows ins(%[[C]] :
// CHECK-NOT:     fbl.dispatch
// CHECK:         return %[[K]]
#p1 = #fbl.channel_packed<packed = 1>
#p2 = #fbl.channel_packed<packed = 2>
#p0 = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#chunk = affine_map<(i, j, c) -> (c, i, j)>
#out = affine_map<(i, j, c) -> (i, j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @chunk_sum_then_norm(%p: tensor<2x6x12xf32, #p2>) -> tensor<6x12xf32, #p1> {
    %zero = arith.constant 0.0 : f32
    %ce = tensor.empty() : tensor<6x12xf32, #p1>
    %c0 = linalg.fill ins(%zero : f32) outs(%ce : tensor<6x12xf32, #p1>) -> tensor<6x12xf32, #p1>
    %c = linalg.generic {indexing_maps = [#chunk, #out], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%p : tensor<2x6x12xf32, #p2>) outs(%c0 : tensor<6x12xf32, #p1>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<6x12xf32, #p1>
    %re = tensor.empty() : tensor<6xf32, #p0>
    %s0 = linalg.fill ins(%zero : f32) outs(%re : tensor<6xf32, #p0>) -> tensor<6xf32, #p0>
    %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%c : tensor<6x12xf32, #p1>) outs(%s0 : tensor<6xf32, #p0>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<6xf32, #p0>
    %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%c, %s : tensor<6x12xf32, #p1>, tensor<6xf32, #p0>) outs(%ce : tensor<6x12xf32, #p1>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.subf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<6x12xf32, #p1>
    return %y : tensor<6x12xf32, #p1>
  }
}

// -----

// A statistic that a later reduction over the rows reads from memory (a
// norm's weight gradient reads the forward's statistics so): the row
// kernel stores it, and the later reduction reads what it stored.

// CHECK-LABEL: func.func @statistic_read_by_a_later_reduction(
// CHECK:         %[[K:.+]]:2 = fbl.dispatch @k{{[0-9]+}}_rows ins(%arg0 :
// CHECK:         %[[G:.+]] = fbl.dispatch @k{{[0-9]+}}_generic ins(%arg0, %[[K]]#1 :
// CHECK-NOT:     fbl.dispatch
// CHECK:         return %[[K]]#0, %[[G]]
#p1 = #fbl.channel_packed<packed = 1>
#p0 = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#xt = affine_map<(j, i) -> (i, j)>
#st = affine_map<(j, i) -> (i)>
#col = affine_map<(j, i) -> (j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @statistic_read_by_a_later_reduction(%x: tensor<6x12xf32, #p1>) -> (tensor<6x12xf32, #p1>, tensor<12xf32, #p0>) {
    %zero = arith.constant 0.0 : f32
    %re = tensor.empty() : tensor<6xf32, #p0>
    %s0 = linalg.fill ins(%zero : f32) outs(%re : tensor<6xf32, #p0>) -> tensor<6xf32, #p0>
    %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<6x12xf32, #p1>) outs(%s0 : tensor<6xf32, #p0>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<6xf32, #p0>
    %ye = tensor.empty() : tensor<6x12xf32, #p1>
    %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %s : tensor<6x12xf32, #p1>, tensor<6xf32, #p0>) outs(%ye : tensor<6x12xf32, #p1>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.subf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<6x12xf32, #p1>
    %ge = tensor.empty() : tensor<12xf32, #p0>
    %g0 = linalg.fill ins(%zero : f32) outs(%ge : tensor<12xf32, #p0>) -> tensor<12xf32, #p0>
    %g = linalg.generic {indexing_maps = [#xt, #st, #col], iterator_types = ["parallel", "reduction"]}
        ins(%x, %s : tensor<6x12xf32, #p1>, tensor<6xf32, #p0>) outs(%g0 : tensor<12xf32, #p0>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<12xf32, #p0>
    return %y, %g : tensor<6x12xf32, #p1>, tensor<12xf32, #p0>
  }
}
