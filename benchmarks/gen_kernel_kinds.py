#!/usr/bin/env python3
"""Writes the calibration kernels: one laid-out module per kernel kind,
layout and size, each a single op that fbl-lower-to-kernels turns into one
kernel (GEMMs add their zero fill), for calibrate.py to time on a device.

  gen_kernel_kinds.py TARGET OUTDIR [--cpu]

--cpu: sizes a CPU OpenCL runs in seconds (GEMMs up to 512, tensors up to
1024x1024).

Kinds: elementwise copies and products (inputs packed like the output: one
fetch for 4 channels; packed across it: one fetch per channel), block-
transpose relayouts (packed rows to packed columns, to R-Tiles), row and
column sums (walked 4 per fetch, or 4 kept indices per fetch), and GEMMs in
the three forms (NN, NT, TN) on channel-packed and R-Tile operands with the
register-tiled and the local-tiled kernel. Sizes span launch-bound to
bandwidth- and arithmetic-bound, and few long work-items (latency bound).
Writes OUTDIR/NAME.mlir for each and OUTDIR/cases.txt (one NAME a line).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_gemm import ENCODINGS, gemm_function  # noqa: E402

P0 = "#fbl.channel_packed<packed = 0>"
P1 = ENCODINGS["channel_packed"]
RT = ENCODINGS["rtile"]


def module(target, body, fields=""):
    return (f'module attributes {{fbl.target = #fbl.target<"{target}"{fields}>}} {{\n'
            f"{body}}}\n")


def elementwise(r, c, out_enc, in_enc, multiply):
    T = lambda e: f"tensor<{r}x{c}xf32, {e}>"
    op = ("%p = arith.mulf %x, %y : f32\n      %s = arith.addf %p, %x : f32"
          if multiply else "%s = arith.addf %x, %y : f32")
    return f"""  func.func @kernel(%a: {T(in_enc)}, %b: {T(in_enc)}, %o: {T(out_enc)}) -> {T(out_enc)} {{
    %0 = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}}
        ins(%a, %b : {T(in_enc)}, {T(in_enc)}) outs(%o : {T(out_enc)}) {{
    ^bb0(%x: f32, %y: f32, %z: f32):
      {op}
      linalg.yield %s : f32
    }} -> {T(out_enc)}
    return %0 : {T(out_enc)}
  }}
"""


def relayout(r, c, src, dst):
    S, D = f"tensor<{r}x{c}xf32, {src}>", f"tensor<{r}x{c}xf32, {dst}>"
    return f"""  func.func @kernel(%a: {S}) -> {D} {{
    %0 = fbl.relayout %a : {S} to {D}
    return %0 : {D}
  }}
"""


def reduction(r, c, in_enc, over_columns):
    """Sums of [r, c] over columns (one per row) or over rows (per column)."""
    n = r if over_columns else c
    X, O = f"tensor<{r}x{c}xf32, {in_enc}>", f"tensor<{n}xf32, {P0}>"
    maps = ("affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>"
            if over_columns else
            "affine_map<(j, i) -> (i, j)>, affine_map<(j, i) -> (j)>")
    return f"""  func.func @kernel(%x: {X}, %z: {O}) -> {O} {{
    %0 = linalg.generic {{indexing_maps = [{maps}],
                         iterator_types = ["parallel", "reduction"]}}
        ins(%x : {X}) outs(%z : {O}) {{
    ^bb0(%v: f32, %acc: f32):
      %s = arith.addf %acc, %v : f32
      linalg.yield %s : f32
    }} -> {O}
    return %0 : {O}
  }}
"""


def cases(target, cpu):
    big = 1024 if cpu else 4096
    mid = 512 if cpu else 2048
    for r, c in [(64, 64), (256, 256), (mid, mid), (big, big)]:
        yield f"copy-packed-{r}x{c}", module(target, elementwise(r, c, P1, P1, False))
        yield f"copy-across-{r}x{c}", module(target, elementwise(r, c, P1, P0, False))
    for r, c in [(256, 256), (mid, mid)]:
        yield f"multiply-packed-{r}x{c}", module(target, elementwise(r, c, P1, P1, True))
    for r, c in [(256, 256), (mid, mid), (big, big)]:
        yield f"relayout-transpose-{r}x{c}", module(target, relayout(r, c, P1, P0))
        yield f"relayout-rtile-{r}x{c}", module(target, relayout(r, c, P1, RT))
    for r, c in ([(4, 8192), (64, 1024), (512, 512), (2048, 128)] if cpu else
                 [(4, 32768), (64, 4096), (2048, 2048), (8192, 512)]):
        yield f"rowsum-walked-{r}x{c}", module(target, reduction(r, c, P1, True))
        yield f"rowsum-kept-{r}x{c}", module(target, reduction(r, c, P0, True))
    for r, c in ([(8192, 64), (512, 512), (128, 2048)] if cpu else
                 [(32768, 64), (2048, 2048), (512, 8192)]):
        yield f"colsum-kept-{r}x{c}", module(target, reduction(r, c, P1, False))
        yield f"colsum-walked-{r}x{c}", module(target, reduction(r, c, P0, False))
    shapes = ([(64, 64, 64), (128, 256, 256), (256, 256, 512), (64, 512, 128)] if cpu else
              [(256, 256, 256), (512, 2048, 2048), (2048, 2048, 2048), (128, 4096, 512)])
    for m, n, k in shapes:
        for form in ("nn", "nt", "tn"):
            for lname, enc in (("packed", P1), ("rtile", RT)):
                for kernel, fields in (("register", ", local_tiled_gemm = false"),
                                       ("local", ", local_tiled_gemm = true")):
                    yield (f"gemm-{form}-{lname}-{kernel}-{m}x{n}x{k}",
                           module(target, gemm_function("kernel", m, n, k, form, enc), fields))


def main():
    args = [a for a in sys.argv[1:] if a != "--cpu"]
    if len(args) != 2:
        sys.exit(__doc__)
    target, out = args
    cpu = "--cpu" in sys.argv
    os.makedirs(out, exist_ok=True)
    names = []
    for name, text in cases(target, cpu):
        with open(os.path.join(out, name + ".mlir"), "w") as f:
            f.write(f"// Generated by benchmarks/gen_kernel_kinds.py {target}\n" + text)
        names.append(name)
    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write("\n".join(names) + "\n")


if __name__ == "__main__":
    main()
