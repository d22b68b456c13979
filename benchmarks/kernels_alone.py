#!/usr/bin/env python3
"""A copy of a step's bundle that launches only some of its kernels.

  kernels_alone.py BUNDLE OUT NAME...

OUT gets BUNDLE's kernels.cl and a manifest whose `kernels` are only the
launches NAMEd (in the step's order; a name is a launch's `name` in the
manifest, e.g. k1077_gemm_local): `fbl-run OUT --random-inputs 1` then
times those launches alone, on the same source, layouts and grid as in the
step, so a launch's rate in the step's profile can be told apart from its
rate on a quiet device. The step's memory and tensors stay as they are
(intermediate images hold whatever the device left there: the times, not
the values, are what such a run is for).
"""
import json
import os
import shutil
import sys


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    bundle, out, names = argv[1], argv[2], argv[3:]
    with open(os.path.join(bundle, "manifest.json")) as f:
        manifest = json.load(f)
    launches = {k["name"] for k in manifest["kernels"]}
    missing = [n for n in names if n not in launches]
    if missing:
        sys.exit(f"kernels_alone.py: no launch {', '.join(missing)} in {bundle}")
    manifest["kernels"] = [k for k in manifest["kernels"] if k["name"] in names]
    os.makedirs(out, exist_ok=True)
    shutil.copyfile(os.path.join(bundle, "kernels.cl"),
                    os.path.join(out, "kernels.cl"))
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f)


if __name__ == "__main__":
    main(sys.argv)
