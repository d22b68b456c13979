#!/usr/bin/env python3
"""tm_tensor.attention against PyTorch: the loss and the Q, K, V gradients
fbl-autodiff computes for test/Autodiff/attention*.mlir (run by upstream
mlir-runner, as e2e_check's oracle) against torch autograd of the attention
written from its definition, softmax(Q·Kᵀ/sqrt(D) + mask)·V, in float64.

  attention_vs_torch.py MODEL.mlir --mask additive|causal-strict
      --fbl-opt ... --llvm-bin DIR

`additive`: the model's 4th argument is an f32 mask added to the scores, the
5th the loss weights. `causal-strict`: the mask is built in the model (query
i sees key j < i, so row 0 sees nothing and gives zeros), the 4th argument
is the loss weights. The loss is sum(tanh(out * weights)).
"""
import argparse
import os
import re
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_check  # noqa: E402
import gradcheck  # noqa: E402


def reference(inputs, mask_kind):
    t = [torch.tensor(np.array(vals, dtype=np.float64).reshape(dims))
         for dims, _, vals in inputs]
    q, k, v = (x.requires_grad_() for x in t[:3])
    scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    if mask_kind == "additive":
        scores = scores + t[3]
        weights = t[4]
    else:
        n_q, n_k = scores.shape[-2], scores.shape[-1]
        seen = torch.arange(n_k)[None, :] < torch.arange(n_q)[:, None]
        scores = scores.masked_fill(~seen, float("-inf"))
        weights = t[3]
    probs = torch.softmax(scores, dim=-1)
    probs = torch.nan_to_num(probs, nan=0.0)  # rows that see nothing
    loss = torch.tanh(probs @ v * weights).sum()
    loss.backward()
    return [loss.detach().numpy().ravel()] + [x.grad.numpy().ravel() for x in (q, k, v)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--mask", choices=["additive", "causal-strict"], required=True)
    ap.add_argument("--fbl-opt", required=True)
    ap.add_argument("--llvm-bin", required=True)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    src = open(args.model).read()
    name, fargs = gradcheck.find_forward(re.sub(r"//[^\n]*", "", src))
    inputs = gradcheck.model_inputs(src, fargs, args.seed)
    params = [i for i, (_, p) in enumerate(fargs) if p]
    with tempfile.TemporaryDirectory():
        oracle = e2e_check.oracle_results(args.fbl_opt, args.model, name, inputs,
                                          params, args.llvm_bin)
    want = reference(inputs, args.mask)
    ok = True
    print(f"@{name} (upstream MLIR oracle) vs PyTorch autograd:")
    for tag, got, ref in zip(["loss", "dQ", "dK", "dV"], oracle, want):
        scale = float(np.max(np.abs(ref)))
        err = np.abs(got - ref) if got.size == ref.size else np.full(ref.shape, np.inf)
        tol = 1e-3 * np.abs(ref) + 1e-4 * max(scale, 1e-30)
        bad = int(np.sum(err > tol))
        print(f"  {tag}: {ref.size} elements, worst err/tol {float(np.max(err / tol)):.3f}, "
              f"{bad} out of tolerance")
        ok &= bad == 0 and bool(np.all(np.isfinite(got)))
    print("ATTENTION CHECK PASS" if ok else "ATTENTION CHECK FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
