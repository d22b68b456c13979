#!/usr/bin/env python3
"""Per-shape GEMM rates of a training step from its profile.

  gemm_profile.py BUNDLE PROFILE.txt

BUNDLE is the step's bundle folder (manifest.json, kernels.cl), PROFILE the
output of `fbl-run BUNDLE --profile` for it. A GEMM kernel's M and N come
from its grid in the manifest (each work-item covers item_blocks x
item_blocks 4x4 blocks of C: the accumulators its kernel declares before
the k loop say how many), K from the bound of its k loop in kernels.cl;
kernels of one shape are summed. Prints, by time spent: kind, batch, M, N,
K, launches, ms, TFLOP/s.
"""
import json
import re
import sys

LOOP = re.compile(r"for \(int (v\d+) = v\d+; \1 < (v\d+|\d+); \1 \+= (v\d+|\d+)\)")
BLOCKS_OF_ACCUMULATORS = {16: 1, 64: 2, 256: 4}


def kernel_times(path):
    times = {}
    for line in open(path):
        p = line.split()
        if len(p) == 2 and p[0].startswith("k"):
            try:
                times[p[0]] = float(p[1])
            except ValueError:
                pass
    return times


def constant(body, name):
    """The value of `name` (a literal or an `int vN = literal;`) in `body`."""
    if name.isdigit():
        return int(name)
    m = re.search(r"int " + name + r" = (\d+);", body)
    return int(m.group(1)) if m else None


def gemm_shape(kernel, src):
    """(batch, M, N, K) of a GEMM dispatch, or None where the source does
    not say."""
    fn = kernel.get("function") or kernel["name"]
    start = src.index("void " + fn + "(")
    end = src.find("__kernel", start + 10)
    body = src[start:end if end > 0 else len(src)]
    loop = LOOP.search(body)
    if not loop:
        return None
    bound, step = constant(body, loop.group(2)), constant(body, loop.group(3))
    if "_gemm_local" in kernel["name"]:
        accumulators = len(re.findall(r"float v\d+ = v\d+;\n", body.split("for (")[0]))
        blocks = BLOCKS_OF_ACCUMULATORS.get(accumulators)
        if not blocks or bound is None or step is None:
            return None
        per_item, k = 4 * blocks, bound + step  # the last slice runs after the loop
    else:
        per_item, k = 4, bound
    grid = kernel["grid"]
    return grid[2], grid[1] * per_item, grid[0] * per_item, k


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    bundle, profile = sys.argv[1], sys.argv[2]
    manifest = json.load(open(bundle + "/manifest.json"))
    src = open(bundle + "/kernels.cl").read()
    times = kernel_times(profile)
    by_shape = {}
    for kernel in manifest["kernels"]:
        if "_gemm" not in kernel["name"]:
            continue
        shape = gemm_shape(kernel, src)
        if shape is None:
            continue
        kind = kernel["name"].split("_", 1)[1]
        entry = by_shape.setdefault((kind, *shape), [0, 0.0])
        entry[0] += 1
        entry[1] += times.get(kernel["name"], 0.0)
    print(f'{"kind":12} {"B":>4} {"M":>6} {"N":>6} {"K":>6} {"n":>4} {"ms":>8} {"TFLOP/s":>8}')
    total_ms = total_flop = 0.0
    for (kind, b, m, n, k), (count, ms) in sorted(by_shape.items(), key=lambda kv: -kv[1][1]):
        flop = 2.0 * b * m * n * k * count
        total_ms += ms
        total_flop += flop
        rate = flop / ms / 1e9 if ms else 0.0
        print(f"{kind:12} {b:4} {m:6} {n:6} {k:6} {count:4} {ms:8.2f} {rate:8.2f}")
    print(f"all GEMMs: {total_ms:.2f} ms, {total_flop / 1e12:.3f} TFLOP, "
          f"{total_flop / total_ms / 1e9 if total_ms else 0:.2f} TFLOP/s")


if __name__ == "__main__":
    main()
