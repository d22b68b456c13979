#!/usr/bin/env python3
"""Runs a compiled training step on OpenCL and compares it with the oracle.

  e2e_check.py MODEL.mlir --policy P --target T --fbl-opt ... --fbl-translate
      ... --fbl-run ... --llvm-bin DIR [--device SEL] [--rtol R] [--atol A]

1. Inputs: fixed pseudo-random arrays (GRADCHECK-ARG directives in the model
   give ranges), written as .npy.
2. Oracle: fbl-autodiff's @f_grad (with --optimizer, @f_step from a
   nonzero optimizer state) lowered by upstream mlir-opt and run by
   mlir-runner on the same inputs.
3. fbl: fbl-opt --fbl-training-pipeline, fbl-translate --fbl-to-opencl,
   fbl-run on the device; results read back from resultJ.npy.
4. Every result compared elementwise: |fbl - oracle| <= atol + rtol |oracle|
   (with --atol-of-max, atol is a fraction of max|oracle| of that result);
   where that fails, the oracle's function is evaluated once more in f64
   and a result within the f32 oracle's own rounding error against it
   passes (oracle_verdict.py says how; --prepare writes oracle64/ too).
5. Where kernels have variants (the manifest's `variants`), the step runs
   again with each (FBL_KERNEL_VARIANTS=N) and each is compared the same
   way, except that atol is a fraction of max|oracle|: a variant may round
   differently (fma() rounds once where a multiply and an add round twice,
   as the oracle does), by amounts that scale with the sum's terms, not
   with an element near zero (docs/Testing.md). Their lines come before
   the results'. FBL_TEST_GEMM_VARIANTS (a `gemm_variants` list) replaces
   the target's variants: the rusticl run takes `[[8, 0]]`, since llvmpipe
   emulates fma() exactly and takes minutes to compile a GEMM of them.
"""
import argparse
import functools
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gradcheck  # noqa: E402
import oracle_verdict  # noqa: E402


def numpy_dtype(elem):
    return np.float32 if elem == "f32" else np.int64 if elem == "i64" else np.int32


def step_state(inputs, params, optimizer, seed):
    """The optimizer state a step reads after the model's arguments, as
    inputs: AdamW's first moments (uniform in [-0.1, 0.1)), second moments
    (in [0, 0.01)) and its step count (3, so the bias corrections are not
    those of the first step); SGD has none."""
    if optimizer != "adamw":
        return []
    rng = gradcheck.Rng(seed + 1)
    state = []
    for lo, hi in ((-0.1, 0.1), (0.0, 0.01)):
        for p in params:
            dims, elem, vals = inputs[p]
            state.append((dims, elem, [lo + (hi - lo) * rng.next() for _ in vals]))
    state.append(([], "f32", [3.0]))
    return state


