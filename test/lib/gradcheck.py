#!/usr/bin/env python3
"""Checks fbl-autodiff gradients against central finite differences.

Runs `fbl-opt --fbl-autodiff` on a forward model, then builds one harness
module that (1) calls @<name>_grad on fixed pseudo-random inputs and (2)
computes central differences of an f64 copy of the forward function for every
element of every parameter. Upstream mlir-opt lowers it and mlir-runner runs
it (the numerical oracle). Prints one line per parameter and
exits non-zero when |grad - fd| > atol + rtol * |fd| anywhere.

Directives in the input file:
  // GRADCHECK-ARG: <index> uniform <lo> <hi>     float input range
  // GRADCHECK-ARG: <index> ints <lo> <hi>        integer input range
  // GRADCHECK-OPTIONS: <fbl-autodiff options>    e.g. wrt=0

--pre-pass 'fbl-insert-lora=rank=4 targets=q_proj' (repeatable) rewrites the
model with fbl-opt first; the directives still come from the input file.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile


def run(cmd, stdin=None, env=None):
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.stderr.write(f"command failed ({p.returncode}): {' '.join(cmd)}\n")
        sys.stderr.write(p.stderr[-6000:])
        sys.exit(1)
    return p.stdout


def parse_tensor_type(t):
    m = re.fullmatch(r"tensor<((?:\d+x)*)(\w+)>", t.strip())
    if not m:
        raise ValueError(f"unsupported argument type {t}")
    dims = [int(d) for d in m.group(1).split("x") if d]
    return dims, m.group(2)


def split_top(s):
    """Splits a signature's argument list at top-level commas."""
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch in "<({[":
            depth += 1
        elif ch in ">)}]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


def find_forward(text):
    for m in re.finditer(r"func\.func @(\w+)\((.*?)\)\s*->\s*tensor<f32>\s*{",
                         text, re.S):
        args = []
        for a in split_top(m.group(2)):
            am = re.match(r"\s*%\w+\s*:\s*(tensor<[^>]*>)\s*(\{[^}]*\})?", a)
            args.append((am.group(1), "fbl.param" in (am.group(2) or "")))
        if any(p for _, p in args):
            return m.group(1), args
    sys.exit("gradcheck: no forward function (fbl.param args, tensor<f32> result)")


def apply_pre_passes(fbl_opt, model, passes, tmp):
    """Runs fbl-opt with `passes` (flags without their leading dashes) on
    `model`; returns the rewritten model's path, or `model` without passes."""
    if not passes:
        return model
    out = os.path.join(tmp, "rewritten.mlir")
    run([fbl_opt, model] + ["--" + p for p in passes] + ["-o", out])
    return out


def function_text(text, name):
    start = text.index(f"func.func @{name}(")
    depth, i = 0, text.index("{", text.index(")", start))
    while True:
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
        i += 1


class Rng:
    """A small LCG so inputs are the same on every machine."""

    def __init__(self, seed):
        self.state = seed

    def next(self):
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        return (self.state >> 11) / float(1 << 53)


def widen_hex_floats(text):
    """f32 constants MLIR prints as bit patterns (0xFF800000 : f32 is -inf)
    rewritten as the f64 bit patterns of the same values, so renaming f32 to
    f64 keeps them."""
    import struct

    def widen(m):
        value = struct.unpack(">f", bytes.fromhex(m.group(1)))[0]
        bits = struct.unpack(">Q", struct.pack(">d", value))[0]
        return f"0x{bits:016X} : f32"
    return re.sub(r"0x([0-9A-Fa-f]{8}) : f32", widen, text)


def widen_to_f64(text):
    """`text` (MLIR) with every f32 made f64, the constants it prints as
    bit patterns kept: the same function evaluated in f64."""
    return widen_hex_floats(text).replace("f32", "f64")


def model_inputs(src, fargs, seed):
    """Deterministic values for each argument of the forward function:
    (dims, elem, values), in the ranges the model's GRADCHECK-ARG lines give
    (default uniform in [-1, 1))."""
    ranges = {}
    for m in re.finditer(r"//\s*GRADCHECK-ARG:\s*(\d+)\s+(uniform|ints)\s+(\S+)\s+(\S+)", src):
        ranges[int(m.group(1))] = (m.group(2), float(m.group(3)), float(m.group(4)))
    rng = Rng(seed)
    inputs = []
    for i, (ty, _) in enumerate(fargs):
        dims, elem = parse_tensor_type(ty)
        n = 1
        for d in dims:
            n *= d
        kind, lo, hi = ranges.get(i, ("uniform", -1.0, 1.0))
        if kind == "ints":
            vals = [int(lo + (hi - lo) * rng.next()) for _ in range(n)]
        else:
            vals = [lo + (hi - lo) * rng.next() for _ in range(n)]
        inputs.append((dims, elem, vals))
    return inputs


