"""Copies a bundle and corrupts its manifest.json in one named way.

usage: corrupt_manifest.py GOOD_BUNDLE OUT_BUNDLE MODE
"""

import json
import os
import shutil
import sys

good, out, mode = sys.argv[1:4]
if os.path.exists(out):
    shutil.rmtree(out)
shutil.copytree(good, out)
path = os.path.join(out, "manifest.json")
with open(path) as f:
    m = json.load(f)


def tensor_in(kind):
    """The first tensor whose memory object is of storage `kind`."""
    for i, t in enumerate(m["tensors"]):
        if (m["memory"][t["memory"]]["storage"] == "buffer") == (kind == "buffer"):
            return i, t
    sys.exit("no tensor in a " + kind)


k0 = m["kernels"][0]
if mode == "variants-not-list":
    k0["variants"] = "k0_fill"
elif mode == "variant-not-string":
    k0["variants"] = [7]
elif mode == "variant-twice":
    k0["variants"] = k0.get("variants", []) + [k0.get("function", k0["name"])]
elif mode == "variant-missing":
    k0["variants"] = ["k0_no_such_function"]
elif mode == "variant-slower":
    k0["function"], k0["variants"] = "k0_fill", ["k0_fill_slow"]
elif mode == "variant-args":
    k0["variants"] = ["k0_fill_args"]
elif mode == "negative-dim":
    m["tensors"][0]["shape"][0] = -1
elif mode == "zero-dim":
    m["tensors"][0]["shape"][-1] = 0
elif mode == "huge-dim":
    m["tensors"][0]["shape"][0] = 1 << 62
elif mode == "small-buffer":
    _, t = tensor_in("buffer")
    m["memory"][t["memory"]]["bytes"] = 4
elif mode == "small-image":
    _, t = tensor_in("image")
    m["memory"][t["memory"]]["width"] = 1
elif mode == "negative-bytes":
    m["memory"][0]["bytes"] = -8
elif mode == "bad-tensor-memory":
    m["tensors"][0]["memory"] = 999
elif mode == "bad-output-tensor":
    m["outputs"][0]["tensor"] = 999
elif mode == "bad-kernel-arg":
    k0["args"][0]["memory"] = -1
elif mode == "huge-grid":
    k0["grid"] = [1 << 40, 1, 1]
    k0["workgroup"] = [1, 1, 1]
elif mode == "many-items":
    k0["grid"] = [1 << 30, 1 << 30, 1]
    k0["workgroup"] = [1, 1, 1]
elif mode == "zero-workgroup":
    k0["workgroup"] = [0, 1, 1]
elif mode == "huge-workgroup":
    k0["grid"] = [1 << 20, 1 << 10, 1]
    k0["workgroup"] = [1 << 20, 1 << 10, 1]
elif mode == "wrong-kind":
    # Point the first argument at a memory object of the other kind.
    arg = k0["args"][0]
    is_buffer = m["memory"][arg["memory"]]["storage"] == "buffer"
    for i, mem in enumerate(m["memory"]):
        if (mem["storage"] == "buffer") != is_buffer:
            arg["memory"] = i
            break
    else:
        sys.exit("no memory object of the other kind")
elif mode == "extra-arg":
    k0["args"].append(dict(k0["args"][0]))
elif mode == "many-write-images":
    # More write images than any device lets one kernel take (PoCL 128,
    # rusticl 64, NVIDIA 32): an image argument written 200 more times.
    image = next(a for a in k0["args"]
                 if m["memory"][a["memory"]]["storage"] != "buffer")
    k0["args"] += [dict(image, access="write") for _ in range(200)]
elif mode == "duplicate-name":
    m["inputs"][1]["name"] = m["inputs"][0]["name"]
elif mode == "bad-init":
    m["inputs"][0]["init"] = "normal:-0.5"
elif mode == "fractional-packed":
    _, t = tensor_in("image")
    t["layout"]["packed"] = 1e11
elif mode == "wide-factor-dim":
    # 2^32 + 0: would read as dim 0 once narrowed to 32 bits.
    _, t = tensor_in("image")
    t["layout"]["x"][0][0] += 1 << 32
elif mode == "unsigned-width":
    m["memory"][0]["width"] = (1 << 64) - 1
else:
    sys.exit("unknown mode " + mode)
with open(path, "w") as f:
    json.dump(m, f, indent=1)
