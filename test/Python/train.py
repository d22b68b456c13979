# RUN: %python %s %fbl_src_root/examples/mlp.mlir | FileCheck %s
#
# Session.train on the MLP's AdamW step: the loss falls, the returned state
# is the updated parameters, and it equals stepping by hand with run()
# (outputs fed back to the inputs they update, the step count set per step).

import sys

import numpy as np

import fbl

model = sys.argv[1]
bundle = fbl.compile(model, optimizer="adamw", lr=0.05, target="pocl-cpu")
rng = np.random.default_rng(3)
with fbl.Session(bundle, "cpu") as s:
    assert s.is_training_step
    inputs = {}
    for info in s.inputs:
        if info.is_step_count or (not info.is_param and any(
                o.updates == s.inputs.index(info) for o in s.outputs)):
            continue  # train() sets the step count and zeroes the moments
        if info.dtype == np.int64:
            inputs[info.name] = rng.integers(0, 5, info.shape)
        else:
            inputs[info.name] = rng.uniform(-1, 1, info.shape).astype(
                np.float32)
    seen = []
    result = s.train(inputs, 30, callback=lambda step, loss, ms:
                     seen.append((step, loss, ms)))
    assert [t[0] for t in seen] == list(range(1, 31))
    assert result.losses == [t[1] for t in seen]
    assert result.losses[-1] < 0.5 * result.losses[0], result.losses
    params = [i for i, info in enumerate(s.inputs) if info.is_param]
    for i in params:
        assert not np.allclose(result.state[i], inputs[s.inputs[i].name])
    print(f"loss {result.losses[0]:.3f} -> {result.losses[-1]:.3f}")

    # By hand, from the same start: the same losses and parameters.
    step_inputs = [i for i, info in enumerate(s.inputs) if info.is_step_count]
    for i, info in enumerate(s.inputs):
        s.set_input(i, inputs.get(info.name, np.zeros(info.shape, info.dtype)))
    for step in range(1, 4):
        for i in step_inputs:
            s.set_input(i, np.full(s.inputs[i].shape, step, np.float32))
        outs = s.run()
        np.testing.assert_allclose(outs[0], result.losses[step - 1],
                                   rtol=1e-6)
        for j, out in enumerate(s.outputs):
            if out.updates is not None:
                s.set_input(out.updates, outs[j])
    print("train() equals stepping with run()")

# CHECK: loss {{[0-9.]+}} -> {{[0-9.]+}}
# CHECK: train() equals stepping with run()