def oracle_results(fbl_opt, model, name, inputs, params, llvm_bin,
                   optimizer="", f64=False):
    """@name_grad of fbl-autodiff lowered by upstream mlir-opt and run by
    mlir-runner on `inputs` [(dims, elem, values)]: the loss then one
    gradient per parameter index in `params`, as flat float64 arrays. With
    `optimizer` ("sgd lr=..." or "adamw lr=..."), @name_step instead, on
    `inputs` followed by the optimizer state: the loss, then the updated
    parameters, then (AdamW) the updated moments. With `f64`, the same
    function evaluated in f64 on the same (f32-rounded) inputs: the
    reference that tells an f32 evaluation's rounding from a wrong result
    (oracle_verdict.py)."""
    kind = optimizer.split()[0] if optimizer else ""
    if f64:
        inputs = [(dims, elem, [float(np.float32(v)) for v in vals] if elem == "f32" else vals)
                  for dims, elem, vals in inputs]
    ad = gradcheck.run([fbl_opt, model] +
                       ([f"--fbl-autodiff=optimizer={optimizer}"] if optimizer
                        else ["--fbl-autodiff"]))
    body, call_args, types = [], [], []
    for i, (dims, elem, vals) in enumerate(inputs):
        attr, ty = gradcheck.dense(vals, dims, elem)
        flat_ty = attr.split(" : ")[1]
        if dims:
            body.append(f"    %f{i} = arith.constant {attr}")
            groups = "[[" + ", ".join(str(k) for k in range(len(dims))) + "]]"
            body.append(f"    %in{i} = tensor.expand_shape %f{i} {groups} output_shape "
                        f"[{', '.join(map(str, dims))}] : {flat_ty} into {ty}")
        else:
            body.append(f"    %in{i} = arith.constant {attr}")
        call_args.append(f"%in{i}")
        types.append(ty)
    res_types = ["tensor<f32>"] + [types[p] for p in params] * (3 if kind == "adamw" else 1)
    gradcheck.call_and_print(body, f"{name}_{'step' if kind else 'grad'}",
                             call_args, types, res_types)
    body.append("    return")
    harness = ad.rstrip()[:-1] + "\n  func.func private @printMemrefF32(memref<*xf32>)\n" + \
        "  func.func @main() {\n" + "\n".join(body) + "\n  }\n}\n"
    if f64:
        harness = gradcheck.widen_to_f64(harness).replace("printMemrefF32",
                                                          "printMemrefF64")
    out = gradcheck.lower_and_run(harness, llvm_bin)
    oracle = []
    for b in out.split("Unranked Memref")[1:]:
        data = b.split("data =", 1)[1]
        oracle.append(np.array([float(x) for x in re.findall(
            r"[-+]?(?:nan|inf|\d+\.?\d*(?:e[-+]?\d+)?)", data)], dtype=np.float64))
    return oracle


def with_gemm_variants(target, variants):
    """`target` (a preset name or a `#fbl.target<...>` attribute) with its
    `gemm_variants` replaced by `variants` (a list's text)."""
    if not target.startswith("#fbl.target"):
        return f'#fbl.target<"{target}", gemm_variants = {variants}>'
    if "gemm_variants" in target:
        return re.sub(r"gemm_variants = \[(\[[^\]]*\](, )?)*\]",
                      f"gemm_variants = {variants}", target)
    return target[:target.rindex(">")] + f", gemm_variants = {variants}>"


def compile_bundle(fbl_opt, fbl_translate, model, policy, target, tmp, options=""):
    """The training pipeline and fbl-translate: returns the bundle folder.
    `target` is a preset name, or a whole `#fbl.target<...>` attribute (a
    preset with fields overridden, e.g. smaller image limits), which is put
    on the module."""
    if os.environ.get("FBL_TEST_GEMM_VARIANTS"):
        target = with_gemm_variants(target, os.environ["FBL_TEST_GEMM_VARIANTS"])
    compiled = os.path.join(tmp, f"compiled-{policy}.mlir")
    target_option = f" target={target}"
    if target.startswith("#fbl.target"):
        text = open(model).read()
        targeted = os.path.join(tmp, "targeted-" + os.path.basename(model))
        if re.search(r"^module \{", text, re.M):
            text = re.sub(r"^module \{", f"module attributes {{fbl.target = {target}}} {{",
                          text, count=1, flags=re.M)
        elif re.search(r"^module\b", text, re.M):
            sys.exit(f"{model}: expected a top-level 'module {{' to put the target on")
        else:
            # Functions at the top level: wrap them in a module, attribute
            # aliases staying in front of it.
            lines = text.splitlines()
            aliases = [l for l in lines if l.startswith("#")]
            body = [l for l in lines if not l.startswith("#")]
            text = "\n".join(aliases + [f"module attributes {{fbl.target = {target}}} {{"]
                             + body + ["}"]) + "\n"
        with open(targeted, "w") as f:
            f.write(text)
        model, target_option = targeted, ""
    gradcheck.run([fbl_opt, model,
                   f"--fbl-training-pipeline=policy={policy}{target_option}" +
                   (" " + options if options else ""), "-o", compiled])
    bundle = os.path.join(tmp, f"bundle-{policy}")
    gradcheck.run([fbl_translate, "--fbl-to-opencl", compiled, "-o", bundle])
    return bundle


def most_variants(bundle):
    """The most variants any kernel of `bundle` has."""
    import json
    with open(os.path.join(bundle, "manifest.json")) as f:
        kernels = json.load(f).get("kernels", [])
    return max([len(k.get("variants", [])) for k in kernels] or [0])


