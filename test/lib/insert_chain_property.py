#!/usr/bin/env python3
"""Property test of insert chains and sums of inserts: random chains of
tensor.insert_slice, each inserting into the previous one's result (the form
tensor.concat and im2col take), or random sums of slices inserted into zeros
(the form col2im takes), which fbl-lower-to-kernels writes with one kernel
each, compiled under a random layout policy, run on the OpenCL device and
compared with the upstream oracle (e2e_check.py).

Each case places 2 to 5 sources of random odd shapes at random offsets and
strides (1 to 3; regions may overlap) in a destination parameter of rank 2
or 3: a chain inserts each into the previous result (a later insert wins), a
sum adds dest + insert(s_i into zeros) for every i. A source is a parameter,
or a strided slice of a larger parameter, or a slice of a parameter padded
by an insert into zeros (im2col's form), each maybe transposed: the copies
that the chain's or sum's kernel reads through (and, in the gradient, the
slices of the result's gradient that col2im's sum reads through). Then
    loss = sum(result * w)       w: fixed input,
so each source's gradient is the slice of w its region kept visible (all of
it, for a sum) and the destination's is w where no insert landed (all of w,
for a sum).

  insert_chain_property.py --fbl-bin DIR --llvm-bin DIR [--cases N] [--seed S]

Prints one line per case and "INSERT CHAIN PROPERTY PASS" when every case
matches the oracle (rtol 1e-3, atol 1e-5).
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_check  # noqa: E402
from e2e_check import POLICIES  # noqa: E402


def tensor(shape):
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


def random_insert(rng, dest):
    """(source shape, offsets, strides) of one insert that fits `dest`."""
    shape, offsets, strides = [], [], []
    for d in dest:
        stride = int(rng.integers(1, 4))
        size = int(rng.integers(1, (d - 1) // stride + 2))
        span = (size - 1) * stride + 1
        offsets.append(int(rng.integers(0, d - span + 1)))
        shape.append(size)
        strides.append(stride)
    return shape, offsets, strides


def random_source(rng, shape):
    """How a source of `shape` is made: (form, permutation, outer shape,
    slice offsets, slice strides, padded parameter shape, pad offsets)."""
    form = ["param", "slice", "padded"][int(rng.integers(0, 3))]
    perm = list(range(len(shape)))
    if rng.integers(0, 2):
        perm = [int(p) for p in rng.permutation(len(shape))]
    # The slice's shape, before the transpose: sliced[perm[i]] = shape[i].
    sliced = [0] * len(shape)
    for i, p in enumerate(perm):
        sliced[p] = shape[i]
    strides = [int(rng.integers(1, 3)) for _ in sliced]
    outer = [(n - 1) * st + 1 + int(rng.integers(0, 3))
             for n, st in zip(sliced, strides)]
    offsets = [int(rng.integers(0, o - ((n - 1) * st + 1) + 1))
               for o, n, st in zip(outer, sliced, strides)]
    inner = [max(1, o - int(rng.integers(0, 3))) for o in outer]
    pad = [int(rng.integers(0, o - i + 1)) for o, i in zip(outer, inner)]
    return form, perm, sliced, outer, offsets, strides, inner, pad


def source_lines(i, source, lines, args):
    """Emits source i's copies; returns the value the insert reads."""
    form, perm, sliced, outer, offsets, strides, inner, pad = source
    ones = ", ".join("1" for _ in outer)
    if form == "param":
        args.append(f"%s{i}: {tensor(sliced)} {{fbl.param}}")
        value = f"%s{i}"
    else:
        if form == "slice":
            args.append(f"%p{i}: {tensor(outer)} {{fbl.param}}")
            whole = f"%p{i}"
        else:
            args.append(f"%q{i}: {tensor(inner)} {{fbl.param}}")
            lines.append(f"  %pe{i} = tensor.empty() : {tensor(outer)}")
            lines.append(f"  %pz{i} = linalg.fill ins(%zero : f32) outs(%pe{i} : {tensor(outer)}) -> {tensor(outer)}")
            lines.append(
                f"  %pad{i} = tensor.insert_slice %q{i} into %pz{i}"
                f"[{', '.join(map(str, pad))}] [{', '.join(map(str, inner))}] "
                f"[{ones}] : {tensor(inner)} into {tensor(outer)}")
            whole = f"%pad{i}"
        lines.append(
            f"  %sl{i} = tensor.extract_slice {whole}"
            f"[{', '.join(map(str, offsets))}] [{', '.join(map(str, sliced))}] "
            f"[{', '.join(map(str, strides))}] : {tensor(outer)} to {tensor(sliced)}")
        value = f"%sl{i}"
    if perm == sorted(perm):
        return value
    shape = [sliced[p] for p in perm]
    lines.append(f"  %te{i} = tensor.empty() : {tensor(shape)}")
    lines.append(
        f"  %t{i} = linalg.transpose ins({value} : {tensor(sliced)}) "
        f"outs(%te{i} : {tensor(shape)}) permutation = [{', '.join(map(str, perm))}]")
    return f"%t{i}"


