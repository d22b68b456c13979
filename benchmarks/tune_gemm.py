#!/usr/bin/env python3
"""Chooses a target's local-tiled GEMM tile (`gemm_tile`) by measuring.

  tune_gemm.py stage DIR [--target T] [--target-fields ", K = V, ..."]
                         [--shapes MxNxK,...]
                         [--tiles G,B,K[,R[,S[,T]]];...|preset] [--store-after-k 0,half,...]
                         [--forms nn,nt,tn] [--layouts channel_packed,rtile]
                         [--fbl-opt P] [--fbl-translate P]
      writes one GEMM bundle per candidate tile, shape, form (nn, nt, tn)
      and layout (channel_packed, rtile, or each operand's own, A+B+C as
      gen_gemm.py takes it: rtile+channel_packed+rtile is the layouts of
      ViT-B/16's forward GEMMs), each with the target's
      local_tiled_gemm on and `gemm_tile` set (benchmarks/gen_gemm.py),
      lowered as the training pipeline lowers it, and DIR/plan.json
      listing them;
  tune_gemm.py run DIR [--fbl-run P] [--device D] [--iterations N]
                       [--build-options=-cl-nv-verbose]
      runs each bundle with fbl-run --profile on the device (the GEMM
      kernel's median device time), writes DIR/results.json (or --results)
      and prints, per
      tile, TFLOP/s for every shape/form/layout and their geometric mean;
      the tile with the highest geometric mean is the one to record in the
      target's preset (include/fbl/Layout/TargetDescription.h).

  tune_gemm.py classes RESULTS.json...
      from the results of one run per shape (stage each shape into its own
      DIR), the best tile of each shape (geometric mean over forms and
      layouts) and the target fields that give each size its best:
      `gemm_tile` (the smallest shape's) and `gemm_tile_classes`, a class
      from the M x N of each larger shape whose best tile differs.

  tune_gemm.py model RESULTS.json... [--tiles G,B,K,R,S,T[,BN];...]
                                     [--target T] [--fbl-opt P]
      whether the cost model orders the measured tiles as the device did:
      each measured run lowered again here with its tile, the model's time
      (fbl.estimate) beside the measured one; per shape, form and layout
      every pair of tiles the model ranks in the device's order, and the
      pairs the device separates by more than a tenth. The local-tiled
      GEMM lets a shape class's tile replace the smaller class's only where
      the model does not find it slower: this says how far to trust that
      (--tiles: only those tiles, e.g. the preset's classes' own).

Candidates come from a fixed grid (groups of 64-256 work-items, 4-32 a
side along n and along m, 1-2 blocks of 4x4 per work-item, k slices 8-32
deep); those the target's verifier refuses (work-group size, 32 KiB of
local memory) are reported and skipped. A tile is [group_items,
item_blocks, local_k, group_rows, swizzle, store_after_k(, item_blocks_n)]
(item_blocks_n: blocks a work-item computes along n, where it differs from
item_blocks, which is then along m; swizzle 1: an
operand packed along k staged in whole blocks in the image's order, each
local row's blocks XOR-permuted; 0: in runs of 8 blocks; the grid takes
both; store_after_k: the next slice's texels stored into local memory
after that many of the slice's k steps, 0 after all of them);
--tiles takes G,B,K for a square group, swizzle 1 and store_after_k 0
unless given; `--tiles preset` stages each shape with the tile the
target itself gives it (its `gemm_tile_classes`, where the cost model
does not find a class's tile slower at the shape, as the training steps
get it: what the table's GEMM rows time); --store-after-k stages each tile once per value given
instead (a number, or half or quarter of the tile's local_k; those not
below local_k are skipped).
Only tiles the kernel plan takes at every shape are kept (it takes a
tile where it covers M, N and K within an eighth, the last tiles ragged:
ViT's 6336 rows with 64- or 128-row tiles), so no run falls back to another
tile; the others are reported and skipped. Runs on the device machine with the Python there (no MLIR
needed for `run`).
"""
import argparse
import itertools
import json
import math
import os
import re
import subprocess
import sys

from kernel_estimates import value as mlir_float

