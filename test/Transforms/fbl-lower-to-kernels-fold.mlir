// RUN: fbl-opt %s -fbl-lower-to-kernels=fold=true | FileCheck %s
// RUN: fbl-opt %s -fbl-lower-to-kernels=fold=true | fbl-translate --fbl-to-opencl | FileCheck %s --check-prefix=CL

// With fold, each kernel body is canonicalized as it is built: the index
// arithmetic of a channel-packed 4x8 tensor's texels keeps no `+ 0` or
// `* 0`, the bounds checks nothing reads are gone, and the zero texel
// written past the range is one vector constant.

// CHECK-LABEL: func.func @scaled(
// CHECK:         fbl.dispatch @k0_generic
// CHECK-DAG:       %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<4xf32>
// CHECK-DAG:       %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:       %[[C4:.+]] = arith.constant 4 : index
// CHECK-NOT:       arith.muli %[[C0]]
// CHECK-NOT:       arith.addi {{.*}}, %[[C0]]
// CHECK:           %[[IN:.+]] = scf.if
// CHECK:             %[[COL:.+]] = arith.divui %{{.+}}, %[[C4]]
// CHECK:             fbl.load_texel %{{.+}}[%[[C0]], %{{.+}}, %[[COL]]]
// CHECK:           } else {
// CHECK-NEXT:        scf.yield %[[ZERO]] : vector<4xf32>
// CHECK:           fbl.store_texel %[[IN]]

// The printer writes the zero texel as an OpenCL vector literal.
// CL: __kernel void k0_generic(
// CL: float4 v{{[0-9]+}} = ((float4)((0.000000000e+00f), (0.000000000e+00f), (0.000000000e+00f), (0.000000000e+00f)));

#cp = #fbl.channel_packed<packed = 1>
#map = affine_map<(d0, d1) -> (d0, d1)>
module attributes {fbl.target = #fbl.target<"adreno-a740">} {
  func.func @scaled(%a: tensor<4x8xf32, #cp>, %b: tensor<4x8xf32, #cp>) -> tensor<4x8xf32, #cp> {
    %two = arith.constant 2.0 : f32
    %e = tensor.empty() : tensor<4x8xf32, #cp>
    %0 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>) outs(%e : tensor<4x8xf32, #cp>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.mulf %m, %two : f32
      linalg.yield %s : f32
    } -> tensor<4x8xf32, #cp>
    return %0 : tensor<4x8xf32, #cp>
  }
}
