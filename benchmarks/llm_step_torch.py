#!/usr/bin/env python3
"""PyTorch eager reference of an fbl-model training step: the same model
(test/lib/llm_reference.py for decoders, bert_reference.py for BERT's
masked-LM, vit_reference.py for ViT, whisper_reference.py for Whisper,
sd_unet_reference.py for Stable Diffusion's UNet, whose --seq is the text
context's length;
implementations independent of fbl),
fp32
with TF32 off, AdamW (fused where this PyTorch has it), random weights of
the model's parameter shapes; prints the median step time of CUDA events,
tokens/s and the peak of allocated CUDA memory.

  llm_step_torch.py --config C.json --params P.json --seq S --batch B \
      [--lora RANK,ALPHA] [--steps 30] [--warmup 5] [--device cuda] [--profile]

--profile also prints the CUDA kernel time of one more step, GEMM kernels
(cuBLAS/CUTLASS: names with gemm, xmma or cutlass) apart from the rest, to
set beside `fbl-run --profile` and benchmarks/gemm_profile.py.

P.json lists [name, dims] of the model's parameters, or [name, dims,
trainable] of all its weights (stage_llm.sh and stage_real_configs.sh write
it from the fbl-model output): weights with trainable false are frozen (no
gradient, no optimizer state), as LoRA's base weights are; with --lora the
`lora_A`/`lora_B` pairs add (alpha/rank) B A to their linear layers.
"""
import argparse
import json
import os
import re
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "lib"))
import bert_reference  # noqa: E402
import llm_reference  # noqa: E402
import sd_unet_reference  # noqa: E402
import vit_reference  # noqa: E402
import whisper_reference  # noqa: E402


GEMM_KERNEL = re.compile(r"gemm|xmma|cutlass", re.IGNORECASE)


def step(opt, model_loss):
    opt.zero_grad(set_to_none=True)
    loss = model_loss()
    loss.backward()
    opt.step()
    return loss


def print_kernel_times(run):
    """Sums of one step's CUDA kernel times, GEMMs apart, and the largest
    kernels of each kind."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        run()
        torch.cuda.synchronize()
    kinds = {"gemm": [0.0, 0], "other": [0.0, 0]}
    rows = []
    for e in prof.key_averages():
        us = e.self_device_time_total if hasattr(e, "self_device_time_total") \
            else e.self_cuda_time_total
        if us <= 0 or e.count == 0:
            continue
        kind = "gemm" if GEMM_KERNEL.search(e.key) else "other"
        kinds[kind][0] += us / 1000
        kinds[kind][1] += e.count
        rows.append((us / 1000, e.count, kind, e.key[:90]))
    for kind, (ms, n) in kinds.items():
        print(f"torch profile: {kind} kernels {ms:.2f} ms in {n} launches")
    for ms, n, kind, name in sorted(rows, reverse=True)[:25]:
        print(f"  {ms:8.3f} ms {n:5d} {kind:5s} {name}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", required=True)
    p.add_argument("--params", required=True)
    p.add_argument("--seq", type=int, required=True)
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--device", default="cuda")
    p.add_argument("--lora", default="", help="RANK,ALPHA of the adapters")
    p.add_argument("--profile", action="store_true",
                   help="print one step's GEMM and other kernel times")
    args = p.parse_args()
    lora = tuple(float(v) for v in args.lora.split(",")) if args.lora else None
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    config = json.load(open(args.config))
    gen = torch.Generator().manual_seed(0)
    w = {}
    for entry in json.load(open(args.params)):
        name, dims = entry[0], entry[1]
        trainable = entry[2] if len(entry) > 2 else True
        t = 0.02 * torch.randn(dims, generator=gen)
        if re.search(r"(norm\d?|norm_out|LayerNorm)\.weight$", name):
            t = t + 1.0
        w[name] = t.to(args.device).requires_grad_(trainable)
    trained = [t for t in w.values() if t.requires_grad]
    vocab = config.get("vocab_size", 2)
    ids = torch.randint(0, vocab, (args.batch, args.seq), generator=gen).to(args.device)
    labels = torch.randint(0, vocab, (args.batch, args.seq), generator=gen).to(args.device)
    if config.get("_class_name") == "UNet2DConditionModel":
        size = config.get("sample_size", 64)

        def latents(channels):
            return torch.randn((args.batch, channels, size, size), generator=gen).to(args.device)
        feeds = {"sample": latents(config.get("in_channels", 4)),
                 "timestep": torch.randint(0, 1000, (args.batch,), generator=gen).to(args.device),
                 "encoder_hidden_states": torch.randn(
                     (args.batch, args.seq, config["cross_attention_dim"]),
                     generator=gen).to(args.device),
                 "noise": latents(config.get("out_channels", 4))}

        def model_loss():
            return sd_unet_reference.forward_loss(config, w, feeds, lora)
    elif config["model_type"] == "whisper":
        frames = 2 * config.get("max_source_positions", 1500)
        feats = torch.randn((args.batch, config.get("num_mel_bins", 80), frames),
                            generator=gen).to(args.device)
        dec = torch.randint(0, vocab, (args.batch, args.seq), generator=gen).to(args.device)

        def model_loss():
            return whisper_reference.forward_loss(config, w, feats, dec, labels, lora)
    elif config["model_type"] == "vit":
        size, channels = config.get("image_size", 224), config.get("num_channels", 3)
        pixels = torch.randn((args.batch, channels, size, size), generator=gen).to(args.device)
        classes = torch.randint(0, config.get("num_labels", 2), (args.batch,),
                                generator=gen).to(args.device)

        def model_loss():
            return vit_reference.forward_loss(config, w, pixels, classes, lora)
    elif config["model_type"] == "bert":
        # Masked LM: one segment, no padding, 15% of the positions labelled.
        types = torch.zeros_like(ids)
        mask = torch.ones_like(ids)
        picked = torch.rand((args.batch, args.seq), generator=gen).to(args.device) < 0.15
        labels = torch.where(picked, labels, torch.full_like(labels, -100))

        def model_loss():
            return bert_reference.forward_loss(config, w, ids, types, mask, labels,
                                               "masked-lm", lora)
    else:
        def model_loss():
            return llm_reference.forward_loss(config, w, ids, labels, lora)
    try:
        opt = torch.optim.AdamW(trained, lr=1e-4, fused=True)
    except (TypeError, RuntimeError):
        opt = torch.optim.AdamW(trained, lr=1e-4, foreach=True)
    torch.cuda.reset_peak_memory_stats()
    times = []
    for i in range(args.warmup + args.steps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        loss = step(opt, model_loss)
        end.record()
        torch.cuda.synchronize()
        if i >= args.warmup:
            times.append(start.elapsed_time(end))
    if args.profile:
        print_kernel_times(lambda: step(opt, model_loss))
    median = statistics.median(times)
    print(f"torch: loss {loss.item():.4f}, median step {median:.3f} ms "
          f"over {args.steps} steps, {args.batch * args.seq / (median / 1000):.0f} tokens/s, "
          f"peak memory {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB "
          f"(fp32, TF32 off, {torch.__version__}, {torch.cuda.get_device_name()})")


if __name__ == "__main__":
    main()
