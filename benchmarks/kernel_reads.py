#!/usr/bin/env python3
"""Kernels, modelled texel fetches and measured step time of training steps.

For each model and policy: `fbl-opt --fbl-training-pipeline` (AdamW) to
kernels, then in the training-step function (`@*_step`) the number of
fbl.dispatch kernels and the sum of their `fbl.estimate` fetches and misses
(the cost model's counts for the target); with --run, the bundle
(`fbl-translate --fbl-to-opencl`) trains --steps steps on the local OpenCL
device under `fbl-run --train`; the step time reported is the smallest of
--repeat medians. Several --fbl-bin directories (comma-separated: a build
before and after a change) are compared side by side, their runs
interleaved so that other load on the machine falls on each alike.

Models:
  attention           examples/attention.mlir (sequence 4, hidden 8, 2 heads)
  mlp                 examples/mlp.mlir
  tiny-llama          fbl-model --model tiny-llama --seq 64 --batch 4
  attention-SxH/h     benchmarks/gen_attention.py S H h (one layer)

  kernel_reads.py --fbl-bin build/bin[,OTHER/bin] [--models attention,mlp]
      [--target pocl-cpu] [--run] [--steps 20] [--repeat 3] [--json OUT]

Prints a Markdown table.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

POLICIES = ["fblayout", "reuse-forward", "explicit-transpose"]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def model_file(fbl_bin, name, tmp):
    """The forward model `name` as an .mlir file."""
    if name in ("attention", "mlp"):
        return os.path.join(ROOT, "examples", name + ".mlir")
    path = os.path.join(tmp, name + ".mlir")
    if name == "tiny-llama":
        subprocess.run([os.path.join(fbl_bin, "fbl-model"), "--model",
                        "tiny-llama", "--seq", "64", "--batch", "4", "-o",
                        path], check=True)
        return path
    m = re.fullmatch(r"attention-(\d+)x(\d+)/(\d+)", name)
    if not m:
        sys.exit(f"kernel_reads: unknown model '{name}'")
    with open(path, "w") as f:
        subprocess.run([sys.executable,
                        os.path.join(HERE, "gen_attention.py"), *m.groups()],
                       stdout=f, check=True)
    return path


def step_counts(module_text):
    """(kernels, fetches, misses) of the training-step function."""
    funcs = re.split(r"\n\s*func\.func @", module_text)
    steps = [f for f in funcs if re.match(r"\w+_step\(", f)]
    if len(steps) != 1:
        sys.exit("kernel_reads: expected one @*_step function")
    kernels = re.findall(r"fbl\.dispatch @\w+.*", steps[0])
    fetches = misses = 0
    for k in kernels:
        f = re.search(r"fbl\.estimate = \{[^}]*\bfetches = (\d+)", k)
        m = re.search(r"fbl\.estimate = \{[^}]*\bmisses = (\d+)", k)
        if not f or not m:
            sys.exit("kernel_reads: a dispatch without fbl.estimate")
        fetches += int(f.group(1))
        misses += int(m.group(1))
    return len(kernels), fetches, misses


def step_time_ms(fbl_bin, module, tmp, steps):
    bundle = module + ".bundle"
    if not os.path.isdir(bundle):
        subprocess.run([os.path.join(fbl_bin, "fbl-translate"),
                        "--fbl-to-opencl", module, "-o", bundle], check=True)
    out = subprocess.run([os.path.join(fbl_bin, "fbl-run"), bundle,
                          "--random-inputs", "1", "--train", str(steps)],
                         capture_output=True, text=True, check=False)
    m = re.search(r"median step time ([0-9.]+) ms", out.stdout)
    if out.returncode != 0 or not m:
        sys.exit(f"fbl-run failed on {module}:\n{out.stdout}{out.stderr}")
    return float(m.group(1))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fbl-bin", required=True)
    p.add_argument("--models", default="attention,tiny-llama")
    p.add_argument("--target", default="pocl-cpu")
    p.add_argument("--run", action="store_true")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--json")
    args = p.parse_args()
    bins = args.fbl_bin.split(",")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            src = model_file(bins[0], name, tmp)
            for policy in POLICIES:
                found = []
                for b, fbl_bin in enumerate(bins):
                    out = os.path.join(tmp, f"{len(rows)}-{b}.mlir")
                    subprocess.run(
                        [os.path.join(fbl_bin, "fbl-opt"), src, "-o", out,
                         f"--fbl-training-pipeline=target={args.target} "
                         f"policy={policy} optimizer=adamw"], check=True)
                    kernels, fetches, misses = step_counts(open(out).read())
                    found.append({"model": name, "policy": policy,
                                  "bin": fbl_bin, "kernels": kernels,
                                  "fetches": fetches, "misses": misses,
                                  "module": out})
                if args.run:
                    times = [[] for _ in bins]
                    for _ in range(args.repeat):
                        for b, fbl_bin in enumerate(bins):
                            times[b].append(step_time_ms(
                                fbl_bin, found[b]["module"], tmp, args.steps))
                    for b in range(len(bins)):
                        found[b]["step_ms"] = min(times[b])
                for r in found:
                    del r["module"]
                rows.extend(found)
    print(f"target {args.target}\n")
    print("| model | policy | build | kernels | fetches | misses |" +
          (" step time (ms) |" if args.run else ""))
    print("| --- | --- | --- | --- | --- | --- |" + (" --- |" if args.run else ""))
    for r in rows:
        print(f"| {r['model']} | {r['policy']} | {r['bin']} | {r['kernels']} | "
              f"{r['fetches']} | {r['misses']} |" +
              (f" {r['step_ms']:.3f} |" if args.run else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
