"""Trains the bundled MLP (examples/mlp.mlir) from Python with numpy arrays:
fbl compiles its AdamW step and runs it on the local OpenCL device.

    PYTHONPATH=build/python_packages /usr/bin/python3 examples/train_mlp.py

The batch is fixed (4 samples of 6 features, 5 classes), as the model's
shapes are; the loss falls as the MLP fits it.
"""

import argparse
import os

import numpy as np

import fbl

here = os.path.dirname(os.path.abspath(__file__))
parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--steps", type=int, default=50)
parser.add_argument("--lr", type=float, default=0.02)
parser.add_argument("--policy", default="fblayout",
                    choices=fbl.compiler.POLICIES)
parser.add_argument("--device", default=None,
                    help="OpenCL device: index, gpu, cpu or part of a name")
args = parser.parse_args()

rng = np.random.default_rng(0)
inputs = {
    "arg0": rng.standard_normal((4, 6)).astype(np.float32),  # x
    "arg1": np.array([0, 3, 1, 4]),                           # labels
    "arg2": rng.uniform(-0.4, 0.4, (6, 8)).astype(np.float32),  # W1
    "arg3": np.zeros(8, np.float32),                           # b1
    "arg4": rng.uniform(-0.35, 0.35, (8, 5)).astype(np.float32),  # W2
    "arg5": np.zeros(5, np.float32),                           # b2
}


def progress(step, loss, ms):
    if step == 1 or step % 10 == 0 or step == args.steps:
        print(f"step {step:4d}/{args.steps}  loss {loss:.5f}  {ms:.3f} ms")


result = fbl.train(os.path.join(here, "mlp.mlir"), inputs, args.steps,
                   optimizer="adamw", lr=args.lr, policy=args.policy,
                   device=args.device, callback=progress)
print(f"loss {result.losses[0]:.5f} -> {result.losses[-1]:.5f}, median step "
      f"{result.median_step_ms:.3f} ms")
w1 = result.state[2]
print(f"trained W1: shape {w1.shape}, |W1| = {np.linalg.norm(w1):.4f}")
