# RUN: %python %s | FileCheck %s
#
# fbl.compile on MLIR text, Session.run with numpy arrays: the loss and
# gradient of sum((x W)^2) / 2 (a register-tiled GEMM forward, NT/TN
# GEMMs backward) match numpy's, under every policy.

import numpy as np

import fbl

MODEL = """
func.func @loss(%x: tensor<8x12xf32>, %w: tensor<12x16xf32> {fbl.param})
    -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x12xf32>, tensor<12x16xf32>)
      outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
  %s0 = tensor.empty() : tensor<f32>
  %s1 = linalg.fill ins(%zero : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<8x16xf32>) outs(%s1 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %h = arith.constant 0.5 : f32
    %sq = arith.mulf %v, %v : f32
    %hs = arith.mulf %sq, %h : f32
    %r = arith.addf %acc, %hs : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
"""

rng = np.random.default_rng(7)
x = rng.uniform(-1, 1, (8, 12)).astype(np.float32)
w = rng.uniform(-1, 1, (12, 16)).astype(np.float32)
y = x.astype(np.float64) @ w
want_loss = 0.5 * np.sum(y * y)
want_grad = x.T.astype(np.float64) @ y

for policy in fbl.compiler.POLICIES:
    bundle = fbl.compile(MODEL, policy=policy, target="pocl-cpu")
    with fbl.Session(bundle, "cpu") as s:
        assert [i.name for i in s.inputs] == ["arg0", "arg1"]
        assert s.inputs[1].is_param and not s.inputs[0].is_param
        loss, grad = s.run({"arg0": x, "arg1": w})
        assert loss.shape == () and grad.shape == (12, 16), grad.shape
        np.testing.assert_allclose(loss, want_loss, rtol=1e-4)
        np.testing.assert_allclose(grad, want_grad, rtol=1e-4, atol=1e-4)
        # Inputs keep their values across runs; a list sets all of them.
        again = s.run([x, w], iterations=3)
        np.testing.assert_array_equal(again[1], grad)
        assert s.median_ms > 0 and s.device_bytes > 0
        print(f"{policy}: loss and gradient match numpy")

# CHECK: fblayout: loss and gradient match numpy
# CHECK: reuse-forward: loss and gradient match numpy
# CHECK: explicit-transpose: loss and gradient match numpy
