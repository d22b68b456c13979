// Convolutions are read as strided slices before differentiation
// (lib/Autodiff/DecomposeConvolution.cpp): a 3x3 stride-2 convolution reads
// nine strided slices of the input, each collapsed into a [positions,
// channels] matrix, joined along the channels (im2col) and multiplied once
// by the filter as one [window x channels, filters] matrix; a pooling body
// keeps a chain of generics, one per window position, each accumulating into
// the last; non-overlapping patches (stride = window, as ViT's embedding)
// become a reshape of the input and one matmul. test/E2E/convolution.test
// checks values against PyTorch.
// RUN: fbl-opt %s -split-input-file -fbl-autodiff | FileCheck %s

// CHECK-LABEL: func.func @conv3x3(
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
// CHECK: %[[F:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0, 1, 2], [3]] : tensor<3x3x3x5xf32> into tensor<27x5xf32>
// CHECK: %[[S0:.*]] = tensor.extract_slice %arg0[0, 0, 0, 0] [1, 3, 3, 3] [1, 2, 2, 1] : tensor<1x7x7x3xf32> to tensor<1x3x3x3xf32>
// CHECK: %[[C0:.*]] = tensor.collapse_shape %[[S0]] {{\[\[}}0, 1, 2], [3]] : tensor<1x3x3x3xf32> into tensor<9x3xf32>
// CHECK: tensor.extract_slice %arg0[0, 0, 1, 0] [1, 3, 3, 3] [1, 2, 2, 1]
// CHECK: tensor.extract_slice %arg0[0, 2, 2, 0] [1, 3, 3, 3] [1, 2, 2, 1]
// CHECK-NOT: tensor.extract_slice %arg1
// CHECK: tensor.insert_slice %[[C0]] into %{{.*}}[0, 0] [9, 3] [1, 1] : tensor<9x3xf32> into tensor<9x27xf32>
// CHECK: %[[P:.*]] = linalg.matmul ins(%{{.*}}, %[[F]] : tensor<9x27xf32>, tensor<27x5xf32>) outs(%{{.*}} : tensor<9x5xf32>)
// CHECK: tensor.expand_shape %[[P]] {{\[\[}}0, 1, 2], [3]] output_shape [1, 3, 3, 5] : tensor<9x5xf32> into tensor<1x3x3x5xf32>
// CHECK-LABEL: func.func @conv3x3_grad(
func.func @conv3x3(%x: tensor<1x7x7x3xf32> {fbl.param}, %w: tensor<3x3x3x5xf32> {fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x3x5xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x3x5xf32>) -> tensor<1x3x3x5xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<1x7x7x3xf32>, tensor<3x3x3x5xf32>) outs(%init : tensor<1x3x3x5xf32>) -> tensor<1x3x3x5xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y : tensor<1x3x3x5xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = math.tanh %a : f32
    %r = arith.addf %acc, %t : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Non-overlapping patches (stride = window) are a reshape of the input, and
// the convolution then one matmul of the patches by the filter.
// CHECK-LABEL: func.func @patches(
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[X:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2], [3, 4], [5]] output_shape [1, 2, 4, 2, 4, 3] : tensor<1x8x8x3xf32> into tensor<1x2x4x2x4x3xf32>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<1x2x4x2x4x3xf32>) outs(%{{.*}} : tensor<1x2x2x4x4x3xf32>) permutation = [0, 1, 3, 2, 4, 5]
// CHECK: %[[A:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0, 1, 2], [3, 4, 5]] : tensor<1x2x2x4x4x3xf32> into tensor<4x48xf32>
// CHECK: %[[B:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0, 1, 2], [3]] : tensor<4x4x3x6xf32> into tensor<48x6xf32>
// CHECK: %[[P:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<4x48xf32>, tensor<48x6xf32>)
// CHECK: tensor.expand_shape %[[P]] {{\[\[}}0, 1, 2], [3]] output_shape [1, 2, 2, 6]
// CHECK-LABEL: func.func @patches_grad(
func.func @patches(%x: tensor<1x8x8x3xf32> {fbl.param}, %w: tensor<4x4x3x6xf32> {fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x2x6xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x6xf32>) -> tensor<1x2x2x6xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<4> : tensor<2xi64>}
      ins(%x, %w : tensor<1x8x8x3xf32>, tensor<4x4x3x6xf32>) outs(%init : tensor<1x2x2x6xf32>) -> tensor<1x2x2x6xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y : tensor<1x2x2x6xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = math.tanh %a : f32
    %r = arith.addf %acc, %t : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A max pool (3x3 window, stride 1) is no contraction: one generic per window position, each reading a slice and
// accumulating into the last.
// CHECK-LABEL: func.func @max_pool(
// CHECK-NOT: linalg.matmul
// CHECK: %[[S0:.*]] = tensor.extract_slice %arg0[0, 0, 0, 0] [1, 4, 4, 2] [1, 1, 1, 1]
// CHECK: %[[G0:.*]] = linalg.generic {{.*}} ins(%[[S0]], %{{.*}} : tensor<1x4x4x2xf32>, tensor<f32>) outs(%{{.*}} : tensor<1x4x4x2xf32>)
// CHECK: tensor.extract_slice %arg0[0, 0, 1, 0] [1, 4, 4, 2] [1, 1, 1, 1]
// CHECK: linalg.generic {{.*}} outs(%[[G0]] : tensor<1x4x4x2xf32>)
// CHECK: tensor.extract_slice %arg0[0, 2, 2, 0] [1, 4, 4, 2] [1, 1, 1, 1]
// CHECK-LABEL: func.func @max_pool_grad(
func.func @max_pool(%x: tensor<1x6x6x2xf32> {fbl.param}, %window: tensor<3x3xf32>) -> tensor<f32> {
  %lowest = arith.constant -3.40282347E+38 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x2xf32>
  %init = linalg.fill ins(%lowest : f32) outs(%e : tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, h, w, c, kh, kw) -> (n, h + kh, w + kw, c)>, affine_map<(n, h, w, c, kh, kw) -> (kh, kw)>, affine_map<(n, h, w, c, kh, kw) -> (n, h, w, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %window : tensor<1x6x6x2xf32>, tensor<3x3xf32>) outs(%init : tensor<1x4x4x2xf32>) {
  ^bb0(%a: f32, %unused: f32, %acc: f32):
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y : tensor<1x4x4x2xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = math.tanh %a : f32
    %r = arith.addf %acc, %t : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A 1x1 convolution (NCHW, as a UNet's skip and projection convolutions):
// stride 1 = window 1 makes it a reshape form, then one matmul of the
// [N*H*W, C] pixels by the [C, F] filter, transposed back into NCHW.
// CHECK-LABEL: func.func @pointwise(
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[P:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<50x3xf32>, tensor<3x4xf32>) outs(%{{.*}} : tensor<50x4xf32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0, 1, 2], [3]] output_shape [2, 5, 5, 4]
// CHECK: linalg.transpose ins(%[[E]] : tensor<2x5x5x4xf32>) outs(%{{.*}} : tensor<2x4x5x5xf32>) permutation = [0, 3, 1, 2]
// CHECK-LABEL: func.func @pointwise_grad(
func.func @pointwise(%x: tensor<2x3x5x5xf32> {fbl.param}, %w: tensor<4x3x1x1xf32> {fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x5x5xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x3x5x5xf32>, tensor<4x3x1x1xf32>) outs(%init : tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y : tensor<2x4x5x5xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = math.tanh %a : f32
    %r = arith.addf %acc, %t : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
