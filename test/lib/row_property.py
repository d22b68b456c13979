#!/usr/bin/env python3
"""Property test of row kernels (fbl-lower-to-kernels' row groups): random
training steps over rows of odd lengths in which reductions along the row
are read back, broadcast along it, by per-row scalar ops and elementwise
ops over the same rows, compiled under a random target and layout policy,
run on the OpenCL device and compared with the upstream oracle
(e2e_check.py), gradient or SGD step.

Each case draws the rows (one or two row dims) and the row's length (1 to
2000: one texel, ragged last texels, rows longer than a work-group's 256
work-items cover in one stride), keepdim maps ((i, j) -> (i, 0)) or not,
and a chain:
  softmax   m = max(s * x), z = sum(exp(s * x - m)), y = exp(s * x - m) / z
            (maxnumf from NaN or maximumf from -inf)
  norm      mu = sum(x) / L as a per-row op, v = sum((x - mu)^2),
            r = rsqrt(v / L + eps) as a per-row op, y = (x - mu) * r * g
  reduce    a = combine(f(x)) from an initial value that is not always the
            combiner's neutral one (a sum from 0.5, a maximum from -0.5, a
            minimum from 0.75), y = x * a + tanh(x)
The loss is sum(y * t), t an input. Each case line says how many row
kernels the bundle holds (the forward chain and the backward's reductions
read back), counted before fbl-merge-dispatches.

  row_property.py --fbl-bin DIR --llvm-bin DIR [--cases N] [--seed S]

Prints one line per case and "ROW PROPERTY PASS" when every case matches
the oracle (rtol 1e-3, atol 1e-5 of each result's largest magnitude) and
every case with rows of 2 to 255 elements has a row kernel (longer ones,
where there are few, may be split in two stages by fbl-split-reductions
instead).
"""
import os
import re
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_check  # noqa: E402
from e2e_check import POLICIES, TARGETS, target_name  # noqa: E402

CHAINS = ["softmax", "norm", "reduce"]
# (name, combiner, initial value, f(x) over %v into %f)
REDUCTIONS = [
    ("sum of x^2 from 0.5", "arith.addf", "0.5", ["%f = arith.mulf %v, %v : f32"]),
    ("max of sin(x) from -0.5", "arith.maximumf", "-0.5", ["%f = math.sin %v : f32"]),
    ("min of x from 0.75", "arith.minimumf", "0.75", ["%f = arith.addf %v, %v : f32"]),
    ("sum of x from 0", "arith.addf", "0.0", ["%f = arith.mulf %v, %v : f32"]),
]


def shapes(rows, length, keep):
    """Types and maps of a case: x's, a row value's and their maps."""
    n = len(rows) + 1
    dims = ", ".join(f"d{i}" for i in range(n))
    row_dims = ", ".join(f"d{i}" for i in range(n - 1))
    x_type = f"tensor<{'x'.join(str(r) for r in rows)}x{length}xf32>"
    if keep:
        r_type = f"tensor<{'x'.join(str(r) for r in rows)}x1xf32>"
        r_map = f"affine_map<({dims}) -> ({row_dims}, 0)>"
        scalar_map = f"affine_map<({row_dims}) -> ({row_dims}, 0)>"
    else:
        r_type = f"tensor<{'x'.join(str(r) for r in rows)}xf32>"
        r_map = f"affine_map<({dims}) -> ({row_dims})>"
        scalar_map = f"affine_map<({row_dims}) -> ({row_dims})>"
    return {
        "x": x_type, "r": r_type,
        "id": f"affine_map<({dims}) -> ({dims})>",
        "row": r_map, "scalar": scalar_map,
        "col": f"affine_map<({dims}) -> (d{n - 1})>",
        "all": f"affine_map<({dims}) -> ()>",
        "par": ", ".join(['"parallel"'] * (n - 1)),
        "red": ", ".join(['"reduction"'] * n),
    }


