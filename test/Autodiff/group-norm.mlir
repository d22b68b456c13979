// GroupNorm as torch-mlir writes nn.GroupNorm on NCHW (Stable Diffusion's
// ResNet blocks: 32 groups; here 4 groups of 2 channels): the channels
// expanded into [groups, channels per group], mean and variance as keepdim
// reductions over (channels per group, H, W) read back through constant-0
// maps, then the per-channel scale and shift. Both reductions run over dims
// the output keeps: the input gradient reduces the group statistics' adjoints
// back, dγ and dβ reduce over (N, H, W) — class IV. Gradients of x, γ and β
// against finite differences; test/E2E/group-norm.test checks them against
// PyTorch's F.group_norm and runs the compiled step against the oracle.
// RUN: %gradcheck %s | FileCheck %s
// CHECK: GRADCHECK PASS
// GRADCHECK-ARG: 0 uniform -2 2
// GRADCHECK-ARG: 1 uniform 0.5 1.5
// GRADCHECK-ARG: 2 uniform -0.5 0.5
// GRADCHECK-ARG: 3 uniform -1 1

#x5 = affine_map<(n, g, k, h, w) -> (n, g, k, h, w)>
#stat = affine_map<(n, g, k, h, w) -> (n, g, 0, 0, 0)>
#x4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c)>
#all4 = affine_map<(n, c, h, w) -> ()>
func.func @group_norm(%x: tensor<2x8x3x3xf32> {fbl.param}, %gamma: tensor<8xf32> {fbl.param},
                      %beta: tensor<8xf32> {fbl.param}, %wts: tensor<2x8x3x3xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 0.0555555556 : f32
  %eps = arith.constant 1.0e-5 : f32
  %xg = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [2, 4, 2, 3, 3] : tensor<2x8x3x3xf32> into tensor<2x4x2x3x3xf32>
  %se = tensor.empty() : tensor<2x4x1x1x1xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%se : tensor<2x4x1x1x1xf32>) -> tensor<2x4x1x1x1xf32>
  %sum = linalg.generic {indexing_maps = [#x5, #stat], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%xg : tensor<2x4x2x3x3xf32>) outs(%s0 : tensor<2x4x1x1x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1x1x1xf32>
  %ce = tensor.empty() : tensor<2x4x2x3x3xf32>
  %centered = linalg.generic {indexing_maps = [#x5, #stat, #x5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%xg, %sum : tensor<2x4x2x3x3xf32>, tensor<2x4x1x1x1xf32>) outs(%ce : tensor<2x4x2x3x3xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %s, %inv : f32
    %d = arith.subf %a, %m : f32
    linalg.yield %d : f32
  } -> tensor<2x4x2x3x3xf32>
  %sq = linalg.generic {indexing_maps = [#x5, #stat], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%centered : tensor<2x4x2x3x3xf32>) outs(%s0 : tensor<2x4x1x1x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %p = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1x1x1xf32>
  %normed = linalg.generic {indexing_maps = [#x5, #stat, #x5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%centered, %sq : tensor<2x4x2x3x3xf32>, tensor<2x4x1x1x1xf32>) outs(%ce : tensor<2x4x2x3x3xf32>) {
  ^bb0(%a: f32, %v: f32, %o: f32):
    %var = arith.mulf %v, %inv : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.rsqrt %ve : f32
    %y = arith.mulf %a, %r : f32
    linalg.yield %y : f32
  } -> tensor<2x4x2x3x3xf32>
  %y4 = tensor.collapse_shape %normed [[0], [1, 2], [3], [4]] : tensor<2x4x2x3x3xf32> into tensor<2x8x3x3xf32>
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#x4, #chan, #chan, #x4, #all4], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y4, %gamma, %beta, %wts : tensor<2x8x3x3xf32>, tensor<8xf32>, tensor<8xf32>, tensor<2x8x3x3xf32>) outs(%l0 : tensor<f32>) {
  ^bb0(%y: f32, %g: f32, %b: f32, %w: f32, %acc: f32):
    %s = arith.mulf %y, %g : f32
    %o = arith.addf %s, %b : f32
    %t = math.tanh %o : f32
    %m = arith.mulf %t, %w : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