def dense(values, dims, elem):
    if elem.startswith("f"):
        # MLIR reads "3" as an integer: whole floats keep a decimal point.
        flat = ", ".join(f"{v:.17g}" if not float(v).is_integer() else f"{float(v):.1f}"
                         for v in values)
    else:
        flat = ", ".join(str(int(v)) for v in values)
    shape = "x".join(str(d) for d in dims)
    ty = f"tensor<{shape + 'x' if shape else ''}{elem}>"
    if not dims:
        return f"dense<{flat}> : {ty}", ty
    return f"dense<[{flat}]> : tensor<{len(values)}x{elem}>", ty


def call_and_print(body, fn, args, arg_types, res_types, prefix="g"):
    """Appends to `body` a call of @fn and a printMemrefF32 of each result
    (results named %{prefix}K)."""
    res = ", ".join(f"%{prefix}{k}" for k in range(len(res_types)))
    body.append(f"    {res} = func.call @{fn}({', '.join(args)}) : "
                f"({', '.join(arg_types)}) -> ({', '.join(res_types)})")
    for k, t in enumerate(res_types):
        body.append(f"    %{prefix}u{k} = tensor.cast %{prefix}{k} : {t} to tensor<*xf32>")
        body.append(f"    %{prefix}m{k} = bufferization.to_buffer %{prefix}u{k} : "
                    "tensor<*xf32> to memref<*xf32>")
        body.append(f"    func.call @printMemrefF32(%{prefix}m{k}) : (memref<*xf32>) -> ()")