def reduction(name, s, ins, maps, init, body, combiner):
    """A reduction along the row into a row value `name`."""
    types = ", ".join(s["x"] if m == "#id" else s["r"] for m in maps)
    args = ", ".join(f"%a{i}: f32" for i in range(len(ins)))
    return f"""  %{name}i = linalg.fill ins({init} : f32) outs(%re : {s['r']}) -> {s['r']}
  %{name} = linalg.generic {{indexing_maps = [{", ".join(maps)}, #row], iterator_types = [{s['par']}, "reduction"]}}
      ins({", ".join(ins)} : {types}) outs(%{name}i : {s['r']}) {{
  ^bb0({args}, %acc: f32):
    {chr(10).join("    " + l for l in body).strip()}
    %c = {combiner} %acc, %f : f32
    linalg.yield %c : f32
  }} -> {s['r']}"""


def per_row(name, s, ins, body):
    """A per-row scalar op over row values."""
    args = ", ".join(f"%a{i}: f32" for i in range(len(ins)))
    return f"""  %{name} = linalg.generic {{indexing_maps = [{", ".join(['#scalar'] * (len(ins) + 1))}], iterator_types = [{s['par']}]}}
      ins({", ".join(ins)} : {", ".join([s['r']] * len(ins))}) outs(%re : {s['r']}) {{
  ^bb0({args}, %o: f32):
    {chr(10).join("    " + l for l in body).strip()}
    linalg.yield %f : f32
  }} -> {s['r']}"""


def elementwise(name, s, ins, maps, body):
    """An elementwise op over the rows into `name` (x's shape)."""
    types = ", ".join({"#id": s["x"], "#row": s["r"], "#col": "%G"}[m] for m in maps)
    args = ", ".join(f"%a{i}: f32" for i in range(len(ins)))
    return f"""  %{name} = linalg.generic {{indexing_maps = [{", ".join(maps)}, #id], iterator_types = [{s['par']}, "parallel"]}}
      ins({", ".join(ins)} : {types}) outs(%xe : {s['x']}) {{
  ^bb0({args}, %o: f32):
    {chr(10).join("    " + l for l in body).strip()}
    linalg.yield %f : f32
  }} -> {s['x']}"""


def model(rng, rows, length, keep, chain):
    """The model's MLIR and the chain's description."""
    s = shapes(rows, length, keep)
    g_type = f"tensor<{length}xf32>"
    lines = []
    desc = chain
    scale = float(rng.choice([0.5, 1.0, 2.0]))
    if chain == "softmax":
        maxop, init = (("arith.maxnumf", "%nan") if rng.integers(0, 2)
                       else ("arith.maximumf", "%ninf"))
        desc += f" ({maxop.split('.')[1]})"
        lines.append(reduction("m", s, ["%x"], ["#id"], init,
                               [f"%f = arith.mulf %a0, %scale : f32"], maxop))
        exp = ["%sx = arith.mulf %a0, %scale : f32", "%d = arith.subf %sx, %a1 : f32",
               "%f0 = math.exp %d : f32"]
        lines.append(reduction("z", s, ["%x", "%m"], ["#id", "#row"], "%zero",
                               exp + ["%f = arith.addf %f0, %f0 : f32"], "arith.addf"))
        lines.append(elementwise("y", s, ["%x", "%m", "%z"], ["#id", "#row", "#row"],
                                 exp + ["%f1 = arith.addf %f0, %f0 : f32",
                                        "%f = arith.divf %f1, %a2 : f32"]))
    elif chain == "norm":
        lines.append(reduction("s1", s, ["%x"], ["#id"], "%zero",
                               ["%f = arith.addf %a0, %zero : f32"], "arith.addf"))
        lines.append(per_row("mu", s, ["%s1"], ["%f = arith.mulf %a0, %invl : f32"]))
        lines.append(reduction("v", s, ["%x", "%mu"], ["#id", "#row"], "%zero",
                               ["%d = arith.subf %a0, %a1 : f32",
                                "%f = arith.mulf %d, %d : f32"], "arith.addf"))
        lines.append(per_row("rs", s, ["%v"], ["%vl = arith.mulf %a0, %invl : f32",
                                               "%ve = arith.addf %vl, %eps : f32",
                                               "%f = math.rsqrt %ve : f32"]))
        lines.append(elementwise("y", s, ["%x", "%mu", "%rs", "%g"],
                                 ["#id", "#row", "#row", "#col"],
                                 ["%d = arith.subf %a0, %a1 : f32",
                                  "%n = arith.mulf %d, %a2 : f32",
                                  "%f = arith.mulf %n, %a3 : f32"]).replace("%G", g_type))
    else:
        name, combiner, init, body = REDUCTIONS[int(rng.integers(0, len(REDUCTIONS)))]
        desc += f" ({name})"
        lines.append(f"  %r0 = arith.constant {init} : f32")
        lines.append(reduction("ra", s, ["%x"], ["#id"], "%r0",
                               ["%v = arith.mulf %a0, %scale : f32"] + body, combiner))
        lines.append(elementwise("y", s, ["%x", "%ra"], ["#id", "#row"],
                                 ["%p = arith.mulf %a0, %a1 : f32",
                                  "%th = math.tanh %a0 : f32",
                                  "%f = arith.addf %p, %th : f32"]))
    body = "\n".join(lines)
    uses_g = chain == "norm"
    params = f"%x: {s['x']} {{fbl.param}}" + (f", %g: {g_type} {{fbl.param}}" if uses_g else "")
    text = f"""#id = {s['id']}
#row = {s['row']}
#col = {s['col']}
#scalar = {s['scalar']}
#all = {s['all']}
func.func @model({params}, %t: {s['x']}) -> tensor<f32> {{
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %scale = arith.constant {scale} : f32
  %invl = arith.constant {1.0 / length!r} : f32
  %eps = arith.constant 1.0e-5 : f32
  %xe = tensor.empty() : {s['x']}
  %re = tensor.empty() : {s['r']}
{body}
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {{indexing_maps = [#id, #id, #all], iterator_types = [{s['red']}]}}
      ins(%y, %t : {s['x']}, {s['x']}) outs(%l0 : tensor<f32>) {{
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.addf %acc, %p : f32
    linalg.yield %q : f32
  }} -> tensor<f32>
  return %loss : tensor<f32>
}}
"""
    return text, desc