HERE = os.path.dirname(os.path.abspath(__file__))
FORMS = ("nn", "nt", "tn")
LAYOUTS = ("channel_packed", "rtile")


def candidate_tiles():
    """[group_items, item_blocks, local_k, group_rows, swizzle] worth a run
    on a GPU: 64 to 256 work-items (group_items along n, group_rows along
    m), at most 64 accumulators a work-item, both ways of staging whole
    blocks. Whether the target can take a tile is its verifier's question
    (asked in `stage`)."""
    return [[g, b, k, r, s, 0] for g in (4, 8, 16, 32) for r in (4, 8, 16, 32)
            for b in (1, 2) for k in (8, 16, 32) for s in (1, 0)
            if 64 <= g * r <= 256]


def parse_tile(text):
    """`G,B,K` (a square group), `G,B,K,R`, `G,B,K,R,S`, `G,B,K,R,S,T` or
    `G,B,K,R,S,T,BN` (BN blocks a work-item along n, B along m)."""
    t = [int(x) for x in text.split(",")]
    if len(t) == 3:
        t.append(t[0])
    return full_tile(t)


def full_tile(t):
    """A tile's six numbers: swizzle 1 and store_after_k 0 where missing
    (results of runs before store_after_k have five), and a seventh,
    item_blocks_n, where it differs from item_blocks."""
    t = list(t)
    if len(t) == 4:
        t.append(1)
    if len(t) == 5:
        t.append(0)
    return t[:6] if len(t) == 7 and t[6] == t[1] else t


def tile_text(t):
    """`[g, b, k, r, s, t(, bn)]`, as gemm_tile spells it."""
    return "[" + ", ".join(str(x) for x in t) + "]"


def tile_name(t):
    return "_".join(str(x) for x in t)


def store_after_k_variants(tiles, spec):
    """Each tile once per `spec` value (a number, `half` or `quarter` of its
    local_k), where that is below its local_k; without `spec`, the tiles
    as given."""
    if not spec:
        return tiles
    out = []
    for t in tiles:
        for v in spec.split(","):
            at = {"half": t[2] // 2, "quarter": t[2] // 4}.get(v)
            if at is None and not v.isdigit():
                sys.exit(f"--store-after-k: {v!r} is not a number, half or quarter")
            at = int(v) if at is None else at
            if 0 <= at < t[2] and t[:5] + [at] + t[6:] not in out:
                out.append(t[:5] + [at] + t[6:])
    return out


PRESET = "preset"


def geomean(values):
    return math.exp(sum(map(math.log, values)) / len(values))


def tile_key(tile):
    """A tile as a dict key: its numbers, or PRESET."""
    return tile if tile == PRESET else tuple(tile)


def lower(args, m, n, k, form, layout, tile):
    """The GEMM's kernels with `tile` (PRESET: the target's own for the
    size), or None with the reason the target's verifier refuses the tile."""
    ir = subprocess.run(
        [sys.executable, os.path.join(HERE, "gen_gemm.py"), str(m), str(n), str(k),
         form, layout, args.target, "local"],
        check=True, capture_output=True, text=True).stdout
    # No shape classes: every size takes the tile under test (with PRESET,
    # the target's own classes choose).
    ir = ir.replace("local_tiled_gemm = true",
                    "local_tiled_gemm = true" + ("" if tile == PRESET else
                    ", gemm_tile = %s, gemm_tile_classes = []" % tile_text(tile))
                    + args.target_fields)
    # The kernel source the training pipeline emits (bodies folded and
    # CSE'd): the driver's compiler times equivalent sources differently.
    out = subprocess.run([args.fbl_opt, "--fbl-lower-to-kernels=cse=true fold=true"],
                         input=ir, capture_output=True, text=True)
    if out.returncode:
        if "gemm_tile" in out.stderr:
            return None, out.stderr.strip().splitlines()[0]
        sys.exit(f"fbl-opt failed on {form} {layout} {m}x{n}x{k}: {out.stderr}")
    # Not the local-tiled kernel, or another tile: the kernel plan takes a
    # tile only where it covers the sizes within an eighth (ragged last
    # tiles), and falls back otherwise; such a run would time another tile.
    if tile == PRESET:
        if "_gemm_local" not in out.stdout:
            return None, f"the target takes no local tile at {m}x{n}x{k}"
    elif not re.search(r"_gemm_local .*workgroup \[%d, %d, 1\]" % (tile[0], tile[3]),
                       out.stdout):
        return None, (f"not taken at {m}x{n}x{k} (the kernel plan takes a tile "
                      "where it covers the sizes within an eighth)")
    return out.stdout, None


def stage(args):
    os.makedirs(args.dir, exist_ok=True)
    shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]
    grid = [PRESET] if args.tiles == PRESET else store_after_k_variants(
        [parse_tile(t) for t in args.tiles.split(";")]
        if args.tiles else candidate_tiles(), args.store_after_k)
    forms = args.forms.split(",")
    layouts = args.layouts.split(",")
    plan = {"target": args.target, "runs": []}
    staged = []
    # Only tiles the kernel plan takes at every shape (lower() says where
    # not): no run falls back to another.
    for tile in grid:
        runs, refused = [], None
        for (m, n, k), form, layout in itertools.product(shapes, forms, layouts):
            lowered, refused = lower(args, m, n, k, form, layout, tile)
            if refused:
                break
            name = "%s-%s-%dx%dx%d-t%s" % (
                form, layout, m, n, k, tile if tile == PRESET else tile_name(tile))
            subprocess.run([args.fbl_translate, "--fbl-to-opencl", "-o",
                            os.path.join(args.dir, name)],
                           input=lowered, check=True, text=True)
            runs.append({"name": name, "tile": tile, "form": form,
                         "layout": layout, "shape": [m, n, k]})
        if refused:
            print(f"tile {tile}: {refused}")
            continue
        plan["runs"] += runs
        staged.append(tile)
    with open(os.path.join(args.dir, "plan.json"), "w") as f:
        json.dump(plan, f, indent=1)
    print(f"staged {len(plan['runs'])} bundles, tiles {staged}")


