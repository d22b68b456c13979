// RUN: fbl-opt %s -split-input-file -fbl-insert-lora="rank=2 alpha=4 targets=q_proj" | FileCheck %s
// The cases together, keeping the norm weight trainable:
// RUN: fbl-opt %s -fbl-insert-lora="rank=2 alpha=4 targets=q_proj trainable=norm" | FileCheck %s --check-prefix=TRAIN

// A linear layer as torch-mlir emits it (x·Wᵀ, W stored [OUT, IN]): the
// weight is frozen, A [2, 16] and B [32, 2] are appended, and the matmul's
// users read y + (4/2)·(x·Aᵀ)·Bᵀ, built in the same forms.
// CHECK-LABEL: func.func @hf_linear_gets_an_adapter(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x16xf32> {fbl.name = "hidden"},
// CHECK-SAME: %[[W:[^:]*]]: tensor<32x16xf32> {fbl.name = "model.layers.0.self_attn.q_proj.weight"},
// CHECK-SAME: %[[A:[^:]*]]: tensor<2x16xf32> {fbl.init = "uniform:0.25", fbl.name = "model.layers.0.self_attn.q_proj.lora_A.weight", fbl.param},
// CHECK-SAME: %[[B:[^:]*]]: tensor<32x2xf32> {fbl.init = "zeros", fbl.name = "model.layers.0.self_attn.q_proj.lora_B.weight", fbl.param})
// CHECK: %[[WT:.*]] = linalg.transpose ins(%[[W]] : tensor<32x16xf32>)
// CHECK: %[[Y:.*]] = linalg.matmul ins(%[[X]], %[[WT]] : tensor<8x16xf32>, tensor<16x32xf32>)
// CHECK: %[[AT:.*]] = linalg.transpose ins(%[[A]] : tensor<2x16xf32>) outs(%{{.*}} : tensor<16x2xf32>) permutation = [1, 0]
// CHECK: %[[DOWN:.*]] = linalg.matmul ins(%[[X]], %[[AT]] : tensor<8x16xf32>, tensor<16x2xf32>) outs(%{{.*}} : tensor<8x2xf32>)
// CHECK: %[[BT:.*]] = linalg.transpose ins(%[[B]] : tensor<32x2xf32>) outs(%{{.*}} : tensor<2x32xf32>) permutation = [1, 0]
// CHECK: %[[UP:.*]] = linalg.matmul ins(%[[DOWN]], %[[BT]] : tensor<8x2xf32>, tensor<2x32xf32>) outs(%{{.*}} : tensor<8x32xf32>)
// CHECK: %[[SCALE:.*]] = arith.constant 2.000000e+00 : f32
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[Y]], %[[UP]] : tensor<8x32xf32>, tensor<8x32xf32>)
// CHECK-NEXT: ^bb0(%[[YV:.*]]: f32, %[[UV:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[SCALED:.*]] = arith.mulf %[[UV]], %[[SCALE]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[YV]], %[[SCALED]] : f32
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<8x32xf32>)
func.func @hf_linear_gets_an_adapter(
    %x: tensor<8x16xf32> {fbl.name = "hidden"},
    %w: tensor<32x16xf32> {fbl.name = "model.layers.0.self_attn.q_proj.weight", fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %te = tensor.empty() : tensor<16x32xf32>
  %wt = linalg.transpose ins(%w : tensor<32x16xf32>) outs(%te : tensor<16x32xf32>) permutation = [1, 0]
  %ye = tensor.empty() : tensor<8x32xf32>
  %yz = linalg.fill ins(%zero : f32) outs(%ye : tensor<8x32xf32>) -> tensor<8x32xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<8x16xf32>, tensor<16x32xf32>) outs(%yz : tensor<8x32xf32>) -> tensor<8x32xf32>
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

// A weight stored [IN, OUT] read directly (x·W): the same adapter, A and B
// still in PEFT's shapes.
// CHECK-LABEL: func.func @in_by_out_weight_gets_an_adapter(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x16xf32>,
// CHECK-SAME: %[[W:[^:]*]]: tensor<16x32xf32> {fbl.name = "h.0.attn.q_proj.weight"},
// CHECK-SAME: %[[A:[^:]*]]: tensor<2x16xf32> {fbl.init = "uniform:0.25", fbl.name = "h.0.attn.q_proj.lora_A.weight", fbl.param},
// CHECK-SAME: %[[B:[^:]*]]: tensor<32x2xf32> {fbl.init = "zeros", fbl.name = "h.0.attn.q_proj.lora_B.weight", fbl.param})
// CHECK: %[[Y:.*]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<8x16xf32>, tensor<16x32xf32>)
// CHECK: %[[AT:.*]] = linalg.transpose ins(%[[A]] : tensor<2x16xf32>)
// CHECK: %[[DOWN:.*]] = linalg.matmul ins(%[[X]], %[[AT]] : tensor<8x16xf32>, tensor<16x2xf32>)
// CHECK: %[[BT:.*]] = linalg.transpose ins(%[[B]] : tensor<32x2xf32>)
// CHECK: %[[UP:.*]] = linalg.matmul ins(%[[DOWN]], %[[BT]] : tensor<8x2xf32>, tensor<2x32xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[Y]], %[[UP]] : tensor<8x32xf32>, tensor<8x32xf32>)
func.func @in_by_out_weight_gets_an_adapter(
    %x: tensor<8x16xf32>,
    %w: tensor<16x32xf32> {fbl.name = "h.0.attn.q_proj.weight"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %ye = tensor.empty() : tensor<8x32xf32>
  %yz = linalg.fill ins(%zero : f32) outs(%ye : tensor<8x32xf32>) -> tensor<8x32xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x32xf32>) outs(%yz : tensor<8x32xf32>) -> tensor<8x32xf32>
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

// A matmul reading W [OUT, IN] through a transposed-B map: the adapter's
// products use the same maps on A and B, untransposed.
// CHECK-LABEL: func.func @transposed_b_map_gets_an_adapter(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x16xf32>,
// CHECK-SAME: %[[W:[^:]*]]: tensor<32x16xf32> {fbl.name = "q_proj.weight"},
// CHECK-SAME: %[[A:[^:]*]]: tensor<2x16xf32> {{.*}}, %[[B:[^:]*]]: tensor<32x2xf32>
// CHECK: %[[Y:.*]] = linalg.matmul indexing_maps = [#[[LHS:.*]], #[[RHS:.*]], #[[OUT:.*]]] ins(%[[X]], %[[W]] : tensor<8x16xf32>, tensor<32x16xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[DOWN:.*]] = linalg.matmul indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]] ins(%[[X]], %[[A]] : tensor<8x16xf32>, tensor<2x16xf32>) outs(%{{.*}} : tensor<8x2xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[UP:.*]] = linalg.matmul indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]] ins(%[[DOWN]], %[[B]] : tensor<8x2xf32>, tensor<32x2xf32>) outs(%{{.*}} : tensor<8x32xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[Y]], %[[UP]] : tensor<8x32xf32>, tensor<8x32xf32>)
func.func @transposed_b_map_gets_an_adapter(
    %x: tensor<8x16xf32>,
    %w: tensor<32x16xf32> {fbl.name = "q_proj.weight", fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %ye = tensor.empty() : tensor<8x32xf32>
  %yz = linalg.fill ins(%zero : f32) outs(%ye : tensor<8x32xf32>) -> tensor<8x32xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<8x16xf32>, tensor<32x16xf32>) outs(%yz : tensor<8x32xf32>) -> tensor<8x32xf32>
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

// A batch_matmul reading the transposed weight broadcast over the batch: the
// first product is [batch, M, rank].
// CHECK-LABEL: func.func @broadcast_batch_matmul_gets_an_adapter(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4x16xf32>,
// CHECK-SAME: %[[W:[^:]*]]: tensor<32x16xf32> {fbl.name = "layers.1.q_proj.weight"},
// CHECK-SAME: %[[A:[^:]*]]: tensor<2x16xf32> {{.*}}, %[[B:[^:]*]]: tensor<32x2xf32>
// CHECK: %[[Y:.*]] = linalg.batch_matmul indexing_maps = [#[[LHS:.*]], #[[RHS:.*]], #[[OUT:.*]]] ins(%[[X]], %{{.*}} : tensor<2x4x16xf32>, tensor<16x32xf32>)
// CHECK: %[[AT:.*]] = linalg.transpose ins(%[[A]]
// CHECK: %[[DOWN:.*]] = linalg.batch_matmul indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]] ins(%[[X]], %[[AT]] : tensor<2x4x16xf32>, tensor<16x2xf32>) outs(%{{.*}} : tensor<2x4x2xf32>)
// CHECK: %[[BT:.*]] = linalg.transpose ins(%[[B]]
// CHECK: %[[UP:.*]] = linalg.batch_matmul indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]] ins(%[[DOWN]], %[[BT]] : tensor<2x4x2xf32>, tensor<2x32xf32>) outs(%{{.*}} : tensor<2x4x32xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[Y]], %[[UP]] : tensor<2x4x32xf32>, tensor<2x4x32xf32>)
func.func @broadcast_batch_matmul_gets_an_adapter(
    %x: tensor<2x4x16xf32>,
    %w: tensor<32x16xf32> {fbl.name = "layers.1.q_proj.weight"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %te = tensor.empty() : tensor<16x32xf32>
  %wt = linalg.transpose ins(%w : tensor<32x16xf32>) outs(%te : tensor<16x32xf32>) permutation = [1, 0]
  %ye = tensor.empty() : tensor<2x4x32xf32>
  %yz = linalg.fill ins(%zero : f32) outs(%ye : tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %y = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%x, %wt : tensor<2x4x16xf32>, tensor<16x32xf32>) outs(%yz : tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%y : tensor<2x4x32xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A multiply-add linalg.generic on the weight is a matmul too: the adapter's
// products are copies of it.
// CHECK-LABEL: func.func @generic_contraction_gets_an_adapter(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x16xf32>,
// CHECK-SAME: %[[W:[^:]*]]: tensor<32x16xf32> {fbl.name = "q_proj.weight"},
// CHECK-SAME: %[[A:[^:]*]]: tensor<2x16xf32> {{.*}}, %[[B:[^:]*]]: tensor<32x2xf32>
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[W]] : tensor<8x16xf32>, tensor<32x16xf32>)
// CHECK: %[[DOWN:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[A]] : tensor<8x16xf32>, tensor<2x16xf32>) outs(%{{.*}} : tensor<8x2xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[UP:.*]] = linalg.generic {{.*}} ins(%[[DOWN]], %[[B]] : tensor<8x2xf32>, tensor<32x2xf32>) outs(%{{.*}} : tensor<8x32xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[Y]], %[[UP]] : tensor<8x32xf32>, tensor<8x32xf32>)
func.func @generic_contraction_gets_an_adapter(
    %x: tensor<8x16xf32>,
    %w: tensor<32x16xf32> {fbl.name = "q_proj.weight"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %ye = tensor.empty() : tensor<8x32xf32>
  %yz = linalg.fill ins(%zero : f32) outs(%ye : tensor<8x32xf32>) -> tensor<8x32xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x16xf32>, tensor<32x16xf32>) outs(%yz : tensor<8x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
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

// A weight read by two matmuls (a layer applied twice) has one A and one B,
// added to both.
// CHECK-LABEL: func.func @shared_weight_shares_its_adapter(
// CHECK-SAME: %[[A:[^:]*]]: tensor<2x16xf32> {{.*}}, %[[B:[^:]*]]: tensor<16x2xf32>
// CHECK: %[[Y1:.*]] = linalg.matmul
// CHECK: linalg.transpose ins(%[[A]]
// CHECK: linalg.transpose ins(%[[B]]
// CHECK: %[[SUM1:.*]] = linalg.generic {{.*}} ins(%[[Y1]], %{{.*}} : tensor<8x16xf32>, tensor<8x16xf32>)
// CHECK: %[[Y2:.*]] = linalg.matmul ins(%[[SUM1]], %{{.*}} : tensor<8x16xf32>, tensor<16x16xf32>)
// CHECK: linalg.transpose ins(%[[A]]
// CHECK: linalg.transpose ins(%[[B]]
// CHECK: %[[SUM2:.*]] = linalg.generic {{.*}} ins(%[[Y2]], %{{.*}} : tensor<8x16xf32>, tensor<8x16xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[SUM2]] : tensor<8x16xf32>)
func.func @shared_weight_shares_its_adapter(
    %x: tensor<8x16xf32>,
    %w: tensor<16x16xf32> {fbl.name = "block.q_proj.weight"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %te = tensor.empty() : tensor<16x16xf32>
  %wt = linalg.transpose ins(%w : tensor<16x16xf32>) outs(%te : tensor<16x16xf32>) permutation = [1, 0]
  %ye = tensor.empty() : tensor<8x16xf32>
  %yz = linalg.fill ins(%zero : f32) outs(%ye : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y1 = linalg.matmul ins(%x, %wt : tensor<8x16xf32>, tensor<16x16xf32>) outs(%yz : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y2 = linalg.matmul ins(%y1, %wt : tensor<8x16xf32>, tensor<16x16xf32>) outs(%yz : tensor<8x16xf32>) -> tensor<8x16xf32>
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

// Two layers: the adapters are appended in the order of their weights; a
// module whose path only ends in the target's letters (xq_proj) is not
// adapted; every other parameter is frozen, unless trainable= keeps it.
// CHECK-LABEL: func.func @layers_in_model_order(
// CHECK-SAME: %{{[^:]*}}: tensor<8x16xf32>,
// CHECK-SAME: {fbl.name = "model.layers.0.self_attn.q_proj.weight"},
// CHECK-SAME: {fbl.name = "model.layers.0.self_attn.xq_proj.weight"},
// CHECK-SAME: {fbl.name = "model.layers.1.self_attn.q_proj.weight"},
// CHECK-SAME: %{{[^:]*}}: tensor<16xf32> {fbl.name = "model.norm.weight"},
// CHECK-SAME: {fbl.init = "uniform:0.25", fbl.name = "model.layers.0.self_attn.q_proj.lora_A.weight", fbl.param},
// CHECK-SAME: {fbl.init = "zeros", fbl.name = "model.layers.0.self_attn.q_proj.lora_B.weight", fbl.param},
// CHECK-SAME: {fbl.init = "uniform:0.25", fbl.name = "model.layers.1.self_attn.q_proj.lora_A.weight", fbl.param},
// CHECK-SAME: {fbl.init = "zeros", fbl.name = "model.layers.1.self_attn.q_proj.lora_B.weight", fbl.param})
// CHECK-COUNT-2: arith.constant 2.000000e+00 : f32
// CHECK-NOT: arith.constant 2.000000e+00 : f32
// CHECK: return
// TRAIN-LABEL: func.func @layers_in_model_order(
// TRAIN-SAME: %{{[^:]*}}: tensor<16xf32> {fbl.name = "model.norm.weight", fbl.param},
func.func @layers_in_model_order(
    %x: tensor<8x16xf32>,
    %wq0: tensor<16x16xf32> {fbl.name = "model.layers.0.self_attn.q_proj.weight", fbl.param},
    %wx0: tensor<16x16xf32> {fbl.name = "model.layers.0.self_attn.xq_proj.weight", fbl.param},
    %wq1: tensor<16x16xf32> {fbl.name = "model.layers.1.self_attn.q_proj.weight", fbl.param},
    %norm: tensor<16xf32> {fbl.name = "model.norm.weight", fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %ye = tensor.empty() : tensor<8x16xf32>
  %yz = linalg.fill ins(%zero : f32) outs(%ye : tensor<8x16xf32>) -> tensor<8x16xf32>
  %h0 = linalg.matmul ins(%x, %wq0 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%yz : tensor<8x16xf32>) -> tensor<8x16xf32>
  %h1 = linalg.matmul ins(%h0, %wx0 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%yz : tensor<8x16xf32>) -> tensor<8x16xf32>
  %h2 = linalg.matmul ins(%h1, %wq1 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%yz : tensor<8x16xf32>) -> tensor<8x16xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%h2, %norm : tensor<8x16xf32>, tensor<16xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%v: f32, %g: f32, %acc: f32):
    %p = arith.mulf %v, %g : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
