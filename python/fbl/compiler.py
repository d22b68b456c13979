"""Compiling a model's training step into a bundle with fbl-opt and
fbl-translate (the same commands the user guide shows)."""

import atexit
import numbers
import os
import re
import shutil
import subprocess
import tempfile
from typing import Optional, Union

from . import _config
from .runtime import Error, _c_path, target_preset

POLICIES = ("fblayout", "reuse-forward", "explicit-transpose")
OPTIMIZERS = ("none", "sgd", "adamw")


class CompileError(Error):
    """fbl-opt or fbl-translate rejected the model. The message is the tool
    and its first error line; `diagnostics` holds everything it printed
    (notes, the offending source line)."""

    def __init__(self, message: str, diagnostics: str = ""):
        super().__init__(message)
        self.diagnostics = diagnostics


def _tool(name: str) -> str:
    tools = os.environ.get("FBL_TOOLS_DIR") or _config.tools_dir()
    path = os.path.join(tools, name)
    if not os.access(path, os.X_OK):
        raise Error(f"{name} not found in {tools} (set FBL_TOOLS_DIR)")
    return path


def _run(cmd, **kw) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        first = next((l for l in lines if "error:" in l),
                     lines[0] if lines else f"exit status {proc.returncode}")
        raise CompileError(f"{os.path.basename(cmd[0])}: {first.strip()}",
                           proc.stderr)


def is_target(target) -> bool:
    """Whether `target` is a preset name or a #fbl.target<...> attribute
    that can go into a pass option (no braces)."""
    return isinstance(target, str) and bool(
        re.fullmatch(r"[A-Za-z0-9_.-]+", target) or
        re.fullmatch(r"#fbl\.target<[^{}]*>", target))


def local_target(device: Optional[str] = None) -> str:
    """The target preset for an OpenCL device (default: the one a Session
    picks): its vendor's preset, else the PoCL CPU preset."""
    return target_preset(device)


def compile(model: Union[str, os.PathLike], *, policy: str = "fblayout",
            target: Optional[str] = None, optimizer: str = "none",
            lr: float = 1e-3, out_dir: Optional[Union[str, os.PathLike]] = None,
            spirv: bool = False, report: Optional[str] = None) -> str:
    """Compiles `model` (a .mlir file, or MLIR text) and returns the bundle
    directory (`out_dir`, else a fresh temporary one that is removed when
    the interpreter exits: pass out_dir to keep the bundle).

    target: a preset name (adreno-a740, mali-g710, pocl-cpu, nvidia-h200)
    or a #fbl.target<...> attribute (e.g. '#fbl.target<"mali-g710",
    half_storage = false>'); default: the module's fbl.target, else the local device's preset.
    optimizer: "none" gives @f_grad's bundle (loss and gradients); "sgd" or
    "adamw" a training step whose outputs replace its inputs.
    """
    if policy not in POLICIES:
        raise Error(f"unknown policy {policy!r}; one of {', '.join(POLICIES)}")
    if optimizer not in OPTIMIZERS:
        raise Error(f"unknown optimizer {optimizer!r}; one of "
                    f"{', '.join(OPTIMIZERS)}")
    try:
        path = os.fsdecode(model)
    except TypeError:
        raise Error("model must be a .mlir path or MLIR text, got "
                    f"{type(model).__name__}") from None
    text = None
    if not os.path.exists(path):
        if "func.func" not in path:
            raise Error(f"{path}: no such model file")
        text = path
    if target is not None and not is_target(target):
        raise Error(f"invalid target {target!r}: a preset name such as "
                    "pocl-cpu, a #fbl.target<...> attribute, or set "
                    "fbl.target in the model")
    # fbl-autodiff checks the value; a string here would reach it quoted.
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real):
        raise Error(f"lr must be a number, got {lr!r}")
    options = [f"policy={policy}", f"optimizer={optimizer}",
               f"lr={float(lr)!r}"]
    # The module's own fbl.target wins over the local device's preset.
    # Braces keep an attribute's spaces and commas in one option value.
    options.append(f"target={{{target}}}" if target is not None else
                   f"fallback-target={local_target()}")
    if report:
        # Quoted, so that a space cannot start another pipeline option.
        report = os.path.abspath(os.fsdecode(_c_path(report, "report")))
        if "'" in report or not report.isprintable():
            raise Error(f"report path {report!r}: quotes and control "
                        "characters are not supported")
        options.append(f"report='{report}'")
    # Intermediate files live in `work`, removed on return; a bundle without
    # out_dir gets its own temporary directory, removed at interpreter exit.
    with tempfile.TemporaryDirectory(prefix="fbl-") as work:
        if out_dir:
            bundle = os.fspath(out_dir)
        else:
            bundle_dir = tempfile.mkdtemp(prefix="fbl-bundle-")
            atexit.register(shutil.rmtree, bundle_dir, ignore_errors=True)
            bundle = os.path.join(bundle_dir, "bundle")
        try:
            if text is not None:
                path = os.path.join(work, "model.mlir")
                with open(path, "w") as f:
                    f.write(text)
            compiled = os.path.join(work, "compiled.mlir")
            # Verified when parsed here and again by fbl-translate, not
            # after every pass (as fbl-finetune and LLVM's opt do).
            _run([_tool("fbl-opt"), path, "--verify-each=0",
                  f"--fbl-training-pipeline={' '.join(options)}", "-o",
                  compiled])
            # fbl-translate emits @f_step when there is one, else @f_grad.
            _run([_tool("fbl-translate"),
                  "--fbl-to-spirv" if spirv else "--fbl-to-opencl", compiled,
                  "-o", bundle])
        except BaseException:
            if not out_dir:
                shutil.rmtree(bundle_dir, ignore_errors=True)
            raise
    return bundle
