# UNSUPPORTED: asan
# RUN: fbl-opt %fbl_src_root/test/E2E/Inputs/lora-two-layer-lm.mlir --fbl-insert-lora="rank=4 alpha=8 targets=q_proj,v_proj" -o %t.lora.mlir
# RUN: %python %s %fbl_src_root/test/E2E/Inputs/lora-two-layer-lm.mlir %t.lora.mlir | FileCheck %s
#
# LoRA on the local device (PoCL): with B = 0 the adapted model's loss is
# the base model's (within 4 ulp: the graphs differ, so do the kernels that
# sum the norms' statistics); AdamW on the adapters lowers the loss; the
# step updates the adapters only, and the frozen weights on the device are
# bitwise what was uploaded (a fresh session given the uploaded weights and
# the trained adapters computes the same loss, to the bit).

import re
import sys

import numpy as np

import fbl

base_model, lora_model = sys.argv[1], sys.argv[2]
lora_text = open(lora_model).read()

# The adapters' initializers, from the rewritten model's fbl.init.
signature = lora_text[lora_text.index("func.func @two_layer_lm("):]
signature = signature[:signature.index("{\n")]
inits = re.findall(r'fbl.init = "([^"]+)"', signature)
assert len(inits) == 8, inits  # A and B of q_proj and v_proj, two layers

rng = np.random.default_rng(5)
with fbl.Session(fbl.compile(base_model, target="pocl-cpu"), "cpu") as base:
    base_inputs = []
    for info in base.inputs:
        if info.dtype == np.int64:
            base_inputs.append(rng.integers(0, 16, info.shape))
        elif len(info.shape) == 1:  # norm weights
            base_inputs.append(rng.uniform(0.5, 1.5, info.shape)
                               .astype(np.float32))
        else:
            base_inputs.append(rng.uniform(-0.5, 0.5, info.shape)
                               .astype(np.float32))
    base_loss = base.run(base_inputs)[0]

grad_bundle = fbl.compile(lora_model, target="pocl-cpu")
step_bundle = fbl.compile(lora_model, optimizer="adamw", lr=0.02,
                          target="pocl-cpu")
with fbl.Session(grad_bundle, "cpu") as lora:
    num_base = len(base_inputs)
    adapters = list(range(num_base, len(lora.inputs)))
    assert [i for i, info in enumerate(lora.inputs) if info.is_param] == \
        adapters
    inputs = list(base_inputs)
    for i, init in zip(adapters, inits):
        shape = lora.inputs[i].shape
        if init == "zeros":
            inputs.append(np.zeros(shape, np.float32))
        else:
            bound = float(init.removeprefix("uniform:"))
            assert bound == np.float32(1 / np.sqrt(shape[1])), init
            inputs.append(rng.uniform(-bound, bound, shape).astype(np.float32))
    lora_loss = lora.run(inputs)[0]
    # Equal up to the order of sums: the two graphs read the norms'
    # statistics differently (the base model's weight gradients read them
    # too), so the compiler sums them in different kernels (a row kernel's
    # tree, a per-texel kernel's sequence).
    assert abs(float(lora_loss) - float(base_loss)) <= \
        4 * np.finfo(np.float32).eps * abs(float(base_loss)), \
        (lora_loss, base_loss)
    print(f"B = 0: loss {float(lora_loss):.6f} equals the base model's")

with fbl.Session(step_bundle, "cpu") as s:
    updated = sorted(o.updates for o in s.outputs
                     if o.updates is not None and s.inputs[o.updates].is_param)
    assert updated == adapters, updated
    result = s.train({i: v for i, v in enumerate(inputs)}, 40)
    assert result.losses[-1] < 0.8 * result.losses[0], result.losses
    print(f"trained the adapters: loss {result.losses[0]:.4f} -> "
          f"{result.losses[-1]:.4f}")
    # The loss of the trained adapters on the device's frozen weights...
    on_device = s.run()[0]

with fbl.Session(step_bundle, "cpu") as fresh:
    # ... and on the weights uploaded at the start.
    # Moments at zero and a step count of 1 (they change the update, not
    # the loss).
    state = list(inputs) + [np.full(info.shape, info.is_step_count,
                                    info.dtype)
                            for info in fresh.inputs[len(inputs):]]
    for i in adapters:
        state[i] = result.state[i]
    uploaded = fresh.run(state)[0]
    assert on_device.tobytes() == uploaded.tobytes(), (on_device, uploaded)
    print("frozen weights unchanged on the device")

# CHECK: B = 0: loss {{[0-9.]+}} equals the base model's
# CHECK: trained the adapters: loss {{[0-9.]+}} -> {{[0-9.]+}}
# CHECK: frozen weights unchanged on the device
