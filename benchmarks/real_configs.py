#!/usr/bin/env python3
"""The bundled real configs, compiled whole: compile time, kernels, device
memory and the tensors spread over image-array layers of each training step.

For each model (every layer, the real vocabulary), LoRA (rank 8 on q_proj
and v_proj, frozen base) and full fine-tuning, AdamW, policy fblayout, and
each target: `fbl-model` then `fbl-opt --fbl-training-pipeline` to kernels.
Reports the pipeline's wall and CPU time, the step function's kernel
count, its memory plan (`fbl.memory_plan`: peak bytes of every parameter,
optimizer state, input and planned kernel output) and how many of its
tensor types are spread over array layers because they are longer than an
image side. A step a target cannot hold is a row with the compiler's
one-line reason.

  real_configs.py --fbl-bin build/bin [--models a,b] [--targets a,b]
      [--modes lora,full] [--seq 256] [--batch 1] [--json OUT.json]
"""
import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

MODELS = ["tinyllama-1.1b", "llama-3.2-1b", "qwen2.5-0.5b", "gemma-2b",
          "bert-base-uncased", "vit-base-patch16-224"]
TARGETS = ["adreno-a740", "mali-g710", "nvidia-h200"]
LORA = "rank=8 alpha=16 targets={}"


def lora_options(fbl_bin, name):
    """PEFT's default adapters: q_proj,v_proj, for BERT and ViT query,value,
    for a diffusion UNet every attention projection."""
    config = json.loads(run([os.path.join(fbl_bin, "fbl-model"), "--model", name,
                             "--print-config"]).stdout)
    if config.get("_class_name") == "UNet2DConditionModel":
        return LORA.format("to_k,to_q,to_v,to_out.0")
    return LORA.format("query,value" if config["model_type"] in ("bert", "vit")
                       else "q_proj,v_proj")
GIB = float(1 << 30)


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def compile_step(fbl_bin, model, target, tmp):
    """(row dict) for one compiled step, or the failure's reason."""
    out = os.path.join(tmp, "step.mlir")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = run([os.path.join(fbl_bin, "fbl-opt"), model, "-o", out,
                f"--fbl-training-pipeline=target={target} policy=fblayout "
                "optimizer=adamw"])
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        lines = [l for l in proc.stderr.splitlines() if "error:" in l]
        reason = lines[0].split("error:", 1)[1].strip() if lines else \
            proc.stderr.strip().splitlines()[-1]
        return {"error": reason, "wall_s": wall, "cpu_s": cpu}
    text = open(out).read()
    os.remove(out)
    start = text.find("func.func @model_step(")
    end = text.find("func.func @", start + 1)
    step = text[start:end if end > 0 else len(text)]
    plan = re.search(r"fbl\.memory_plan = \{objects = (\d+) : i64, "
                     r"peak_bytes = (\d+) : i64", step)
    layered = set(re.findall(r"tensor<[0-9x]+xf(?:16|32), #fbl\.image<[^>]*"
                             r"layers = \[d[^>]*>>", step))
    return {"wall_s": wall, "cpu_s": cpu,
            "kernels": step.count("fbl.dispatch @"),
            "peak_bytes": int(plan.group(2)) if plan else None,
            "layered_types": len(layered)}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fbl-bin", required=True)
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--targets", default=",".join(TARGETS))
    p.add_argument("--modes", default="lora,full")
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--json")
    args = p.parse_args()
    rows = []
    print(f"seq {args.seq}, batch {args.batch}, AdamW, fblayout; LoRA: "
          f"{LORA.format('q_proj,v_proj (BERT: query,value)')}\n")
    print("| model | mode | target | compile (wall / CPU) | kernels | peak memory "
          "| types on layers |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            base = os.path.join(tmp, "model.mlir")
            proc = run([os.path.join(args.fbl_bin, "fbl-model"), "--model", name,
                        "--seq", str(args.seq), "--batch", str(args.batch),
                        "-o", base])
            if proc.returncode != 0:
                sys.exit(f"fbl-model {name}: {proc.stderr.strip()}")
            for mode in args.modes.split(","):
                model = base
                if mode == "lora":
                    model = os.path.join(tmp, "lora.mlir")
                    proc = run([os.path.join(args.fbl_bin, "fbl-opt"), base,
                                f"--fbl-insert-lora={lora_options(args.fbl_bin, name)}",
                                "-o", model])
                    if proc.returncode != 0:
                        sys.exit(f"fbl-insert-lora {name}: {proc.stderr.strip()}")
                for target in args.targets.split(","):
                    r = compile_step(args.fbl_bin, model, target, tmp)
                    r.update(model=name, mode=mode, target=target)
                    rows.append(r)
                    timing = f"{r['wall_s']:.1f} s / {r['cpu_s']:.1f} s"
                    if "error" in r:
                        print(f"| {name} | {mode} | {target} | {timing} | refused: "
                              f"{r['error']} | | |")
                    else:
                        peak = (f"{r['peak_bytes'] / GIB:.2f} GiB"
                                if r["peak_bytes"] is not None else "?")
                        print(f"| {name} | {mode} | {target} | {timing} | "
                              f"{r['kernels']} | {peak} | {r['layered_types']} |")
                    sys.stdout.flush()
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
