#!/usr/bin/env python3
"""Fits a target's execution-model costs to measured kernel times.

For every kernel of the calibration kernels (calibrate_kinds.py: each
kernel kind under each layout at several sizes) or of compiled steps, the
cost model's counts (kernel_estimates.py: texel fetches F, misses M,
writes W, float multiplies X, accesses of a work-item S, grid and
work-group) and the time fbl-run --profile measured on the device, fits
the model of include/fbl/Layout/TargetDescription.h (launchTimeNs):

  t = launch_ns + max((F·fetch_ps + M·miss_ps + W·write_ps
                       + X·multiply_fs / 1000) / 1000 / busy,
                      rounds · S · step_ps / 1000)

(busy = min(compute units, work-groups); rounds = work-groups over the
groups the busy units hold at once) by non-negative least squares on
residuals weighted by 1/t^p (p = 1: relative error, so microsecond
launches and millisecond GEMMs count alike), each kernel in the bound that
is larger under the current fit until the assignment settles. Prints the
fitted fields, the rank agreement (Spearman) and the median and worst
ratio of model to measurement per kernel family before (the target's
current parameters) and after, and with --write replaces the target's line
in ExecutionPresets.def.

  calibrate.py --dir DIR                 (calibrate_kinds.py output)
  calibrate.py --pair EST.json PROFILE.txt [--pair ...]
  ... --units 132 --resident 2048 [--write include/fbl/Layout/ExecutionPresets.def --target nvidia-h200]
"""
import argparse
import datetime
import json
import os
import re

import numpy as np

FIELDS = ["launch_ns", "fetch_ps", "miss_ps", "write_ps", "multiply_fs", "step_ps"]


def spearman(a, b):
    def ranks(x):
        x = np.asarray(x, float)
        order = np.argsort(x, kind="mergesort")
        r = np.empty(len(x))
        r[order] = np.arange(len(x))
        for v in np.unique(x):
            idx = np.where(x == v)[0]
            r[idx] = r[idx].mean()
        return r
    return float(np.corrcoef(ranks(a), ranks(b))[0, 1])


def nnls(a, b):
    """Least squares with x >= 0, by dropping negative coefficients."""
    active = list(range(a.shape[1]))
    while True:
        x = np.zeros(a.shape[1])
        if active:
            sol, *_ = np.linalg.lstsq(a[:, active], b, rcond=None)
            x[active] = sol
        neg = [i for i in active if x[i] < 0]
        if not neg:
            return x
        active = [i for i in active if i not in neg]


def family(name):
    """The kernel family of a calibration case or kernel: its name up to the
    size (gemm-nt-rtile-local, rowsum-walked, ...)."""
    return re.sub(r"-\d+x\d+(x\d+)?$", "", name)


def load_pairs(pairs, dir_):
    """(label, estimate, measured ns) per kernel."""
    rows = []
    if dir_:
        names = open(os.path.join(dir_, "cases.txt")).read().split()
        pairs = [(os.path.join(dir_, n, "estimates.json"),
                  os.path.join(dir_, n, "profile.txt"), n) for n in names]
    else:
        pairs = [(e, p, None) for e, p in pairs]
    for est_path, prof_path, case in pairs:
        est = json.load(open(est_path))
        for line in open(prof_path):
            m = re.match(r"^(k\d+_\w+)\s+([0-9.]+)\s*$", line)
            if m and m.group(1) in est:
                kernel = m.group(1)
                label = (family(case) + (":fill" if kernel.endswith("_fill") else "")
                         if case else re.sub(r"^k\d+_", "", kernel))
                rows.append((f"{case}/{kernel}" if case else kernel, label,
                             est[kernel], float(m.group(2)) * 1e6))
    return rows


