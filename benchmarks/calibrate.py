#!/usr/bin/env python3
"""Fits a target's execution-model costs to measured kernel times.

For every kernel of one or more compiled steps, the cost model's counts
(`kernel_estimates.py`: texel fetches F, misses M, writes W, grid and
work-group) and the time fbl-run --profile measured on the device, fits

  t = launch_ns + (F·fetch_ps + M·miss_ps + W·write_ps) / 1000 / busy

(busy = min(compute units, work-groups)) by non-negative least squares on
residuals weighted by 1/t^p (p = 0.5 by default: between absolute error,
where the big kernels decide, and relative error, where launches do),
and prints the fitted fields as `#fbl.target` text, the rank agreement of
the model's time with the measurement before (the target's current
parameters: the estimates' time_ns) and after, and the worst kernels.

  calibrate.py --units 132 --pair estimates.json profile.txt [--pair ...]
"""
import argparse
import json
import re

import numpy as np


def spearman(a, b):
    def ranks(x):
        order = np.argsort(x, kind="mergesort")
        r = np.empty(len(x))
        r[order] = np.arange(len(x))
        # Average the ranks of ties.
        for v in np.unique(x):
            idx = np.where(x == v)[0]
            r[idx] = r[idx].mean()
        return r
    ra, rb = ranks(np.asarray(a, float)), ranks(np.asarray(b, float))
    return float(np.corrcoef(ra, rb)[0, 1])


def nnls(a, b):
    """Least squares with x >= 0, by dropping negative coefficients."""
    active = list(range(a.shape[1]))
    while True:
        x = np.zeros(a.shape[1])
        sol, *_ = np.linalg.lstsq(a[:, active], b, rcond=None)
        x[active] = sol
        neg = [i for i in active if x[i] < 0]
        if not neg:
            return x
        active = [i for i in active if i not in neg]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--units", type=int, required=True)
    p.add_argument("--weight-power", type=float, default=0.5,
                   help="residuals weighted by 1/t^p: 1 relative, 0 absolute")
    p.add_argument("--pair", nargs=2, action="append", required=True,
                   metavar=("ESTIMATES", "PROFILE"))
    args = p.parse_args()
    rows = []
    for est_path, prof_path in args.pair:
        est = json.load(open(est_path))
        for line in open(prof_path):
            m = re.match(r"^(k\d+_\w+)\s+([0-9.]+)\s*$", line)
            if m and m.group(1) in est:
                e = est[m.group(1)]
                groups = 1
                for g, w in zip(e["grid"], e["workgroup"]):
                    groups *= max(1, g // max(w, 1))
                busy = min(args.units, groups)
                rows.append((m.group(1), e["fetches"] / busy, e["misses"] / busy,
                             e["writes"] / busy, e["time_ns"],
                             float(m.group(2)) * 1e6))
    if len(rows) < 8:
        raise SystemExit(f"only {len(rows)} kernels matched; need 8 or more")
    f = np.array([r[1] for r in rows]); mi = np.array([r[2] for r in rows])
    w = np.array([r[3] for r in rows]); before = np.array([r[4] for r in rows])
    t = np.array([r[5] for r in rows])
    # Columns: launch (ns), fetch, miss, write (ps per item / 1000).
    a = np.stack([np.ones_like(f), f / 1000, mi / 1000, w / 1000], axis=1)
    weight = 1.0 / np.maximum(t, 1.0) ** args.weight_power
    x = nnls(a * weight[:, None], t * weight)
    after = a @ x
    print(f"{len(rows)} kernels; measured total {t.sum() / 1e6:.3f} ms, "
          f"model before {before.sum() / 1e6:.3f} ms, after {after.sum() / 1e6:.3f} ms")
    print(f"spearman(model, measured): before {spearman(before, t):.3f}, "
          f"after {spearman(after, t):.3f}")
    fields = ["launch_ns", "fetch_ps", "miss_ps", "write_ps"]
    print("fitted: " + ", ".join(f"{k} = {max(1, round(v))}"
                                 for k, v in zip(fields, x)))
    worst = sorted(rows, key=lambda r: -abs(np.log(max(r[5], 1)) -
                                            np.log(max(a[rows.index(r)] @ x, 1))))[:5]
    for r in worst:
        i = rows.index(r)
        print(f"  {r[0]}: measured {r[5] / 1e3:.1f} us, fitted {after[i] / 1e3:.1f} us")


if __name__ == "__main__":
    main()
