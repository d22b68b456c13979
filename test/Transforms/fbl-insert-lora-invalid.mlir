// RUN: fbl-opt %s -split-input-file -fbl-insert-lora="rank=2 targets=q_proj" -verify-diagnostics
// Errors of the options and of targets matching nothing are the module's:
// RUN: not fbl-opt %s -split-input-file -fbl-insert-lora="rank=0 targets=q_proj" 2>&1 | FileCheck %s --check-prefix=RANK
// RUN: not fbl-opt %s -split-input-file -fbl-insert-lora="rank=2 alpha=-1 targets=q_proj" 2>&1 | FileCheck %s --check-prefix=ALPHA
// RUN: not fbl-opt %s -split-input-file -fbl-insert-lora="rank=2" 2>&1 | FileCheck %s --check-prefix=TARGETS
// RUN: not fbl-opt %s -split-input-file -fbl-insert-lora="rank=2 targets=q_proj,k_proj" 2>&1 | FileCheck %s --check-prefix=NOMATCH
// RUN: not fbl-opt %s -split-input-file -fbl-insert-lora="rank=2 targets=q_proj trainable=bias" 2>&1 | FileCheck %s --check-prefix=KEEPS
// RUN: not fbl-opt %s -split-input-file -fbl-insert-lora="rank=2 targets=q_proj trainable=q_proj" 2>&1 | FileCheck %s --check-prefix=BOTH

// RANK: error: fbl-insert-lora: rank=0 is not valid; rank must be > 0
// ALPHA: error: fbl-insert-lora: alpha=-1 is not valid; alpha must be a finite number > 0
// TARGETS: error: fbl-insert-lora: targets= is empty; name the modules to adapt, e.g. targets=q_proj,v_proj
// NOMATCH: error: fbl-insert-lora: no weight named 'k_proj.weight' or '*.k_proj.weight' matches target 'k_proj'
// KEEPS: error: fbl-insert-lora: trainable='bias' keeps nothing: no fbl.param argument's fbl.name contains it
// BOTH: error: fbl-insert-lora: cannot adapt 'model.layers.0.self_attn.q_proj.weight' (target 'q_proj'): trainable='q_proj' keeps it trainable, and LoRA freezes the weights it adapts

