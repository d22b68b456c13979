// RUN: rm -rf %t && fbl-opt %s --fbl-lower-to-kernels | fbl-translate --fbl-to-opencl -o %t
// RUN: FileCheck %s --check-prefix=CL < %t/kernels.cl
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/manifest.json
// RUN: fbl-opt %s --fbl-lower-to-kernels | fbl-translate --fbl-to-opencl | FileCheck %s --check-prefix=CL

// Kernels that print the same code share one OpenCL function, as the same op
// does in every layer of a model: the two tanh kernels on tensors of one
// type and layout are one function, named after the first; the tanh of a
// tensor of another shape and the exp are functions of their own. Each
// launch keeps its own name; a launch of a shared function names it.

// CL: __kernel void k0_generic(
// CL: tanh(
// CL-NOT: __kernel void k1_generic(
// CL: __kernel void k2_generic(
// CL: exp(
// CL: __kernel void k3_generic(
// CL: tanh(
// CL-NOT: __kernel

// MANIFEST: "kernels": [
// MANIFEST: "name": "k0_generic",
// MANIFEST-NOT: "function"
// MANIFEST: "name": "k1_generic",
// MANIFEST-NEXT: "function": "k0_generic",
// MANIFEST: "name": "k2_generic",
// MANIFEST-NOT: "function"
// MANIFEST: "name": "k3_generic",
// MANIFEST-NOT: "function"

#cp = #fbl.channel_packed<packed = 1>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @step(%x: tensor<4x8xf32, #cp> {fbl.param}, %w: tensor<8x8xf32, #cp>)
      -> (tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>, tensor<8x8xf32, #cp>) {
    %e = tensor.empty() : tensor<4x8xf32, #cp>
    %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<4x8xf32, #cp>) outs(%e : tensor<4x8xf32, #cp>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.tanh %v : f32
      linalg.yield %r : f32
    } -> tensor<4x8xf32, #cp>
    %e1 = tensor.empty() : tensor<4x8xf32, #cp>
    %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%a : tensor<4x8xf32, #cp>) outs(%e1 : tensor<4x8xf32, #cp>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.tanh %v : f32
      linalg.yield %r : f32
    } -> tensor<4x8xf32, #cp>
    %e2 = tensor.empty() : tensor<4x8xf32, #cp>
    %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%b : tensor<4x8xf32, #cp>) outs(%e2 : tensor<4x8xf32, #cp>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.exp %v : f32
      linalg.yield %r : f32
    } -> tensor<4x8xf32, #cp>
    %e3 = tensor.empty() : tensor<8x8xf32, #cp>
    %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%w : tensor<8x8xf32, #cp>) outs(%e3 : tensor<8x8xf32, #cp>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.tanh %v : f32
      linalg.yield %r : f32
    } -> tensor<8x8xf32, #cp>
    return %a, %b, %c, %d : tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>, tensor<4x8xf32, #cp>, tensor<8x8xf32, #cp>
  }
}
