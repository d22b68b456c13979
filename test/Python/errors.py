# RUN: %python %s %fbl_src_root/examples/mlp.mlir | FileCheck %s
#
# Bad input gives fbl.Error with a message saying what is wrong; nothing
# crashes and nothing runs on garbage.

import os
import sys
import tempfile

import numpy as np

import fbl


def expect_error(what, fn):
    try:
        fn()
    except fbl.Error as e:
        # Tool diagnostics: the line that names the error.
        lines = [l for l in str(e).splitlines() if "error:" in l]
        print(f"{what}: {lines[0] if lines else e}")
        return
    raise AssertionError(f"{what}: no error")


model = sys.argv[1]
# CHECK: policy: unknown policy 'fastest'; one of fblayout, reuse-forward, explicit-transpose
expect_error("policy", lambda: fbl.compile(model, policy="fastest"))
# CHECK: file: /no/such.mlir: no such model file
expect_error("file", lambda: fbl.compile("/no/such.mlir"))
# CHECK: syntax: {{.*}}model.mlir:1:14: error: expected non-function type
expect_error("syntax", lambda: fbl.compile("func.func @f( {"))
# A target is a preset name or an attribute: it cannot smuggle other
# pipeline options.
# CHECK: target: invalid target 'pocl-cpu report=/tmp/x': a preset name such as pocl-cpu, a #fbl.target<...> attribute, or set fbl.target in the model
expect_error("target", lambda: fbl.compile(model, target="pocl-cpu report=/tmp/x"))
# CHECK: brace: invalid target '#fbl.target<"pocl-cpu">} canonicalize{': a preset name
expect_error("brace", lambda: fbl.compile(model, target='#fbl.target<"pocl-cpu">} canonicalize{'))
# An attribute is the compiler's to judge, in one line.
# CHECK: attribute: {{.*}}target 'nope' is not a preset
expect_error("attribute", lambda: fbl.compile(model, target='#fbl.target<"nope">'))
# CHECK: attribute ok: manifest.json
print("attribute ok:", sorted(os.listdir(fbl.compile(
    model, target='#fbl.target<"pocl-cpu", half_storage = true>')))[1])
# CHECK: preset: {{.*}}unknown target 'snapdragon'; presets: adreno-a740, mali-g710, pocl-cpu, nvidia-h200
expect_error("preset", lambda: fbl.compile(model, target="snapdragon"))
# CHECK: local: {{adreno-a740|mali-g710|pocl-cpu|nvidia-h200}}
print("local:", fbl.local_target())
# CHECK: bundle: bundle '/no/bundle' is not a directory
expect_error("bundle", lambda: fbl.Session("/no/bundle"))
empty = tempfile.mkdtemp()
# CHECK: manifest: bundle '{{.*}}' has no kernels.cl
expect_error("manifest", lambda: fbl.Session(empty))

bundle = fbl.compile(model, target="pocl-cpu")  # @mlp_grad: no optimizer
with fbl.Session(bundle, "cpu") as s:
    # CHECK: shape: input arg0 needs shape (4, 6), got (6, 4)
    expect_error("shape", lambda: s.set_input(0, np.zeros((6, 4))))
    # CHECK: dtype: input arg1 needs int64, got float32
    expect_error("dtype", lambda: s.set_input(1, np.zeros(4, np.float32)))
    # CHECK: name: no input named 'w' (inputs: arg0, arg1, arg2, arg3, arg4, arg5)
    expect_error("name", lambda: s.set_input("w", 0))
    # CHECK: count: the bundle has 6 inputs, got 2 arrays
    expect_error("count", lambda: s.run([np.zeros((4, 6)), np.zeros(4)]))
    # CHECK: train: the bundle is not a training step: compile with optimizer='sgd' or optimizer='adamw'
    expect_error("train", lambda: s.train({}, 3))
# CHECK: closed: the session is closed
expect_error("closed", lambda: s.run())

step = fbl.compile(model, target="pocl-cpu", optimizer="sgd")
with fbl.Session(step, "cpu") as s:
    # CHECK: missing: input arg0 is not given (input, (4, 6) float32)
    expect_error("missing", lambda: s.train({}, 3))
print("done")
# CHECK: done
