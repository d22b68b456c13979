"""Fine-tuning a model (a decoder LLM, or BERT's masked LM) from Python: the same job as the fbl-finetune
command (which this module runs), with its options as keyword arguments,
progress as a callback and the run's summary.json as the result."""

import json
import numbers
import os
import re
import subprocess
import tempfile
from typing import Callable, Optional, Sequence, Union

from .compiler import POLICIES, _tool, is_target
from .runtime import _INT64_MAX, Error, _c_path, _c_text, _integer

PathLike = Union[str, os.PathLike]

# Module and preset names travel inside fbl-finetune's --lora list and pass
# pipeline, where ',', '=', spaces or braces would start another option.
_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def _name(value, what: str) -> str:
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise Error(f"{what} must be a name (letters, digits, '_', '.', "
                    f"'-'), got {value!r}")
    return value


def _number(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise Error(f"{what} must be a number, got {value!r}")
    return float(value)


def _arg(value) -> str:
    """A path or name as a command-line argument (str, bytes or PathLike)."""
    return os.fsdecode(_c_path(value, "argument"))


_PROGRESS = re.compile(r"^step\s+(\d+)/(\d+)\s+loss (\S+)\s+(\S+) (?:tokens|samples)/s\s+(\S+) ms/step")


def build_model(model: str, *, seq: int = 128, batch: int = 1,
                task: Optional[str] = None) -> str:
    """The forward training model of `model` (a preset such as "tiny-llama"
    or "tiny-bert", or a config.json path) as MLIR text (fbl-model). `task`:
    "causal-lm", "masked-lm" or "classification" (default: the config's
    architectures)."""
    cmd = [_tool("fbl-model"), "--model", _arg(model),
           "--seq", str(_integer(seq, "seq", 1, _INT64_MAX)),
           "--batch", str(_integer(batch, "batch", 1, _INT64_MAX))]
    if task is not None:
        cmd += ["--task", _name(task, "task")]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise Error(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip()
                    else "fbl-model failed")
    return proc.stdout


def finetune(model: PathLike, data: PathLike, save: PathLike, *,
             weights: Optional[PathLike] = None,
             tokenizer: Optional[PathLike] = None,
             labels: Optional[PathLike] = None,
             context: Optional[PathLike] = None,
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
    """Fine-tunes `model` on the text in `data` (a file or a folder) — or,
    for a classifier (ViT, BERT for sequence classification), on the
    examples of `data` (.npy: images [N, C, S, S] or token ids [N, S]) with
    the integer labels of `labels` (.npy of N); for a diffusion UNet, on the
    latents of `data` (.npy [N, C, S, S]) under the text encoder hidden
    states of `context` (.npy [N, L, D]), noised at random timesteps — and
    writes the adapters (or with full=True the weights) as safetensors,
    loss.csv, loss.svg and summary.json into `save`; returns the summary.

    tokenizer: the model's Hugging Face tokenizer.json (BPE, byte-level as
    GPT-2/Llama-3/Qwen2 or SentencePiece-style as LLaMA-2/TinyLlama/Gemma);
    without it the text is tokenized byte by byte. Its token ids must fit
    the model's vocab_size; summary["tokenizer"] names the one used.

    lora: {"rank": 8, "alpha": 16, "targets": ["q_proj", "v_proj"],
    "trainable": [...]}; missing keys take fbl-finetune's defaults.
    callback(step, loss, tokens_per_second) is called on every progress line
    (samples per second for a classifier or a UNet).
    Raises fbl.Error with fbl-finetune's one-line message on failure.
    """
    if policy not in POLICIES:
        raise Error(f"unknown policy {policy!r}; one of {', '.join(POLICIES)}")
    if full and lora:
        raise Error("full=True and lora exclude each other")
    positive = {"steps": steps, "seq": seq, "batch": batch}
    counts = {k: _integer(v, k, 1, _INT64_MAX) for k, v in positive.items()}
    cmd = [_tool("fbl-finetune"), "--model", _arg(model),
           "--data", _arg(data), "--save", _arg(save),
           "--steps", str(counts["steps"]), "--seq", str(counts["seq"]),
           "--batch", str(counts["batch"]), "--lr", repr(_number(lr, "lr")),
           "--policy", policy, "--checkpoint-every",
           str(_integer(checkpoint_every, "checkpoint_every", 0, _INT64_MAX)),
           "--seed", str(_integer(seed, "seed", 0, 2**64 - 1)),
           "--save-dtype", _c_text(save_dtype, "save_dtype").decode()]
    if weights is not None:
        cmd += ["--weights", _arg(weights)]
    if tokenizer is not None:
        cmd += ["--tokenizer", _arg(tokenizer)]
    if labels is not None:
        cmd += ["--labels", _arg(labels)]
    if context is not None:
        cmd += ["--context", _arg(context)]
    if full:
        cmd.append("--full")
    if lora:
        if not isinstance(lora, dict):
            raise Error(f"lora must be a dict (rank, alpha, targets, "
                        f"trainable), got {lora!r}")
        unknown = set(lora) - {"rank", "alpha", "targets", "trainable"}
        if unknown:
            raise Error(f"unknown lora option(s) {sorted(unknown)}; "
                        "rank, alpha, targets, trainable")
        parts = []
        if "rank" in lora:
            rank = _integer(lora["rank"], "lora rank", 1, _INT64_MAX)
            parts.append(f"rank={rank}")
        if "alpha" in lora:
            parts.append(f"alpha={_number(lora['alpha'], 'lora alpha')!r}")
        for key in ("targets", "trainable"):
            if key in lora:
                names = lora[key]
                names = [names] if isinstance(names, str) else list(names)
                parts.append(f"{key}=" + ",".join(
                    _name(n, f"lora {key} entry") for n in names))
        cmd += ["--lora", ",".join(parts)]
    if device is not None:
        cmd += ["--device", _c_text(str(device), "device").decode()]
    if target is not None:
        if not is_target(target):
            raise Error("target must be a preset name or a #fbl.target<...> "
                        f"attribute, got {target!r}")
        cmd += ["--target", target]
    if resume:
        cmd.append("--resume")
    if merge:
        cmd.append("--merge")
    if cache_dir is not None:
        cmd += ["--cache-dir", _arg(cache_dir)]
    if log_every:
        cmd += ["--log-every",
                str(_integer(log_every, "log_every", 0, _INT64_MAX))]

    # stderr goes to a file: a pipe read only at the end could fill and
    # block the job. The job never outlives this call (a callback that
    # raises, Ctrl-C).
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err,
                                text=True)
        try:
            for line in proc.stdout:
                if not quiet:
                    print(line, end="", flush=True)
                m = _PROGRESS.match(line)
                if m and callback is not None:
                    callback(int(m.group(1)), float(m.group(3)),
                             float(m.group(4)))
            status = proc.wait()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()
        err.seek(0)
        stderr = err.read()
    if status != 0:
        lines = [l for l in stderr.strip().splitlines() if l.strip()]
        raise Error(lines[-1] if lines else "fbl-finetune failed")
    with open(os.path.join(_arg(save), "summary.json")) as f:
        return json.load(f)
