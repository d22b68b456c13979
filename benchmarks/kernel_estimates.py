#!/usr/bin/env python3
"""Writes the cost model's estimate of every kernel of a compiled step (the
`fbl.estimate` fbl-lower-to-kernels puts on each fbl.dispatch) with its grid
and work-group, as JSON {kernel: {fetches, misses, writes, time_ns, grid,
workgroup}}.

  kernel_estimates.py STEP.mlir OUT.json
"""
import json
import re
import sys

DISPATCH = re.compile(
    r"fbl\.dispatch @(\w+) .*?grid \[([^\]]*)\] workgroup \[([^\]]*)\] "
    r"attributes \{fbl\.estimate = \{fetches = (\d+) : i64, misses = (\d+) : i64, "
    r"time_ns = ([-+0-9.eE]+) : f64, writes = (\d+) : i64\}\}")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    out = {}
    with open(sys.argv[1]) as f:
        for line in f:
            m = DISPATCH.search(line)
            if m:
                name, grid, wg, fetches, misses, time_ns, writes = m.groups()
                out[name] = {"fetches": int(fetches), "misses": int(misses),
                             "writes": int(writes), "time_ns": float(time_ns),
                             "grid": [int(x) for x in grid.split(",")],
                             "workgroup": [int(x) for x in wg.split(",")]}
    if not out:
        sys.exit(f"no fbl.dispatch with fbl.estimate in {sys.argv[1]}")
    with open(sys.argv[2], "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
