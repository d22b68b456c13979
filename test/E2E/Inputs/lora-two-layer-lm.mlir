// A two-layer decoder-like language model written the way torch-mlir lowers
// one (linear layers as linalg.transpose + linalg.matmul on weights stored
// [OUT, IN], 3-D activations collapsed to [tokens, hidden]), with the Hugging
// Face tensor names the LoRA tests target: per layer an RMSNorm, q_proj and
// v_proj (16 -> 32) gated as q * sigmoid(v), o_proj (32 -> 16) and a
// residual add; then the final norm, lm_head and the mean cross-entropy.
// GRADCHECK-ARG: 1 ints 0 16
// GRADCHECK-ARG: 2 uniform 0.5 1.5
// GRADCHECK-ARG: 6 uniform 0.5 1.5
// GRADCHECK-ARG: 10 uniform 0.5 1.5

func.func @two_layer_lm(%x: tensor<2x4x16xf32> {fbl.name = "inputs_embeds"},
    %labels: tensor<8xi64> {fbl.name = "labels"},
    %ln0: tensor<16xf32> {fbl.name = "model.layers.0.input_layernorm.weight", fbl.param},
    %wq0: tensor<32x16xf32> {fbl.name = "model.layers.0.self_attn.q_proj.weight", fbl.param},
    %wv0: tensor<32x16xf32> {fbl.name = "model.layers.0.self_attn.v_proj.weight", fbl.param},
    %wo0: tensor<16x32xf32> {fbl.name = "model.layers.0.self_attn.o_proj.weight", fbl.param},
    %ln1: tensor<16xf32> {fbl.name = "model.layers.1.input_layernorm.weight", fbl.param},
    %wq1: tensor<32x16xf32> {fbl.name = "model.layers.1.self_attn.q_proj.weight", fbl.param},
    %wv1: tensor<32x16xf32> {fbl.name = "model.layers.1.self_attn.v_proj.weight", fbl.param},
    %wo1: tensor<16x32xf32> {fbl.name = "model.layers.1.self_attn.o_proj.weight", fbl.param},
    %norm: tensor<16xf32> {fbl.name = "model.norm.weight", fbl.param},
    %head: tensor<16x16xf32> {fbl.name = "lm_head.weight", fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %inv_d = arith.constant 0.0625 : f32
  %inv_n = arith.constant 0.125 : f32
  %eps = arith.constant 1.0e-5 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %h0 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x4x16xf32> into tensor<8x16xf32>
  // layer 0 input norm: x * rsqrt(mean(x * x) + eps) * g
  %n0_se = tensor.empty() : tensor<8xf32>
  %n0_s0 = linalg.fill ins(%zero : f32) outs(%n0_se : tensor<8xf32>) -> tensor<8xf32>
  %n0_ss = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%h0 : tensor<8x16xf32>) outs(%n0_s0 : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %n0_e = tensor.empty() : tensor<8x16xf32>
  %n0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%h0, %n0_ss, %ln0 : tensor<8x16xf32>, tensor<8xf32>, tensor<16xf32>) outs(%n0_e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %s: f32, %g: f32, %o: f32):
    %m = arith.mulf %s, %inv_d : f32
    %me = arith.addf %m, %eps : f32
    %r = math.rsqrt %me : f32
    %n = arith.mulf %a, %r : f32
    %v = arith.mulf %n, %g : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  // q_proj: n0 · wq0ᵀ
  %q0_te = tensor.empty() : tensor<16x32xf32>
  %q0_wt = linalg.transpose ins(%wq0 : tensor<32x16xf32>) outs(%q0_te : tensor<16x32xf32>) permutation = [1, 0]
  %q0_e = tensor.empty() : tensor<8x32xf32>
  %q0_z = linalg.fill ins(%zero : f32) outs(%q0_e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %q0 = linalg.matmul ins(%n0, %q0_wt : tensor<8x16xf32>, tensor<16x32xf32>) outs(%q0_z : tensor<8x32xf32>) -> tensor<8x32xf32>
  // v_proj: n0 · wv0ᵀ
  %v0_te = tensor.empty() : tensor<16x32xf32>
  %v0_wt = linalg.transpose ins(%wv0 : tensor<32x16xf32>) outs(%v0_te : tensor<16x32xf32>) permutation = [1, 0]
  %v0_e = tensor.empty() : tensor<8x32xf32>
  %v0_z = linalg.fill ins(%zero : f32) outs(%v0_e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %v0 = linalg.matmul ins(%n0, %v0_wt : tensor<8x16xf32>, tensor<16x32xf32>) outs(%v0_z : tensor<8x32xf32>) -> tensor<8x32xf32>
  // q * sigmoid(v)
  %g0_e = tensor.empty() : tensor<8x32xf32>
  %g0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%q0, %v0 : tensor<8x32xf32>, tensor<8x32xf32>) outs(%g0_e : tensor<8x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %nb = arith.negf %b : f32
    %e = math.exp %nb : f32
    %d = arith.addf %e, %one : f32
    %r = arith.divf %a, %d : f32
    linalg.yield %r : f32
  } -> tensor<8x32xf32>
  // o_proj: g0 · wo0ᵀ
  %o0_te = tensor.empty() : tensor<32x16xf32>
  %o0_wt = linalg.transpose ins(%wo0 : tensor<16x32xf32>) outs(%o0_te : tensor<32x16xf32>) permutation = [1, 0]
  %o0_e = tensor.empty() : tensor<8x16xf32>
  %o0_z = linalg.fill ins(%zero : f32) outs(%o0_e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %o0 = linalg.matmul ins(%g0, %o0_wt : tensor<8x32xf32>, tensor<32x16xf32>) outs(%o0_z : tensor<8x16xf32>) -> tensor<8x16xf32>
  // residual
  %h1_e = tensor.empty() : tensor<8x16xf32>
  %h1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%h0, %o0 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%h1_e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  // layer 1 input norm: x * rsqrt(mean(x * x) + eps) * g
  %n1_se = tensor.empty() : tensor<8xf32>
  %n1_s0 = linalg.fill ins(%zero : f32) outs(%n1_se : tensor<8xf32>) -> tensor<8xf32>
  %n1_ss = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%h1 : tensor<8x16xf32>) outs(%n1_s0 : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %n1_e = tensor.empty() : tensor<8x16xf32>
  %n1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%h1, %n1_ss, %ln1 : tensor<8x16xf32>, tensor<8xf32>, tensor<16xf32>) outs(%n1_e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %s: f32, %g: f32, %o: f32):
    %m = arith.mulf %s, %inv_d : f32
    %me = arith.addf %m, %eps : f32
    %r = math.rsqrt %me : f32
    %n = arith.mulf %a, %r : f32
    %v = arith.mulf %n, %g : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  // q_proj: n1 · wq1ᵀ
  %q1_te = tensor.empty() : tensor<16x32xf32>
  %q1_wt = linalg.transpose ins(%wq1 : tensor<32x16xf32>) outs(%q1_te : tensor<16x32xf32>) permutation = [1, 0]
  %q1_e = tensor.empty() : tensor<8x32xf32>
  %q1_z = linalg.fill ins(%zero : f32) outs(%q1_e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %q1 = linalg.matmul ins(%n1, %q1_wt : tensor<8x16xf32>, tensor<16x32xf32>) outs(%q1_z : tensor<8x32xf32>) -> tensor<8x32xf32>
  // v_proj: n1 · wv1ᵀ
  %v1_te = tensor.empty() : tensor<16x32xf32>
  %v1_wt = linalg.transpose ins(%wv1 : tensor<32x16xf32>) outs(%v1_te : tensor<16x32xf32>) permutation = [1, 0]
  %v1_e = tensor.empty() : tensor<8x32xf32>
  %v1_z = linalg.fill ins(%zero : f32) outs(%v1_e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %v1 = linalg.matmul ins(%n1, %v1_wt : tensor<8x16xf32>, tensor<16x32xf32>) outs(%v1_z : tensor<8x32xf32>) -> tensor<8x32xf32>
  // q * sigmoid(v)
  %g1_e = tensor.empty() : tensor<8x32xf32>
  %g1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%q1, %v1 : tensor<8x32xf32>, tensor<8x32xf32>) outs(%g1_e : tensor<8x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %nb = arith.negf %b : f32
    %e = math.exp %nb : f32
    %d = arith.addf %e, %one : f32
    %r = arith.divf %a, %d : f32
    linalg.yield %r : f32
  } -> tensor<8x32xf32>
  // o_proj: g1 · wo1ᵀ
  %o1_te = tensor.empty() : tensor<32x16xf32>
  %o1_wt = linalg.transpose ins(%wo1 : tensor<16x32xf32>) outs(%o1_te : tensor<32x16xf32>) permutation = [1, 0]
  %o1_e = tensor.empty() : tensor<8x16xf32>
  %o1_z = linalg.fill ins(%zero : f32) outs(%o1_e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %o1 = linalg.matmul ins(%g1, %o1_wt : tensor<8x32xf32>, tensor<32x16xf32>) outs(%o1_z : tensor<8x16xf32>) -> tensor<8x16xf32>
  // residual
  %h2_e = tensor.empty() : tensor<8x16xf32>
  %h2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%h1, %o1 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%h2_e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  // final norm: x * rsqrt(mean(x * x) + eps) * g
  %nf_se = tensor.empty() : tensor<8xf32>
  %nf_s0 = linalg.fill ins(%zero : f32) outs(%nf_se : tensor<8xf32>) -> tensor<8xf32>
  %nf_ss = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%h2 : tensor<8x16xf32>) outs(%nf_s0 : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %nf_e = tensor.empty() : tensor<8x16xf32>
  %nf = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%h2, %nf_ss, %norm : tensor<8x16xf32>, tensor<8xf32>, tensor<16xf32>) outs(%nf_e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %s: f32, %g: f32, %o: f32):
    %m = arith.mulf %s, %inv_d : f32
    %me = arith.addf %m, %eps : f32
    %r = math.rsqrt %me : f32
    %n = arith.mulf %a, %r : f32
    %v = arith.mulf %n, %g : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  // lm_head: nf · headᵀ
  %z_te = tensor.empty() : tensor<16x16xf32>
  %z_wt = linalg.transpose ins(%head : tensor<16x16xf32>) outs(%z_te : tensor<16x16xf32>) permutation = [1, 0]
  %z_e = tensor.empty() : tensor<8x16xf32>
  %z_z = linalg.fill ins(%zero : f32) outs(%z_e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %z = linalg.matmul ins(%nf, %z_wt : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z_z : tensor<8x16xf32>) -> tensor<8x16xf32>
  // mean over tokens of logsumexp(z) - z[label]
  %re = tensor.empty() : tensor<8xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%re : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%z : tensor<8x16xf32>) outs(%m0 : tensor<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%re : tensor<8xf32>) -> tensor<8xf32>
  %se = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%z, %m : tensor<8x16xf32>, tensor<8xf32>) outs(%s0 : tensor<8xf32>) {
  ^bb0(%v: f32, %mx: f32, %acc: f32):
    %d = arith.subf %v, %mx : f32
    %e = math.exp %d : f32
    %r = arith.addf %acc, %e : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %nll = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%se, %m, %labels : tensor<8xf32>, tensor<8xf32>, tensor<8xi64>) outs(%re : tensor<8xf32>) {
  ^bb0(%s: f32, %mx: f32, %lab: i64, %o: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %lab : i64 to index
    %zl = tensor.extract %z[%i, %c] : tensor<8x16xf32>
    %l = math.log %s : f32
    %lse = arith.addf %l, %mx : f32
    %r = arith.subf %lse, %zl : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%nll : tensor<8xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %w = arith.mulf %v, %inv_n : f32
    %r = arith.addf %acc, %w : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %loss : tensor<f32>
}
