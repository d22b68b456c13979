// RUN: fbl-opt %s -split-input-file -fbl-lower-to-kernels | FileCheck %s

// The generic per-texel kernel's reads, as the kernel plan decides them
// (fbl/CostModel/KernelPlan.h): a work-item computes its texel's 4 channels
// together; an input packed along the output's packed loop is one
// whole-texel fetch for the 4 channels, one packed along the innermost
// reduction loop is walked 4 iterations per fetch, one no reduction loop
// indexes is fetched before the loop, any other is fetched per channel.
// fbl.estimate's fetches are the hand counts.

// Column sums (a dW-style reduction over the rows the forward kept): x is
// packed along j, the loop of the output's channels, so one whole-texel
// fetch per row delivers the 4 columns a work-item sums (4 rows of the
// transposed view per fetch). Fetches: 4 work-items x (1 init + 8 rows).
// CHECK-LABEL: func.func @column_sum(
// CHECK:         fbl.dispatch @k0_generic {{.*}} grid [4, 1, 1] {{.*}} {fbl.estimate = {fetches = 36 : i64, {{.*}}, writes = 4 : i64}}
// CHECK:           %[[IT:.+]] = fbl.load_texel %arg3[
// CHECK:           scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args({{.*}}) -> (f32, f32, f32, f32) {
// CHECK:             %[[T:.+]] = fbl.load_texel %arg2[
// CHECK-NEXT:        %[[E0:.+]] = vector.extract %[[T]][0]
// CHECK-NEXT:        arith.addf %{{.+}}, %[[E0]]
// CHECK-NEXT:        %[[E1:.+]] = vector.extract %[[T]][1]
// CHECK-NEXT:        arith.addf %{{.+}}, %[[E1]]
// CHECK-NEXT:        %[[E2:.+]] = vector.extract %[[T]][2]
// CHECK-NEXT:        arith.addf %{{.+}}, %[[E2]]
// CHECK-NEXT:        %[[E3:.+]] = vector.extract %[[T]][3]
// CHECK-NEXT:        arith.addf %{{.+}}, %[[E3]]
// CHECK-NEXT:        scf.yield

#p0 = #fbl.channel_packed<packed = 0>
#p1 = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @column_sum(%x: tensor<8x16xf32, #p1>, %z: tensor<16xf32, #p0>) -> tensor<16xf32, #p0> {
    %0 = linalg.generic {indexing_maps = [affine_map<(j, i) -> (i, j)>, affine_map<(j, i) -> (j)>],
                         iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<8x16xf32, #p1>) outs(%z : tensor<16xf32, #p0>) {
    ^bb0(%v: f32, %acc: f32):
      %s = arith.addf %acc, %v : f32
      linalg.yield %s : f32
    } -> tensor<16xf32, #p0>
    return %0 : tensor<16xf32, #p0>
  }
}

// -----

// Row maxima over 6 columns packed along the reduced loop: one step of 4
// in the loop, then a tail of 2 (the texel's padding channels are never
// read), each row's texel fetched once per step. Fetches: 1 init + 4 rows
// x 2 steps.
// CHECK-LABEL: func.func @row_max_tail(
// CHECK:         fbl.dispatch @k0_generic {{.*}} {fbl.estimate = {fetches = 9 : i64, {{.*}}, writes = 1 : i64}}
// CHECK:           scf.for %{{.+}} = %{{.+}} to %[[C4:.+]] step %[[STEP:.+]] iter_args
// CHECK-COUNT-4:     fbl.load_texel %arg2[
// CHECK-NOT:         fbl.load_texel
// CHECK-COUNT-16:    arith.maximumf
// CHECK:           }
// CHECK-COUNT-4:   fbl.load_texel %arg2[
// CHECK-NOT:       fbl.load_texel
// CHECK-COUNT-8:   arith.maximumf
// CHECK-NOT:       arith.maximumf

#p0 = #fbl.channel_packed<packed = 0>
#p1 = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @row_max_tail(%x: tensor<4x6xf32, #p1>, %z: tensor<4xf32, #p0>) -> tensor<4xf32, #p0> {
    %0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<4x6xf32, #p1>) outs(%z : tensor<4xf32, #p0>) {
    ^bb0(%v: f32, %acc: f32):
      %s = arith.maximumf %acc, %v : f32
      linalg.yield %s : f32
    } -> tensor<4xf32, #p0>
    return %0 : tensor<4xf32, #p0>
  }
}

// -----

