"""Fine-tuning a decoder LLM from Python: the same job as the fbl-finetune
command (which this module runs), with its options as keyword arguments,
progress as a callback and the run's summary.json as the result."""

import json
import os
import re
import subprocess
from typing import Callable, Optional, Sequence, Union

from .compiler import POLICIES, _tool
from .runtime import Error

PathLike = Union[str, os.PathLike]

_PROGRESS = re.compile(r"^step\s+(\d+)/(\d+)\s+loss (\S+)\s+(\S+) tokens/s\s+(\S+) ms/step")


def build_model(model: str, *, seq: int = 128, batch: int = 1) -> str:
    """The forward training model of `model` (a preset such as "tiny-llama"
    or a config.json path) as MLIR text (fbl-model)."""
    proc = subprocess.run([_tool("fbl-model"), "--model", os.fspath(model),
                           "--seq", str(int(seq)), "--batch", str(int(batch))],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise Error(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip()
                    else "fbl-model failed")
    return proc.stdout


def finetune(model: PathLike, data: PathLike, save: PathLike, *,
             weights: Optional[PathLike] = None,
             lora: Optional[dict] = None, full: bool = False,
             steps: int = 200, seq: int = 128, batch: int = 4,
             lr: float = 1e-3, policy: str = "fblayout",
             device: Optional[str] = None, target: Optional[str] = None,
             checkpoint_every: int = 100, resume: bool = False,
             merge: bool = False, seed: int = 0,
             save_dtype: str = "F32", cache_dir: Optional[PathLike] = None,
             log_every: int = 0,
             callback: Optional[Callable[[int, float, float], None]] = None,
             quiet: bool = True) -> dict:
    """Fine-tunes `model` on the text in `data` (a file or a folder) and
    writes the adapters (or with full=True the weights) as safetensors,
    loss.csv, loss.svg and summary.json into `save`; returns the summary.

    lora: {"rank": 8, "alpha": 16, "targets": ["q_proj", "v_proj"],
    "trainable": [...]}; missing keys take fbl-finetune's defaults.
    callback(step, loss, tokens_per_second) is called on every progress line.
    Raises fbl.Error with fbl-finetune's one-line message on failure.
    """
    if policy not in POLICIES:
        raise Error(f"unknown policy {policy!r}; one of {', '.join(POLICIES)}")
    if full and lora:
        raise Error("full=True and lora exclude each other")
    cmd = [_tool("fbl-finetune"), "--model", os.fspath(model),
           "--data", os.fspath(data), "--save", os.fspath(save),
           "--steps", str(int(steps)), "--seq", str(int(seq)),
           "--batch", str(int(batch)), "--lr", repr(float(lr)),
           "--policy", policy, "--checkpoint-every", str(int(checkpoint_every)),
           "--seed", str(int(seed)), "--save-dtype", save_dtype]
    if weights is not None:
        cmd += ["--weights", os.fspath(weights)]
    if full:
        cmd.append("--full")
    if lora:
        unknown = set(lora) - {"rank", "alpha", "targets", "trainable"}
        if unknown:
            raise Error(f"unknown lora option(s) {sorted(unknown)}; "
                        "rank, alpha, targets, trainable")
        parts = []
        for key in ("rank", "alpha", "targets", "trainable"):
            if key in lora:
                value = lora[key]
                if isinstance(value, (list, tuple)):
                    value = ",".join(str(v) for v in value)
                parts.append(f"{key}={value}")
        cmd += ["--lora", ",".join(parts)]
    if device is not None:
        cmd += ["--device", str(device)]
    if target is not None:
        cmd += ["--target", str(target)]
    if resume:
        cmd.append("--resume")
    if merge:
        cmd.append("--merge")
    if cache_dir is not None:
        cmd += ["--cache-dir", os.fspath(cache_dir)]
    if log_every:
        cmd += ["--log-every", str(int(log_every))]

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    for line in proc.stdout:
        if not quiet:
            print(line, end="", flush=True)
        m = _PROGRESS.match(line)
        if m and callback is not None:
            callback(int(m.group(1)), float(m.group(3)), float(m.group(4)))
    stderr = proc.stderr.read()
    if proc.wait() != 0:
        lines = [l for l in stderr.strip().splitlines() if l.strip()]
        raise Error(lines[-1] if lines else "fbl-finetune failed")
    with open(os.path.join(os.fspath(save), "summary.json")) as f:
        return json.load(f)
