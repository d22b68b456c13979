#!/usr/bin/env python3
"""Convolutions against PyTorch, as property tests: random convolutions
(1-D and 2-D; linalg.conv_1d_nwc_wcf, conv_2d_nhwc_hwcf, conv_2d_nchw_fchw,
and a linalg.generic with `s * o + d * k` index maps; strides 1-3,
dilations 1-2, zero padding by tensor.pad, kernels 1/3/16, channel counts
that are not multiples of 4) inside a model whose loss is
sum(tanh(conv(x, w) + bias) * weights), x, w and bias trained.

1. fbl-autodiff's loss and gradients for x, w and bias (run by the
   upstream-MLIR oracle) against torch autograd of F.conv1d / F.conv2d in
   float64: |fbl - ref| <= 1e-3 |ref| + 1e-4 max|ref| per tensor.
2. The compiled training step on the OpenCL device against the oracle,
   with the same bound, under each of --policies in turn (case i takes
   policy i mod their number; --all-policies runs every one on each case).

  conv_vs_torch.py --cases N --seed S --fbl-bin DIR --llvm-bin DIR
      [--policies P,...] [--target T] [--case NAME=... overrides]
"""
import argparse
import os
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_check  # noqa: E402
import model_check  # noqa: E402

FORMS = ["conv_1d_nwc_wcf", "conv_2d_nhwc_hwcf", "conv_2d_nchw_fchw", "generic_2d_nhwc"]


def draw_case(rng, index):
    form = FORMS[index % len(FORMS)]
    spatial = 1 if "1d" in form else 2
    kernel = int(rng.choice([1, 3, 3, 16])) if index % 7 != 3 else 16
    stride = int(rng.choice([1, 2, 3]))
    dilation = int(rng.choice([1, 1, 2])) if kernel != 16 else 1
    if kernel == 16:
        # ViT's patches; overlapping ones (256 window positions) in 1-D only.
        stride = 16 if index % 2 or spatial == 2 else 8
    pad = int(rng.integers(0, 3)) if kernel != 16 else 0
    extent = (kernel - 1) * dilation + 1
    size = [extent + int(rng.integers(0, 6)) for _ in range(spatial)]
    if kernel == 16 and spatial == 2:
        size = [32, 16 + 16 * int(rng.integers(0, 2))]
    return {
        "form": form, "spatial": spatial, "kernel": kernel, "stride": stride,
        "dilation": dilation, "pad": pad, "size": size,
        "batch": int(rng.integers(1, 3)), "cin": int(rng.choice([1, 3, 5, 6])),
        "cout": int(rng.choice([2, 3, 7, 8])),
    }


def out_size(n, c):
    return (n + 2 * c["pad"] - ((c["kernel"] - 1) * c["dilation"] + 1)) // c["stride"] + 1


def ty(dims):
    return "tensor<" + "x".join(map(str, dims)) + "xf32>"