def run(args):
    plan = json.load(open(os.path.join(args.dir, "plan.json")))
    results = []
    for r in plan["runs"]:
        cmd = [args.fbl_run, os.path.join(args.dir, r["name"]), "--random-inputs", "1",
               "--iterations", str(args.iterations), "--profile"]
        if args.device:
            cmd += ["--device", args.device]
        env = dict(os.environ)
        if args.build_options:
            env["FBL_OPENCL_BUILD_OPTIONS"] = args.build_options
            # The runtime's program cache keeps the driver's binary (PTX on
            # NVIDIA): one cache per bundle, to read which code the kernel got.
            env["XDG_CACHE_HOME"] = os.path.join(args.dir, r["name"] + ".cache")
        out = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if args.build_options:
            # The driver's build log (registers, spills with -cl-nv-verbose).
            with open(os.path.join(args.dir, r["name"] + ".buildlog"), "w") as f:
                f.write(out.stderr)
        ms, variant = None, ""
        for line in out.stdout.splitlines():
            mt = re.match(r"k\d+_gemm_local\s+([\d.]+)", line)
            if mt:
                ms = float(mt.group(1))
            # Where the target gives GEMM variants, the one the runtime
            # measured fastest and ran.
            mv = re.match(r"k\d+_gemm_local runs variant (\S+)", line)
            if mv:
                variant = mv.group(1)
        if out.returncode or ms is None:
            print(f"{r['name']}: failed: {(out.stderr or out.stdout).strip()[:200]}")
            continue
        m, n, k = r["shape"]
        r = dict(r, ms=ms, tflops=2 * m * n * k / ms / 1e9, variant=variant)
        results.append(r)
        print(f"{r['name']}: {ms:.4f} ms, {r['tflops']:.2f} TFLOP/s"
              + (f" ({variant})" if variant else ""), flush=True)
        # Written as it goes: a run cut short keeps what it measured.
        with open(args.results or os.path.join(args.dir, "results.json"), "w") as f:
            json.dump({"target": plan["target"], "results": results}, f, indent=1)
    by_tile = {}
    for r in results:
        by_tile.setdefault(tile_key(r["tile"]), []).append(r)
    expected = len(plan["runs"]) // max(1, len({tile_key(r["tile"]) for r in plan["runs"]}))
    print("\ntile [group_items, item_blocks, local_k, group_rows, swizzle, "
          "store_after_k(, item_blocks_n)]: "
          "geometric mean TFLOP/s "
          "(min over shape/form/layout)")
    ranked = []
    show = lambda tile: tile if tile == PRESET else list(tile)  # noqa: E731
    for tile, rs in by_tile.items():
        if len(rs) < expected:
            print(f"  {show(tile)}: {expected - len(rs)} runs failed, not ranked")
            continue
        gm = geomean([r["tflops"] for r in rs])
        ranked.append((gm, tile, min(r["tflops"] for r in rs)))
    for gm, tile, lo in sorted(ranked, key=lambda r: r[0], reverse=True):
        print(f"  {show(tile)}: {gm:.2f} (min {lo:.2f})")
    numbered = [r for r in ranked if r[1] != PRESET]
    if numbered:
        print("best: gemm_tile = " + tile_text(max(numbered)[1]))


