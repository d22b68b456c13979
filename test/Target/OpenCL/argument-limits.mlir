// RUN: fbl-opt %s --fbl-lower-to-kernels | not fbl-translate --fbl-to-opencl 2>&1 | FileCheck %s

// A kernel that takes more write images than the target lets one kernel
// take is refused, not emitted: NVIDIA's driver builds such a kernel and
// faults the queue when it runs. AdamW-like: one kernel writes three images.

// CHECK: error: fbl-to-opencl: kernel k0_generic takes 3 write images (at most 2) on target 'pocl-cpu'
// CHECK-NOT: __kernel

#cp = #fbl.channel_packed<packed = 1>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu", max_write_image_args = 2>} {
  func.func @step(%x: tensor<4x8xf32, #cp>)
      -> (tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>) {
    %e = tensor.empty() : tensor<4x8xf32, #cp>
    %a:3 = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<4x8xf32, #cp>) outs(%e, %e, %e : tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>) {
    ^bb0(%v: f32, %o0: f32, %o1: f32, %o2: f32):
      %r0 = math.exp %v : f32
      %r1 = math.tanh %v : f32
      %r2 = math.sin %v : f32
      linalg.yield %r0, %r1, %r2 : f32, f32, f32
    } -> (tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>)
    return %a#0, %a#1, %a#2 : tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>
  }
}