def model_text(c):
    """The model's MLIR and the shapes of x, w, bias, weights."""
    n, ci, co, k, s, d, p = (c["batch"], c["cin"], c["cout"], c["kernel"],
                             c["stride"], c["dilation"], c["pad"])
    sp = c["size"]
    osp = [out_size(v, c) for v in sp]
    psp = [v + 2 * p for v in sp]
    channels_first = c["form"] == "conv_2d_nchw_fchw"
    if channels_first:
        x_dims, xp_dims = [n, ci] + sp, [n, ci] + psp
        w_dims, y_dims = [co, ci] + [k] * c["spatial"], [n, co] + osp
        low = [0, 0] + [p] * c["spatial"]
    else:
        x_dims, xp_dims = [n] + sp + [ci], [n] + psp + [ci]
        w_dims, y_dims = [k] * c["spatial"] + [ci, co], [n] + osp + [co]
        low = [0] + [p] * c["spatial"] + [0]
    rank = len(y_dims)
    idx = ", ".join(f"%i{j}: index" for j in range(rank))
    lines = [f"func.func @model(%x: {ty(x_dims)} {{fbl.param}}, %w: {ty(w_dims)} {{fbl.param}}, "
             f"%bias: {ty([co])} {{fbl.param}}, %wts: {ty(y_dims)}) -> tensor<f32> {{",
             "  %zero = arith.constant 0.0 : f32"]
    if p:
        lows = ", ".join(map(str, low))
        lines += [f"  %xp = tensor.pad %x low[{lows}] high[{lows}] {{",
                  f"  ^bb0({idx}):",
                  "    tensor.yield %zero : f32",
                  f"  }} : {ty(x_dims)} to {ty(xp_dims)}"]
        xv = "%xp"
    else:
        xv = "%x"
    lines += [f"  %e = tensor.empty() : {ty(y_dims)}",
              f"  %init = linalg.fill ins(%zero : f32) outs(%e : {ty(y_dims)}) -> {ty(y_dims)}"]
    if c["form"].startswith("conv_"):
        dense = lambda v: f"dense<{v}> : tensor<{c['spatial']}xi64>"  # noqa: E731
        lines.append(f"  %y = linalg.{c['form']} {{dilations = {dense(d)}, strides = {dense(s)}}} "
                     f"ins({xv}, %w : {ty(xp_dims)}, {ty(w_dims)}) outs(%init : {ty(y_dims)}) "
                     f"-> {ty(y_dims)}")
    else:
        # (n, oh, ow, f, kh, kw, c): the importer's generic form.
        m_in = f"(d0, d1 * {s} + d4 * {d}, d2 * {s} + d5 * {d}, d6)"
        lines += [
            f"  %y = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> {m_in}>, "
            "affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>, "
            "affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], "
            "iterator_types = [\"parallel\", \"parallel\", \"parallel\", \"parallel\", "
            "\"reduction\", \"reduction\", \"reduction\"]}",
            f"      ins({xv}, %w : {ty(xp_dims)}, {ty(w_dims)}) outs(%init : {ty(y_dims)}) {{",
            "  ^bb0(%a: f32, %b: f32, %acc: f32):",
            "    %m = arith.mulf %a, %b : f32",
            "    %r = arith.addf %acc, %m : f32",
            "    linalg.yield %r : f32",
            f"  }} -> {ty(y_dims)}"]
    dims = ", ".join(f"d{j}" for j in range(rank))
    reductions = ", ".join(['"reduction"'] * rank)
    cdim = "d1" if channels_first else f"d{rank - 1}"
    lines += [
        "  %le = tensor.empty() : tensor<f32>",
        "  %l0 = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>",
        f"  %l = linalg.generic {{indexing_maps = [affine_map<({dims}) -> ({dims})>, "
        f"affine_map<({dims}) -> ({cdim})>, affine_map<({dims}) -> ({dims})>, "
        f"affine_map<({dims}) -> ()>], iterator_types = [{reductions}]}}",
        f"      ins(%y, %bias, %wts : {ty(y_dims)}, {ty([co])}, {ty(y_dims)}) outs(%l0 : tensor<f32>) {{",
        "  ^bb0(%a: f32, %b: f32, %c: f32, %acc: f32):",
        "    %t0 = arith.addf %a, %b : f32",
        "    %t = math.tanh %t0 : f32",
        "    %m = arith.mulf %t, %c : f32",
        "    %r = arith.addf %acc, %m : f32",
        "    linalg.yield %r : f32",
        "  } -> tensor<f32>",
        "  return %l : tensor<f32>",
        "}"]
    return "\n".join(lines) + "\n", x_dims, w_dims, y_dims


