#!/usr/bin/env python3
"""Property test of fbl-split-reductions: random training steps whose
gradients reduce many rows into few outputs, compiled under a random target
(the H200 preset with PoCL's image limits, whose cost model splits them, or
pocl-cpu) and layout policy, run on the OpenCL device and compared with the
upstream oracle (e2e_check.py).

Each case is a LoRA-like pair of products over T tokens plus a bias,
    h = x . a          x: T x K, a: K x R  (parameter)
    y = h . b + c      b: R x N, c: N      (parameters)
    loss = sum_t (sum_j y[t, j])^2,
so that a's and b's gradients are contractions of few outputs over the T
rows (split along T into a batched GEMM, chunk dim first) and c's is a
column sum over them (split into the chunk count the model picks). T is
drawn to have few divisors near its square root (2^a x a prime, a prime
times 4, a power of two), where the chunk candidates differ most.

  split_property.py --fbl-bin DIR --llvm-bin DIR [--cases N] [--seed S]

Prints one line per case (with the chunk counts x lengths the compiled
step cut T into)
and "SPLIT PROPERTY PASS" when every case matches the oracle within 1e-5 of
each result's largest magnitude (sums of T products that cancel).
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_check  # noqa: E402
from e2e_check import POLICIES, TARGETS, target_name  # noqa: E402
PRIMES = [97, 101, 131, 197, 211, 257, 307]


def tokens(rng):
    """A row count of 256 to about 2600 with few divisors near its root."""
    kind = rng.integers(0, 3)
    if kind == 0:
        return int(2 ** rng.integers(1, 4) * rng.choice(PRIMES))
    if kind == 1:
        return int(4 * rng.choice(PRIMES))
    return int(2 ** rng.integers(8, 12))


def model(t, k, r, n):
    """The step's MLIR (a function with fbl.param arguments)."""
    return f"""
#id2 = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
#row = affine_map<(i, j) -> (i)>
#id1 = affine_map<(i) -> (i)>
#all1 = affine_map<(i) -> ()>
func.func @model(%x: tensor<{t}x{k}xf32>, %a: tensor<{k}x{r}xf32> {{fbl.param}},
                 %b: tensor<{r}x{n}xf32> {{fbl.param}},
                 %c: tensor<{n}xf32> {{fbl.param}}) -> tensor<f32> {{
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<{t}x{r}xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<{t}x{r}xf32>) -> tensor<{t}x{r}xf32>
  %h = linalg.matmul ins(%x, %a : tensor<{t}x{k}xf32>, tensor<{k}x{r}xf32>) outs(%f1 : tensor<{t}x{r}xf32>) -> tensor<{t}x{r}xf32>
  %e2 = tensor.empty() : tensor<{t}x{n}xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<{t}x{n}xf32>) -> tensor<{t}x{n}xf32>
  %p = linalg.matmul ins(%h, %b : tensor<{t}x{r}xf32>, tensor<{r}x{n}xf32>) outs(%f2 : tensor<{t}x{n}xf32>) -> tensor<{t}x{n}xf32>
  %y = linalg.generic {{indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}}
      ins(%p, %c : tensor<{t}x{n}xf32>, tensor<{n}xf32>) outs(%e2 : tensor<{t}x{n}xf32>) {{
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  }} -> tensor<{t}x{n}xf32>
  %er = tensor.empty() : tensor<{t}xf32>
  %r0 = linalg.fill ins(%zero : f32) outs(%er : tensor<{t}xf32>) -> tensor<{t}xf32>
  %rows = linalg.generic {{indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}}
      ins(%y : tensor<{t}x{n}xf32>) outs(%r0 : tensor<{t}xf32>) {{
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }} -> tensor<{t}xf32>
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {{indexing_maps = [#id1, #all1], iterator_types = ["reduction"]}}
      ins(%rows : tensor<{t}xf32>) outs(%l0 : tensor<f32>) {{
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  }} -> tensor<f32>
  return %l : tensor<f32>
}}
"""


def main():
    args = e2e_check.property_args()
    rng = np.random.default_rng(args.seed)
    tool = lambda name: os.path.join(args.fbl_bin, name)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.cases):
            t = tokens(rng)
            k, n = (4 * int(rng.integers(8, 65)) for _ in range(2))
            r = int(rng.choice([4, 8]))
            target = TARGETS[int(rng.integers(0, len(TARGETS)))]
            policy = POLICIES[int(rng.integers(0, len(POLICIES)))]
            path = os.path.join(tmp, f"case{i}.mlir")
            with open(path, "w") as f:
                f.write(model(t, k, r, n))
            # The chunked reshapes of the compiled step, to show which
            # splits the case exercised.
            step = subprocess.run(
                [tool("fbl-opt"), path, "--fbl-training-pipeline="
                 f"policy={policy} target={{{target}}} optimizer=none"],
                capture_output=True, text=True)
            chunks = sorted({f"{c}x{l}" for c, l in re.findall(
                rf"fbl\.reshape_view .*: tensor<{t}x[^>]*>> -> "
                r"tensor<(\d+)x(\d+)x", step.stdout)
                if int(c) * int(l) == t})
            checked, report = e2e_check.check_in_subprocess(
                path, args.fbl_bin, args.llvm_bin, "--policy", policy,
                "--target", target, "--atol-of-max",
                "--seed", str(args.seed * 100 + i))
            passed = step.returncode == 0 and checked
            ok &= passed
            name = target_name(target)
            print(f"case {i}: T={t} K={k} R={r} N={n} {name} {policy}: "
                  f"T in chunks {', '.join(chunks) or 'none'}"
                  f" -> {'ok' if passed else 'FAIL'}")
            if not passed:
                print(step.stderr[-2000:] + report[-5000:])
    print("SPLIT PROPERTY PASS" if ok else "SPLIT PROPERTY FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
