# RUN: %python %s %fbl_src_root/examples/mlp.mlir | FileCheck %s
#
# Inputs are checked before anything runs: integer inputs against their
# valid range (the runtime's check), casts that would change a value are
# refused, a training run whose loss turns non-finite stops, and
# fbl.compile leaves no temporary directory behind.

import os
import subprocess
import sys
import tempfile

import numpy as np

import fbl

model = sys.argv[1]
# Every temporary directory this script makes lands here.
tmp = tempfile.mkdtemp()
tempfile.tempdir = tmp


def expect_error(what, fn):
    try:
        fn()
    except fbl.Error as e:
        print(f"{what}: {e}")
        return
    raise AssertionError(f"{what}: no error")


out = os.path.join(tmp, "out")
bundle = fbl.compile(model, target="pocl-cpu", out_dir=out)
# CHECK: left after compile with out_dir: ['out']
print("left after compile with out_dir:", sorted(os.listdir(tmp)))

rng = np.random.default_rng(1)
with fbl.Session(bundle, "cpu") as s:
    inputs = [rng.uniform(-1, 1, i.shape).astype(np.float32)
              if i.dtype == np.float32 else np.zeros(i.shape, i.dtype)
              for i in s.inputs]
    inputs[1] = np.array([0, 1, 2, 4])
    good = s.run(inputs)
    # CHECK: label: input arg1: element 3 is 5, outside [0, 5): index out of range for a dimension of 5
    expect_error("label", lambda: s.set_input(1, np.array([0, 1, 2, 5])))
    # CHECK: huge: input arg1: element 0 is 100000000, outside [0, 5)
    expect_error("huge", lambda: s.set_input(1, np.array([10**8, 0, 0, 0])))
    # A refused input leaves the previous one: results are unchanged.
    again = s.run()
    # CHECK: unchanged: True
    print("unchanged:", all(np.array_equal(a, b) for a, b in zip(good, again)))
    # CHECK: f64: input arg0 needs float32; its float64 values are not all exactly representable as float32
    expect_error("f64", lambda: s.set_input(0, np.full((4, 6), 1e300)))
    # CHECK: u64: input arg1 needs int64; its uint64 values are not all exactly representable as int64
    expect_error("u64", lambda: s.set_input(1, np.full(4, 2**63, np.uint64)))
    # Exact values cast: f64 zeros to f32, int32 labels to int64.
    s.set_input(0, np.zeros((4, 6)))
    s.set_input(1, np.array([0, 1, 2, 4], np.int32))
    # CHECK: exact casts: ok
    print("exact casts: ok")

# CHECK: train: step {{[0-9]+}}: loss is {{nan|inf|-inf}}; training stopped
expect_error("train", lambda: fbl.train(
    model, {0: inputs[0], 1: inputs[1], 2: inputs[2], 3: inputs[3],
            4: inputs[4], 5: inputs[5]}, 20, optimizer="sgd", lr=1e30,
    target="pocl-cpu", device="cpu"))
# CHECK: lr: fbl-opt: {{.*}}mlp.mlir:0:0: error: fbl-autodiff: lr=nan is not a valid value; lr must be a finite number >= 0
expect_error("lr", lambda: fbl.compile(model, target="pocl-cpu",
                                       optimizer="sgd", lr=float("nan")))

# Without out_dir, the bundle's directory lives until the interpreter exits.
code = ("import fbl, os, sys; b = fbl.compile(sys.argv[1], target='pocl-cpu');"
        " print(os.path.isdir(b))")
env = dict(os.environ, TMPDIR=os.path.join(tmp, "child"))
os.makedirs(env["TMPDIR"])
# CHECK: bundle exists while running: True
print("bundle exists while running:",
      subprocess.run([sys.executable, "-c", code, model], env=env, text=True,
                     capture_output=True, check=True).stdout.strip())
# CHECK: left after exit: []
print("left after exit:", os.listdir(env["TMPDIR"]))
print("done")
# CHECK: done
