#!/usr/bin/env python3
"""Property test of the scatter kernels (an embedding table's gradient):
random embedding steps compiled under a random target (the H200 preset with
PoCL's image limits, whose 132 x 2048 work-items at once cut the table's
rows into many chunks, or pocl-cpu, into few) and layout policy, run on the
OpenCL device and compared with the upstream oracle (e2e_check.py).

Each case gathers rows of a table by T token ids and weighs them by an
input,
    e[t, d] = table[ids[t], d] * x[t, d]      table: V x D  (parameter)
    loss = sum_{t,d} tanh(e[t, d]),
so that the table's gradient is a scatter-add of T rows into V. The ids are
drawn in one of three ways: over the whole table, all one row (a token-type
table, where one work-item owns every token), or a band of a few rows at
the table's end (the last chunk, which may be shorter than the others). V,
D and T are random, odd sizes included.

  scatter_property.py --fbl-bin DIR --llvm-bin DIR [--cases N] [--seed S]

Prints one line per case (with the scatter kernel's grid: columns x row
chunks) and "SCATTER PROPERTY PASS" when every case matches the oracle.
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


def model(v, d, t, lo, hi):
    """The step's MLIR, its ids drawn in [lo, hi)."""
    return f"""// GRADCHECK-ARG: 1 ints {lo} {hi}
#id = affine_map<(t, d) -> (t, d)>
#all = affine_map<(t, d) -> ()>
func.func @model(%table: tensor<{v}x{d}xf32> {{fbl.param}},
                 %ids: tensor<{t}xi64>, %x: tensor<{t}x{d}xf32>) -> tensor<f32> {{
  %zero = arith.constant 0.0 : f32
  %ee = tensor.empty() : tensor<{t}x{d}xf32>
  %e = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%x : tensor<{t}x{d}xf32>) outs(%ee : tensor<{t}x{d}xf32>) {{
  ^bb0(%w: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %id = tensor.extract %ids[%i] : tensor<{t}xi64>
    %row = arith.index_cast %id : i64 to index
    %g = tensor.extract %table[%row, %j] : tensor<{v}x{d}xf32>
    %p = arith.mulf %g, %w : f32
    linalg.yield %p : f32
  }} -> tensor<{t}x{d}xf32>
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {{indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}}
      ins(%e : tensor<{t}x{d}xf32>) outs(%l0 : tensor<f32>) {{
  ^bb0(%a: f32, %acc: f32):
    %th = math.tanh %a : f32
    %s = arith.addf %acc, %th : f32
    linalg.yield %s : f32
  }} -> tensor<f32>
  return %l : tensor<f32>
}}
"""


def ids_range(rng, v):
    """Where the ids are drawn: the whole table, one row, or a band of a
    few rows at its end."""
    kind = ["all", "one", "band"][int(rng.integers(0, 3))]
    if kind == "all":
        return kind, 0, v
    if kind == "one":
        row = int(rng.integers(0, v))
        return kind, row, row + 1
    width = int(rng.integers(1, min(v, 5) + 1))
    return kind, v - width, v


def main():
    args = e2e_check.property_args()
    rng = np.random.default_rng(args.seed)
    tool = lambda name: os.path.join(args.fbl_bin, name)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.cases):
            v = int(rng.choice([2, 3, int(rng.integers(4, 200)),
                                int(rng.integers(200, 3000))]))
            d = int(rng.integers(1, 80))
            t = int(rng.integers(1, 300))
            kind, lo, hi = ids_range(rng, v)
            target = TARGETS[int(rng.integers(0, len(TARGETS)))]
            policy = POLICIES[int(rng.integers(0, len(POLICIES)))]
            path = os.path.join(tmp, f"case{i}.mlir")
            with open(path, "w") as f:
                f.write(model(v, d, t, lo, hi))
            step = subprocess.run(
                [tool("fbl-opt"), path, "--fbl-training-pipeline="
                 f"policy={policy} target={{{target}}} optimizer=none"],
                capture_output=True, text=True)
            grids = re.findall(r"fbl\.dispatch @k\d+_scatter .* grid \[(\d+), (\d+),",
                               step.stdout)
            checked, report = e2e_check.check_in_subprocess(
                path, args.fbl_bin, args.llvm_bin, "--policy", policy,
                "--target", target, "--seed", str(args.seed * 100 + i))
            passed = step.returncode == 0 and checked and len(grids) == 1
            ok &= passed
            grid = "x".join(grids[0]) if grids else "none"
            print(f"case {i}: V={v} D={d} T={t} ids {kind} [{lo}, {hi}) "
                  f"{target_name(target)} {policy}: scatter grid {grid}"
                  f" -> {'ok' if passed else 'FAIL'}")
            if not passed:
                print(step.stderr[-2000:] + report[-5000:])
    print("SCATTER PROPERTY PASS" if ok else "SCATTER PROPERTY FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
