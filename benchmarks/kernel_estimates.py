#!/usr/bin/env python3
"""Writes the cost model's estimate of every kernel of a compiled step (the
`fbl.estimate` fbl-lower-to-kernels puts on each fbl.dispatch) with its grid
and work-group, as JSON {kernel: {fetches, misses, writes, multiplies,
item_accesses, time_ns, grid, workgroup}}.

  kernel_estimates.py STEP.mlir OUT.json
"""
import json
import re
import struct
import sys

DISPATCH = re.compile(
    r"fbl\.dispatch @(\w+) .*?grid \[([^\]]*)\] workgroup \[([^\]]*)\] "
    r"attributes \{fbl\.estimate = \{([^}]*)\}\}")
FIELD = re.compile(r"(\w+) = (0x[0-9A-Fa-f]+|[-+0-9.eE]+) : (i64|f64)")


def value(text, kind):
    """An MLIR integer or float literal (floats may print as hex bits)."""
    if kind == "i64":
        return int(text)
    if text.startswith("0x"):
        return struct.unpack("<d", struct.pack("<Q", int(text, 16)))[0]
    return float(text)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    out = {}
    with open(sys.argv[1]) as f:
        for line in f:
            m = DISPATCH.search(line)
            if not m:
                continue
            name, grid, wg, fields = m.groups()
            e = {k: value(v, t) for k, v, t in FIELD.findall(fields)}
            e["grid"] = [int(x) for x in grid.split(",")]
            e["workgroup"] = [int(x) for x in wg.split(",")]
            out[name] = e
    if not out:
        sys.exit(f"no fbl.dispatch with fbl.estimate in {sys.argv[1]}")
    with open(sys.argv[2], "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
