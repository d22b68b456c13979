#!/usr/bin/env python3
"""PyTorch eager reference of an fbl-model training step: the same decoder
(test/lib/llm_reference.py, an implementation independent of fbl), fp32
with TF32 off, AdamW (fused where this PyTorch has it), random weights of
the model's parameter shapes; prints the median step time of CUDA events.

  llm_step_torch.py --config C.json --params P.json --seq S --batch B \
      [--steps 30] [--warmup 5] [--device cuda]

P.json lists [name, dims] of the model's parameters (stage_llm.sh writes it
from the fbl-model output).
"""
import argparse
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "lib"))
import llm_reference  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", required=True)
    p.add_argument("--params", required=True)
    p.add_argument("--seq", type=int, required=True)
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--device", default="cuda")
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    config = json.load(open(args.config))
    gen = torch.Generator().manual_seed(0)
    w = {}
    for name, dims in json.load(open(args.params)):
        t = 0.02 * torch.randn(dims, generator=gen)
        if name.endswith("norm.weight"):
            t = t + 1.0
        w[name] = t.to(args.device).requires_grad_(True)
    vocab = config["vocab_size"]
    ids = torch.randint(0, vocab, (args.batch, args.seq), generator=gen).to(args.device)
    labels = torch.randint(0, vocab, (args.batch, args.seq), generator=gen).to(args.device)
    try:
        opt = torch.optim.AdamW(w.values(), lr=1e-4, fused=True)
    except (TypeError, RuntimeError):
        opt = torch.optim.AdamW(w.values(), lr=1e-4, foreach=True)
    times = []
    for i in range(args.warmup + args.steps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        opt.zero_grad(set_to_none=True)
        loss = llm_reference.forward_loss(config, w, ids, labels)
        loss.backward()
        opt.step()
        end.record()
        torch.cuda.synchronize()
        if i >= args.warmup:
            times.append(start.elapsed_time(end))
    print(f"torch: loss {float(loss):.4f}, median step {statistics.median(times):.3f} ms "
          f"over {args.steps} steps (fp32, TF32 off, {torch.__version__}, "
          f"{torch.cuda.get_device_name()})")


if __name__ == "__main__":
    main()
