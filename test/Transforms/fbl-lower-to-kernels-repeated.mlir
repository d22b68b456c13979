// RUN: fbl-opt %s -fbl-lower-to-kernels | FileCheck %s
// RUN: fbl-opt %s -fbl-lower-to-kernels=cse=true | FileCheck %s --check-prefix=CSE

// Ops that repeat an earlier one get a copy of its kernel, reading their own
// operands under a name of their own; an op capturing another scalar, or
// passing one tensor twice where the first passes two, is lowered for itself.

// CHECK-LABEL: func.func @repeated(
// CHECK-SAME:    %[[A:[^:]+]]: tensor<4x8xf32, {{.*}}>, %[[B:[^:]+]]: tensor<4x8xf32, {{.*}}>, %[[C:[^:]+]]: tensor<4x8xf32, {{.*}}>)
// A captured scalar is computed once, at the kernel's top level.
// CHECK:         %[[R0:.+]] = fbl.dispatch @k0_generic ins(%[[A]], %[[B]] :
// CHECK:           arith.constant 2.000000e+00 : f32
// CHECK:           fbl.load_texel %arg3[
// CHECK:           fbl.load_texel %arg4[
// CHECK:         %[[R1:.+]] = fbl.dispatch @k1_generic ins(%[[R0]], %[[C]] :
// CHECK:           arith.constant 2.000000e+00 : f32
// CHECK:           fbl.load_texel %arg3[
// CHECK:           fbl.load_texel %arg4[
// CHECK:         %[[R2:.+]] = fbl.dispatch @k2_generic ins(%[[A]], %[[B]] :
// CHECK:           arith.constant 3.000000e+00 : f32
// CHECK:         %[[R3:.+]] = fbl.dispatch @k3_generic ins(%[[C]] :
// CHECK:           arith.constant 2.000000e+00 : f32
// CHECK:           fbl.load_texel %arg3[
// CHECK:           fbl.load_texel %arg3[
// CHECK:         return %[[R0]], %[[R1]], %[[R2]], %[[R3]]

// With cse, every body (the copy's too) holds each constant once.
// CSE-LABEL: func.func @repeated(
// CSE:         fbl.dispatch @k0_generic
// CSE-COUNT-1:   arith.constant 2 : index
// CSE-NOT:       arith.constant 2 : index
// CSE:         fbl.dispatch @k1_generic
// CSE-COUNT-1:   arith.constant 2 : index
// CSE-NOT:       arith.constant 2 : index
// CSE:         fbl.dispatch @k2_generic

#cp = #fbl.channel_packed<packed = 1>
#map = affine_map<(d0, d1) -> (d0, d1)>
module attributes {fbl.target = #fbl.target<"adreno-a740">} {
  func.func @repeated(%a: tensor<4x8xf32, #cp>, %b: tensor<4x8xf32, #cp>, %c: tensor<4x8xf32, #cp>) -> (tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>) {
    %two = arith.constant 2.0 : f32
    %three = arith.constant 3.0 : f32
    %e0 = tensor.empty() : tensor<4x8xf32, #cp>
    %0 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>) outs(%e0 : tensor<4x8xf32, #cp>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.mulf %m, %two : f32
      linalg.yield %s : f32
    } -> tensor<4x8xf32, #cp>
    %e1 = tensor.empty() : tensor<4x8xf32, #cp>
    %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%0, %c : tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>) outs(%e1 : tensor<4x8xf32, #cp>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.mulf %m, %two : f32
      linalg.yield %s : f32
    } -> tensor<4x8xf32, #cp>
    %e2 = tensor.empty() : tensor<4x8xf32, #cp>
    %2 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>) outs(%e2 : tensor<4x8xf32, #cp>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.mulf %m, %three : f32
      linalg.yield %s : f32
    } -> tensor<4x8xf32, #cp>
    %e3 = tensor.empty() : tensor<4x8xf32, #cp>
    %3 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%c, %c : tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>) outs(%e3 : tensor<4x8xf32, #cp>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.mulf %m, %two : f32
      linalg.yield %s : f32
    } -> tensor<4x8xf32, #cp>
    return %0, %1, %2, %3 : tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>
  }
}
