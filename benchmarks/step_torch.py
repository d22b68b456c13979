#!/usr/bin/env python3
"""PyTorch eager reference of the MLP and attention training steps that
gen_mlp.py and gen_attention.py write for fbl: the same computation written
independently in PyTorch, fp32 with TF32 off, the step (forward, backward,
optimizer update) timed with CUDA events; prints the median step time.

  step_torch.py mlp M K H [--optimizer sgd|adamw]
  step_torch.py attention SEQ HIDDEN HEADS [--layers L] [--optimizer adamw]
      [--steps 30] [--warmup 5] [--device cuda]
  step_torch.py gemm M N K   (one fp32 matmul, cuBLAS with TF32 off: TFLOP/s)

mlp: loss = mean((gelu(X W1) W2 - Y)^2) with the erf GELU, W1 [K, H] and
W2 [H, K] trained. attention: per layer Q, K, V projections, heads split,
softmax(Q Kᵀ / sqrt(d)) V, heads merged, output projection, residual; the
loss is the mean square of the last layer's output. The optimizers are
torch.optim's (AdamW fused where this PyTorch has it).
"""
import argparse
import math
import statistics

import torch


def mlp_step(args, dev):
    m, k, h = args.dims
    g = torch.Generator().manual_seed(0)
    x = torch.randn(m, k, generator=g).to(dev)
    y = torch.randn(m, k, generator=g).to(dev)
    w1 = (torch.randn(k, h, generator=g) / math.sqrt(k)).to(dev).requires_grad_()
    w2 = (torch.randn(h, k, generator=g) / math.sqrt(h)).to(dev).requires_grad_()

    def loss():
        a = torch.nn.functional.gelu(x @ w1)
        return ((a @ w2 - y) ** 2).mean()
    return [w1, w2], loss


def attention_step(args, dev):
    s, hid, nh = args.dims
    d = hid // nh
    g = torch.Generator().manual_seed(0)
    x = torch.randn(s, hid, generator=g).to(dev)
    ws = [(torch.randn(hid, hid, generator=g) / math.sqrt(hid)).to(dev).requires_grad_()
          for _ in range(4 * args.layers)]

    def loss():
        cur = x
        for l in range(args.layers):
            wq, wk, wv, wo = ws[4 * l:4 * l + 4]
            q, kk, v = ((cur @ w).view(s, nh, d).transpose(0, 1) for w in (wq, wk, wv))
            p = torch.softmax(q @ kk.transpose(1, 2) / math.sqrt(d), dim=-1)
            o = (p @ v).transpose(0, 1).reshape(s, hid)
            cur = cur + o @ wo
        return (cur * cur).mean()
    return ws, loss


def gemm(args, dev):
    m, n, k = args.dims
    a = torch.randn(m, k, device=dev)
    b = torch.randn(k, n, device=dev)
    c = torch.empty(m, n, device=dev)
    for _ in range(args.warmup):
        torch.mm(a, b, out=c)
    times = []
    for _ in range(args.steps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        torch.mm(a, b, out=c)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    ms = statistics.median(times)
    print(f"torch gemm {m}x{n}x{k}: median {ms:.4f} ms, {2 * m * n * k / ms / 1e9:.2f} TFLOP/s")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", choices=["mlp", "attention", "gemm"])
    p.add_argument("dims", type=int, nargs=3)
    p.add_argument("--layers", type=int, default=1)
    p.add_argument("--optimizer", choices=["sgd", "adamw"], default=None)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--device", default="cuda")
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device(args.device)
    if args.model == "gemm":
        return gemm(args, dev)
    params, loss = (mlp_step if args.model == "mlp" else attention_step)(args, dev)
    optimizer = args.optimizer or ("sgd" if args.model == "mlp" else "adamw")
    if optimizer == "sgd":
        opt = torch.optim.SGD(params, lr=1e-3)
    else:
        try:
            opt = torch.optim.AdamW(params, lr=1e-3, fused=dev.type == "cuda")
        except (TypeError, RuntimeError):
            opt = torch.optim.AdamW(params, lr=1e-3)

    def step():
        opt.zero_grad(set_to_none=True)
        loss().backward()
        opt.step()

    for _ in range(args.warmup):
        step()
    times = []
    for _ in range(args.steps):
        if dev.type == "cuda":
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            step()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        else:
            import time
            t0 = time.perf_counter()
            step()
            times.append((time.perf_counter() - t0) * 1e3)
    print(f"torch {args.model} {' '.join(map(str, args.dims))} {optimizer}: "
          f"median step time {statistics.median(times):.3f} ms over {args.steps} steps")


if __name__ == "__main__":
    main()
