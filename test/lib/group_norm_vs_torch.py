#!/usr/bin/env python3
"""test/Autodiff/group-norm.mlir against PyTorch: the loss and the x, γ, β
gradients fbl-autodiff computes (upstream-MLIR oracle) against autograd of
torch.nn.functional.group_norm (4 groups, eps 1e-5) in float64.

  group_norm_vs_torch.py MODEL.mlir --fbl-opt PATH --llvm-bin DIR
"""
import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_check  # noqa: E402
import model_check  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("model")
ap.add_argument("--fbl-opt", required=True)
ap.add_argument("--llvm-bin", required=True)
args = ap.parse_args()
rng = np.random.default_rng(0)
x = rng.uniform(-2, 2, (2, 8, 3, 3)).astype(np.float32)
g = rng.uniform(0.5, 1.5, 8).astype(np.float32)
b = rng.uniform(-0.5, 0.5, 8).astype(np.float32)
w = rng.uniform(-1, 1, (2, 8, 3, 3)).astype(np.float32)
inputs = [([2, 8, 3, 3], "f32", x.ravel().tolist()), ([8], "f32", g.tolist()),
          ([8], "f32", b.tolist()), ([2, 8, 3, 3], "f32", w.ravel().tolist())]
oracle = e2e_check.oracle_results(args.fbl_opt, args.model, "group_norm", inputs,
                                  [0, 1, 2], args.llvm_bin)
t = [torch.tensor(a.astype(np.float64), requires_grad=True) for a in (x, g, b)]
y = torch.nn.functional.group_norm(t[0], 4, t[1], t[2], eps=1e-5)
loss = (torch.tanh(y) * torch.tensor(w.astype(np.float64))).sum()
loss.backward()
ok = model_check.compare("loss", oracle[0], [float(loss)], 1e-3, 0.0)
for name, got, want in zip(["dx", "dgamma", "dbeta"], oracle[1:], t):
    ok &= model_check.compare(name, got, want.grad.numpy(), 1e-3, 1e-4)
print("GROUP NORM CHECK PASS" if ok else "GROUP NORM CHECK FAIL")
sys.exit(0 if ok else 1)
