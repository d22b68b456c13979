#!/usr/bin/env python3
"""The three layout policies side by side, measured: every model fbl builds,
its training step compiled under fblayout, reuse-forward and
explicit-transpose, run on an OpenCL device with fbl-run.

  policy_comparison.py stage --target T --out DIR [--set gpu|cpu|zoo] [--fbl-bin build/bin]
      compiles each model's step under each policy: DIR/MODEL/POLICY (bundles)
      and DIR/models.json;
  policy_comparison.py run DIR [--fbl-run PATH] [--device D] [--rounds 3] [--iterations 20]
      runs the three policies of each model side by side in one process
      (fbl-run --compare, same inputs), --rounds rounds of --iterations
      steps, each round starting with the next policy (so drift of the
      device and the host hits all three alike; steps under 2 ms, which
      launches and host synchronization dominate, get 3x the rounds and 5x
      the iterations), and writes DIR/results.json: per model and policy the
      median over rounds of each round's median step time, each baseline's
      paired ratio to fblayout (median over rounds, with a distribution-free
      interval of at least 95%), and from one profiled run the sum of the
      kernels' median device times (what the layouts change, without the
      host's share) and the per-kernel times (DIR/MODEL/POLICY.profile);
  policy_comparison.py table --measured LABEL=results.json[,step] ... [--simulated sim.json]
      prints the markdown table: measured step times per device and the
      simulated Adreno/Mali-class times (simulated_comparison.py --json),
      each baseline's ratio to fblayout (> 1: fblayout is faster). A
      measured cell is "step / kernels": the median step time and the sum
      of the kernels' device times (",step": the step time alone).

--set gpu: the example MLP and attention, the MLP at 512x2048x2048 (SGD),
attention at S512/H512/8 heads, the tiny decoder presets, and two layers of
TinyLlama-1.1B's widths at sequence 128; --set cpu: the examples, the MLP at
128x256x1024, attention at S128/H512/8 and the tiny decoders (what PoCL runs
in seconds); both add the tiny BERT, ViT and Whisper, which --set zoo
stages alone.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

POLICIES = ["fblayout", "reuse-forward", "explicit-transpose"]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


# The other families' tiny presets: (name, preset, seq, batch).
ZOO = [("tiny-bert MLM (seq 64, batch 4)", "tiny-bert", 64, 4),
       ("tiny-vit (batch 8)", "tiny-vit", 1, 8),
       ("tiny-whisper (16 frames, seq 16, batch 4)", "tiny-whisper", 16, 4)]


def model_set(which):
    """(name, source, optimizer): source is a path, or a generator command."""
    if which == "zoo":
        return [(n, ("fbl-model", p, s, b), "adamw") for n, p, s, b in ZOO]
    gen = lambda *a: [sys.executable, os.path.join(HERE, a[0])] + [str(x) for x in a[1:]]
    models = [("attention (example)", os.path.join(ROOT, "examples/attention.mlir"), "adamw"),
              ("MLP (example)", os.path.join(ROOT, "examples/mlp.mlir"), "adamw")]
    if which == "gpu":
        models += [("MLP 512x2048x2048", gen("gen_mlp.py", 512, 2048, 2048), "sgd"),
                   ("attention S512/H512/8", gen("gen_attention.py", 512, 512, 8), "adamw")]
    else:
        models += [("MLP 128x256x1024", gen("gen_mlp.py", 128, 256, 1024), "sgd"),
                   ("attention S128/H512/8", gen("gen_attention.py", 128, 512, 8), "adamw")]
    for preset in ("tiny-llama", "tiny-qwen2", "tiny-gemma"):
        models.append((f"{preset} (seq 64, batch 4)", ("fbl-model", preset, 64, 4), "adamw"))
    models += [(n, ("fbl-model", p, s, b), "adamw") for n, p, s, b in ZOO]
    if which == "gpu":
        models.append(("TinyLlama-1.1B widths, 2 layers, seq 128",
                       ("fbl-model-layers", "tinyllama-1.1b", 2, 128, 1), "adamw"))
    return models


def slug(name):
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def write_source(source, path, fbl_bin):
    model = os.path.join(fbl_bin, "fbl-model")
    if isinstance(source, str):
        return source
    if source[0] == "fbl-model":
        _, preset, seq, batch = source
        subprocess.run([model, "--model", preset, "--seq", str(seq), "--batch", str(batch),
                        "-o", path], check=True)
    elif source[0] == "fbl-model-layers":
        _, name, layers, seq, batch = source
        config = json.loads(subprocess.run([model, "--model", name, "--print-config"],
                                           capture_output=True, text=True, check=True).stdout)
        config["num_hidden_layers"] = layers
        cpath = path + ".config.json"
        json.dump(config, open(cpath, "w"))
        subprocess.run([model, "--model", cpath, "--seq", str(seq), "--batch", str(batch),
                        "-o", path], check=True)
    else:
        with open(path, "w") as f:
            subprocess.run(source, stdout=f, check=True)
    return path


def stage(args):
    os.makedirs(args.out, exist_ok=True)
    index = []
    for name, source, optimizer in model_set(args.set):
        d = os.path.join(args.out, slug(name))
        os.makedirs(d, exist_ok=True)
        src = write_source(source, os.path.join(d, "model.mlir"), args.fbl_bin)
        for policy in POLICIES:
            step = os.path.join(d, policy + ".mlir")
            subprocess.run([os.path.join(args.fbl_bin, "fbl-opt"), src, "-o", step,
                            f"--fbl-training-pipeline=policy={policy} target={args.target} "
                            f"optimizer={optimizer}"], check=True)
            subprocess.run([os.path.join(args.fbl_bin, "fbl-translate"), "--fbl-to-opencl",
                            step, "-o", os.path.join(d, policy)], check=True)
            os.remove(step)
        for f in os.listdir(d):
            if f.startswith("model.mlir"):
                os.remove(os.path.join(d, f))
        index.append({"name": name, "dir": slug(name), "optimizer": optimizer})
        print(f"staged {name}", file=sys.stderr)
    json.dump({"target": args.target, "models": index},
              open(os.path.join(args.out, "models.json"), "w"), indent=1)


def median_ms(text):
    m = re.search(r"median step time: ([0-9.]+) ms", text)
    if not m:
        raise RuntimeError("no median step time in fbl-run output:\n" + text[-2000:])
    return float(m.group(1))


def compare(fbl_run, d, base, rounds, iterations):
    """Runs the three policies' bundles side by side in one fbl-run
    (--compare): per policy its round medians, and per baseline the median
    of its paired ratio to fblayout with the interval fbl-run prints."""
    out = subprocess.run([fbl_run, os.path.join(d, POLICIES[0])] +
                         [x for p in POLICIES[1:] for x in ("--compare", os.path.join(d, p))] +
                         base + ["--rounds", str(rounds), "--iterations", str(iterations)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip())
    times, ratios = {}, {}
    lines = out.stdout.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"(.+): median step time [0-9.]+ ms(?:, over .+: ([0-9.]+) "
                     r"\(([0-9.]+)% interval ([0-9.]+)-([0-9.]+)\))?$", line)
        if not m:
            continue
        policy = os.path.basename(m.group(1))
        times[policy] = [float(t) for t in lines[i + 1].split(":")[1].split()]
        if m.group(2):
            ratios[policy] = {"median": float(m.group(2)), "coverage": float(m.group(3)),
                              "low": float(m.group(4)), "high": float(m.group(5))}
    return times, ratios


def run(args):
    index = json.load(open(os.path.join(args.dir, "models.json")))
    results = {"target": index["target"], "models": []}
    for entry in index["models"]:
        d = os.path.join(args.dir, entry["dir"])
        base = ["--device", args.device, "--random-inputs", "1"]
        rounds, iterations = args.rounds, args.iterations
        times, ratios = compare(args.fbl_run, d, base, 1, iterations)
        if max(times[p][0] for p in POLICIES) < 2.0:
            # Launches and host synchronization dominate short steps.
            rounds, iterations = 3 * args.rounds, 5 * args.iterations
        try:
            times, ratios = compare(args.fbl_run, d, base, rounds, iterations)
        except RuntimeError as e:
            sys.exit(f"{entry['name']}: {e}")
        row = {"name": entry["name"], "rounds": rounds, "iterations": iterations}
        for policy in POLICIES:
            row[policy] = statistics.median(times[policy])
            row[policy + "_rounds"] = times[policy]
            if policy in ratios:
                row[policy + "_ratio"] = ratios[policy]
            prof = subprocess.run([args.fbl_run, os.path.join(d, policy)] + base +
                                  ["--iterations", str(args.iterations), "--profile"],
                                  capture_output=True, text=True)
            open(os.path.join(d, policy + ".profile"), "w").write(prof.stdout)
            kernels = re.findall(r"^k\d+_\w+\s+([0-9.]+)$", prof.stdout, re.M)
            row[policy + "_kernels"] = len(kernels)
            row[policy + "_kernel_ms"] = sum(float(t) for t in kernels)
        results["models"].append(row)
        # Written after every model: a run cut short keeps what it measured.
        json.dump(results, open(args.results or os.path.join(args.dir, "results.json"), "w"),
                  indent=1)
        print(f"{entry['name']}: " + ", ".join(
            f"{p} {row[p]:.3f} ms (kernels {row[p + '_kernel_ms']:.3f})" +
            (f" ratio {ratios[p]['median']:.4f} [{ratios[p]['low']:.4f}, {ratios[p]['high']:.4f}]"
             if p in ratios else "") for p in POLICIES), flush=True)


def table(args):
    measured = []
    for spec in args.measured:
        label, path = spec.split("=", 1)
        steps_only = path.endswith(",step")
        path = path[:-len(",step")] if steps_only else path
        measured.append((label, steps_only,
                         {m["name"]: m for m in json.load(open(path))["models"]}))
    simulated = {}
    if args.simulated:
        for r in json.load(open(args.simulated)):
            simulated.setdefault(r["model"], {})[r["target"]] = r
    names = []
    for _, _, rows in measured:
        names += [n for n in rows if n not in names]
    names += [n for n in simulated if n not in names]
    cols = [label for label, _, _ in measured] + ["Adreno-class (sim)", "Mali-class (sim)"]
    print("| model | policy | " + " | ".join(cols) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in cols) + " |")
    for name in names:
        for policy in POLICIES:
            cells = []
            for _, steps_only, rows in measured:
                r = rows.get(name)
                if r is None:
                    cells.append("")
                    continue
                # The paired ratio where the run measured one (with its
                # interval), else the ratio of the medians.
                paired = r.get(policy + "_ratio")
                ratio = (f"{paired['median']:.3f} [{paired['low']:.3f}, {paired['high']:.3f}]"
                         if paired else f"{r[policy] / r['fblayout']:.2f}")
                if steps_only:
                    cells.append(f"{r[policy]:.3f} ms" +
                                 ("" if policy == "fblayout" else f" ({ratio})"))
                    continue
                kratio = r[policy + "_kernel_ms"] / r["fblayout_kernel_ms"]
                cells.append(f"{r[policy]:.3f} ms / {r[policy + '_kernel_ms']:.3f} ms" +
                             ("" if policy == "fblayout" else f" ({ratio} / {kratio:.2f})"))
            for target in ("adreno-a740", "mali-g710"):
                r = simulated.get(name, {}).get(target)
                if r is None:
                    cells.append("")
                    continue
                t, base = r[policy], r["fblayout"]
                cells.append(f"{t['time_ns'] / 1e3:.0f} µs, {t['misses'] / 1e3:.0f} k misses" +
                             ("" if policy == "fblayout" else
                              f" ({t['time_ns'] / base['time_ns']:.2f}, "
                              f"{t['misses'] / max(base['misses'], 1):.2f})"))
            print(f"| {name} | {policy} | " + " | ".join(cells) + " |")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("stage")
    s.add_argument("--target", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--set", choices=["gpu", "cpu", "zoo"], default="gpu")
    s.add_argument("--fbl-bin", default="build/bin")
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("--fbl-run", default="build/bin/fbl-run")
    r.add_argument("--device", default="gpu")
    r.add_argument("--rounds", type=int, default=3)
    r.add_argument("--iterations", type=int, default=20)
    r.add_argument("--results", help="where results.json goes (default DIR/results.json)")
    t = sub.add_parser("table")
    t.add_argument("--measured", action="append", default=[], metavar="LABEL=results.json")
    t.add_argument("--simulated")
    args = p.parse_args()
    {"stage": stage, "run": run, "table": table}[args.command](args)


if __name__ == "__main__":
    main()
