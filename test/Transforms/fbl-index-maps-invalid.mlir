// Index maps fbl cannot run correctly are refused with one diagnostic on
// the op, before anything is built, both by fbl-autodiff and by the whole
// training pipeline.
// RUN: fbl-opt %s -split-input-file -fbl-autodiff -verify-diagnostics
// RUN: fbl-opt %s -split-input-file --fbl-training-pipeline="target=pocl-cpu" -verify-diagnostics

// Two position loops in one index: x[i + j] with i and j both kept.
func.func @two_positions(%x: tensor<6xf32>, %w: tensor<3xf32> {fbl.param}) -> tensor<f32> {
  %e = tensor.empty() : tensor<4x3xf32>
  // expected-error @+1 {{fbl-autodiff: cannot differentiate 'linalg.generic': operand #0 is accessed through affine_map<(d0, d1) -> (d0 + d1)>, which is not a projected permutation; an index must be one position loop times a stride plus window (reduction) loops and an offset, all non-negative, inside the operand (reversed reads, div/mod, two position loops in one index and shifted outputs are not supported)}}
  %c = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i + j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %w : tensor<6xf32>, tensor<3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<4x3xf32>
  %le = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%c : tensor<4x3xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A window index through mod: x[i + k mod 2].
func.func @window_mod(%x: tensor<6xf32>, %w: tensor<3xf32> {fbl.param}) -> tensor<f32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{fbl-autodiff: cannot differentiate 'linalg.generic': operand #0 is accessed through affine_map<(d0, d1) -> (d0 + d1 mod 2)>, which is not a projected permutation; an index must be}}
  %c = linalg.generic {indexing_maps = [affine_map<(i, k) -> (i + k mod 2)>, affine_map<(i, k) -> (k)>, affine_map<(i, k) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x, %w : tensor<6xf32>, tensor<3xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %le = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%c : tensor<4xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A reversed read x[2 - i].
func.func @reversed(%x: tensor<3xf32>, %w: tensor<3xf32> {fbl.param}) -> tensor<f32> {
  %e = tensor.empty() : tensor<3xf32>
  // expected-error @+1 {{fbl-autodiff: cannot differentiate 'linalg.generic': operand #0 is accessed through affine_map<(d0) -> (-d0 + 2)>, which is not a projected permutation; an index must be one position loop times a stride plus window (reduction) loops and an offset, all non-negative, inside the operand (reversed reads, div/mod, two position loops in one index and shifted outputs are not supported)}}
  %c = linalg.generic {indexing_maps = [affine_map<(i) -> (-i + 2)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x, %w : tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %le = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%c : tensor<3xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A constant index x[2] (not 0 into a size-1 dim).
func.func @constant_index(%x: tensor<4xf32>, %w: tensor<3xf32> {fbl.param}) -> tensor<f32> {
  %e = tensor.empty() : tensor<3xf32>
  // expected-error @+1 {{fbl-autodiff: cannot differentiate 'linalg.generic': operand #0 is accessed through affine_map<(d0) -> (2)>, which is not a projected permutation; a constant index is supported only as 0 into a size-1 dimension}}
  %c = linalg.generic {indexing_maps = [affine_map<(i) -> (2)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x, %w : tensor<4xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %le = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%c : tensor<3xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The constant 0 into a dim of size 4: x[0], not a broadcast of a unit dim.
func.func @constant_zero_not_unit(%x: tensor<4xf32>, %w: tensor<3xf32> {fbl.param}) -> tensor<f32> {
  %e = tensor.empty() : tensor<3xf32>
  // expected-error @+1 {{fbl-autodiff: cannot differentiate 'linalg.generic': operand #0 is accessed through affine_map<(d0) -> (0)>, which is not a projected permutation; a constant index is supported only as 0 into a size-1 dimension}}
  %c = linalg.generic {indexing_maps = [affine_map<(i) -> (0)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x, %w : tensor<4xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %le = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%c : tensor<3xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// An output written through i + 1.
func.func @written_shifted(%x: tensor<3xf32>, %w: tensor<3xf32> {fbl.param}) -> tensor<f32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{fbl-autodiff: cannot differentiate 'linalg.generic': operand #2 is accessed through affine_map<(d0) -> (d0 + 1)>, which is not a projected permutation; an index must be one position loop times a stride plus window (reduction) loops and an offset, all non-negative, inside the operand (reversed reads, div/mod, two position loops in one index and shifted outputs are not supported)}}
  %c = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i + 1)>], iterator_types = ["parallel"]}
      ins(%x, %w : tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %le = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%c : tensor<4xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The verifier accepts an elementwise generic whose output keeps a dim marked
// reduction; the kernels would index its output by a reduced loop.
func.func @reduction_dim_in_output(%x: tensor<4xf32> {fbl.param}) -> tensor<f32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{fbl-autodiff: cannot differentiate 'linalg.generic': loop dim #0 is marked reduction but indexes an output}}
  %t = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["reduction"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %h = math.tanh %a : f32
    linalg.yield %h : f32
  } -> tensor<4xf32>
  %le = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%t : tensor<4xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @parallel_dim_not_in_output(%x: tensor<4xf32> {fbl.param}) -> tensor<f32> {
  %le = tensor.empty() : tensor<f32>
  // expected-error @+1 {{fbl-autodiff: cannot differentiate 'linalg.generic': loop dim #0 is marked parallel but indexes no output}}
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A gather whose ids are read through n floordiv 2.
func.func @gather_floordiv_ids(%table: tensor<6xf32> {fbl.param}, %ids: tensor<5xi64>) -> tensor<f32> {
  %e = tensor.empty() : tensor<10xf32>
  // expected-error @+1 {{fbl-autodiff: cannot differentiate 'linalg.generic': operand #0 is accessed through affine_map<(d0) -> (d0 floordiv 2)>, which is not a projected permutation}}
  %emb = linalg.generic {indexing_maps = [affine_map<(n) -> (n floordiv 2)>, affine_map<(n) -> (n)>], iterator_types = ["parallel"]}
      ins(%ids : tensor<5xi64>) outs(%e : tensor<10xf32>) {
  ^bb0(%id: i64, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %v = tensor.extract %table[%row] : tensor<6xf32>
    linalg.yield %v : f32
  } -> tensor<10xf32>
  %le = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(n) -> (n)>, affine_map<(n) -> ()>], iterator_types = ["reduction"]}
      ins(%emb : tensor<10xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
