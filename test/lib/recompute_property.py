#!/usr/bin/env python3
"""Property test of producers computed again in their readers
(fbl-fuse-elementwise): random training steps in which an elementwise
producer P of one tensor of its size (x) and broadcast ones (a row vector r,
a column vector c) is read by 2 to 4 readers, compiled under a random target
and layout policy, run on the OpenCL device and compared with the upstream
oracle (e2e_check.py).

Each case draws an R x C shape (odd sizes), P's body from a few scalar
chains (exp(x - r), x * c + r, tanh(x) * r, ...), and each reader's kind: a
row sum of g(P), a column sum of g(P), or an elementwise g(P, x) summed
into the loss, g a random scalar chain too. The loss adds every reader's
result squared. Where P reads at most one tensor of its size, every reader
computes P again; a case that also reads a second R x C parameter in P
(drawn one time in four) keeps P stored. Each case line says how many
linalg.generic ops of the fused forward function compute P's chain
(`P in N ops`: N readers when copied, 1 when stored).

  recompute_property.py --fbl-bin DIR --llvm-bin DIR [--cases N] [--seed S]

Prints one line per case and "RECOMPUTE PROPERTY PASS" when every case
matches the oracle (rtol 1e-3, atol 1e-5 of each result's largest
magnitude) and P was copied exactly where it reads one tensor of its size.
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_check  # noqa: E402
from e2e_check import POLICIES, TARGETS, target_name  # noqa: E402

# P's body over its block arguments (%bx, %br, %bc and, in a case with a
# second tensor of its size, %by), then a math.cos that marks where P's
# chain went in the fused IR (MARK).
PRODUCERS = [
    ("exp(x - r)", ["%d = arith.subf %bx, %br : f32", "%p = math.exp %d : f32"]),
    ("x * c + r", ["%d = arith.mulf %bx, %bc : f32", "%p = arith.addf %d, %br : f32"]),
    ("tanh(x) * r", ["%d = math.tanh %bx : f32", "%p = arith.mulf %d, %br : f32"]),
    ("sin(x) + c", ["%d = math.sin %bx : f32", "%p = arith.addf %d, %bc : f32"]),
]
READER_BODIES = [
    ("v * v", ["%g = arith.mulf %v, %v : f32"]),
    ("v + 1", ["%g = arith.addf %v, %one : f32"]),
    ("exp(-v)", ["%n = arith.negf %v : f32", "%g = math.exp %n : f32"]),
]
MARK = "math.cos"


def model(rng, rows, cols, readers, second):
    """The model's MLIR and P's description."""
    name, body = PRODUCERS[int(rng.integers(0, len(PRODUCERS)))]
    lines = []
    t = f"tensor<{rows}x{cols}xf32>"
    ins = ["%x", "%r", "%c"]
    types = [t, f"tensor<{rows}xf32>", f"tensor<{cols}xf32>"]
    maps = ["#id", "#row", "#col"]
    if second:
        ins.append("%y")
        types.append(t)
        maps.append("#id")
    block = ", ".join(f"{a}: f32" for a in ["%bx", "%br", "%bc"] + (["%by"] if second else []))
    extra = ["%q = arith.mulf %p, %by : f32"] if second else ["%q = arith.addf %p, %p : f32"]
    lines.append(f"""  %pe = tensor.empty() : {t}
  %P = linalg.generic {{indexing_maps = [{", ".join(maps)}, #id], iterator_types = ["parallel", "parallel"]}}
      ins({", ".join(ins)} : {", ".join(types)}) outs(%pe : {t}) {{
  ^bb0({block}, %o: f32):
    {chr(10).join("    " + s for s in body).strip()}
    {extra[0]}
    %k = {MARK} %q : f32
    %s = arith.addf %q, %k : f32
    linalg.yield %s : f32
  }} -> {t}""")
    kinds = []
    losses = []
    for i in range(readers):
        kind = ["row", "col", "elementwise"][int(rng.integers(0, 3))]
        gname, gbody = READER_BODIES[int(rng.integers(0, len(READER_BODIES)))]
        kinds.append(f"{kind} {gname}")
        g = "\n    ".join(gbody)
        if kind == "elementwise":
            lines.append(f"""  %ge{i} = tensor.empty() : {t}
  %G{i} = linalg.generic {{indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%P, %x : {t}, {t}) outs(%ge{i} : {t}) {{
  ^bb0(%v: f32, %xx: f32, %o: f32):
    {g}
    %h = arith.mulf %g, %xx : f32
    linalg.yield %h : f32
  }} -> {t}
  %L{i} = linalg.generic {{indexing_maps = [#id, #all2], iterator_types = ["reduction", "reduction"]}}
      ins(%G{i} : {t}) outs(%l0 : tensor<f32>) {{
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %a = arith.addf %acc, %sq : f32
    linalg.yield %a : f32
  }} -> tensor<f32>""")
        else:
            n, m, it = ((rows, "#row", '["parallel", "reduction"]') if kind == "row"
                        else (cols, "#col", '["reduction", "parallel"]'))
            lines.append(f"""  %re{i} = tensor.empty() : tensor<{n}xf32>
  %rz{i} = linalg.fill ins(%zero : f32) outs(%re{i} : tensor<{n}xf32>) -> tensor<{n}xf32>
  %G{i} = linalg.generic {{indexing_maps = [#id, {m}], iterator_types = {it}}}
      ins(%P : {t}) outs(%rz{i} : tensor<{n}xf32>) {{
  ^bb0(%v: f32, %acc: f32):
    {g}
    %a = arith.addf %acc, %g : f32
    linalg.yield %a : f32
  }} -> tensor<{n}xf32>
  %L{i} = linalg.generic {{indexing_maps = [#v, #all1], iterator_types = ["reduction"]}}
      ins(%G{i} : tensor<{n}xf32>) outs(%l0 : tensor<f32>) {{
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %a = arith.addf %acc, %sq : f32
    linalg.yield %a : f32
  }} -> tensor<f32>""")
        losses.append(f"%L{i}")
    total = losses[0]
    for i, other in enumerate(losses[1:]):
        lines.append(f"""  %T{i} = linalg.generic {{indexing_maps = [#s, #s, #s], iterator_types = []}}
      ins({total}, {other} : tensor<f32>, tensor<f32>) outs(%l0 : tensor<f32>) {{
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }} -> tensor<f32>""")
        total = f"%T{i}"
    params = (f"%x: {t} {{fbl.param}}, %r: tensor<{rows}xf32> {{fbl.param}}, "
              f"%c: tensor<{cols}xf32> {{fbl.param}}")
    if second:
        params += f", %y: {t} {{fbl.param}}"
    body = "\n".join(lines)
    text = f"""#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
#all2 = affine_map<(i, j) -> ()>
#v = affine_map<(i) -> (i)>
#all1 = affine_map<(i) -> ()>
#s = affine_map<() -> ()>
func.func @model({params}) -> tensor<f32> {{
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
{body}
  return {total} : tensor<f32>
}}
"""
    return text, name, kinds


def copies(fbl_opt, path):
    """How many linalg.generic ops of the forward function compute P's
    chain after fbl-fuse-elementwise (None if it fails)."""
    out = subprocess.run([fbl_opt, path, "--fbl-fuse-elementwise"],
                         capture_output=True, text=True)
    if out.returncode:
        return None
    generics = re.split(r"linalg\.generic", out.stdout)[1:]
    return sum(1 for g in generics if MARK in g.split("} ->")[0])


def main():
    args = e2e_check.property_args()
    rng = np.random.default_rng(args.seed)
    tool = lambda name: os.path.join(args.fbl_bin, name)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.cases):
            rows, cols = int(rng.integers(3, 70)), int(rng.integers(5, 300))
            readers = int(rng.integers(2, 5))
            second = rng.integers(0, 4) == 0
            target = TARGETS[int(rng.integers(0, len(TARGETS)))]
            policy = POLICIES[int(rng.integers(0, len(POLICIES)))]
            text, name, kinds = model(rng, rows, cols, readers, second)
            path = os.path.join(tmp, f"case{i}.mlir")
            with open(path, "w") as f:
                f.write(text)
            n = copies(tool("fbl-opt"), path)
            # Copied into every reader where P reads one tensor of its size;
            # stored once where it reads two.
            copied_right = n == (1 if second else readers)
            checked, report = e2e_check.check_in_subprocess(
                path, args.fbl_bin, args.llvm_bin, "--policy", policy,
                "--target", target, "--atol-of-max",
                "--seed", str(args.seed * 100 + i))
            passed = checked and copied_right
            ok &= passed
            tname = target_name(target)
            print(f"case {i}: {rows}x{cols} P = {name}"
                  f"{' * y' if second else ''}, readers {', '.join(kinds)}; "
                  f"{tname} {policy}: P in {n} ops"
                  f" -> {'ok' if passed else 'FAIL'}")
            if not passed:
                print(report[-5000:] if not checked else
                      f"expected P in {1 if second else readers} ops")
    print("RECOMPUTE PROPERTY PASS" if ok else "RECOMPUTE PROPERTY FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