// A softmax denominator: the row maximum m depends on no reduction loop and
// is packed along the output's channels: one fetch before the loop serves
// every channel and iteration. Fetches: 1 init + 1 + 4 rows x 2 steps.
// CHECK-LABEL: func.func @exp_sum(
// CHECK:         fbl.dispatch @k0_generic {{.*}} {fbl.estimate = {fetches = 10 : i64, {{.*}}, writes = 1 : i64}}
// CHECK:           fbl.load_texel %arg5[
// CHECK:           %[[M:.+]] = fbl.load_texel %arg4[
// CHECK:           scf.for
// CHECK-COUNT-4:     fbl.load_texel %arg3[
// CHECK-NOT:         fbl.load_texel
// CHECK:             vector.extract %[[M]][0]
// CHECK:             scf.yield

#p0 = #fbl.channel_packed<packed = 0>
#p1 = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @exp_sum(%x: tensor<4x8xf32, #p1>, %m: tensor<4xf32, #p0>, %z: tensor<4xf32, #p0>) -> tensor<4xf32, #p0> {
    %0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}
        ins(%x, %m : tensor<4x8xf32, #p1>, tensor<4xf32, #p0>) outs(%z : tensor<4xf32, #p0>) {
    ^bb0(%v: f32, %w: f32, %acc: f32):
      %d = arith.subf %v, %w : f32
      %e = math.exp %d : f32
      %s = arith.addf %acc, %e : f32
      linalg.yield %s : f32
    } -> tensor<4xf32, #p0>
    return %0 : tensor<4xf32, #p0>
  }
}

// -----

// x read transposed: packed along i while the output's channels run along
// j, so each channel fetches its own texel (the model counts 4); y, packed
// like the output, is one fetch. Fetches: 8 texels x (4 + 1).
// CHECK-LABEL: func.func @transposed_add(
// CHECK:         fbl.dispatch @k0_generic {{.*}} {fbl.estimate = {fetches = 40 : i64, {{.*}}, writes = 8 : i64}}
// CHECK-COUNT-4:   fbl.load_texel %arg2[
// CHECK:           %[[Y:.+]] = fbl.load_texel %arg3[
// CHECK-NOT:       fbl.load_texel
// CHECK:           vector.extract %{{.+}}[%{{.+}}] : f32
// CHECK-NEXT:      vector.extract %[[Y]][0] : f32

#p0 = #fbl.channel_packed<packed = 0>
#p1 = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @transposed_add(%x: tensor<8x4xf32, #p1>, %y: tensor<4x8xf32, #p1>) -> tensor<4x8xf32, #p1> {
    %e = tensor.empty() : tensor<4x8xf32, #p1>
    %0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%x, %y : tensor<8x4xf32, #p1>, tensor<4x8xf32, #p1>) outs(%e : tensor<4x8xf32, #p1>) {
    ^bb0(%v: f32, %w: f32, %o: f32):
      %s = arith.addf %v, %w : f32
      linalg.yield %s : f32
    } -> tensor<4x8xf32, #p1>
    return %0 : tensor<4x8xf32, #p1>
  }
}

// -----

// 6 columns: the second texel of each row holds 2 elements. The texel is
// fetched once; channels 1-3 compute only where they are elements and are
// written as zero elsewhere. Fetches: 4 rows x 2 texels.
// CHECK-LABEL: func.func @odd_columns(
// CHECK:         fbl.dispatch @k0_generic {{.*}} {fbl.estimate = {fetches = 8 : i64, {{.*}}, writes = 8 : i64}}
// CHECK:           %[[T:.+]] = fbl.load_texel %arg1[
// CHECK-NOT:       fbl.load_texel
// CHECK:           %[[E1:.+]] = vector.extract %[[T]][1]
// CHECK-NEXT:      %[[C1:.+]] = scf.if %[[V1:.+]] -> (f32) {
// CHECK-NEXT:        arith.negf %[[E1]]
// CHECK:           arith.select %[[V1]], %[[C1]]

#p0 = #fbl.channel_packed<packed = 0>
#p1 = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @odd_columns(%x: tensor<4x6xf32, #p1>) -> tensor<4x6xf32, #p1> {
    %e = tensor.empty() : tensor<4x6xf32, #p1>
    %0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<4x6xf32, #p1>) outs(%e : tensor<4x6xf32, #p1>) {
    ^bb0(%v: f32, %o: f32):
      %n = arith.negf %v : f32
      linalg.yield %n : f32
    } -> tensor<4x6xf32, #p1>
    return %0 : tensor<4x6xf32, #p1>
  }
}
