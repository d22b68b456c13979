#!/usr/bin/env python3
"""Compile time of training steps, pipeline to kernels, under each policy.

Models:
  llama-1b-width xN  LLaMA-3.2-1B's layer widths (hidden 2048, MLP 8192,
                     32 heads of 64, 8 KV heads, llama3 RoPE) stacked N
                     times, built by fbl-model; vocabulary 4096 (the cost
                     of the layers; whole real configs with their real
                     vocabularies: real_configs.py), seq 128.
  attention SxH/h xN benchmarks/gen_attention.py SEQ HIDDEN HEADS N.

Each configuration runs `fbl-opt --fbl-training-pipeline` (AdamW, target
adreno-a740) to kernels with --mlir-timing; the time reported is the
pipeline's wall time (the report's total minus printing the output), median
of --repeat runs, and beside it the whole process's CPU time (user + system),
which other load on the machine disturbs less. Prints a Markdown table;
--json writes the figures.

The pipeline runs as fbl-finetune runs it: the IR is verified when parsed,
not after every pass (`--verify-each=0`; fbl-finetune verifies its input and
its output, as LLVM's opt does). `--verify-each` measures fbl-opt's default
instead, the verifier after every pass, which for a many-layer model costs
more than the passes.

  compile_time.py --fbl-bin build/bin [--layers 1,2,4,8,16,32] [--repeat 3]
                  [--verify-each]
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile

POLICIES = ["fblayout", "reuse-forward", "explicit-transpose"]
HERE = os.path.dirname(os.path.abspath(__file__))


def pipeline_seconds(fbl_opt, model, policy, target, verify_each):
    """(pipeline wall seconds without printing, process CPU seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(
        [fbl_opt, model, "--mlir-timing", "-o", os.devnull,
         f"--verify-each={1 if verify_each else 0}",
         f"--fbl-training-pipeline=target={target} policy={policy} "
         "optimizer=adamw"],
        capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"fbl-opt failed on {model} ({policy}):\n{out.stderr[-2000:]}")
    total = re.search(r"Total Execution Time: ([0-9.]+) seconds", out.stderr)
    output = re.search(r"([0-9.]+) \(\s*[0-9.]+%\)\s+Output", out.stderr)
    if not total:
        sys.exit("no --mlir-timing report from fbl-opt")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    wall = float(total.group(1)) - (float(output.group(1)) if output else 0.0)
    return wall, cpu


def llama_model(fbl_bin, layers, tmp):
    config = json.loads(subprocess.run(
        [os.path.join(fbl_bin, "fbl-model"), "--model", "llama-3.2-1b",
         "--print-config"], capture_output=True, text=True,
        check=True).stdout)
    config["num_hidden_layers"] = layers
    config["vocab_size"] = 4096
    path = os.path.join(tmp, f"llama-{layers}.json")
    with open(path, "w") as f:
        json.dump(config, f)
    model = os.path.join(tmp, f"llama-{layers}.mlir")
    subprocess.run([os.path.join(fbl_bin, "fbl-model"), "--model", path,
                    "--seq", "128", "--batch", "1", "-o", model], check=True)
    return model


def attention_model(seq, hidden, heads, layers, tmp):
    model = os.path.join(tmp, f"attn-{seq}-{hidden}-{heads}-{layers}.mlir")
    with open(model, "w") as f:
        subprocess.run([sys.executable, os.path.join(HERE, "gen_attention.py"),
                        str(seq), str(hidden), str(heads), str(layers)],
                       stdout=f, check=True)
    return model


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fbl-bin", required=True)
    p.add_argument("--layers", default="1,2,4,8,16,32")
    p.add_argument("--attention", default="128x512/8x1,128x512/8x4,"
                   "128x512/8x8,512x2048/16x1",
                   help="SEQxHIDDEN/HEADSxLAYERS,... ('' for none)")
    p.add_argument("--target", default="adreno-a740")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--verify-each", action="store_true",
                   help="verify the IR after every pass (fbl-opt's default)")
    p.add_argument("--json")
    args = p.parse_args()
    fbl_opt = os.path.join(args.fbl_bin, "fbl-opt")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        configs = [(f"llama-1b-width x{n}", n,
                    llama_model(args.fbl_bin, n, tmp))
                   for n in (int(x) for x in args.layers.split(",") if x)]
        for spec in filter(None, args.attention.split(",")):
            m = re.fullmatch(r"(\d+)x(\d+)/(\d+)x(\d+)", spec)
            if not m:
                sys.exit(f"bad --attention entry '{spec}'")
            s, h, nh, n = (int(g) for g in m.groups())
            configs.append((f"attention S{s}/H{h}/{nh} heads x{n}", n,
                            attention_model(s, h, nh, n, tmp)))
        for name, layers, model in configs:
            row = {"model": name, "layers": layers}
            for policy in POLICIES:
                runs = [pipeline_seconds(fbl_opt, model, policy, args.target,
                                         args.verify_each)
                        for _ in range(args.repeat)]
                row[policy] = statistics.median(w for w, _ in runs)
                row[policy + " cpu"] = statistics.median(c for _, c in runs)
            rows.append(row)
            print(f"{name}: " + ", ".join(
                f"{p} {row[p]:.2f} s ({row[p + ' cpu']:.2f} s CPU)"
                for p in POLICIES), file=sys.stderr)
    print("| model | " + " | ".join(POLICIES) +
          " | fblayout per layer |\n| --- | " +
          " | ".join("---" for _ in POLICIES) + " | --- |")
    for r in rows:
        print(f"| {r['model']} | " +
              " | ".join(f"{r[p]:.2f} s ({r[p + ' cpu']:.2f} CPU)"
                         for p in POLICIES) +
              f" | {r['fblayout'] / r['layers']:.3f} s |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"target": args.target, "repeat": args.repeat,
                       "verify_each": args.verify_each, "rows": rows}, f,
                      indent=1)


if __name__ == "__main__":
    main()
