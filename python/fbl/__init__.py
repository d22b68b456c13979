"""fbl from Python: compile a model's training step for mobile-GPU image
layouts and run or train it on the local OpenCL device with numpy arrays.

    import fbl, numpy as np
    bundle = fbl.compile("examples/mlp.mlir", optimizer="adamw", lr=0.01)
    with fbl.Session(bundle) as s:
        result = s.train({"arg0": w0, "arg1": b0, ...}, steps=100)

    # Fine-tune a decoder LLM (LoRA) on a text file:
    summary = fbl.finetune("tiny-llama", "examples/data/layouts.txt", "out/",
                           steps=300, lora={"rank": 8, "targets": ["q_proj", "v_proj"]})
"""

import os
from typing import Callable, Optional, Union

from .compiler import CompileError, compile, local_target
from .finetune import build_model, finetune
from .runtime import (Error, Session, TensorInfo, TrainResult, WeightsReport,
                      describe_device, list_devices, load_safetensors,
                      safetensors_metadata, save_safetensors)

__all__ = ["CompileError", "Error", "Session", "TensorInfo", "TrainResult",
           "WeightsReport", "build_model", "compile", "describe_device",
           "finetune", "list_devices", "load_safetensors", "local_target",
           "safetensors_metadata", "save_safetensors", "train"]


def train(model: Union[str, os.PathLike], inputs, steps: int, *,
          optimizer: str = "adamw", lr: float = 1e-3,
          policy: str = "fblayout", target: Optional[str] = None,
          device: Optional[str] = None,
          callback: Optional[Callable[[int, float, float], None]] = None,
          weights: Optional[Union[str, os.PathLike]] = None,
          seed: int = 0) -> TrainResult:
    """Compiles `model`'s training step and trains it for `steps` steps on
    `device`, starting from `inputs` (a list or {name, "argI" or index:
    array}), after loading the named inputs the safetensors file `weights`
    has; inputs neither sets start from their initializer (seeded by
    `seed`). Returns the losses, step times and final inputs (updated
    parameters)."""
    if optimizer == "none":
        raise Error("training needs an optimizer: 'sgd' or 'adamw'")
    bundle = compile(model, policy=policy, target=target, optimizer=optimizer,
                     lr=lr)
    with Session(bundle, device) as session:
        if weights is not None:
            session.load_weights(weights)
        return session.train(inputs, steps, callback, seed=seed)
