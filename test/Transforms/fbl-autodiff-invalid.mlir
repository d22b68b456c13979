// RUN: fbl-opt %s -split-input-file -fbl-autodiff -verify-diagnostics
// RUN: not fbl-opt %s -split-input-file -fbl-autodiff=require-model 2>&1 | FileCheck %s --check-prefix=NOMODEL
// RUN: not fbl-opt %s -split-input-file --fbl-training-pipeline="target=pocl-cpu" 2>&1 | FileCheck %s --check-prefix=NOMODEL

func.func @no_rule(%x: tensor<4xf32> {fbl.param}) -> tensor<f32> {
  %le = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%x : tensor<4xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    // expected-error @+1 {{fbl-autodiff: cannot differentiate 'math.atan'}}
    %t = math.atan %a : f32
    %r = arith.addf %acc, %t : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A flipped-kernel correlation reads its input through i - k + 2 (a
// convolution's own i + k is read as strided slices; a reversed index is not).
func.func @not_a_projected_permutation(%x: tensor<6xf32> {fbl.param}, %w: tensor<3xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{fbl-autodiff: cannot differentiate 'linalg.generic': operand #0 is accessed through affine_map<(d0, d1) -> (d0 - d1 + 2)>, which is not a projected permutation}}
  %c = linalg.generic {indexing_maps = [affine_map<(i, k) -> (i - k + 2)>, affine_map<(i, k) -> (k)>, affine_map<(i, k) -> (i)>], iterator_types = ["parallel", "reduction"]}
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

func.func @product_reduction(%x: tensor<4xf32> {fbl.param}) -> tensor<f32> {
  %le = tensor.empty() : tensor<f32>
  // expected-error @+1 {{fbl-autodiff: cannot differentiate the reduction of output #0 combined by 'arith.mulf': supported reductions are sums, maxima and minima}}
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%x : tensor<4xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.mulf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func private @opaque(tensor<4xf32>) -> tensor<f32>

func.func @call(%x: tensor<4xf32> {fbl.param}) -> tensor<f32> {
  // expected-error @+1 {{fbl-autodiff: cannot differentiate 'func.call'}}
  %l = func.call @opaque(%x) : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @captured_scalar(%x: tensor<4xf32> {fbl.param}, %s: tensor<f32> {fbl.param}) -> tensor<f32> {
  %sv = tensor.extract %s[] : tensor<f32>
  %le = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%x : tensor<4xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    // expected-error @+1 {{fbl-autodiff: cannot differentiate a use of an active value captured by 'linalg.generic' other than tensor.extract}}
    %p = arith.mulf %a, %sv : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{fbl-autodiff: expected a single-block function}}
func.func @branches(%x: tensor<f32> {fbl.param}, %c: i1) -> tensor<f32> {
  cf.cond_br %c, ^a, ^b
^a:
  return %x : tensor<f32>
^b:
  return %x : tensor<f32>
}

// -----

// expected-error @+1 {{fbl-autodiff: cannot differentiate @dynamic: argument #0 has type 'tensor<?xf32>'; only static shapes are supported}}
func.func @dynamic(%x: tensor<?xf32> {fbl.param}) -> tensor<f32> {
  %le = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%x : tensor<?xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Functions that are not models are skipped with a warning each.
// expected-warning @+1 {{fbl-autodiff: not compiling @no_param: it has no fbl.param argument}}
func.func @no_param(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
// expected-warning @+1 {{fbl-autodiff: not compiling @f64_loss: its result 'tensor<f64>' is not a scalar tensor<f32> loss}}
func.func @f64_loss(%x: tensor<f64> {fbl.param}) -> tensor<f64> {
  return %x : tensor<f64>
}
// expected-warning @+1 {{fbl-autodiff: not compiling @vector_loss: its result 'tensor<4xf32>' is not a scalar tensor<f32> loss}}
func.func @vector_loss(%x: tensor<4xf32> {fbl.param}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @model(%x: tensor<f32> {fbl.param}) -> tensor<f32> {
  return %x : tensor<f32>
}

// -----

// A zero stride reads one element several times: its gradient would be their
// sum, where the slice's gradient rule inserts (found by fbl-fuzz-compile,
// test/Fuzz/corpus/compile/zero-stride-slice).
func.func @zero_stride(%x: tensor<4x6xf32> {fbl.param}) -> tensor<f32> {
  // expected-error @+1 {{fbl-autodiff: cannot differentiate 'tensor.extract_slice': its stride along dim 0 is 0; only positive strides are supported}}
  %s = tensor.extract_slice %x[1, 0] [2, 3] [0, 2] : tensor<4x6xf32> to tensor<2x3xf32>
  %le = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%s : tensor<2x3xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// With require-model (the training pipeline), a module without a model fails.
// NOMODEL: warning: fbl-autodiff: not compiling @two_results
// NOMODEL: error: fbl-autodiff: no function of the module can be trained; a model takes fbl.param arguments and returns one scalar tensor<f32> loss
module {
  // expected-warning @+1 {{fbl-autodiff: not compiling @two_results: it returns 2 results; a model returns one scalar tensor<f32> loss}}
  func.func @two_results(%x: tensor<f32> {fbl.param}) -> (tensor<f32>, tensor<f32>) {
    return %x, %x : tensor<f32>, tensor<f32>
  }
}
