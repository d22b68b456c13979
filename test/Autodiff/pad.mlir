// tensor.pad as importers write it (a constant padding value, low and high
// padding on both dims), on a trainable path: fbl-autodiff rewrites it with
// upstream's decomposition (the value filled into a tensor.empty, the source
// inserted as a slice), so the gradient is the slice of the padded
// gradient. The padding value itself reaches the loss, so a wrong fill
// changes the loss, and a wrong slice offset the gradient
// (test/E2E/pad.test runs the compiled step against the oracle).
// RUN: %gradcheck %s | FileCheck %s
// CHECK: GRADCHECK PASS
// GRADCHECK-ARG: 0 uniform -1 1
// GRADCHECK-ARG: 1 uniform -2 2

func.func @pad(%x: tensor<3x5xf32> {fbl.param}, %w: tensor<6x8xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %p = tensor.pad %x low[1, 2] high[2, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %half : f32
  } : tensor<3x5xf32> to tensor<6x8xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(n, m) -> (n, m)>, affine_map<(n, m) -> (n, m)>, affine_map<(n, m) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%p, %w : tensor<6x8xf32>, tensor<6x8xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %t = math.tanh %m : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