def run_bundle(fbl_run, bundle, inputs, tmp, device="", variant=0):
    """Runs `bundle` once on `inputs`, each kernel's variant `variant` where
    it has one (0: its function); returns (first output line, results as
    flat float64 arrays)."""
    out_dir = os.path.join(tmp, f"out{variant}-" + os.path.basename(bundle))
    cmd = [fbl_run, bundle, "--output-dir", out_dir]
    if device:
        cmd += ["--device", device]
    for i, (dims, elem, vals) in enumerate(inputs):
        f = os.path.join(tmp, f"arg{i}.npy")
        np.save(f, np.array(vals, dtype=numpy_dtype(elem)).reshape(dims))
        cmd += ["--input", f"arg{i}={f}"]
    run_out = gradcheck.run(cmd, env=dict(os.environ, FBL_KERNEL_VARIANTS=str(variant)))
    results = []
    j = 0
    while os.path.exists(os.path.join(out_dir, f"result{j}.npy")):
        results.append(np.load(os.path.join(out_dir, f"result{j}.npy")).astype(np.float64).ravel())
        j += 1
    return run_out.splitlines()[0], results


def check_in_subprocess(model, fbl_bin, llvm_bin, *options):
    """Runs this check on `model` in a process of its own, with fbl's tools
    from `fbl_bin` and `options` (e.g. "--policy", P); returns whether it
    passed, and what it printed."""
    tool = lambda name: os.path.join(fbl_bin, name)
    run = subprocess.run(
        [sys.executable, os.path.abspath(__file__), model, *options,
         "--fbl-opt", tool("fbl-opt"), "--fbl-translate", tool("fbl-translate"),
         "--fbl-run", tool("fbl-run"), "--llvm-bin", llvm_bin],
        capture_output=True, text=True)
    return "E2E PASS" in run.stdout, run.stdout + run.stderr


# What the property tests that run their cases through this check
# (split_property.py, insert_chain_property.py, recompute_property.py) draw
# from: the layout policies, and the targets whose bundles run here (the
# H200 preset with PoCL's image limits, 8192 a side, and its merged
# launches' local arrays, one set per member: docs/Targets.md
# shared_local_memory; and pocl-cpu).
POLICIES = ["fblayout", "reuse-forward", "explicit-transpose"]
H200_ON_POCL = ('#fbl.target<"nvidia-h200", max_image_width = 8192, '
                'max_image_height = 8192, shared_local_memory = 0>')
TARGETS = [H200_ON_POCL, "pocl-cpu"]


def target_name(target):
    """How a property test's case line names `target`."""
    return "h200" if target == H200_ON_POCL else target


