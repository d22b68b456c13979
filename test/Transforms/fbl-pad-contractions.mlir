// RUN: fbl-opt %s -split-input-file -fbl-pad-contractions | FileCheck %s

// A vocabulary of 1022 (not whole texels) on the H200: N is padded to
// whole texels (2 more columns), B and the init with zeros, and the result
// sliced back.
// CHECK-LABEL: func.func @vocab(
// CHECK: %[[B:.*]] = tensor.insert_slice %arg1 into %{{.*}}[0, 0] [48, 1022] [1, 1] : tensor<48x1022xf32> into tensor<48x1024xf32>
// CHECK: %[[C:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [64, 1022] [1, 1] : tensor<64x1022xf32> into tensor<64x1024xf32>
// CHECK: %[[P:.*]] = linalg.matmul ins(%arg0, %[[B]] : tensor<64x48xf32>, tensor<48x1024xf32>) outs(%[[C]] : tensor<64x1024xf32>)
// CHECK: %[[R:.*]] = tensor.extract_slice %[[P]][0, 0] [64, 1022] [1, 1] : tensor<64x1024xf32> to tensor<64x1022xf32>
// CHECK: return %[[R]]
module attributes {fbl.target = #fbl.target<"nvidia-h200", gemm_tile = [8, 2, 8]>} {
func.func @vocab(%a: tensor<64x48xf32>, %b: tensor<48x1022xf32>) -> tensor<64x1022xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x1022xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x1022xf32>) -> tensor<64x1022xf32>
  %c = linalg.matmul ins(%a, %b : tensor<64x48xf32>, tensor<48x1022xf32>) outs(%f : tensor<64x1022xf32>) -> tensor<64x1022xf32>
  return %c : tensor<64x1022xf32>
}
}

// -----

// Attention scores over 101 positions (B read transposed): M and N padded
// to 104, K = 64 kept.
// CHECK-LABEL: func.func @scores(
// CHECK: linalg.batch_matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x104x64xf32>, tensor<2x104x64xf32>) outs(%{{.*}} : tensor<2x104x104xf32>)
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0] [2, 101, 101] [1, 1, 1] : tensor<2x104x104xf32> to tensor<2x101x101xf32>
module attributes {fbl.target = #fbl.target<"nvidia-h200", gemm_tile = [8, 2, 8]>} {
func.func @scores(%q: tensor<2x101x64xf32>, %k: tensor<2x101x64xf32>) -> tensor<2x101x101xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x101x101xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x101x101xf32>) -> tensor<2x101x101xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, kk) -> (b, m, kk)>, affine_map<(b, m, n, kk) -> (b, n, kk)>, affine_map<(b, m, n, kk) -> (b, m, n)>]
      ins(%q, %k : tensor<2x101x64xf32>, tensor<2x101x64xf32>) outs(%f : tensor<2x101x101xf32>) -> tensor<2x101x101xf32>
  return %s : tensor<2x101x101xf32>
}
}

// -----

// An odd K (130) on the H200: padded to 132 on both operands, not to the
// GEMM tile's slices (local_k 8): the local-tiled kernel takes a ragged
// last slice itself.
// CHECK-LABEL: func.func @odd_k(
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<72x132xf32>, tensor<132x100xf32>) outs(%{{.*}} : tensor<72x100xf32>)
module attributes {fbl.target = #fbl.target<"nvidia-h200", gemm_tile = [8, 2, 8]>} {
func.func @odd_k(%a: tensor<70x130xf32>, %b: tensor<130x97xf32>) -> tensor<70x97xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<70x97xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<70x97xf32>) -> tensor<70x97xf32>
  %c = linalg.matmul ins(%a, %b : tensor<70x130xf32>, tensor<130x97xf32>) outs(%f : tensor<70x97xf32>) -> tensor<70x97xf32>
  return %c : tensor<70x97xf32>
}
}

// -----

// Left alone: whole texels already, a contraction below min-volume, and an
// elementwise op.
// CHECK-LABEL: func.func @untouched(
// CHECK-NOT: tensor.insert_slice
// CHECK-NOT: tensor.extract_slice
// CHECK: return
func.func @untouched(%a: tensor<64x48xf32>, %b: tensor<48x64xf32>, %c: tensor<5x7xf32>, %d: tensor<7x3xf32>) -> (tensor<64x64xf32>, tensor<5x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x48xf32>, tensor<48x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  %e2 = tensor.empty() : tensor<5x3xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %s = linalg.matmul ins(%c, %d : tensor<5x7xf32>, tensor<7x3xf32>) outs(%f2 : tensor<5x3xf32>) -> tensor<5x3xf32>
  return %m, %s : tensor<64x64xf32>, tensor<5x3xf32>
}

// -----

// Left alone: whole texels but not whole tiles, ViT-base's 6304 tokens
// (32 x 197) on the H200; the local-tiled kernel covers them with a ragged
// last tile (fbl-lower-to-kernels.mlir), without copies in and out.
// CHECK-LABEL: func.func @tokens_not_to_tile(
// CHECK-NOT: tensor.insert_slice
// CHECK-NOT: tensor.extract_slice
// CHECK: return
module attributes {fbl.target = #fbl.target<"nvidia-h200", gemm_tile = [8, 2, 8]>} {
func.func @tokens_not_to_tile(%a: tensor<6304x768xf32>, %b: tensor<768x768xf32>) -> tensor<6304x768xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6304x768xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<6304x768xf32>) -> tensor<6304x768xf32>
  %m = linalg.matmul ins(%a, %b : tensor<6304x768xf32>, tensor<768x768xf32>) outs(%f : tensor<6304x768xf32>) -> tensor<6304x768xf32>
  return %m : tensor<6304x768xf32>
}
}
