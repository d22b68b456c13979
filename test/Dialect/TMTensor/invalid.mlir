// RUN: fbl-opt %s -split-input-file -verify-diagnostics

func.func @two_inputs(%q: tensor<4x8xf32>, %k: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %init = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{takes query, key, value and an optional mask, got 2 inputs}}
  %o = tm_tensor.attention ins(%q, %k : tensor<4x8xf32>, tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

func.func @head_dim(%q: tensor<4x8xf32>, %k: tensor<4x6xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %init = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{key's last dim 6 differs from query's 8}}
  %o = tm_tensor.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<4x6xf32>, tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

func.func @value_rows(%q: tensor<4x8xf32>, %k: tensor<5x8xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %init = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{value has 4 rows, key 5}}
  %o = tm_tensor.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<5x8xf32>, tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

func.func @batch(%q: tensor<2x4x8xf32>, %k: tensor<3x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %init = tensor.empty() : tensor<2x4x8xf32>
  // expected-error @+1 {{query, key, value and output need the same batch dims}}
  %o = tm_tensor.attention ins(%q, %k, %v : tensor<2x4x8xf32>, tensor<3x4x8xf32>, tensor<2x4x8xf32>) outs(%init : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

func.func @output(%q: tensor<4x8xf32>, %k: tensor<5x8xf32>, %v: tensor<5x3xf32>) -> tensor<4x8xf32> {
  %init = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{output must be [..., 4, 3]}}
  %o = tm_tensor.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<5x8xf32>, tensor<5x3xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

func.func @mask_shape(%q: tensor<4x8xf32>, %k: tensor<5x8xf32>, %v: tensor<5x8xf32>, %m: tensor<5x4xi1>) -> tensor<4x8xf32> {
  %init = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{mask must have the scores' shape [..., 4, 5]}}
  %o = tm_tensor.attention ins(%q, %k, %v, %m : tensor<4x8xf32>, tensor<5x8xf32>, tensor<5x8xf32>, tensor<5x4xi1>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

func.func @mask_type(%q: tensor<4x8xf32>, %k: tensor<5x8xf32>, %v: tensor<5x8xf32>, %m: tensor<4x5xi32>) -> tensor<4x8xf32> {
  %init = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{mask must be i1 or the query's element type}}
  %o = tm_tensor.attention ins(%q, %k, %v, %m : tensor<4x8xf32>, tensor<5x8xf32>, tensor<5x8xf32>, tensor<4x5xi32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

func.func @dynamic(%q: tensor<?x8xf32>, %k: tensor<5x8xf32>, %v: tensor<5x8xf32>, %init: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{needs static shapes}}
  %o = tm_tensor.attention ins(%q, %k, %v : tensor<?x8xf32>, tensor<5x8xf32>, tensor<5x8xf32>) outs(%init : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

func.func @result(%q: tensor<4x8xf32>, %k: tensor<5x8xf32>, %v: tensor<5x8xf32>) -> tensor<4x4xf32> {
  %init = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{result must have the output's type}}
  %o = tm_tensor.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<5x8xf32>, tensor<5x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x4xf32>
  return %o : tensor<4x4xf32>
}
