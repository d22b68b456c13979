// RUN: fbl-opt %s -split-input-file -fbl-classify-ops -fbl-set-target=target=adreno-a740 -fbl-materialize-rtile -mlir-print-local-scope | FileCheck %s

// Hand-written IR without layouts: the class IV dW = Xᵀ·dY reads X, which
// the forward reads too, so X becomes an R-Tile (the forward matmul reads it
// as such as well), and dW gets its kernel configuration.
// CHECK-LABEL: func.func @step
// CHECK-SAME: %arg1: tensor<16x64xf32, #fbl.rtile<tile = [4, 4], packed = 1, intra = rows_on_x>>
// CHECK: linalg.matmul indexing_maps = {{.*}} {fbl.class = 4 : i64,
// CHECK-SAME: fbl.kernel = {reads = ["tiles", "unassigned", "unassigned"], reduced_loops = array<i64: 2>, register_tile = array<i64: 4, 4>, unrolled_loop = 2 : i64}
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

// -----

// A class IV operand wider than an Adreno image (131072 columns against
// 16384 texels) stays an R-Tile: its grid of 4x4 tiles is cut into chunks of
// tile columns, one chunk per array layer, and every tile stays whole.
// CHECK-LABEL: func.func @wide_operand
// CHECK-SAME: %arg0: tensor<4x131072xf32, #fbl.image<tile = [4, 16384], packed = 1, x = [d1.e, d0.e], y = [d0], layers = [d1]>>
// CHECK: fbl.kernel = {reads = ["texels", "unassigned", "unassigned"]
func.func @wide_operand(%x: tensor<4x131072xf32>, %d: tensor<4x8xf32>) -> tensor<131072x8xf32> {
  %e = tensor.empty() : tensor<131072x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(k, n, m) -> (m, k)>, affine_map<(k, n, m) -> (m, n)>, affine_map<(k, n, m) -> (k, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %d : tensor<4x131072xf32>, tensor<4x8xf32>) outs(%e : tensor<131072x8xf32>)
      attrs = {fbl.class = 4, fbl.phase = "backward", fbl.reuse = [{operand = 0}]} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<131072x8xf32>
  return %r : tensor<131072x8xf32>
}