def reference(c, x, w, bias, wts):
    t = lambda a: torch.tensor(np.asarray(a, np.float64), requires_grad=True)  # noqa: E731
    xt, wt, bt = t(x), t(w), t(bias)
    wts_t = torch.tensor(np.asarray(wts, np.float64))
    channels_first = c["form"] == "conv_2d_nchw_fchw"
    spatial = c["spatial"]
    xi = xt if channels_first else xt.permute(0, spatial + 1, *range(1, spatial + 1))
    if channels_first:
        wi = wt
    else:  # [k.., C, F] -> [F, C, k..]
        wi = wt.permute(spatial + 1, spatial, *range(spatial))
    conv = torch.nn.functional.conv1d if spatial == 1 else torch.nn.functional.conv2d
    y = conv(xi, wi, stride=c["stride"], padding=c["pad"], dilation=c["dilation"])
    if not channels_first:
        y = y.permute(0, *range(2, spatial + 2), 1)
        y = y + bt
    else:
        y = y + bt.view(1, -1, *([1] * spatial))
    loss = (torch.tanh(y) * wts_t).sum()
    loss.backward()
    return float(loss), [xt.grad.numpy(), wt.grad.numpy(), bt.grad.numpy()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fbl-bin", required=True)
    ap.add_argument("--llvm-bin", required=True)
    ap.add_argument("--policies", default="fblayout")
    ap.add_argument("--target", default="pocl-cpu")
    ap.add_argument("--device", default="")
    ap.add_argument("--all-policies", action="store_true")
    args = ap.parse_args()
    tool = lambda name: os.path.join(args.fbl_bin, name)  # noqa: E731
    rng = np.random.default_rng(args.seed)
    ok = True
    for i in range(args.cases):
        c = draw_case(rng, i)
        text, x_dims, w_dims, y_dims = model_text(c)
        x = rng.standard_normal(x_dims).astype(np.float32)
        # Scaled by 1/sqrt(fan-in): the outputs stay O(1), away from where
        # tanh saturates and 1 - tanh^2 is float32 rounding.
        fan_in = c["cin"] * c["kernel"] ** c["spatial"]
        w = (rng.standard_normal(w_dims) / np.sqrt(fan_in)).astype(np.float32)
        bias = (0.1 * rng.standard_normal([c["cout"]])).astype(np.float32)
        wts = rng.standard_normal(y_dims).astype(np.float32)
        print(f"case {i}: {c['form']} x{x_dims} w{w_dims} -> y{y_dims}, stride {c['stride']}, "
              f"dilation {c['dilation']}, pad {c['pad']}")
        ref_loss, ref_grads = reference(c, x, w, bias, wts)
        inputs = [(x_dims, "f32", x.ravel().tolist()), (w_dims, "f32", w.ravel().tolist()),
                  ([c["cout"]], "f32", bias.ravel().tolist()),
                  (y_dims, "f32", wts.ravel().tolist())]
        with tempfile.TemporaryDirectory() as tmp:
            model = os.path.join(tmp, "conv.mlir")
            open(model, "w").write(text)
            oracle = e2e_check.oracle_results(tool("fbl-opt"), model, "model", inputs,
                                              [0, 1, 2], args.llvm_bin)
            ok &= model_check.compare("loss vs torch", oracle[0], [ref_loss], 1e-3, 0.0)
            for name, got, want in zip(["dx", "dw", "dbias"], oracle[1:], ref_grads):
                ok &= model_check.compare(f"{name} vs torch", got, want, 1e-3, 1e-4)
            policies = [p for p in args.policies.split(",") if p]
            if policies and not args.all_policies:
                policies = [policies[i % len(policies)]]
            for policy in policies:
                bundle = e2e_check.compile_bundle(tool("fbl-opt"), tool("fbl-translate"),
                                                  model, policy, args.target, tmp)
                _, results = e2e_check.run_bundle(tool("fbl-run"), bundle, inputs, tmp,
                                                  args.device)
                for j, want in enumerate(oracle):
                    got = results[j] if j < len(results) else np.zeros(0)
                    ok &= model_check.compare(f"{policy} result{j} vs oracle", got, want,
                                              1e-3, 1e-4)
    print("CONV CHECK PASS" if ok else "CONV CHECK FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