def property_args():
    """A property test's command line: --fbl-bin, --llvm-bin, --cases,
    --seed."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--fbl-bin", required=True)
    ap.add_argument("--llvm-bin", required=True)
    ap.add_argument("--cases", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    return ap.parse_args()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--policy", default="fblayout")
    ap.add_argument("--target", default="pocl-cpu")
    ap.add_argument("--fbl-opt", required=True)
    ap.add_argument("--fbl-translate", required=True)
    ap.add_argument("--fbl-run", required=True)
    ap.add_argument("--llvm-bin", required=True)
    ap.add_argument("--device", default="")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--atol-of-max", action="store_true",
                    help="atol is relative to max|oracle| of each result "
                         "(for f16 storage, whose rounding scales with the "
                         "tensor's values)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--prepare", default="",
                    help="write bundle/, inputs/argI.npy and oracle/resultJ.npy "
                         "into this folder (to run elsewhere) instead of running")
    ap.add_argument("--optimizer", default="", choices=["", "sgd", "adamw"],
                    help="check the optimizer step (@f_step, from nonzero "
                         "AdamW state) instead of the gradient")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--pipeline-options", default="",
                    help="more fbl-training-pipeline options, e.g. "
                         "gemm-epilogues=none")
    ap.add_argument("--pre-pass", action="append", default=[],
                    help="fbl-opt pass run on the model first, without the "
                         "leading dashes")
    args = ap.parse_args()

    src = open(args.model).read()
    with tempfile.TemporaryDirectory() as tmp:
        model = gradcheck.apply_pre_passes(args.fbl_opt, args.model,
                                           args.pre_pass, tmp)
        name, fargs = gradcheck.find_forward(
            re.sub(r"//[^\n]*", "", open(model).read()))
        inputs = gradcheck.model_inputs(src, fargs, args.seed)
        params = [i for i, (_, p) in enumerate(fargs) if p]
        optimizer = f"{args.optimizer} lr={args.lr}" if args.optimizer else ""
        inputs += step_state(inputs, params, args.optimizer, args.seed)
        oracle = oracle_results(args.fbl_opt, model, name, inputs, params,
                                args.llvm_bin, optimizer)
        bundle = compile_bundle(args.fbl_opt, args.fbl_translate, model,
                                args.policy, args.target, tmp,
                                " ".join(o for o in [
                                    f"optimizer={args.optimizer} lr={args.lr}"
                                    if args.optimizer else "",
                                    args.pipeline_options] if o))
        @functools.cache
        def oracle64():
            """The f64 evaluation (once), or None where the function does
            not widen (oracle_verdict.py's second step then does not
            apply)."""
            try:
                return oracle_results(args.fbl_opt, model, name, inputs, params,
                                      args.llvm_bin, optimizer, f64=True)
            except SystemExit:  # gradcheck.run printed why to stderr
                print("  (no f64 evaluation: the function does not lower in f64)")
                return None

        if args.prepare:
            import shutil
            shutil.rmtree(args.prepare, ignore_errors=True)
            shutil.copytree(bundle, os.path.join(args.prepare, "bundle"))
            os.makedirs(os.path.join(args.prepare, "inputs"))
            os.makedirs(os.path.join(args.prepare, "oracle"))
            for i, (dims, elem, vals) in enumerate(inputs):
                np.save(os.path.join(args.prepare, "inputs", f"arg{i}.npy"),
                        np.array(vals, dtype=numpy_dtype(elem)).reshape(dims))
            for j, want in enumerate(oracle):
                np.save(os.path.join(args.prepare, "oracle", f"result{j}.npy"), want)
            wide = oracle64()
            if wide is not None:
                os.makedirs(os.path.join(args.prepare, "oracle64"))
                for j, want in enumerate(wide):
                    np.save(os.path.join(args.prepare, "oracle64", f"result{j}.npy"), want)
            print(f"prepared {args.prepare}")
            return

        def verdicts(results, atol_of_max):
            """(passes, line, elementwise row) per result (oracle_verdict.py):
            the f64 evaluation is asked for once, where a first comparison
            fails."""
            got = [results[j] if j < len(results) else np.zeros(0)
                   for j in range(len(oracle))]

            def compare(wide64):
                return [oracle_verdict.verdict(
                    j, g, oracle[j], wide64[j] if wide64 and j < len(wide64) else None,
                    args.rtol, args.atol, atol_of_max) for j, g in enumerate(got)]
            first = compare(None)
            if all(passed for passed, _, _ in first):
                return first
            wide = oracle64()
            return compare(wide) if wide is not None else first

        first_line, results = run_bundle(args.fbl_run, bundle, inputs, tmp, args.device)
        ok = True
        print(f"e2e @{name}_{'step' if args.optimizer else 'grad'} "
              f"policy={args.policy} target={args.target}: " + first_line)
        for variant in range(1, most_variants(bundle) + 1):
            _, variant_results = run_bundle(args.fbl_run, bundle, inputs, tmp,
                                            args.device, variant)
            rows = verdicts(variant_results, True)
            stats = [row for _, _, row in rows]
            print(f"  variant {variant}: {len(rows)} results, worst err/tol "
                  f"{max(r[1] for r in stats):.3f}, max err/max|oracle| "
                  f"{max(r[2] for r in stats):.1e}, {sum(r[3] for r in stats)} out of tolerance")
            # The results that needed the f64 evaluation, or failed.
            for passed, line, row in rows:
                if row[3] or not passed:
                    print("  " + line)
            ok &= all(passed for passed, _, _ in rows)
        for passed, line, _ in verdicts(results, args.atol_of_max):
            print(line)
            ok &= passed
        print("E2E PASS" if ok else "E2E FAIL")
        sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
