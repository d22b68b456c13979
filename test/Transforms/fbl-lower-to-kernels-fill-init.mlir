// RUN: fbl-opt %s -split-input-file -fbl-lower-to-kernels | FileCheck %s

// An init filled with a constant is how linalg spells a fresh accumulator.
// The kernel starts its accumulators at the constant: it reads no init, and
// the fill, whose only use was that init, runs no kernel.

// CHECK-LABEL: func.func @gemm_starts_from_its_fill(
// CHECK-SAME:    %[[A:[^:]+]]: tensor<8x12xf32, #fbl.channel_packed<packed = 1>>
// CHECK-SAME:    %[[B:[^:]+]]: tensor<12x16xf32, #fbl.channel_packed<packed = 0>>
// CHECK-NOT:     linalg.fill
// CHECK-NOT:     _fill
// The estimate reads A and B only: 8 work-items x 3 k-steps x 8 texels.
// CHECK:         fbl.dispatch @k0_gemm ins(%[[A]], %[[B]] : {{[^)]*}}) outs({{.*}}fetches = 192 : i64
// CHECK-NEXT:    ^bb0(%{{.*}}: {{.*}}, %{{.*}}: {{.*}}, %{{.*}}: {{.*}}):
// CHECK:           scf.if
// CHECK:             %[[START:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT:         fbl.load_texel
// CHECK:             scf.for {{.*}} iter_args({{.*}} = %[[START]],
#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @gemm_starts_from_its_fill(%a: tensor<8x12xf32, #pc>, %b: tensor<12x16xf32, #pr>) -> tensor<8x16xf32, #pc> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x16xf32, #pc>
    %c = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32, #pc>) -> tensor<8x16xf32, #pc>
    %0 = linalg.matmul ins(%a, %b : tensor<8x12xf32, #pc>, tensor<12x16xf32, #pr>) outs(%c : tensor<8x16xf32, #pc>) -> tensor<8x16xf32, #pc>
    return %0 : tensor<8x16xf32, #pc>
  }
}

// -----

// A row maximum starts from its fill's -inf (any constant, not only zero).

// CHECK-LABEL: func.func @row_max_starts_from_minus_infinity(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<8x16xf32
// CHECK-NOT:     _fill
// CHECK:         fbl.dispatch @k0_generic ins(%[[X]] : {{[^)]*}}) outs(
// CHECK:           arith.constant 0xFF800000 : f32
// CHECK-NOT:     fbl.dispatch
#pc = #fbl.channel_packed<packed = 1>
#p0 = #fbl.channel_packed<packed = 0>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @row_max_starts_from_minus_infinity(%x: tensor<8x16xf32, #pc>) -> tensor<8xf32, #p0> {
    %ninf = arith.constant 0xFF800000 : f32
    %e = tensor.empty() : tensor<8xf32, #p0>
    %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<8xf32, #p0>) -> tensor<8xf32, #p0>
    %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<8x16xf32, #pc>) outs(%init : tensor<8xf32, #p0>) {
    ^bb0(%in: f32, %acc: f32):
      %r = arith.maximumf %acc, %in : f32
      linalg.yield %r : f32
    } -> tensor<8xf32, #p0>
    return %m : tensor<8xf32, #p0>
  }
}

// -----

// A fill that is also returned is materialized (its kernel runs); the sum
// still starts from the constant instead of reading it, as the cost model
// assumed.

// CHECK-LABEL: func.func @fill_with_another_use_keeps_its_kernel(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<8x16xf32
// CHECK:         %[[F:.+]] = fbl.dispatch @k0_fill
// CHECK:         %[[S:.+]] = fbl.dispatch @k1_generic ins(%[[X]] : {{[^)]*}}) outs(
// CHECK:         return %[[S]], %[[F]]
#pc = #fbl.channel_packed<packed = 1>
#p0 = #fbl.channel_packed<packed = 0>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @fill_with_another_use_keeps_its_kernel(%x: tensor<8x16xf32, #pc>) -> (tensor<8xf32, #p0>, tensor<8xf32, #p0>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8xf32, #p0>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32, #p0>) -> tensor<8xf32, #p0>
    %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<8x16xf32, #pc>) outs(%init : tensor<8xf32, #p0>) {
    ^bb0(%in: f32, %acc: f32):
      %r = arith.addf %acc, %in : f32
      linalg.yield %r : f32
    } -> tensor<8xf32, #p0>
    return %s, %init : tensor<8xf32, #p0>, tensor<8xf32, #p0>
  }
}