def model(dest, inserts, sources, kind):
    """The step's MLIR: the sources, the chain or sum, then
    sum(result * w)."""
    rank = len(dest)
    dims = ", ".join(f"d{i}" for i in range(rank))
    args = [f"%w: {tensor(dest)}", f"%dest: {tensor(dest)} {{fbl.param}}"]
    lines = []
    values = [source_lines(i, source, lines, args)
              for i, source in enumerate(sources)]
    prev = "%dest"
    if kind == "sum":
        lines.append(f"  %e = tensor.empty() : {tensor(dest)}")
        lines.append(f"  %zeros = linalg.fill ins(%zero : f32) outs(%e : {tensor(dest)}) -> {tensor(dest)}")
    for i, (shape, offsets, strides) in enumerate(inserts):
        into = "%zeros" if kind == "sum" else prev
        lines.append(
            f"  %c{i} = tensor.insert_slice {values[i]} into {into}"
            f"[{', '.join(map(str, offsets))}] [{', '.join(map(str, shape))}] "
            f"[{', '.join(map(str, strides))}] : {tensor(shape)} into {tensor(dest)}")
        if kind == "sum":
            lines.append(f"  %a{i} = linalg.add ins({prev}, %c{i} : {tensor(dest)}, {tensor(dest)}) "
                         f"outs(%e : {tensor(dest)}) -> {tensor(dest)}")
            prev = f"%a{i}"
        else:
            prev = f"%c{i}"
    return f"""
#id = affine_map<({dims}) -> ({dims})>
#all = affine_map<({dims}) -> ()>
func.func @model({', '.join(args)}) -> tensor<f32> {{
  %zero = arith.constant 0.0 : f32
{chr(10).join(lines)}
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {{indexing_maps = [#id, #id, #all], iterator_types = [{', '.join(['"reduction"'] * rank)}]}}
      ins({prev}, %w : {tensor(dest)}, {tensor(dest)}) outs(%l0 : tensor<f32>) {{
  ^bb0(%v: f32, %x: f32, %acc: f32):
    %p = arith.mulf %v, %x : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }} -> tensor<f32>
  return %l : tensor<f32>
}}
"""


def main():
    args = e2e_check.property_args()
    rng = np.random.default_rng(args.seed)
    tool = lambda name: os.path.join(args.fbl_bin, name)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.cases):
            rank = int(rng.integers(2, 4))
            dest = [int(rng.integers(3, 14)) for _ in range(rank)]
            inserts = [random_insert(rng, dest)
                       for _ in range(int(rng.integers(2, 6)))]
            policy = POLICIES[int(rng.integers(0, len(POLICIES)))]
            kind = ["chain", "sum"][int(rng.integers(0, 2))]
            sources = [random_source(rng, shape) for shape, _, _ in inserts]
            path = os.path.join(tmp, f"case{i}.mlir")
            with open(path, "w") as f:
                f.write(model(dest, inserts, sources, kind))
            step = subprocess.run(
                [tool("fbl-opt"), path,
                 f"--fbl-training-pipeline=policy={policy} target=pocl-cpu"],
                capture_output=True, text=True)
            kernels = step.stdout.count("fbl.dispatch @")
            checked, report = e2e_check.check_in_subprocess(
                path, args.fbl_bin, args.llvm_bin, "--policy", policy,
                "--seed", str(args.seed * 100 + i))
            passed = step.returncode == 0 and checked
            ok &= passed
            desc = "; ".join(
                f"{'x'.join(map(str, s))} at {o} by {st} "
                f"({src[0]}{' transposed' if src[1] != sorted(src[1]) else ''})"
                for (s, o, st), src in zip(inserts, sources))
            print(f"case {i}: {kind} dest {'x'.join(map(str, dest))} <- {desc}; "
                  f"{policy}, {kernels} kernels -> {'ok' if passed else 'FAIL'}")
            if not passed:
                print(step.stderr + report)
    print("INSERT CHAIN PROPERTY PASS" if ok else "INSERT CHAIN PROPERTY FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
