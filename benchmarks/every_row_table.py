#!/usr/bin/env python3
"""Issue 12's table from benchmarks/every_row_device_run.sh logs: every
training step under fbl (f32 and f16 images) and PyTorch eager fp32 with
their ratios, and the GEMM rates against the targets (42 TFLOP/s at 2048^3,
30 at 512x2048x2048, every form and layout) beside CLBlast and cuBLAS.

  every_row_table.py [--svg OUT.svg] every-row.log [more.log ...]

Several logs (the rows of one stage run in more than one device call) read
as one, in the order given: a step named again (a call that reached its
time limit inside it, the next call measuring it) is one row, whose
numbers are the first each log gave. With --svg it also draws the rows: PyTorch's
step time over fbl's, f32 and f16 images, on a log axis (right of 1: fbl
is faster).
"""
import argparse
import itertools
import re

from plot_vs_torch import draw

TARGETS = {"2048x2048x2048": 42.0, "512x2048x2048": 30.0}


def parse(lines):
    """Rows, GEMM rates, CLBlast's and cuBLAS's rates, and the hosts the
    logs name ("host: CPU, N cores"; PyTorch eager issues every kernel from
    Python, so its launch-bound steps depend on the host as much as on the
    GPU)."""
    rows, gemms, others, hosts = {}, [], [], []
    row = None
    for line in lines:
        line = line.rstrip("\n")
        m = re.match(r"host: (.+)", line)
        if m:
            if m.group(1) not in hosts:
                hosts.append(m.group(1))
            continue
        # "-- NAME" (speed_device_run.sh's steps), "-- model NAME MODE ...".
        m = re.match(r"-- (?:model |step )?(\S+)(?: (lora|full))?", line)
        if m:
            name = m.group(1) + (f" {m.group(2)}" if m.group(2) else "")
            row = rows.setdefault(
                name, {"name": name, "f32": None, "f16": None, "torch": None})
            continue
        m = re.match(r"(\w\w)-(channel_packed|rtile)-(\d+x\d+x\d+)-t\S+: "
                     r"[\d.]+ ms, ([\d.]+) TFLOP/s(?: \(\S+_(v\d+)_*\))?$", line)
        if m:
            gemms.append((m.group(3), m.group(1), m.group(2), float(m.group(4)),
                          m.group(5) or ""))
            continue
        m = re.match(r"(clblast \w+ \d+x\d+x\d+).*median [\d.]+ ms, ([\d.]+) TFLOP/s", line)
        m = m or re.match(r"(torch gemm \d+x\d+x\d+): median [\d.]+ ms, ([\d.]+) TFLOP/s", line)
        if m:
            others.append((m.group(1), float(m.group(2))))
            continue
        if row is None:
            continue
        m = re.match(r"\S+: median step time ([\d.]+) ms(, over)?", line)
        if m:
            key = "f16" if m.group(2) else "f32"
        else:
            m = re.match(r"torch.*median step(?: time)? ([\d.]+) ms", line)
            key = "torch"
        if m and row[key] is None:
            row[key] = float(m.group(1))
    return list(rows.values()), gemms, others, hosts


def main():
    parser = argparse.ArgumentParser(
        usage="every_row_table.py [--svg OUT.svg] every-row.log [more.log ...]")
    parser.add_argument("--svg")
    parser.add_argument("logs", nargs="+")
    args = parser.parse_args()
    rows, gemms, others, hosts = parse(itertools.chain.from_iterable(
        open(path) for path in args.logs))
    if args.svg:
        draw(rows, args.svg, "Every row: fbl against PyTorch eager (fp32, TF32 off)", args.logs)
    fmt = lambda v: f"{v:.3f} ms" if v is not None else "—"
    print("| training step | fbl f32 | fbl f16 images | PyTorch eager fp32 | fbl f32 vs PyTorch | f16/f32 |")
    print("| --- | --- | --- | --- | --- | --- |")
    faster = 0
    for r in rows:
        f32, f16, t = r["f32"], r["f16"], r["torch"]
        if f32 and t:
            ratio = t / f32
            faster += ratio > 1
            vs = f"{ratio:.2f}x faster" if ratio >= 1 else f"{1 / ratio:.2f}x **slower**"
        else:
            vs = "—"
        half = f"{f16 / f32:.3f}" if f32 and f16 else "—"
        print(f"| {r['name']} | {fmt(f32)} | {fmt(f16)} | {fmt(t)} | {vs} | {half} |")
    print(f"\nfbl f32 faster than PyTorch on {faster} of {len(rows)} rows.")
    for host in hosts:
        print(f"host: {host}")
    if len(hosts) > 1:
        print(f"warning: the rows come from {len(hosts)} hosts; PyTorch's "
              "launch-bound steps are not comparable between them")
    if gemms:
        cols = [(f, l) for f in ("nn", "nt", "tn") for l in ("channel_packed", "rtile")]
        print("\n| GEMM, TFLOP/s | target | "
              + " | ".join(f"{f.upper()} {'CP' if l == 'channel_packed' else 'RT'}" for f, l in cols)
              + " | met |")
        print("| --- " * (3 + len(cols)) + "|")
        for shape in sorted({g[0] for g in gemms}, key=lambda s: int(s.split("x")[0])):
            rate = {(f, l): r for s, f, l, r, _ in gemms if s == shape}
            variant = {(f, l): v for s, f, l, _, v in gemms if s == shape}
            target = TARGETS.get(shape, 0)
            cells = [f"{rate[c]:.1f}" + (f" {variant[c]}" if variant[c] else "")
                     if c in rate else "—" for c in cols]
            met = sum(rate[c] >= target for c in cols if c in rate)
            print(f"| {shape} | {target:g} | " + " | ".join(cells) + f" | {met} of {len(rate)} |")
    if any(g[4] for g in gemms):
        print("\nvN: the runtime measured the GEMM's variant N fastest and ran it "
              "(the target's gemm_variants, in order, less those equal to the "
              "tile's own body).")
    for name, rate in others:
        print(f"{name}: {rate:.2f} TFLOP/s")


if __name__ == "__main__":
    main()
