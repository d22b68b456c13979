// RUN: fbl-opt %s -split-input-file -fbl-classify-ops -fbl-select-layouts=policy=reuse-forward -mlir-print-local-scope | FileCheck %s --check-prefix=REUSE
// RUN: fbl-opt %s -split-input-file -fbl-classify-ops -fbl-select-layouts=policy=explicit-transpose -mlir-print-local-scope | FileCheck %s --check-prefix=EXPLICIT
// RUN: fbl-opt %s -split-input-file -fbl-classify-ops -fbl-select-layouts=policy=fblayout -mlir-print-local-scope | FileCheck %s --check-prefix=FBL

// One training step: Y = X·W forward, dW = Xᵀ·dY backward. Every policy
// lays out every tensor; weights and inputs start in the layout their first
// (forward) reader prefers: W packed along K (its rows), X along K (its
// columns), activations along their last dim.

// REUSE-LABEL: func.func @step
// REUSE-SAME: %arg0: tensor<64x32xf32, #fbl.channel_packed<packed = 0>> {fbl.param}
// REUSE-SAME: %arg1: tensor<16x64xf32, #fbl.channel_packed<packed = 1>>
// REUSE-SAME: -> (tensor<f32, #fbl.channel_packed<packed = 0>>, tensor<64x32xf32, #fbl.channel_packed<packed = 1>>)
// The backward reads X in the forward layout, transposed: no relayout.
// REUSE-NOT: fbl.relayout
// REUSE: linalg.matmul {{.*}}ins(%arg1, %arg0 : tensor<16x64xf32, #fbl.channel_packed<packed = 1>>, tensor<64x32xf32, #fbl.channel_packed<packed = 0>>)
// REUSE: linalg.matmul {{.*}}ins(%arg1, %{{.*}} : tensor<16x64xf32, #fbl.channel_packed<packed = 1>>, tensor<16x32xf32, #fbl.channel_packed<packed = 1>>)

// Explicit transposes: X and dY are relaid out for the backward matmul,
// which reduces over their rows.
// EXPLICIT-LABEL: func.func @step
// EXPLICIT: %[[XT:.*]] = fbl.relayout %arg1 : tensor<16x64xf32, #fbl.channel_packed<packed = 1>> to tensor<16x64xf32, #fbl.channel_packed<packed = 0>>
// EXPLICIT: linalg.matmul {{.*}}ins(%arg1, %arg0
// EXPLICIT: %[[DYT:.*]] = fbl.relayout %{{.*}} : tensor<16x32xf32, #fbl.channel_packed<packed = 1>> to tensor<16x32xf32, #fbl.channel_packed<packed = 0>>
// EXPLICIT: linalg.matmul {{.*}}ins(%[[XT]], %[[DYT]]

// fblayout: the cost model finds the relayouts do not pay for themselves
// on a matmul this size.
// FBL-LABEL: func.func @step
// FBL-NOT: fbl.relayout
// FBL: return

module attributes {fbl.target = #fbl.target<"adreno-a740">} {
  func.func @step(%w: tensor<64x32xf32> {fbl.param}, %x: tensor<16x64xf32>) -> (tensor<f32>, tensor<64x32xf32>) {
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %e = tensor.empty() : tensor<16x32xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
    %y = linalg.matmul ins(%x, %w : tensor<16x64xf32>, tensor<64x32xf32>) outs(%z : tensor<16x32xf32>) -> tensor<16x32xf32>
    %le = tensor.empty() : tensor<f32>
    %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
        ins(%y : tensor<16x32xf32>) outs(%lz : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %acc, %a : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    %dy = linalg.fill ins(%one : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
    %we = tensor.empty() : tensor<64x32xf32>
    %wz = linalg.fill ins(%zero : f32) outs(%we : tensor<64x32xf32>) -> tensor<64x32xf32>
    %dw = linalg.matmul indexing_maps = [affine_map<(k, n, m) -> (m, k)>, affine_map<(k, n, m) -> (m, n)>, affine_map<(k, n, m) -> (k, n)>]
        ins(%x, %dy : tensor<16x64xf32>, tensor<16x32xf32>) outs(%wz : tensor<64x32xf32>) -> tensor<64x32xf32>
    return %l, %dw : tensor<f32>, tensor<64x32xf32>
  }
}

// -----

// A table longer than the target's image side (300 rows against 64 texels)
// is spread over image-array layers: 5 layers of 60 rows each.
// FBL-LABEL: func.func @long_table
// FBL-SAME: tensor<300x16xf32, #fbl.image<tile = [60, 4], packed = 1, x = [d1], y = [d0.e], layers = [d0]>>
module attributes {fbl.target = #fbl.target<"pocl-cpu", max_image_width = 64, max_image_height = 64>} {
  func.func @long_table(%w: tensor<300x16xf32> {fbl.param}) -> (tensor<f32>, tensor<300x16xf32>) {
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %e = tensor.empty() : tensor<f32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
        ins(%w : tensor<300x16xf32>) outs(%z : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %acc, %a : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    %ge = tensor.empty() : tensor<300x16xf32>
    %g = linalg.fill ins(%one : f32) outs(%ge : tensor<300x16xf32>) -> tensor<300x16xf32>
    return %l, %g : tensor<f32>, tensor<300x16xf32>
  }
}

// -----

// Integer tensors live in buffers; so do the accumulators of scatter loops.
// A function without a backward pass is left alone.
// REUSE-LABEL: func.func @forward_only
// REUSE-SAME: tensor<4x8xf32>
// REUSE-NOT: #fbl
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @forward_only(%x: tensor<4x8xf32> {fbl.param}) -> tensor<f32> {
    %e = tensor.empty() : tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
        ins(%x : tensor<4x8xf32>) outs(%e : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %acc, %a : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %l : tensor<f32>
  }
}
