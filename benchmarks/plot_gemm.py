#!/usr/bin/env python3
"""Draws the GEMM results of a device log as an SVG bar chart.

  plot_gemm.py DEVICE.log OUT.svg

Reads the 'fbl FORM-LAYOUT-KERNEL-MxNxK: median T ms, X TFLOP/s; ...' and
'clblast FORM MxNxK on DEV: median T ms, X TFLOP/s; ...' lines
benchmarks/device_run.sh prints and draws the wall-time TFLOP/s (the first
figure of each line: the same measure for both) per shape and form: fbl's
register-tiled and local-memory tiled kernels on both layouts, CLBlast.
"""
import re
import sys


def main():
    log, out = sys.argv[1], sys.argv[2]
    data = {}
    for line in open(log):
        m = re.match(r"fbl (\w+)-(\w+)-(\w+)-(\d+x\d+x\d+): median [\d.]+ ms, ([\d.]+) TFLOP/s", line)
        if m:
            data[(m.group(4), m.group(1), m.group(2) + "-" + m.group(3))] = float(m.group(5))
        m = re.match(r"clblast (\w+) (\d+x\d+x\d+) on .*?: median [\d.]+ ms, ([\d.]+) TFLOP/s", line)
        if m:
            data[(m.group(2), m.group(1), "clblast")] = float(m.group(3))
    shapes = sorted({k[0] for k in data}, key=lambda s: int(s.split("x")[0]))
    forms = ["nn", "nt", "tn"]
    series = [("channel_packed-register", "fbl CP, register", "#9ecae9"),
              ("rtile-register", "fbl R-Tile, register", "#ffbf79"),
              ("channel_packed-local", "fbl CP, local", "#4c78a8"),
              ("rtile-local", "fbl R-Tile, local", "#f58518"),
              ("clblast", "CLBlast (buffers)", "#54a24b")]
    top = max(data.values()) * 1.15
    bar, gap, group_gap = 22, 4, 30
    group_w = len(series) * (bar + gap)
    width = 80 + len(shapes) * len(forms) * (group_w + group_gap) + 40
    height = 360
    plot_h = 240
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif">',
           '<rect width="100%" height="100%" fill="white"/>',
           f'<text x="10" y="20" font-size="14">fp32 GEMM on the H200 (OpenCL), TFLOP/s — {log.split("/")[-1]}</text>']
    y0 = 40 + plot_h
    for t in range(0, int(top) + 1, 5):
        y = y0 - t / top * plot_h
        svg.append(f'<line x1="60" x2="{width - 20}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
        svg.append(f'<text x="30" y="{y + 4:.1f}" font-size="10">{t}</text>')
    x = 70
    for shape in shapes:
        for form in forms:
            for key, _, color in series:
                v = data.get((shape, form, key))
                if v is not None:
                    h = v / top * plot_h
                    svg.append(f'<rect x="{x}" y="{y0 - h:.1f}" width="{bar}" height="{h:.1f}" fill="{color}"/>')
                    svg.append(f'<text x="{x + bar / 2}" y="{y0 - h - 3:.1f}" font-size="9" text-anchor="middle">{v:.1f}</text>')
                x += bar + gap
            svg.append(f'<text x="{x - group_w / 2}" y="{y0 + 16}" font-size="11" text-anchor="middle">{form.upper()}</text>')
            svg.append(f'<text x="{x - group_w / 2}" y="{y0 + 30}" font-size="9" text-anchor="middle">{shape}</text>')
            x += group_gap
    lx = 70
    for _, label, color in series:
        svg.append(f'<rect x="{lx}" y="{height - 22}" width="12" height="12" fill="{color}"/>')
        svg.append(f'<text x="{lx + 16}" y="{height - 12}" font-size="11">{label}</text>')
        lx += 150
    svg.append("</svg>")
    open(out, "w").write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