// A weight gathered from (a tied embedding) is no matmul operand.
func.func @gathered_weight(
    %ids: tensor<8xi64>,
    %w: tensor<32x16xf32> {fbl.name = "model.layers.0.self_attn.q_proj.weight", fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %ge = tensor.empty() : tensor<8x16xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<8xi64>) outs(%ge : tensor<8x16xf32>) {
  ^bb0(%id: i64, %o: f32):
    %r = arith.index_cast %id : i64 to index
    %c = linalg.index 1 : index
    // expected-error @+1 {{fbl-insert-lora: cannot adapt 'model.layers.0.self_attn.q_proj.weight' (target 'q_proj'): 'tensor.extract' reads it; only matmuls on the weight (x·W, x·Wᵀ) can be adapted}}
    %v = tensor.extract %w[%r, %c] : tensor<32x16xf32>
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%g : tensor<8x16xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The transpose of the weight read by something else than a matmul.
func.func @transposed_weight_read_elementwise(
    %w: tensor<16x16xf32> {fbl.name = "q_proj.weight"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %te = tensor.empty() : tensor<16x16xf32>
  %wt = linalg.transpose ins(%w : tensor<16x16xf32>) outs(%te : tensor<16x16xf32>) permutation = [1, 0]
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{'linalg.generic' reads it; only matmuls on the weight (x·W, x·Wᵀ) can be adapted}}
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%wt : tensor<16x16xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// W·x instead of x·W.
func.func @weight_as_left_operand(
    %x: tensor<16x8xf32>,
    %w: tensor<32x16xf32> {fbl.name = "q_proj.weight"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %ye = tensor.empty() : tensor<32x8xf32>
  %yz = linalg.fill ins(%zero : f32) outs(%ye : tensor<32x8xf32>) -> tensor<32x8xf32>
  // expected-error @+1 {{'linalg.matmul' reads it as its left operand; LoRA adapts x·W}}
  %y = linalg.matmul ins(%w, %x : tensor<32x16xf32>, tensor<16x8xf32>) outs(%yz : tensor<32x8xf32>) -> tensor<32x8xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<32x8xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// xᵀ·W: the adapter's second product could not read the first one's result.
func.func @transposed_left_operand(
    %xt: tensor<16x8xf32>,
    %w: tensor<16x32xf32> {fbl.name = "q_proj.weight"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %ye = tensor.empty() : tensor<8x32xf32>
  %yz = linalg.fill ins(%zero : f32) outs(%ye : tensor<8x32xf32>) -> tensor<8x32xf32>
  // expected-error @+1 {{'linalg.matmul' indexes its left operand in another order than its result}}
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%xt, %w : tensor<16x8xf32>, tensor<16x32xf32>) outs(%yz : tensor<8x32xf32>) -> tensor<8x32xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<8x32xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A square weight read as x·W and as x·Wᵀ: A and B would mean two things.
func.func @weight_read_both_ways(
    %x: tensor<8x16xf32>,
    %w: tensor<16x16xf32> {fbl.name = "q_proj.weight"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %ye = tensor.empty() : tensor<8x16xf32>
  %yz = linalg.fill ins(%zero : f32) outs(%ye : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y1 = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%yz : tensor<8x16xf32>) -> tensor<8x16xf32>
  // expected-error @+1 {{'linalg.matmul' reads its dim 1 as the input dim where another matmul reads dim 0}}
  %y2 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%y1, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%yz : tensor<8x16xf32>) -> tensor<8x16xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y2 : tensor<8x16xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @vector_weight(
    %x: tensor<8x16xf32>,
    // expected-error @+1 {{fbl-insert-lora: cannot adapt 'q_proj.weight' (target 'q_proj'): it is 'tensor<16xf32>'; LoRA adapts static 2-D weight matrices}}
    %w: tensor<16xf32> {fbl.name = "q_proj.weight", fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%x, %w : tensor<8x16xf32>, tensor<16xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%v: f32, %g: f32, %acc: f32):
    %p = arith.mulf %v, %g : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @rank_above_the_weight(
    %x: tensor<8x16xf32>,
    // expected-error @+1 {{rank=2 exceeds min(IN, OUT) = 1 (IN = 16, OUT = 1)}}
    %w: tensor<1x16xf32> {fbl.name = "q_proj.weight"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %ye = tensor.empty() : tensor<8x1xf32>
  %yz = linalg.fill ins(%zero : f32) outs(%ye : tensor<8x1xf32>) -> tensor<8x1xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<8x16xf32>, tensor<1x16xf32>) outs(%yz : tensor<8x1xf32>) -> tensor<8x1xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<8x1xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @unused_weight(
    %x: tensor<f32>,
    // expected-error @+1 {{cannot adapt 'q_proj.weight' (target 'q_proj'): no matmul reads it}}
    %w: tensor<16x16xf32> {fbl.name = "q_proj.weight", fbl.param}) -> tensor<f32> {
  return %x : tensor<f32>
}

// -----

func.func @integer_matmul(
    %x: tensor<8x16xi32>,
    %w: tensor<16x16xi32> {fbl.name = "q_proj.weight"}) -> tensor<f32> {
  %zero = arith.constant 0 : i32
  %ye = tensor.empty() : tensor<8x16xi32>
  %yz = linalg.fill ins(%zero : i32) outs(%ye : tensor<8x16xi32>) -> tensor<8x16xi32>
  // expected-error @+1 {{'linalg.matmul' computes no float result}}
  %y = linalg.matmul ins(%x, %w : tensor<8x16xi32>, tensor<16x16xi32>) outs(%yz : tensor<8x16xi32>) -> tensor<8x16xi32>
  %e = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<8x16xi32>) outs(%e : tensor<f32>) {
  ^bb0(%v: i32, %acc: f32):
    %f = arith.sitofp %v : i32 to f32
    %s = arith.addf %acc, %f : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Run after fbl-autodiff, the pass would leave @f_grad differentiating the
// model without adapters.
// expected-error @+1 {{fbl-insert-lora: @f already has @f_grad; run fbl-insert-lora before fbl-autodiff}}
func.func @f(%x: tensor<8x16xf32>,
             %w: tensor<16x16xf32> {fbl.name = "q_proj.weight", fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %ye = tensor.empty() : tensor<8x16xf32>
  %yz = linalg.fill ins(%zero : f32) outs(%ye : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%yz : tensor<8x16xf32>) -> tensor<8x16xf32>
  %e = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<8x16xf32>) outs(%e : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
func.func @f_grad(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>) -> (tensor<f32>, tensor<16x16xf32>) {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c, %w : tensor<f32>, tensor<16x16xf32>
}

// -----

// A called model would be called without its adapters.
// expected-error @+1 {{fbl-insert-lora: @called is called in the module; its callers would not pass the adapters}}
func.func @called(%x: tensor<8x16xf32>,
                  %w: tensor<16x16xf32> {fbl.name = "q_proj.weight", fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %ye = tensor.empty() : tensor<8x16xf32>
  %yz = linalg.fill ins(%zero : f32) outs(%ye : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%yz : tensor<8x16xf32>) -> tensor<8x16xf32>
  %e = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<8x16xf32>) outs(%e : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
func.func @caller(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>) -> tensor<f32> {
  %l = func.call @called(%x, %w) : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The targets match the first model; the second would train nothing.
func.func @adapted(%x: tensor<8x16xf32>,
                   %w: tensor<16x16xf32> {fbl.name = "q_proj.weight"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %ye = tensor.empty() : tensor<8x16xf32>
  %yz = linalg.fill ins(%zero : f32) outs(%ye : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%yz : tensor<8x16xf32>) -> tensor<8x16xf32>
  %e = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<8x16xf32>) outs(%e : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @+1 {{fbl-insert-lora: @untouched would have no fbl.param argument left: none of its weights matches targets= and trainable= keeps none of its parameters}}
func.func @untouched(%x: tensor<8xf32>,
                     %b: tensor<8xf32> {fbl.name = "lm_head.bias", fbl.param}) -> tensor<f32> {
  %e = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%x, %b : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<f32>) {
  ^bb0(%v: f32, %c: f32, %acc: f32):
    %p = arith.mulf %v, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
