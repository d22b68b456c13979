// RUN: rm -rf %t && fbl-opt %s --fbl-lower-to-kernels | fbl-translate --fbl-to-opencl -o %t
// RUN: FileCheck %s --check-prefix=CL < %t/kernels.cl
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/manifest.json

// An elementwise op on a channel-packed image and a gather from a buffer
// of ids: one kernel each, images read through a sampler, buffers indexed.

// CL: __constant sampler_t fbl_sampler = CLK_NORMALIZED_COORDS_FALSE |
// CL: __kernel void k0_generic(__read_only image2d_t a0, __write_only image2d_t o0) {
// CL:   int v0 = (int)get_global_id(0);
// CL:   read_imagef(a0, fbl_sampler, (int2)(
// CL:   tanh(
// CL:   write_imagef(o0, (int2)(v0, v1),
// CL: __kernel void k1_generic(__global const long *restrict a0, __read_only image2d_array_t a1, __write_only image2d_t o0) {
// CL:   a0[
// CL:   read_imagef(a1, fbl_sampler, (int4)(

// MANIFEST: "format": "fbl-bundle",
// MANIFEST: "entry": "step",
// MANIFEST: "target": "pocl-cpu",
// MANIFEST: "memory": [
// MANIFEST: "storage": "image2d",
// MANIFEST: "storage": "buffer",
// MANIFEST-NEXT: "dtype": "i64",
// MANIFEST: "storage": "image2d_array",
// MANIFEST: "tensors": [
// MANIFEST: "encoding": "#fbl.channel_packed<packed = 1>",
// MANIFEST-NEXT: "kind": "image",
// MANIFEST: "inputs": [
// MANIFEST: "param": true
// MANIFEST: "outputs": [
// MANIFEST: "kernels": [
// MANIFEST: "name": "k0_generic",
// MANIFEST: "access": "write"
// One work-item per texel: 8 columns packed by 4 are 2 texels wide.
// MANIFEST: "grid": [
// MANIFEST-NEXT: 2,
// MANIFEST-NEXT: 4,
// MANIFEST-NEXT: 1

#cp = #fbl.channel_packed<packed = 1>
#arr = #fbl.channel_packed<packed = 2, batch = layers>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @step(%x: tensor<4x8xf32, #cp> {fbl.param}, %ids: tensor<3xi64, #fbl.buffer>,
                  %t: tensor<2x5x8xf32, #arr>) -> (tensor<4x8xf32, #cp>, tensor<3x8xf32, #cp>) {
    %e = tensor.empty() : tensor<4x8xf32, #cp>
    %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<4x8xf32, #cp>) outs(%e : tensor<4x8xf32, #cp>) {
    ^bb0(%a: f32, %o: f32):
      %r = math.tanh %a : f32
      linalg.yield %r : f32
    } -> tensor<4x8xf32, #cp>
    %ge = tensor.empty() : tensor<3x8xf32, #cp>
    %g = linalg.generic {indexing_maps = [affine_map<(n, d) -> (n)>, affine_map<(n, d) -> (n, d)>], iterator_types = ["parallel", "parallel"]}
        ins(%ids : tensor<3xi64, #fbl.buffer>) outs(%ge : tensor<3x8xf32, #cp>) {
    ^bb0(%id: i64, %o: f32):
      %row = arith.index_cast %id : i64 to index
      %col = linalg.index 1 : index
      %c1 = arith.constant 1 : index
      %v = tensor.extract %t[%c1, %row, %col] : tensor<2x5x8xf32, #arr>
      linalg.yield %v : f32
    } -> tensor<3x8xf32, #cp>
    return %y, %g : tensor<4x8xf32, #cp>, tensor<3x8xf32, #cp>
  }
}
