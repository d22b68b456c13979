#!/usr/bin/env python3
"""Per-shape GEMM rates of a training step from its profile.

  gemm_profile.py BUNDLE [PROFILE.txt]

BUNDLE is the step's bundle folder (manifest.json, kernels.cl), PROFILE the
output of `fbl-run BUNDLE --profile` for it. Each launch's GEMMs come from
the manifest (`gemms`: batch, M, N, K and the rows and columns of C a
work-group computes, which fbl-lower-to-kernels records). A merged launch
that computes several GEMMs (and perhaps other kernels beside them) shares
its time among its GEMMs by their multiply-adds: such rows are marked
"merged", and their rates are a lower bound where the launch ran more than
GEMMs. GEMMs of one kind, shape and tile are summed. Prints, by time
spent: kind, batch, M, N, K, tile, GEMMs, ms, TFLOP/s. Without a profile,
the step's GEMMs alone, by multiply-adds (GFLOP in place of ms and rates):
what a compiler or target change did to a step's GEMMs, before timing it.

Bundles from before the manifest recorded GEMMs: a GEMM launch's M and N
come from its grid and the accumulators its kernel declares (square
work-items only), K from the bound of its k loop; GEMM launches it cannot
read are counted on a line of their own, and merged launches are not read
(their source does not say which members are GEMMs).
"""
import json
import re
import sys

LOOP = re.compile(r"for \(int (v\d+) = v\d+; \1 < (v\d+|\d+); \1 \+= (v\d+|\d+)\)")
BLOCKS_OF_ACCUMULATORS = {16: 1, 64: 2, 144: 3, 256: 4}


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


def source_gemm(kernel, src):
    """[batch, M, N, K, tile rows, tile cols] of an older bundle's GEMM
    launch, read from its source, or None where the source does not say."""
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
        if bound is None:
            return None
        per_item, k = 4, bound
    grid, group = kernel["grid"], kernel["workgroup"]
    return [grid[2], grid[1] * per_item, grid[0] * per_item, k,
            group[1] * per_item, group[0] * per_item]


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    bundle = sys.argv[1]
    profile = sys.argv[2] if len(sys.argv) == 3 else None
    manifest = json.load(open(bundle + "/manifest.json"))
    src = None
    times = kernel_times(profile) if profile else {}
    by_shape = {}
    unread = [0, 0.0]
    # A bundle from before `gemms`: its merged launches may hold GEMMs too.
    old = not any("gemms" in k for k in manifest["kernels"])
    unread_merged = [0, 0.0]
    launches = 0
    for kernel in manifest["kernels"]:
        ms = times.get(kernel["name"], 0.0)
        gemms = kernel.get("gemms")
        if old and "_merged" in kernel["name"]:
            unread_merged[0] += 1
            unread_merged[1] += ms
            continue
        if gemms is None and "_gemm" in kernel["name"]:
            src = src if src is not None else open(bundle + "/kernels.cl").read()
            gemm = source_gemm(kernel, src)
            if gemm is None:
                unread[0] += 1
                unread[1] += ms
                continue
            gemms = [gemm]
        if not gemms:
            continue
        launches += 1
        kind = "merged" if len(gemms) > 1 else kernel["name"].split("_", 1)[1]
        flops = [b * m * n * k for b, m, n, k, _, _ in gemms]
        for (b, m, n, k, rows, cols), flop in zip(gemms, flops):
            entry = by_shape.setdefault((kind, b, m, n, k, f"{rows}x{cols}"), [0, 0.0])
            entry[0] += 1
            entry[1] += ms * flop / sum(flops)
    flop_of = lambda key, count: 2.0 * key[1] * key[2] * key[3] * key[4] * count  # noqa: E731
    head = f'{"kind":12} {"B":>4} {"M":>6} {"N":>6} {"K":>6} {"tile":>8} {"n":>4}'
    if not profile:
        print(head + f' {"GFLOP":>8}')
        total_flop = 0.0
        for key, (count, _) in sorted(by_shape.items(),
                                      key=lambda kv: (-flop_of(kv[0], kv[1][0]), kv[0])):
            kind, b, m, n, k, tile = key
            total_flop += flop_of(key, count)
            print(f"{kind:12} {b:4} {m:6} {n:6} {k:6} {tile:>8} {count:4} "
                  f"{flop_of(key, count) / 1e9:8.2f}")
        print(f"all GEMMs: {sum(c for c, _ in by_shape.values())} in {launches} "
              f"launches, {total_flop / 1e9:.2f} GFLOP")
    else:
        print(head + f' {"ms":>8} {"TFLOP/s":>8}')
        total_ms = total_flop = 0.0
        for key, (count, ms) in sorted(by_shape.items(), key=lambda kv: -kv[1][1]):
            kind, b, m, n, k, tile = key
            flop = flop_of(key, count)
            total_ms += ms
            total_flop += flop
            rate = flop / ms / 1e9 if ms else 0.0
            print(f"{kind:12} {b:4} {m:6} {n:6} {k:6} {tile:>8} {count:4} {ms:8.2f} {rate:8.2f}")
        print(f"all GEMMs: {total_ms:.2f} ms, {total_flop / 1e12:.3f} TFLOP, "
              f"{total_flop / total_ms / 1e9 if total_ms else 0:.2f} TFLOP/s")
    if unread[0]:
        print(f"not read: {unread[0]} GEMM launches, {unread[1]:.2f} ms "
              "(an older bundle whose kernels the source does not say)")
    if unread_merged[0]:
        print(f"not read: {unread_merged[0]} merged launches, {unread_merged[1]:.2f} ms "
              "(an older bundle: which of them compute GEMMs it does not say)")


if __name__ == "__main__":
    main()
