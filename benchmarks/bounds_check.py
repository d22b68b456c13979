#!/usr/bin/env python3
"""A copy of a bundle whose kernels check their own accesses.

  bounds_check.py BUNDLE OUT

OUT gets BUNDLE's manifest and a kernels.cl in which every access that a
driver may fault on, rather than clamp, goes through a check first: each
element of a `__global` buffer argument (against the smallest memory any
launch of the function passes there, from the manifest), each element of a
`__local` array (against its declared size), each image read through
`fbl_sampler` (CLK_ADDRESS_NONE: out of range is undefined) and each image
write (against the image's size, layers too). A check that fails prints

  FBL OOB <what> kernel#K ...

(K indexes OUT/kernel-names.txt, one function a line, in kernels.cl's
order) and skips the access. `fbl-run OUT --random-inputs 1 --iterations 1`
on the device then names the kernel behind a faulted queue (OpenCL error
-36 on NVIDIA's driver); it runs on PoCL too. f32 images only
(read_imagef/write_imagef). The image checks sit in the kernels
themselves, not in helper functions.
"""
import json
import os
import re
import shutil
import sys

ELEMENT_BYTES = {"f32": 4, "f16": 2, "i64": 8, "i32": 4, "i1": 1}

CHECKS = r"""
static inline int fbl_chk(int i, int n, int k) {
  if ((uint)i >= (uint)n) {
    printf("FBL OOB element kernel#%d index %d of %d\n", k, i, n);
    return 0;
  }
  return i;
}
"""


def buffer_sizes(manifest):
    """Function -> argument position -> elements of the smallest buffer
    any of its launches passes there."""
    memory = {m["id"]: m for m in manifest["memory"]}
    sizes = {}
    for launch in manifest["kernels"]:
        function = launch.get("function", launch["name"])
        for i, arg in enumerate(launch["args"]):
            m = memory.get(arg.get("memory"))
            if m and m["storage"] == "buffer":
                n = m["bytes"] // ELEMENT_BYTES.get(m["dtype"], 4)
                at = sizes.setdefault(function, {})
                at[i] = min(at.get(i, n), n)
    return sizes


def image_check(image, vector, coords, k, access, what):
    """`access` of `image` at `coords` (an int2, or an int4 whose z is the
    layer) where they lie inside it, else a printed line instead."""
    queries = [f"get_image_width({image})", f"get_image_height({image})"]
    if vector == "int4":
        queries.append(f"(int)get_image_array_size({image})")
    axes = [f"fbl_c.{a}" for a in "xyz"[:len(queries)]]
    inside = " && ".join(f"(uint){a} < (uint){q}" for a, q in zip(axes, queries))
    coord = ", ".join(["%d"] * len(axes))
    shape = "x".join(["%d"] * len(axes))
    return (f"{{ {vector} fbl_c = ({vector}){coords}; if ({inside}) {{ {access} }} "
            f"else printf(\"FBL OOB {what} kernel#%d ({coord}) of {shape}\\n\", "
            f"{k}, {', '.join(axes)}, {', '.join(queries)}); }}")


def checked(body, k, limits):
    """`body` (one kernel function) with its accesses checked."""
    head = body.index("{")
    out = []
    for line in body[head:].split("\n"):
        if limits and "__local " not in line:  # not the declarations
            line = re.sub(r"\b(" + "|".join(map(re.escape, limits)) + r")\[([^\[\]]+)\]",
                          lambda m: f"{m.group(1)}[fbl_chk({m.group(2)}, "
                                    f"{limits[m.group(1)]}, {k})]", line)
        line = re.sub(r"write_imagef\((\w+), \((int[24])\)(\([^;]*\)), (\w+)\);",
                      lambda m: image_check(m.group(1), m.group(2), m.group(3), k,
                                            f"write_imagef({m.group(1)}, fbl_c, {m.group(4)});",
                                            "write"), line)
        line = re.sub(r"float4 (\w+) = read_imagef\((\w+), fbl_sampler, \((int[24])\)(\([^;]*\))\);",
                      lambda m: f"float4 {m.group(1)} = (float4)(0.0f); " + image_check(
                          m.group(2), m.group(3), m.group(4), k,
                          f"{m.group(1)} = read_imagef({m.group(2)}, fbl_sampler, fbl_c);",
                          "read"), line)
        out.append(line)
    return body[:head] + "\n".join(out)


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    bundle, out = argv[1], argv[2]
    with open(os.path.join(bundle, "manifest.json")) as f:
        manifest = json.load(f)
    with open(os.path.join(bundle, "kernels.cl")) as f:
        src = f.read()
    sizes = buffer_sizes(manifest)
    starts = [m.start() for m in re.finditer(r"^__kernel void \w+\(", src, re.M)]
    if not starts:
        sys.exit(f"bounds_check.py: no kernel in {bundle}/kernels.cl")
    names, pieces = [], []
    for k, start in enumerate(starts):
        body = src[start:starts[k + 1] if k + 1 < len(starts) else len(src)]
        name = re.match(r"__kernel void (\w+)\(", body).group(1)
        params = body[body.index("(") + 1:body.index(")")].split(",")
        args = [p.strip().split()[-1].lstrip("*") for p in params]
        limits = {v: int(n) for v, n in re.findall(r"__local \w+ (v\d+)\[(\d+)\]", body)}
        limits.update({args[i]: n for i, n in sizes.get(name, {}).items()})
        names.append(name)
        pieces.append(checked(body, k, limits))
    os.makedirs(out, exist_ok=True)
    # The checks end the preamble (after fbl_sampler, before the first
    # kernel's constant tables), which libfbl_runtime copies into each part
    # of a kernels.cl it builds in parts.
    first = re.search(r"^(__kernel |__constant (?!sampler_t))", src, re.M).start()
    with open(os.path.join(out, "kernels.cl"), "w") as f:
        f.write(src[:first] + CHECKS.lstrip() + "\n" + src[first:starts[0]] +
                "".join(pieces))
    with open(os.path.join(out, "kernel-names.txt"), "w") as f:
        f.write("\n".join(names) + "\n")
    shutil.copy(os.path.join(bundle, "manifest.json"), os.path.join(out, "manifest.json"))
    print(f"{len(names)} kernels checked in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