def main():
    args = e2e_check.property_args()
    rng = np.random.default_rng(args.seed)
    ok = True
    tool = lambda name: os.path.join(args.fbl_bin, name)
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.cases):
            nrows = int(rng.integers(1, 3))
            length = int(rng.choice([rng.integers(1, 20), rng.integers(20, 400),
                                     rng.integers(900, 2001)]))
            budget = max(1, 30000 // length)
            rows = [int(rng.integers(1, min(40, budget) + 1))]
            if nrows == 2:
                rows.insert(0, int(rng.integers(1, max(1, min(4, budget // rows[0])) + 1)))
            keep = bool(rng.integers(0, 2))
            chain = CHAINS[int(rng.integers(0, len(CHAINS)))]
            step = bool(rng.integers(0, 2))
            target = TARGETS[int(rng.integers(0, len(TARGETS)))]
            policy = POLICIES[int(rng.integers(0, len(POLICIES)))]
            text, desc = model(rng, rows, length, keep, chain)
            path = os.path.join(tmp, f"case{i}.mlir")
            with open(path, "w") as f:
                f.write(text)
            options = ["--policy", policy, "--target", target, "--atol-of-max",
                       "--seed", str(args.seed * 100 + i)]
            if step:
                options += ["--optimizer", "sgd"]
            checked, report = e2e_check.check_in_subprocess(
                path, args.fbl_bin, args.llvm_bin, *options)
            # Row kernels before fbl-merge-dispatches names them merged.
            bundle = e2e_check.compile_bundle(
                tool("fbl-opt"), tool("fbl-translate"), path, policy, target,
                tmp, "merge=false" + (" optimizer=sgd" if step else ""))
            with open(os.path.join(bundle, "kernels.cl")) as f:
                kernels = len(re.findall(r"void k[0-9]+_rows[(]", f.read()))
            # Rows from 256 iterations may be split in two stages instead
            # where there are few (fbl-split-reductions' cost model), which
            # no row kernel computes; rows of one element are no reduction
            # once autodiff folds unit dims.
            fused = kernels > 0 or length >= 256 or length == 1
            ok &= checked and fused
            shape = "x".join(str(r) for r in rows) + f" rows of {length}"
            print(f"case {i}: {shape}{' keepdim' if keep else ''}, {desc}, "
                  f"{'SGD step' if step else 'gradient'}; {target_name(target)} "
                  f"{policy}: {kernels} row kernels -> {'ok' if checked and fused else 'FAIL'}")
            if not checked:
                print(report[-5000:])
            elif not fused:
                print("expected a row kernel")
    print("ROW PROPERTY PASS" if ok else "ROW PROPERTY FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
