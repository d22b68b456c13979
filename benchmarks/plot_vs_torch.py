#!/usr/bin/env python3
"""Draws fbl's training steps against PyTorch eager from device logs as an
SVG bar chart: PyTorch's step time over fbl's (above 1: fbl is faster), one
bar per step, on a log scale.

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


def main():
    out, logs = sys.argv[1], sys.argv[2:]
    rows = {}
    for log in logs:
        for name, fbl, torch in steps(log):
            rows[name] = (fbl, torch)
    names = sorted(rows, key=lambda n: rows[n][1] / rows[n][0])
    ratio = {n: rows[n][1] / rows[n][0] for n in names}
    # A log2 axis from the smallest to the largest ratio, 1 included.
    lo = math.floor(math.log2(min(min(ratio.values()), 1.0)))
    hi = math.ceil(math.log2(max(max(ratio.values()), 1.0)))
    left, plot_w, row_h, top = 330, 420, 20, 40
    width, height = left + plot_w + 70, top + row_h * len(names) + 50
    x_of = lambda r: left + (math.log2(r) - lo) / (hi - lo) * plot_w
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
           f'height="{height}" font-family="sans-serif">',
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="20" font-size="14">PyTorch eager step time / '
           'fbl step time (fp32, H200): right of 1, fbl is faster</text>']
    bottom = top + row_h * len(names)
    for e in range(lo, hi + 1):
        x = x_of(2.0 ** e)
        svg.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top - 4}" '
                   f'y2="{bottom}" stroke="{"#000" if e == 0 else "#ddd"}"/>')
        svg.append(f'<text x="{x:.1f}" y="{bottom + 14}" font-size="10" '
                   f'text-anchor="middle">{2.0 ** e:g}x</text>')
    for i, n in enumerate(names):
        y = top + i * row_h
        r = ratio[n]
        x0, x1 = sorted((x_of(1.0), x_of(r)))
        color = "#4c78a8" if r >= 1 else "#e45756"
        svg.append(f'<rect x="{x0:.1f}" y="{y + 3}" width="{x1 - x0:.1f}" '
                   f'height="{row_h - 6}" fill="{color}"/>')
        svg.append(f'<text x="{left - 6}" y="{y + row_h - 6}" font-size="10" '
                   f'text-anchor="end">{n} ({rows[n][0]:.3g} / '
                   f'{rows[n][1]:.3g} ms)</text>')
        svg.append(f'<text x="{max(x1, x_of(1.0)) + 4:.1f}" '
                   f'y="{y + row_h - 6}" font-size="10">{r:.2f}x</text>')
    svg.append(f'<text x="{left}" y="{height - 10}" font-size="10">'
               f'from {", ".join(l.split("/")[-1] for l in logs)}</text>')
    svg.append("</svg>")
    open(out, "w").write("\n".join(svg) + "\n")
    for n in names:
        print(f"{n}: fbl {rows[n][0]} ms, PyTorch {rows[n][1]} ms, "
              f"{ratio[n]:.2f}x")


if __name__ == "__main__":
    main()