def lower_and_run(harness, llvm):
    """Lowers `harness` with upstream mlir-opt and runs @main in mlir-runner
    (the numerical oracle). Returns what it printed."""
    if "linalg.softmax" in harness:
        # Upstream decomposes softmax only through the transform dialect.
        harness = harness.replace("module {", "module attributes {transform.with_named_sequence} {", 1)
        harness = harness[:harness.rstrip().rfind("}")] + """
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %sm = transform.structured.match ops{["linalg.softmax"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.structured.decompose_interface %sm : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
"""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "harness.mlir")
        open(path, "w").write(harness)
        pipeline = []
        if "transform.named_sequence" in harness:
            pipeline += ["--transform-interpreter", "--test-transform-dialect-erase-schedule"]
        pipeline += [
            "--one-shot-bufferize=bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map",
            "--convert-linalg-to-loops", "--convert-scf-to-cf", "--expand-strided-metadata",
            "--lower-affine", "--convert-math-to-llvm", "--convert-math-to-libm",
            "--finalize-memref-to-llvm", "--convert-arith-to-llvm", "--convert-index-to-llvm",
            "--convert-func-to-llvm", "--convert-cf-to-llvm", "--reconcile-unrealized-casts"]
        lowered = run([os.path.join(llvm, "mlir-opt"), path] + pipeline)
        libs = os.path.join(os.path.dirname(llvm), "lib")
        return run([os.path.join(llvm, "mlir-runner"), "-e", "main", "-entry-point-result=void",
                    f"-shared-libs={libs}/libmlir_runner_utils.so,{libs}/libmlir_c_runner_utils.so"],
                   stdin=lowered)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("--fbl-opt", required=True)
    ap.add_argument("--llvm-bin", required=True)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--eps", type=float, default=1e-4)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--pre-pass", action="append", default=[],
                    help="fbl-opt pass run on the model first, without the "
                         "leading dashes")
    args = ap.parse_args()

    src = open(args.input).read()
    opts = re.search(r"//\s*GRADCHECK-OPTIONS:\s*(.*)", src)
    ad_opts = opts.group(1).strip() if opts else ""

    tmp = tempfile.TemporaryDirectory()
    model = apply_pre_passes(args.fbl_opt, args.input, args.pre_pass, tmp.name)
    name, fargs = find_forward(re.sub(r"//[^\n]*", "", open(model).read()))
    ad = run([args.fbl_opt, model,
              f"--fbl-autodiff={ad_opts}" if ad_opts else "--fbl-autodiff"])
    params = [i for i, (_, p) in enumerate(fargs) if p]
    wrt = re.search(r"wrt=([\d,]+)", ad_opts)
    if wrt:
        params = sorted(int(x) for x in wrt.group(1).split(","))

    inputs = model_inputs(src, fargs, args.seed)

    # The forward as fbl-opt printed it: its aliases are the output's.
    fwd = function_text(ad, name)
    fwd64 = widen_to_f64(fwd).replace(
        f"@{name}(", f"@{name}_f64(", 1)

    body = []
    def const(i, elem):
        dims, _, vals = inputs[i]
        attr, ty = dense(vals, dims, elem)
        flat_ty = attr.split(" : ")[1]
        body.append(f"    %in{i}_{elem}_flat = arith.constant {attr}")
        if dims:
            groups = "[[" + ", ".join(str(k) for k in range(len(dims))) + "]]"
            body.append(f"    %in{i}_{elem} = tensor.expand_shape %in{i}_{elem}_flat {groups} "
                        f"output_shape [{', '.join(map(str, dims))}] : {flat_ty} into {ty}")
        else:
            body.append(f"    %in{i}_{elem} = arith.constant {attr}")
        return f"%in{i}_{elem}", ty

    args32, types32, args64, types64 = [], [], [], []
    for i, (dims, elem, _) in enumerate(inputs):
        v, t = const(i, elem)
        args32.append(v)
        types32.append(t)
        e64 = "f64" if elem == "f32" else elem
        if e64 != elem:
            v, t = const(i, e64)
        args64.append(v)
        types64.append(t)

    grad_types = ["tensor<f32>"] + [types32[p] for p in params]
    call_and_print(body, f"{name}_grad", args32, types32, grad_types)
    opt = re.search(r"optimizer=(sgd|adamw)", ad_opts)
    hyper = {k: float(v) for k, v in re.findall(r"\b(lr|beta1|beta2|eps|weight-decay)=([^\s]+)", ad_opts)}
    if opt:
        # One optimizer step from zero moments at step 1.
        step_args, step_types = list(args32), list(types32)
        if opt.group(1) == "adamw":
            for _ in range(2):
                for p in params:
                    dims, elem, vals = inputs[p]
                    body.append(f"    %zero_state{len(step_args)} = arith.constant dense<0.0> : {types32[p]}")
                    step_args.append(f"%zero_state{len(step_args)}")
                    step_types.append(types32[p])
            body.append("    %stepcount = arith.constant dense<1.0> : tensor<f32>")
            step_args.append("%stepcount")
            step_types.append("tensor<f32>")
        nres = 1 + len(params) * (3 if opt.group(1) == "adamw" else 1)
        res_types = ["tensor<f32>"] + [types32[p] for p in params] * (nres - 1 and (3 if opt.group(1) == "adamw" else 1))
        sres = ", ".join(f"%s{k}" for k in range(nres))
        body.append(f"    {sres} = func.call @{name}_step({', '.join(step_args)}) : "
                    f"({', '.join(step_types)}) -> ({', '.join(res_types)})")
        for k in range(1, 1 + len(params)):
            t = res_types[k]
            body.append(f"    %su{k} = tensor.cast %s{k} : {t} to tensor<*xf32>")
            body.append(f"    %sm{k} = bufferization.to_buffer %su{k} : tensor<*xf32> to memref<*xf32>")
            body.append(f"    func.call @printMemrefF32(%sm{k}) : (memref<*xf32>) -> ()")
    body.append(f"    %l64 = func.call @{name}_f64({', '.join(args64)}) : "
                f"({', '.join(types64)}) -> tensor<f64>")
    body.append("    %ul = tensor.cast %l64 : tensor<f64> to tensor<*xf64>")
    body.append("    %ml = bufferization.to_buffer %ul : tensor<*xf64> to memref<*xf64>")
    body.append("    func.call @printMemrefF64(%ml) : (memref<*xf64>) -> ()")
    body.append("    %c0 = arith.constant 0 : index")
    body.append("    %c1 = arith.constant 1 : index")
    body.append(f"    %eps = arith.constant {args.eps:.17g} : f64")
    body.append(f"    %twoeps = arith.constant {2 * args.eps:.17g} : f64")
    for p in params:
        dims, _, vals = inputs[p]
        n = len(vals)
        ty = types64[p]
        body.append(f"    %n{p} = arith.constant {n} : index")
        body.append(f"    %fd{p}_init = tensor.empty() : tensor<{n}xf64>")
        body.append(f"    %fd{p} = scf.for %i = %c0 to %n{p} step %c1 iter_args(%acc = %fd{p}_init) -> (tensor<{n}xf64>) {{")
        # Delinearize the flat index.
        idx, rem = [], "%i"
        for k in range(len(dims) - 1, -1, -1):
            body.append(f"      %d{p}_{k} = arith.constant {dims[k]} : index")
            body.append(f"      %ix{p}_{k} = arith.remui {rem}, %d{p}_{k} : index")
            body.append(f"      %q{p}_{k} = arith.divui {rem}, %d{p}_{k} : index")
            idx.insert(0, f"%ix{p}_{k}")
            rem = f"%q{p}_{k}"
        ind = ", ".join(idx)
        base = args64[p]
        body.append(f"      %v = tensor.extract {base}[{ind}] : {ty}")
        for sign, op in (("p", "addf"), ("m", "subf")):
            body.append(f"      %v{sign} = arith.{op} %v, %eps : f64")
            body.append(f"      %t{sign} = tensor.insert %v{sign} into {base}[{ind}] : {ty}")
            call_args = [f"%t{sign}" if k == p else a for k, a in enumerate(args64)]
            body.append(f"      %l{sign} = func.call @{name}_f64({', '.join(call_args)}) : "
                        f"({', '.join(types64)}) -> tensor<f64>")
            body.append(f"      %s{sign} = tensor.extract %l{sign}[] : tensor<f64>")
        body.append("      %diff = arith.subf %sp, %sm : f64")
        body.append("      %fd = arith.divf %diff, %twoeps : f64")
        body.append(f"      %acc2 = tensor.insert %fd into %acc[%i] : tensor<{n}xf64>")
        body.append(f"      scf.yield %acc2 : tensor<{n}xf64>")
        body.append("    }")
        body.append(f"    %fu{p} = tensor.cast %fd{p} : tensor<{n}xf64> to tensor<*xf64>")
        body.append(f"    %fm{p} = bufferization.to_buffer %fu{p} : tensor<*xf64> to memref<*xf64>")
        body.append(f"    func.call @printMemrefF64(%fm{p}) : (memref<*xf64>) -> ()")
    body.append("    return")

    module = ad.rstrip()
    assert module.endswith("}")
    harness = module[:-1] + "\n" + fwd64 + "\n" + \
        "  func.func private @printMemrefF32(memref<*xf32>)\n" + \
        "  func.func private @printMemrefF64(memref<*xf64>)\n" + \
        "  func.func @main() {\n" + "\n".join(body) + "\n  }\n}\n"
    out = lower_and_run(harness, args.llvm_bin)

    blocks = [b for b in out.split("Unranked Memref")[1:]]
    def numbers(b):
        data = b.split("data =", 1)[1]
        return [float(x) for x in re.findall(r"[-+]?(?:nan|inf|\d+\.?\d*(?:e[-+]?\d+)?)", data)]
    values = [numbers(b) for b in blocks]
    loss32, grads = values[0][0], values[1:1 + len(params)]
    values = values[1 + len(params):]
    stepped = []
    if opt:
        stepped, values = values[:len(params)], values[len(params):]
    loss64 = values[0][0]
    fds = values[1:]

    ok = True
    lerr = abs(loss32 - loss64) / max(abs(loss64), 1e-12)
    print(f"gradcheck @{name}: loss {loss32:.6g} (f64 {loss64:.6g}, rel err {lerr:.2e})")
    if lerr > 1e-4:
        ok = False
    for p, g, fd in zip(params, grads, fds):
        worst, bad = 0.0, 0
        for a, b in zip(g, fd):
            err = abs(a - b)
            worst = max(worst, err / (args.atol + args.rtol * abs(b)))
            if err > args.atol + args.rtol * abs(b):
                bad += 1
        norm = sum(x * x for x in fd) ** 0.5
        print(f"  arg{p}: {len(g)} elements, |fd| {norm:.4g}, worst err/tol {worst:.3f}, "
              f"{bad} out of tolerance")
        if bad or len(g) != len(fd) or norm == 0.0:
            ok = False
    if opt:
        lr = hyper.get("lr", 1e-3)
        wd = hyper.get("weight-decay", 0.0)
        b1, b2 = hyper.get("beta1", 0.9), hyper.get("beta2", 0.999)
        eps = hyper.get("eps", 1e-8)
        for p, g, new in zip(params, grads, stepped):
            worst = 0.0
            for x, gi, y in zip(inputs[p][2], g, new):
                if opt.group(1) == "sgd":
                    want = x - lr * (gi + wd * x)
                else:
                    m, v = (1 - b1) * gi, (1 - b2) * gi * gi
                    mhat, vhat = m / (1 - b1), v / (1 - b2)
                    want = x - lr * (mhat / (vhat ** 0.5 + eps) + wd * x)
                worst = max(worst, abs(y - want) / (1e-5 + 1e-4 * abs(want)))
            print(f"  {opt.group(1)} step arg{p}: worst err/tol {worst:.3f}")
            if worst > 1.0:
                ok = False
    print("GRADCHECK PASS" if ok else "GRADCHECK FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