def features(e, units, resident):
    groups = 1
    items = 1
    for g, w in zip(e["grid"], e["workgroup"]):
        groups *= max(1, -(-g // max(w, 1)))
        items *= max(w, 1)
    busy = max(1, min(units, groups))
    held = max(1, resident // max(items, 1))
    rounds = -(-groups // (busy * held))
    through = np.array([e["fetches"], e["misses"], e["writes"],
                        e.get("multiplies", 0) / 1000.0]) / 1000.0 / busy
    latency = rounds * e.get("item_accesses", 0) / 1000.0
    return through, latency


def fit(rows, units, resident, power):
    n = len(rows)
    thr = np.zeros((n, 4))
    lat = np.zeros(n)
    for i, (_, _, e, _) in enumerate(rows):
        thr[i], lat[i] = features(e, units, resident)
    t = np.array([r[3] for r in rows])
    weight = 1.0 / np.maximum(t, 1.0) ** power

    def solve(latency_bound):
        a = np.zeros((n, 6))
        a[:, 0] = 1.0
        a[~latency_bound, 1:5] = thr[~latency_bound]
        a[latency_bound, 5] = lat[latency_bound]
        return nnls(a * weight[:, None], t * weight)

    def settle(latency_bound):
        for _ in range(50):
            x = solve(latency_bound)
            new = lat * x[5] > thr @ x[1:5]
            if (new == latency_bound).all():
                break
            latency_bound = new
        return x

    # Which kernels are latency bound is what the fit decides; start from
    # the throughput-only fit with latencies across six decades and keep
    # the settled fit with the smallest weighted residual.
    through = solve(np.zeros(n, bool))
    best, best_err = through, np.inf
    for step in [0.0] + list(np.logspace(0, 6, 25)):
        x = settle(lat * step > thr @ through[1:5])
        err = float(np.sum((weight * (predict(x, thr, lat) - t)) ** 2))
        if err < best_err:
            best, best_err = x, err
    return best, predict(best, thr, lat)


def predict(x, thr, lat):
    return x[0] + np.maximum(thr @ x[1:5], lat * x[5])


def report(rows, model, t, title):
    print(f"{title}: spearman {spearman(model, t):.3f}, total {model.sum() / 1e6:.3f} ms "
          f"vs measured {t.sum() / 1e6:.3f} ms")
    by = {}
    for (_, label, _, _), m, tt in zip(rows, model, t):
        by.setdefault(label, []).append(m / tt)
    print(f"  {'family':36} {'kernels':>7} {'median model/measured':>22} {'range':>16}")
    for label in sorted(by):
        r = np.array(by[label])
        print(f"  {label:36} {len(r):7d} {np.median(r):22.2f} "
              f"{r.min():7.2f}..{r.max():<7.2f}")


def write_preset(path, target, values, note):
    lines = open(path).read().splitlines()
    for i, line in enumerate(lines):
        m = re.match(r'^FBL_EXECUTION_PRESET\("([^"]+)", (\d+), (\d+), (\d+),', line)
        if m and m.group(1) == target:
            head = ", ".join(m.group(i) for i in (2, 3, 4))
            lines[i] = (f'FBL_EXECUTION_PRESET("{target}", {head}, '
                        + ", ".join(str(v) for v in values) + ")")
            if i > 0 and lines[i - 1].startswith("//"):
                # Keep what the comment says of the geometry (before ';').
                kept = lines[i - 1][3:].split(";")[0].rstrip(".")
                lines[i - 1] = f"// {kept}; {note}"
            else:
                lines.insert(i, f"// {note}")
            open(path, "w").write("\n".join(lines) + "\n")
            return
    raise SystemExit(f"no FBL_EXECUTION_PRESET(\"{target}\", ...) in {path}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--units", type=int, required=True, help="compute units")
    p.add_argument("--resident", type=int, required=True,
                   help="work-items resident per compute unit")
    p.add_argument("--weight-power", type=float, default=1.0,
                   help="residuals weighted by 1/t^p: 1 relative, 0 absolute")
    p.add_argument("--dir", help="calibrate_kinds.py output")
    p.add_argument("--pair", nargs=2, action="append", default=[],
                   metavar=("ESTIMATES", "PROFILE"))
    p.add_argument("--write", help="ExecutionPresets.def to update")
    p.add_argument("--target", help="the preset whose line --write replaces")
    p.add_argument("--device", help="the device's name, for the note")
    args = p.parse_args()
    rows = load_pairs(args.pair, args.dir)
    if len(rows) < 12:
        raise SystemExit(f"only {len(rows)} kernels matched; need 12 or more")
    t = np.array([r[3] for r in rows])
    before = np.array([r[2]["time_ns"] for r in rows])
    x, after = fit(rows, args.units, args.resident, args.weight_power)
    print(f"{len(rows)} kernels")
    report(rows, before, t, "model before (the target's current costs)")
    report(rows, after, t, "model after the fit")
    values = [max(1, round(v)) for v in x]
    print("fitted: " + ", ".join(f"{k} = {v}" for k, v in zip(FIELDS, values)))
    worst = np.argsort(-np.abs(np.log(np.maximum(after, 1) / np.maximum(t, 1))))[:8]
    for i in worst:
        print(f"  worst: {rows[i][0]}: measured {t[i] / 1e3:.1f} us, fitted {after[i] / 1e3:.1f} us")
    if args.write:
        if not args.target:
            raise SystemExit("--write needs --target")
        device = args.device
        if not device and args.dir and os.path.exists(os.path.join(args.dir, "device.txt")):
            device = open(os.path.join(args.dir, "device.txt")).read().strip()
        note = (f"costs measured {datetime.date.today()} by benchmarks/calibrate.py on "
                f"{device or 'the device'}: {len(rows)} kernels, Spearman "
                f"{spearman(after, t):.2f}.")
        write_preset(args.write, args.target, values, note)
        print(f"wrote {args.target} to {args.write}")


if __name__ == "__main__":
    main()
