#!/usr/bin/env python3
"""Layout policies side by side on simulated mobile texture caches.

Compiles each model's training step (the models of policy_comparison.py's
cpu set, which PoCL also measures) for the Adreno- and Mali-class
presets under fblayout, reuse-forward and explicit-transpose, replays every
emitted kernel in fbl-cachesim, and prints per model and target the step's
kernels, texel fetches, cache misses and estimated time, with each
baseline's ratio to fblayout (> 1: fblayout is better).

  simulated_comparison.py --fbl-bin build/bin [--set cpu|zoo] [--json out.json]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

POLICIES = ["fblayout", "reuse-forward", "explicit-transpose"]
TARGETS = ["adreno-a740", "mali-g710"]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import policy_comparison  # noqa: E402


def models(fbl_bin, tmp, which="cpu"):
    """The models PoCL measures too (policy_comparison.py's cpu set, or its
    zoo set alone)."""
    out = []
    for name, source, optimizer in policy_comparison.model_set(which):
        path = os.path.join(tmp, policy_comparison.slug(name) + ".mlir")
        out.append((name, policy_comparison.write_source(source, path, fbl_bin),
                    optimizer))
    return out


def simulate(fbl_bin, model, optimizer, policy, target, tmp):
    step = os.path.join(tmp, "step.mlir")
    subprocess.run([os.path.join(fbl_bin, "fbl-opt"), model, "-o", step,
                    f"--fbl-training-pipeline=policy={policy} target={target} "
                    f"optimizer={optimizer}"], check=True)
    sim = json.loads(subprocess.run(
        [os.path.join(fbl_bin, "fbl-cachesim"), step, "--json"],
        capture_output=True, text=True, check=True).stdout)
    total = {"kernels": 0, "fetches": 0.0, "misses": 0.0, "time_ns": 0.0}
    for f in sim["functions"]:
        total["kernels"] += len(f["kernels"]) if isinstance(f["kernels"], list) else f["kernels"]
        for key in ("fetches", "misses", "time_ns"):
            total[key] += f[key]
    return total


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fbl-bin", required=True)
    p.add_argument("--json")
    p.add_argument("--set", choices=["cpu", "zoo"], default="cpu")
    args = p.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, model, optimizer in models(args.fbl_bin, tmp, args.set):
            for target in TARGETS:
                r = {"model": name, "target": target}
                for policy in POLICIES:
                    r[policy] = simulate(args.fbl_bin, model, optimizer, policy,
                                         target, tmp)
                rows.append(r)
                print(name, target, file=sys.stderr)
    print("| model | target | policy | kernels | fetches | misses | time | misses vs fblayout | time vs fblayout |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        base = r["fblayout"]
        for policy in POLICIES:
            t = r[policy]
            print(f"| {r['model']} | {r['target']} | {policy} | {t['kernels']} | "
                  f"{t['fetches'] / 1e3:.1f} k | {t['misses'] / 1e3:.1f} k | "
                  f"{t['time_ns'] / 1e3:.0f} µs | {t['misses'] / max(base['misses'], 1):.2f} | "
                  f"{t['time_ns'] / base['time_ns']:.2f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
