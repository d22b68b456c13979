#!/usr/bin/env python3
"""Property test of fbl's GEMM kernels: random shapes (whole texels, or
ending inside one, as ViT's 197 tokens do), forms (NN, NT, TN), operand
layouts (channel-packed, 4x4 R-Tiles, each operand its own), C starting at
zero or at an input (C0 + A·B), and kernels (register-tiled, local-tiled under a random
gemm_tile that covers the sizes: dividing into it, or with a ragged last tile
or slice within an eighth; blocks staged either way; the next slice stored
after the multiplication or inside it; random gemm_variants, each variant run
too), each GEMM (benchmarks/gen_gemm.py) lowered, run with fbl-run on random
inputs (once per variant, FBL_KERNEL_VARIANTS=N) and compared with numpy's
product in float64.

  gemm_property.py --fbl-bin DIR [--cases N] [--seed S] [--device SEL]
                   [--target NAME]
  gemm_property.py --fbl-bin DIR --prepare OUT [--cases N] [--seed S] [--target NAME]
  gemm_property.py --check OUT --fbl-run PATH [--device SEL]

Prints one line per case and "GEMM PROPERTY PASS" when every case is within
rtol 1e-4 of the largest product (fp32 sums of up to K terms). --prepare
compiles the cases (bundles, inputs and numpy's products) into OUT and
--check runs them there, so that a machine with only fbl-run (the GPU's)
checks the kernels compiled here. --target compiles for another preset
(nvidia-h200: the GPU's code paths); its own tile classes are dropped so
that the drawn tile is the one run.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import e2e_check  # noqa: E402
GEN_GEMM = os.path.join(HERE, "..", "..", "benchmarks", "gen_gemm.py")
# [group_items (along n), item_blocks, local_k, group_rows (along m)(,
# item_blocks_n)]: square and tall or wide groups, work-items of square and
# of oblong blocks (item_blocks along m, item_blocks_n along n), slices whose
# units split evenly over the work-items and ones that do not (the last
# round guarded).
TILES = [(4, 2, 8, 4), (8, 1, 16, 8), (8, 2, 8, 8), (8, 2, 16, 8),
         (16, 1, 16, 16), (4, 1, 8, 4), (16, 1, 8, 16), (8, 2, 16, 16),
         (8, 1, 8, 4), (4, 2, 8, 8), (16, 2, 8, 8), (8, 2, 4, 16),
         (16, 2, 16, 16), (8, 3, 8, 8), (4, 3, 8, 8),
         # Work-items of blocks x blocks_n: 2x4 and 4x2, 3x1.
         (8, 2, 8, 8, 4), (4, 4, 8, 8, 2), (8, 3, 8, 4, 1)]


def covered(rng, multiple, most):
    """A size in whole texels that tiles of `multiple` cover within an
    eighth (the kernel plan's rule): a multiple of it up to `most` of them,
    or, half the time where one exists, one a few texels short of it."""
    q = int(rng.integers(1, most + 1))
    short = (multiple * q) // 36  # 4 * j * 8 <= multiple * q - 4 * j
    j = int(rng.integers(1, short + 1)) if short and rng.random() < 0.5 else 0
    return multiple * q - 4 * j


def inside_texel(rng, size):
    """`size` (whole texels) or, half the time, 1-3 less: a range that ends
    inside its last texel, which the same tiles cover."""
    if size > 4 and rng.random() < 0.5:
        return size - int(rng.integers(1, 4))
    return size


def case(rng):
    form = rng.choice(["nn", "nt", "tn"])
    # Each operand's own layout, as a training step lays them out (its
    # forward GEMMs read an R-Tile activation and a channel-packed weight).
    layouts = [str(rng.choice(["channel_packed", "rtile"])) for _ in range(3)]
    layout = layouts[0] if len(set(layouts)) == 1 else "+".join(layouts)
    init = "input" if rng.random() < 0.3 else "zero"
    if rng.random() < 0.25:
        m, n, k = (inside_texel(rng, 4 * int(rng.integers(1, 13))) for _ in range(3))
        return form, layout, init, (m, n, k), None
    # Whole blocks staged XOR-permuted (1) or in runs (0); the next slice
    # stored after the multiplication (0) or after any k step inside it.
    base = TILES[int(rng.integers(len(TILES)))]
    store_after_k = int(rng.integers(1, base[2])) if rng.random() < 0.5 else 0
    tile = base[:4] + (int(rng.integers(2)), store_after_k) + base[4:]
    blocks_n = tile[6] if len(tile) > 6 else tile[1]
    m = inside_texel(rng, covered(rng, 4 * tile[3] * tile[1], 3))
    n = inside_texel(rng, covered(rng, 4 * tile[0] * blocks_n, 3))
    k = inside_texel(rng, covered(rng, tile[2], 8))
    # Other bodies [store_after_k, fma]: some the tile's own or storing past
    # its slice, which the compiler leaves out.
    variants = [(int(rng.integers(0, base[2] + 4)), int(rng.integers(2)))
                for _ in range(int(rng.integers(0, 3)))]
    # FBL_TEST_GEMM_VARIANTS replaces them, as in e2e_check.py (the rusticl
    # run leaves out fma(), which llvmpipe compiles for minutes).
    if os.environ.get("FBL_TEST_GEMM_VARIANTS"):
        variants = [tuple(v) for v in json.loads(os.environ["FBL_TEST_GEMM_VARIANTS"])]
    return form, layout, init, (m, n, k), (tile, variants)


def prepare(rng, c, args, out):
    """Compiles case `c` into `out` (bundle/, arg*.npy, want.npy); returns
    its description, or None after printing why it failed to compile."""
    form, layout, init, (m, n, k), local = case(rng)
    tile, variants = local or (None, [])
    ir = subprocess.run(
        [sys.executable, GEN_GEMM, str(m), str(n), str(k), form, layout,
         args.target, "local" if tile else "register", init],
        capture_output=True, text=True, check=True).stdout
    spelled = "[%s]" % ", ".join(map(str, tile)) if tile else ""
    if tile:
        ir = ir.replace(
            "local_tiled_gemm = true",
            "local_tiled_gemm = true, gemm_tile = " + spelled
            + ", gemm_tile_classes = []"
            + ", gemm_variants = [%s]" % ", ".join("[%d, %d]" % v for v in variants))
    name = f"{form} {layout} {m}x{n}x{k} C0 {init} " + (
        "tile " + spelled if tile else "register") + (
        " variants %s" % [list(v) for v in variants] if variants else "")
    low = subprocess.run([os.path.join(args.fbl_bin, "fbl-opt"),
                          "--fbl-lower-to-kernels"],
                         input=ir, capture_output=True, text=True)
    if low.returncode:
        print(f"FAIL {name}: {low.stderr.strip()}")
        return None
    kernel = "_gemm_local" if tile else "_gemm "
    if kernel not in low.stdout:
        print(f"FAIL {name}: the {kernel.strip('_ ')} kernel was not emitted")
        return None
    os.makedirs(out, exist_ok=True)
    subprocess.run([os.path.join(args.fbl_bin, "fbl-translate"),
                    "--fbl-to-opencl", "-o", os.path.join(out, "bundle")],
                   input=low.stdout, text=True, check=True)
    a = rng.standard_normal((k, m) if form[0] == "t" else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if form[1] == "t" else (k, n)).astype(np.float32)
    c0 = (rng.standard_normal((m, n)).astype(np.float32) if init == "input"
          else np.zeros((m, n), np.float32))
    args_in = [a, b] + ([c0] if init == "input" else [])
    for i, x in enumerate(args_in):
        np.save(os.path.join(out, f"arg{i}.npy"), x)
    aa = a.T if form[0] == "t" else a
    bb = b.T if form[1] == "t" else b
    np.save(os.path.join(out, "want.npy"),
            c0.astype(np.float64) + aa.astype(np.float64) @ bb.astype(np.float64))
    return {"name": name, "dir": os.path.basename(out), "inputs": len(args_in)}


def check(info, root, fbl_run, device):
    """Runs a prepared case: the kernel's function, then each variant the
    compiler built, against numpy's product. True when all are within
    tolerance."""
    where = os.path.join(root, info["dir"])
    bundle = os.path.join(where, "bundle")
    inputs = []
    for i in range(info["inputs"]):
        inputs += ["--input", f"arg{i}=" + os.path.join(where, f"arg{i}.npy")]
    want = np.load(os.path.join(where, "want.npy"))
    built = e2e_check.most_variants(bundle)
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        for v in range(built + 1):
            out = os.path.join(tmp, f"out{v}")
            run = subprocess.run(
                [fbl_run, bundle] + (["--device", device] if device else [])
                + inputs + ["--output-dir", out],
                capture_output=True, text=True,
                env=dict(os.environ, FBL_KERNEL_VARIANTS=str(v)))
            if run.returncode:
                errors.append(None)
                print(f"FAIL {info['name']} (variant {v}): {run.stderr.strip()}")
                continue
            got = np.load(os.path.join(out, "result0.npy"))
            if got.shape != want.shape:
                errors.append(None)
                print(f"FAIL {info['name']} (variant {v}): result of shape "
                      f"{got.shape}, not {want.shape}")
                continue
            errors.append(float(np.abs(got - want).max()
                                / max(np.abs(want).max(), 1e-30)))
    ok = all(e is not None and e <= 1e-4 for e in errors)
    shown = ", ".join("-" if e is None else f"{e:.2e}" for e in errors)
    print(f"{'ok' if ok else 'FAIL'} {info['name']}: max error {shown} of the largest"
          + (f" ({built} variants)" if built else ""), flush=True)
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fbl-bin")
    p.add_argument("--cases", type=int, default=12)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="")
    p.add_argument("--target", default="pocl-cpu")
    p.add_argument("--prepare", metavar="OUT")
    p.add_argument("--check", metavar="OUT")
    p.add_argument("--fbl-run")
    args = p.parse_args()
    if args.check:
        if not args.fbl_run:
            p.error("--check needs --fbl-run")
        with open(os.path.join(args.check, "cases.json")) as f:
            cases = json.load(f)
        failed = sum(not check(info, args.check, args.fbl_run, args.device)
                     for info in cases["cases"]) + cases["failed"]
        total = len(cases["cases"]) + cases["failed"]
    else:
        if not args.fbl_bin:
            p.error("--fbl-bin is needed to compile the cases")
        rng = np.random.default_rng(args.seed)
        with tempfile.TemporaryDirectory() as tmp:
            root = args.prepare or tmp
            prepared = [prepare(rng, c, args, os.path.join(root, f"case{c}"))
                        for c in range(args.cases)]
            cases = [info for info in prepared if info]
            failed, total = args.cases - len(cases), args.cases
            if args.prepare:
                with open(os.path.join(root, "cases.json"), "w") as f:
                    json.dump({"target": args.target, "cases": cases,
                               "failed": failed}, f, indent=1)
                print(f"prepared {len(cases)} of {args.cases} cases in {root}")
                sys.exit(f"{failed} of {total} GEMMs failed to compile" if failed else 0)
            fbl_run = os.path.join(args.fbl_bin, "fbl-run")
            failed += sum(not check(info, root, fbl_run, args.device) for info in cases)
    if failed:
        sys.exit(f"{failed} of {total} GEMMs wrong")
    print("GEMM PROPERTY PASS")


if __name__ == "__main__":
    main()
