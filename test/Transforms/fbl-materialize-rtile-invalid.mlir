// RUN: fbl-opt %s -split-input-file -fbl-set-target=target=adreno-a740 -fbl-materialize-rtile -verify-diagnostics

// A class IV op reading a 1-D forward tensor: there is no tile to make.
func.func @vector_operand(%v: tensor<8xf32>, %d: tensor<8x4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{'linalg.generic' op fbl-materialize-rtile: class IV operand #0 of type 'tensor<8xf32>' has fewer than 2 dims and cannot be R-Tiled}}
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]}
      ins(%v, %d : tensor<8xf32>, tensor<8x4xf32>) outs(%e : tensor<4xf32>)
      attrs = {fbl.class = 4, fbl.phase = "backward", fbl.reuse = [{operand = 0}]} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A forward tensor too wide for any Adreno image, even spread over all 2048
// array layers.
func.func @too_wide(%x: tensor<4x67108864xf32>, %d: tensor<4x8xf32>) -> tensor<67108864x8xf32> {
  %e = tensor.empty() : tensor<67108864x8xf32>
  // expected-error @+1 {{'linalg.generic' op fbl-materialize-rtile: class IV operand #0 of type 'tensor<4x67108864xf32>' fits no R-Tile image of target 'adreno-a740'}}
  %r = linalg.generic {indexing_maps = [affine_map<(k, n, m) -> (m, k)>, affine_map<(k, n, m) -> (m, n)>, affine_map<(k, n, m) -> (k, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %d : tensor<4x67108864xf32>, tensor<4x8xf32>) outs(%e : tensor<67108864x8xf32>)
      attrs = {fbl.class = 4, fbl.phase = "backward", fbl.reuse = [{operand = 0}]} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<67108864x8xf32>
  return %r : tensor<67108864x8xf32>
}