def classes(args):
    by_size = {}  # elements of C -> [(shape, {tile: [TFLOP/s]})]
    for path in args.results:
        results = json.load(open(path))["results"]
        shapes = {tuple(r["shape"]) for r in results}
        if len(shapes) != 1:
            sys.exit(f"{path}: results of {len(shapes)} shapes; run one shape a file")
        by_tile = {}
        for r in results:
            if r["tile"] != PRESET:  # the target's own: nothing to choose
                by_tile.setdefault(tuple(full_tile(r["tile"])), []).append(r["tflops"])
        full = max(len(v) for v in by_tile.values())
        by_tile = {t: v for t, v in by_tile.items() if len(v) == full}
        ranked = sorted(((geomean(v), t) for t, v in by_tile.items()), reverse=True)
        (m, n, k), = shapes
        gm, tile = ranked[0]
        print(f"{m}x{n}x{k}: best {list(tile)} {gm:.2f} TFLOP/s; then " +
              ", ".join(f"{list(t)} {g:.2f}" for g, t in ranked[1:4]))
        by_size.setdefault(m * n, []).append(((m, n, k), by_tile))
    # A class is keyed by C's size alone: shapes of one size whose best
    # tiles differ share the tile best over all of them (measured in each).
    best = []
    for outputs, measured in sorted(by_size.items()):
        common = set.intersection(*(set(t) for _, t in measured))
        if not common:
            sys.exit(f"{outputs} elements of C: no tile measured in every shape of that size")
        gm, tile = max((geomean([x for _, t in measured for x in t[c]]), c)
                       for c in common)
        if len(measured) > 1:
            print(f"{outputs} elements of C (" +
                  ", ".join("x".join(map(str, s)) for s, _ in measured) +
                  f"): {list(tile)} {gm:.2f} TFLOP/s over all of them")
        best.append((outputs, tile))
    base = best[0][1]
    fields, current = [], base
    for outputs, tile in best[1:]:
        if tile != current:
            fields.append([outputs, *tile])
            current = tile
    print("gemm_tile = " + tile_text(base))
    if fields:
        print("gemm_tile_classes = [" +
              ", ".join(tile_text(c) for c in fields) + "]")


ESTIMATE = re.compile(r"_gemm_local .*?time_ns = (\S+) : f64")


