// RUN: rm -rf %t && fbl-opt --fbl-lower-to-kernels %s | fbl-translate --fbl-to-opencl -o %t
// RUN: FileCheck %s < %t/manifest.json

// A GEMM launch lists the GEMM it computes (`gemms`: batch, m, n, k, then
// the rows and columns of C one work-group computes), for profiles to give
// rates by shape; other launches list none.

// CHECK: "kernels": [
// CHECK: "name": "k0_gemm_local",
// CHECK: "workgroup": [
// CHECK: "gemms": [
// CHECK-NEXT: [
// CHECK-NEXT: 1,
// CHECK-NEXT: 64,
// CHECK-NEXT: 128,
// CHECK-NEXT: 32,
// CHECK-NEXT: 32,
// CHECK-NEXT: 64
// CHECK-NEXT: ]
// CHECK-NEXT: ]
// CHECK: "name": "k1_{{[a-z]+}}",
// CHECK-NOT: "gemms"
// CHECK: ]

#pc = #fbl.channel_packed<packed = 1>
#pr = #fbl.channel_packed<packed = 0>
#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#v = #fbl.channel_packed<packed = 0>
module attributes {fbl.target = #fbl.target<"nvidia-h200", gemm_tile = [8, 1, 8, 8, 0, 0, 2], gemm_tile_classes = []>} {
  func.func @gemm_then_row_sums(%a: tensor<64x32xf32, #pc>, %b: tensor<32x128xf32, #pr>, %c: tensor<64x128xf32, #pc>,
                                %s: tensor<64xf32, #v>) -> tensor<64xf32, #v> {
    %0 = linalg.matmul ins(%a, %b : tensor<64x32xf32, #pc>, tensor<32x128xf32, #pr>) outs(%c : tensor<64x128xf32, #pc>) -> tensor<64x128xf32, #pc>
    %1 = linalg.generic {indexing_maps = [#map, #row], iterator_types = ["parallel", "reduction"]}
        ins(%0 : tensor<64x128xf32, #pc>) outs(%s : tensor<64xf32, #v>) {
    ^bb0(%x: f32, %o: f32):
      %r = arith.addf %x, %o : f32
      linalg.yield %r : f32
    } -> tensor<64xf32, #v>
    return %1 : tensor<64xf32, #v>
  }
}
