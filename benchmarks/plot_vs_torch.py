#!/usr/bin/env python3
"""Draws fbl's training steps against PyTorch eager from device logs as an
SVG bar chart: PyTorch's step time over fbl's (above 1: fbl is faster), one
bar per step, on a log scale. `draw` is the chart every benchmark table of
fbl against PyTorch draws (every_row_table.py --svg too).

  plot_vs_torch.py OUT.svg DEVICE.log...

Reads each PyTorch line ('torch: ... median step T ms' of
benchmarks/llm_step_torch.py, 'torch NAME ...: median step time T ms' of
benchmarks/step_torch.py) and pairs it with the fbl median printed last
before it ('median step time: T ms' of fbl-run; of fbl-run --compare,
'NAME-f32: median step time T ms' or the compared bundle B's
'/tmp/b/bundle: median step time T ms') and the step named last before it (a line
'== NAME MODE: ...' or '-- NAME' of the device scripts).
"""
import math
import re
import sys

HEADER = re.compile(r"^(?:==|--) ([\w.\-]+(?: (?:lora|full))?)(?::|$)")
FBL = [re.compile(r"^median step time: ([\d.]+) ms"),
       re.compile(r"-f32: median step time ([\d.]+) ms"),
       re.compile(r"^/tmp/b/bundle: median step time ([\d.]+) ms")]
TORCH = [re.compile(r"^torch: .*median step ([\d.]+) ms"),
         re.compile(r"^torch \w.*: median step time ([\d.]+) ms")]


def steps(path):
    """(name, fbl ms, PyTorch ms) for each PyTorch line of the log."""
    name, fbl = None, None
    for line in open(path):
        line = line.rstrip("\n")
        m = HEADER.match(line)
        if m and m.group(1) not in ("PyTorch", "B", "e2e"):
            name, fbl = m.group(1).replace(" ", "-"), None
        for f in FBL:
            if f.search(line):
                fbl = float(f.search(line).group(1))
        for t in TORCH:
            if t.match(line) and name and fbl:
                yield name, fbl, float(t.match(line).group(1))


def draw(rows, path, title, sources):
    """rows ({"name", "f32", "f16", "torch"}: ms, f16 None where not run)
    as PyTorch / fbl ratios, horizontal bars in the order given, f32 and
    f16 images side by side, on a log2 axis with 1 marked."""
    import matplotlib
    matplotlib.use("svg")
    import matplotlib.pyplot as plt
    # Byte-identical output for identical logs (the ids are random else).
    plt.rcParams["svg.hashsalt"] = "fbl-vs-pytorch"
    # Text stays text: smaller, and searchable.
    plt.rcParams["svg.fonttype"] = "none"
    shown = [r for r in rows if r["f32"] and r["torch"]]
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(shown) + 1.4))
    height = 0.38
    for i, r in enumerate(shown):
        # Blue where fbl is faster, red where slower; f16 the lighter shade.
        for j, (dtype, faster, slower) in enumerate((("f32", "#4c78a8", "#e45756"),
                                                     ("f16", "#9ecae9", "#f4a6a5"))):
            if not r.get(dtype):
                continue
            ratio = r["torch"] / r[dtype]
            y = i + (j - 0.5) * height
            ax.barh(y, math.log2(ratio), height, color=faster if ratio >= 1 else slower,
                    label=f"fbl {dtype}" + (" images" if dtype == "f16" else "") if i == 0 else None)
            ax.text(max(math.log2(ratio), 0) + 0.03, y, f"{ratio:.2f}x", va="center", fontsize=7)
    ax.set_yticks(range(len(shown)))
    ax.set_yticklabels([f"{r['name']} ({r['f32']:.3g} / {r['torch']:.3g} ms)" for r in shown],
                       fontsize=8)
    ax.invert_yaxis()
    ax.axvline(0, color="black", linewidth=0.8)
    # Whole powers of two, 1x included.
    left, right = ax.get_xlim()
    lo, hi = math.floor(min(left, 0.0)), math.ceil(max(right, 0.0))
    ax.set_xticks(range(lo, hi + 1))
    ax.set_xticklabels([f"{2.0 ** e:g}x" for e in range(lo, hi + 1)], fontsize=8)
    ax.set_xlabel("PyTorch eager fp32 step time / fbl step time (right of 1: fbl is faster)",
                  fontsize=8)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    fig.text(0.01, 0.005, "from " + ", ".join(p.split("/")[-1] for p in sources), fontsize=6)
    fig.tight_layout()
    fig.savefig(path, metadata={"Date": None})


def main():
    out, logs = sys.argv[1], sys.argv[2:]
    rows = {}
    for log in logs:
        for name, fbl, torch in steps(log):
            rows[name] = {"name": name, "f32": fbl, "f16": None, "torch": torch}
    ordered = sorted(rows.values(), key=lambda r: r["torch"] / r["f32"])
    draw(ordered, out, "fbl against PyTorch eager, every step (fp32, H200)", logs)
    for r in ordered:
        print(f"{r['name']}: fbl {r['f32']} ms, PyTorch {r['torch']} ms, "
              f"{r['torch'] / r['f32']:.2f}x")


if __name__ == "__main__":
    main()