def model(args):
    """Prints, per measured shape, how often the cost model ranks two of
    its tiles (at one form and layout) in the device's order."""
    keep = ({tuple(full_tile(parse_tile(t))) for t in args.tiles.split(";")}
            if args.tiles else None)
    groups = {}  # (shape, form, layout) -> [(tile, measured ms, model ns)]
    for path in args.results:
        for r in json.load(open(path))["results"]:
            if keep is not None and tuple(full_tile(r["tile"])) not in keep:
                continue
            m, n, k = r["shape"]
            lowered, refused = lower(args, m, n, k, r["form"], r["layout"],
                                     r["tile"])
            found = ESTIMATE.search(lowered or "")
            if refused or not found:
                print(f"{r['name']}: not lowered here ({refused or 'no estimate'})")
                continue
            groups.setdefault((tuple(r["shape"]), r["form"], r["layout"]), []).append(
                (r["tile"], r["ms"], mlir_float(found.group(1), "f64")))
    totals = {}
    for (shape, form, layout), runs in sorted(groups.items()):
        pairs = [(a, b) for i, a in enumerate(runs) for b in runs[i + 1:]]
        agree = sum((a[1] < b[1]) == (a[2] < b[2]) for a, b in pairs)
        wide = [(a, b) for a, b in pairs
                if max(a[1], b[1]) > 1.1 * min(a[1], b[1])]
        agree_wide = sum((a[1] < b[1]) == (a[2] < b[2]) for a, b in wide)
        best = min(runs, key=lambda r: r[1])
        chosen = min(runs, key=lambda r: r[2])
        t = totals.setdefault(shape, [0, 0, 0, 0, 0, 0])
        for i, x in enumerate((agree, len(pairs), agree_wide, len(wide),
                               best[0] == chosen[0], 1)):
            t[i] += x
        print(f"{'x'.join(map(str, shape))} {form} {layout}: "
              f"{agree} of {len(pairs)} pairs in the device's order, "
              f"{agree_wide} of {len(wide)} apart by more than a tenth; "
              f"fastest {tile_text(best[0])}, the model's "
              f"{tile_text(chosen[0])} (at {best[1] / chosen[1]:.3f} of its speed)")
    all_ = [sum(t[i] for t in totals.values()) for i in range(6)]
    for shape, t in sorted(totals.items()):
        print(f"{'x'.join(map(str, shape))}: {t[0]} of {t[1]} pairs, "
              f"{t[2]} of {t[3]} apart by more than a tenth; "
              f"the model's fastest is the device's in {t[4]} of {t[5]}")
    print(f"all: {all_[0]} of {all_[1]} pairs, {all_[2]} of {all_[3]} apart by "
          f"more than a tenth; the model's fastest is the device's in "
          f"{all_[4]} of {all_[5]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("stage")
    s.add_argument("dir")
    s.add_argument("--target", default="nvidia-h200")
    s.add_argument("--target-fields", default="",
                   help="more fields of the target, ', key = value, ...' "
                   "(e.g. ', gemm_variants = [[8, 0]]')")
    s.add_argument("--shapes", default="512x2048x2048,2048x2048x2048")
    s.add_argument("--tiles", default="",
                   help="tiles to stage, 'G,B,K[,R[,S[,T]]];...' (default: the candidate grid)")
    s.add_argument("--store-after-k", default="",
                   help="store_after_k values each tile is staged with: numbers, "
                   "half, quarter (default: the tile's own, 0 unless given)")
    s.add_argument("--forms", default=",".join(FORMS))
    s.add_argument("--layouts", default=",".join(LAYOUTS))
    s.add_argument("--fbl-opt", default="build/bin/fbl-opt")
    s.add_argument("--fbl-translate", default="build/bin/fbl-translate")
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("--fbl-run", default="build/bin/fbl-run")
    r.add_argument("--device", default="")
    r.add_argument("--iterations", type=int, default=20)
    r.add_argument("--build-options", default="",
                   help="extra OpenCL build options (FBL_OPENCL_BUILD_OPTIONS), "
                   "given with '=' as they start with '-' "
                   "(--build-options='-cl-nv-verbose -cl-nv-maxrregcount=128'); "
                   "the build log of each bundle goes to DIR/NAME.buildlog, "
                   "the driver's binary to DIR/NAME.cache")
    r.add_argument("--results", default="", help="where to write results.json "
                   "(default DIR/results.json)")
    c = sub.add_parser("classes")
    c.add_argument("results", nargs="+")
    mo = sub.add_parser("model")
    mo.add_argument("results", nargs="+")
    mo.add_argument("--tiles", default="",
                    help="only these tiles, 'G,B,K[,R[,S[,T[,BN]]]];...'")
    mo.add_argument("--target", default="nvidia-h200")
    mo.add_argument("--fbl-opt", default="build/bin/fbl-opt")
    mo.set_defaults(target_fields="")  # lower()'s: the measured tile alone
    args = ap.parse_args()
    {"stage": stage, "run": run, "classes": classes,
     "model": model}[args.command](args)


if __name__ == "__main__":
    main()
