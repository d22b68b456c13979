"""ctypes binding of libfbl_runtime (runtime/include/fbl_runtime/fbl_runtime.h).

A Session opens a bundle on an OpenCL device and moves numpy arrays in and
out; the runtime packs and unpacks them with the layout algebra. Inputs are
found by name (the model's fbl.name) or as "argI"; weights load from and save
to safetensors files through the runtime's reader and writer, which
load_safetensors and save_safetensors also use.
"""

import ctypes
import dataclasses
import numbers
import os
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from . import _config


class Error(RuntimeError):
    """A failed fbl call; the message says what went wrong."""


_DTYPES = {"f32": np.float32, "f16": np.float16, "i64": np.int64,
           "i32": np.int32}

_lib = None


def _runtime():
    global _lib
    if _lib is not None:
        return _lib
    path = os.environ.get("FBL_RUNTIME_LIB") or _config.runtime_library()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise Error(f"cannot load libfbl_runtime ({path}): {e}") from None
    c = ctypes
    P = c.c_void_p
    sigs = {
        "fbl_last_error": (c.c_char_p, []),
        "fbl_list_devices": (c.c_int, [c.c_char_p, c.c_size_t]),
        "fbl_describe_device": (c.c_int, [c.c_char_p, c.c_char_p,
                                          c.c_size_t]),
        "fbl_target_preset": (c.c_int, [c.c_char_p, c.c_char_p,
                                        c.c_size_t]),
        "fbl_session_open": (c.c_int, [c.c_char_p, c.c_char_p,
                                       c.POINTER(P)]),
        "fbl_session_close": (None, [P]),
        "fbl_session_device_name": (c.c_char_p, [P]),
        "fbl_session_num_inputs": (c.c_size_t, [P]),
        "fbl_session_num_outputs": (c.c_size_t, [P]),
        "fbl_session_tensor_info": (c.c_int, [
            P, c.c_int, c.c_size_t, c.POINTER(c.c_int64),
            c.POINTER(c.c_size_t), c.POINTER(c.c_char_p),
            c.POINTER(c.c_int)]),
        "fbl_session_output_updates": (c.c_int64, [P, c.c_size_t]),
        "fbl_session_input_is_step_count": (c.c_int, [P, c.c_size_t]),
        "fbl_session_input_name": (c.c_char_p, [P, c.c_size_t]),
        "fbl_session_input_init": (c.c_char_p, [P, c.c_size_t]),
        "fbl_session_output_name": (c.c_char_p, [P, c.c_size_t]),
        "fbl_session_input_is_set": (c.c_int, [P, c.c_size_t]),
        "fbl_session_set_input": (c.c_int, [P, c.c_size_t, P, c.c_size_t]),
        "fbl_session_init_input": (c.c_int, [P, c.c_size_t, c.c_uint64]),
        "fbl_session_get_input": (c.c_int, [P, c.c_size_t, P, c.c_size_t]),
        "fbl_session_load_weights": (c.c_int, [P, c.c_char_p, c.c_int,
                                               c.c_char_p, c.c_size_t]),
        "fbl_session_save_weights": (c.c_int, [P, c.c_char_p, c.c_char_p,
                                               c.c_int, c.c_char_p]),
        "fbl_safetensors_open": (c.c_int, [c.c_char_p, c.POINTER(P)]),
        "fbl_safetensors_close": (None, [P]),
        "fbl_safetensors_num_tensors": (c.c_size_t, [P]),
        "fbl_safetensors_tensor_info": (c.c_int, [
            P, c.c_size_t, c.POINTER(c.c_char_p), c.POINTER(c.c_char_p),
            c.POINTER(c.POINTER(c.c_int64)), c.POINTER(c.c_size_t)]),
        "fbl_safetensors_read_f32": (c.c_int, [P, c.c_size_t, P,
                                               c.c_size_t]),
        "fbl_safetensors_num_metadata": (c.c_size_t, [P]),
        "fbl_safetensors_metadata": (c.c_int, [
            P, c.c_size_t, c.POINTER(c.c_char_p), c.POINTER(c.c_char_p)]),
        "fbl_safetensors_writer_create": (c.c_int, [c.POINTER(P)]),
        "fbl_safetensors_writer_free": (None, [P]),
        "fbl_safetensors_writer_add_f32": (c.c_int, [
            P, c.c_char_p, c.POINTER(c.c_int64), c.c_size_t, P, c.c_char_p]),
        "fbl_safetensors_writer_add_metadata": (c.c_int, [P, c.c_char_p,
                                                          c.c_char_p]),
        "fbl_safetensors_writer_write": (c.c_int, [P, c.c_char_p]),
        "fbl_session_run": (c.c_int, [P, c.c_int, c.c_int]),
        "fbl_session_train_step": (c.c_int, [P, c.c_int64, c.c_int]),
        "fbl_session_median_ms": (c.c_double, [P]),
        "fbl_session_get_output": (c.c_int, [P, c.c_size_t, P, c.c_size_t]),
        "fbl_session_num_kernels": (c.c_size_t, [P]),
        "fbl_session_kernel_name": (c.c_char_p, [P, c.c_size_t]),
        "fbl_session_kernel_ms": (c.c_double, [P, c.c_size_t]),
        "fbl_session_kernel_variant": (c.c_char_p, [P, c.c_size_t]),
        "fbl_session_device_bytes": (c.c_int64, [P]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    _lib = lib
    return lib


def _c_text(value, what: str) -> bytes:
    """`value`, a str, as the NUL-terminated bytes the C API takes: a NUL
    inside would cut it short without a word."""
    if not isinstance(value, str):
        raise Error(f"{what} must be a string, got {type(value).__name__}")
    if "\0" in value:
        raise Error(f"{what} {value!r} contains a NUL character")
    return value.encode()


def _c_path(path, what: str = "path") -> bytes:
    """A path (str, bytes or os.PathLike) as the C API's bytes; see _c_text."""
    try:
        raw = os.fsencode(path)
    except TypeError:
        raise Error(f"{what} must be a path, got {type(path).__name__}") \
            from None
    if b"\0" in raw:
        raise Error(f"{what} {path!r} contains a NUL character")
    return raw


def _integer(value, what: str, low: int, high: int) -> int:
    """`value` as an int in [low, high]; ctypes would wrap a larger one and
    int() would truncate a float, both in silence."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise Error(f"{what} must be an integer, got {value!r}")
    if not low <= int(value) <= high:
        raise Error(f"{what} must be in [{low}, {high}], got {int(value)}")
    return int(value)


_INT_MAX = 2**31 - 1
_INT64_MAX = 2**63 - 1


def _check(status: int) -> None:
    if status != 0:
        raise Error(_runtime().fbl_last_error().decode())


def _text_call(fn, *args) -> str:
    buf = ctypes.create_string_buffer(1 << 16)
    _check(fn(*args, buf, len(buf)))
    return buf.value.decode()


def list_devices() -> List[str]:
    """One line per OpenCL device: "index: platform / device / type"."""
    return _text_call(_runtime().fbl_list_devices).splitlines()


def target_preset(device: Optional[str] = None) -> str:
    """The built-in target preset for `device`, chosen by its vendor."""
    return _text_call(_runtime().fbl_target_preset,
                      _c_text(str(device or ""), "device"))


def describe_device(device: Optional[str] = None) -> str:
    """The #fbl.target<...> attribute that describes `device`."""
    return _text_call(_runtime().fbl_describe_device,
                      _c_text(str(device or ""), "device"))


# The weights flags of fbl_runtime.h.
_WEIGHTS_STRICT = 1
_WEIGHTS_OPTIMIZER_STATE = 2


@dataclasses.dataclass(frozen=True)
class TensorInfo:
    """An input or output of a bundle. `name` is the model's fbl.name (for
    outputs: "loss", "<param>.grad", or the name of the input a training step
    updates), else "argI" / "resultJ"."""
    name: str
    shape: tuple
    dtype: np.dtype
    is_param: bool = False
    is_step_count: bool = False
    updates: Optional[int] = None  # outputs: the input a step replaces
    init: Optional[str] = None  # inputs: fbl.init, e.g. "normal:0.02"
    label: str = ""  # how messages name it: "input 'labels' (arg 1)"


@dataclasses.dataclass
class WeightsReport:
    """What Session.load_weights did, by tensor name: the inputs it set,
    the parameters without initializer nothing set ("argI" when unnamed),
    and the file's tensors that match no input."""
    loaded: List[str]
    missing: List[str]
    unused: List[str]


@dataclasses.dataclass
class TrainResult:
    losses: List[float]
    step_ms: List[float]
    state: List[np.ndarray]  # every input after the last step

    @property
    def median_step_ms(self) -> float:
        return float(np.median(self.step_ms))


def _exact_cast(array: np.ndarray, dtype: np.dtype, name: str) -> np.ndarray:
    """`array` as `dtype` when numpy casts it safely or the cast changes no
    value; else raises Error naming input `name` (f64 1e300 would become
    inf, uint64 2**63 would wrap). Floats never become integers."""
    src = array.dtype
    if np.can_cast(src, dtype, casting="safe"):
        return array.astype(dtype)
    if not np.can_cast(src, dtype, casting="same_kind"):
        raise Error(f"{name} needs {dtype}, got {src}")
    if array.size == 0:
        return array.astype(dtype)
    refuse = Error(f"{name} needs {dtype}; its {src} values are not all "
                   f"exactly representable as {dtype}")
    if dtype.kind in "iu":
        # Integers to integers: compared as Python ints, exactly.
        info = np.iinfo(dtype)
        if int(array.min()) < info.min or int(array.max()) > info.max:
            raise refuse
        return array.astype(dtype)
    with np.errstate(all="ignore"):
        cast = array.astype(dtype)
        back = cast.astype(src)
    same = back == array
    if src.kind == "f":
        same |= np.isnan(back) & np.isnan(array)
    if not np.all(same):
        raise Error(f"{name} needs {dtype}; its {src} values are not all "
                    f"exactly representable as {dtype} (round them with "
                    f".astype(np.{dtype.name}) first if that is meant)")
    return cast


ArrayInputs = Union[Sequence[np.ndarray], Mapping[Union[int, str], np.ndarray]]


class Session:
    """A bundle opened on an OpenCL device.

    `device`: None for $FBL_DEVICE where set, else the first GPU (else the
    first CPU device); a device index, "gpu", "cpu", or part of a device
    name.
    """

    def __init__(self, bundle: Union[str, os.PathLike],
                 device: Optional[Union[str, int]] = None):
        lib = _runtime()
        self._lib = lib
        self._handle = ctypes.c_void_p()
        sel = "" if device is None else str(device)
        _check(lib.fbl_session_open(_c_path(bundle, "bundle"),
                                    _c_text(sel, "device"),
                                    ctypes.byref(self._handle)))
        self.inputs = [self._info(0, i)
                       for i in range(lib.fbl_session_num_inputs(self._handle))]
        self.outputs = [self._info(1, j)
                        for j in range(lib.fbl_session_num_outputs(self._handle))]

    def _info(self, output: int, index: int) -> TensorInfo:
        shape = (ctypes.c_int64 * 8)()
        rank = ctypes.c_size_t()
        dtype = ctypes.c_char_p()
        is_param = ctypes.c_int()
        _check(self._lib.fbl_session_tensor_info(
            self._handle, output, index, shape, ctypes.byref(rank),
            ctypes.byref(dtype), ctypes.byref(is_param)))
        kind = dtype.value.decode()
        if kind not in _DTYPES:
            raise Error(f"unsupported element type {kind}")
        if output:
            t = self._lib.fbl_session_output_updates(self._handle, index)
            name = self._lib.fbl_session_output_name(self._handle,
                                                     index).decode()
            return TensorInfo(name or f"result{index}",
                              tuple(shape[:rank.value]),
                              np.dtype(_DTYPES[kind]),
                              updates=None if t < 0 else int(t),
                              label=(f"output '{name}' (result {index})"
                                     if name else f"output result{index}"))
        name = self._lib.fbl_session_input_name(self._handle, index).decode()
        init = self._lib.fbl_session_input_init(self._handle, index).decode()
        return TensorInfo(
            name or f"arg{index}", tuple(shape[:rank.value]),
            np.dtype(_DTYPES[kind]),
            is_param=bool(is_param.value),
            is_step_count=bool(self._lib.fbl_session_input_is_step_count(
                self._handle, index)),
            init=init or None,
            label=(f"input '{name}' (arg {index})" if name
                   else f"input arg{index}"))

    # Context manager and explicit close release the device memory.
    def close(self) -> None:
        if self._handle:
            self._lib.fbl_session_close(self._handle)
            self._handle = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _live(self):
        if not self._handle:
            raise Error("the session is closed")
        return self._handle

    @property
    def device_name(self) -> str:
        return self._lib.fbl_session_device_name(self._live()).decode()

    @property
    def device_bytes(self) -> int:
        """Device memory of the bundle's images and buffers."""
        return int(self._lib.fbl_session_device_bytes(self._live()))

    @property
    def is_training_step(self) -> bool:
        return any(o.updates is not None for o in self.outputs)

    def _index(self, key: Union[int, str]) -> int:
        if isinstance(key, str):
            for i, info in enumerate(self.inputs):
                if info.name == key:
                    return i
            if key.startswith("arg") and key[3:].isdigit():
                return self._index(int(key[3:]))
            names = [i.name for i in self.inputs]
            shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
            raise Error(f"no input named {key!r} (inputs: {shown})")
        if isinstance(key, bool) or not isinstance(key, numbers.Integral):
            raise Error(f"an input is named by a string or an index, got "
                        f"{key!r}")
        key = int(key)
        if not 0 <= key < len(self.inputs):
            raise Error(f"input {key} out of range: the bundle has "
                        f"{len(self.inputs)} inputs")
        return key

    def set_input(self, key: Union[int, str], value) -> None:
        """Copies `value` to input `key`: its dtype, or one numpy casts to it
        safely, or values the input's dtype holds exactly (f64 data of f32
        values, small int64 ids for an i32 input); anything else raises."""
        i = self._index(key)
        info = self.inputs[i]
        array = np.asarray(value)
        if array.shape != info.shape:
            raise Error(f"{info.label} needs shape {info.shape}, got "
                        f"{array.shape}")
        if array.dtype != info.dtype:
            array = _exact_cast(array, info.dtype, info.label)
        array = np.ascontiguousarray(array)
        _check(self._lib.fbl_session_set_input(
            self._live(), i, array.ctypes.data_as(ctypes.c_void_p),
            array.nbytes))

    def set_inputs(self, inputs: ArrayInputs) -> None:
        items = (inputs.items() if isinstance(inputs, Mapping)
                 else enumerate(inputs))
        if not isinstance(inputs, Mapping) and len(inputs) != len(self.inputs):
            raise Error(f"the bundle has {len(self.inputs)} inputs, got "
                        f"{len(inputs)} arrays")
        for key, value in items:
            self.set_input(key, value)

    def get_input(self, key: Union[int, str]) -> np.ndarray:
        """Input `key`'s current value: what was set, or after training
        steps the latest update."""
        i = self._index(key)
        info = self.inputs[i]
        out = np.empty(info.shape, info.dtype)
        _check(self._lib.fbl_session_get_input(
            self._live(), i, out.ctypes.data_as(ctypes.c_void_p), out.nbytes))
        return out

    def is_set(self, key: Union[int, str]) -> bool:
        """Whether input `key` holds a value (set, initialized or loaded)."""
        return bool(self._lib.fbl_session_input_is_set(self._live(),
                                                       self._index(key)))

    def init_input(self, key: Union[int, str], seed: int = 0) -> None:
        """Sets input `key` from its initializer (`TensorInfo.init`), drawn
        from a generator seeded by `seed` and the input's name."""
        _check(self._lib.fbl_session_init_input(
            self._live(), self._index(key),
            _integer(seed, "seed", 0, 2**64 - 1)))

    def load_weights(self, path: Union[str, os.PathLike],
                     strict: bool = False) -> WeightsReport:
        """Sets every input named like a tensor of the safetensors file
        `path` (shapes must match exactly). With `strict`, a missing
        parameter or an unused tensor raises and nothing is set."""
        buf = ctypes.create_string_buffer(1 << 22)
        _check(self._lib.fbl_session_load_weights(
            self._live(), _c_path(path),
            _WEIGHTS_STRICT if strict else 0, buf, len(buf)))
        report = WeightsReport([], [], [])
        for line in buf.value.decode().splitlines():
            kind, _, name = line.partition(" ")
            getattr(report, kind).append(name)
        return report

    def save_weights(self, path: Union[str, os.PathLike],
                     filter: Optional[str] = None,
                     optimizer_state: bool = False,
                     dtype: str = "F32") -> None:
        """Writes the named parameters' current values (those whose name
        contains `filter`; with `optimizer_state`, the optimizer's moments
        too) to the safetensors file `path` as `dtype` (F32, F16, BF16)."""
        _check(self._lib.fbl_session_save_weights(
            self._live(), _c_path(path), _c_text(filter or "", "filter"),
            _WEIGHTS_OPTIMIZER_STATE if optimizer_state else 0,
            _c_text(dtype, "dtype")))

    def get_output(self, index: int) -> np.ndarray:
        if isinstance(index, bool) or not isinstance(index, numbers.Integral):
            raise Error(f"an output is named by its index, got {index!r}")
        if not 0 <= index < len(self.outputs):
            raise Error(f"output {index} out of range: the bundle has "
                        f"{len(self.outputs)} outputs")
        info = self.outputs[index]
        out = np.empty(info.shape, info.dtype)
        _check(self._lib.fbl_session_get_output(
            self._live(), index, out.ctypes.data_as(ctypes.c_void_p),
            out.nbytes))
        return out

    def run(self, inputs: Optional[ArrayInputs] = None, iterations: int = 1,
            profile: bool = False) -> List[np.ndarray]:
        """Sets `inputs` (all, or a mapping of some), runs the schedule
        `iterations` times and returns every output."""
        iterations = _integer(iterations, "iterations", 1, _INT_MAX)
        if inputs is not None:
            self.set_inputs(inputs)
        _check(self._lib.fbl_session_run(self._live(), iterations,
                                         int(profile)))
        return [self.get_output(j) for j in range(len(self.outputs))]

    @property
    def median_ms(self) -> float:
        """Median wall time of one iteration of the last run."""
        return float(self._lib.fbl_session_median_ms(self._live()))

    def kernel_times(self) -> Dict[str, float]:
        """Per-kernel median device times (ms) of the last profiled run."""
        h = self._live()
        return {self._lib.fbl_session_kernel_name(h, k).decode():
                float(self._lib.fbl_session_kernel_ms(h, k))
                for k in range(self._lib.fbl_session_num_kernels(h))}

    def kernel_variants(self) -> Dict[str, str]:
        """The launches that run a variant of their function (the manifest's
        `variants`, measured on the device by the first run): launch name
        -> the variant's function."""
        h = self._live()
        names = (self._lib.fbl_session_kernel_name(h, k).decode()
                 for k in range(self._lib.fbl_session_num_kernels(h)))
        return {n: v.decode() for k, n in enumerate(names)
                if (v := self._lib.fbl_session_kernel_variant(h, k))}

    def train(self, inputs: ArrayInputs, steps: int,
              callback: Optional[Callable[[int, float, float], None]] = None,
              seed: int = 0) -> TrainResult:
        """Runs `steps` steps of a training-step bundle: each step's updated
        parameters (and optimizer state) become the next step's inputs, the
        step count input is set per step. Inputs the caller leaves out keep
        what the session holds (set before, or loaded with load_weights),
        else start from their initializer (seeded by `seed`); optimizer
        moments start at zero. `callback(step, loss, ms)` is called after
        each step."""
        if not self.is_training_step:
            raise Error("the bundle is not a training step: compile with "
                        "optimizer='sgd' or optimizer='adamw'")
        steps = _integer(steps, "steps", 1, _INT64_MAX)
        given = (dict(inputs) if isinstance(inputs, Mapping)
                 else dict(enumerate(inputs)))
        given = {self._index(k): v for k, v in given.items()}
        state_inputs = {o.updates for o in self.outputs
                        if o.updates is not None}
        for i, info in enumerate(self.inputs):
            if i in given:
                self.set_input(i, given[i])
            elif info.is_step_count or self.is_set(i):
                pass
            elif info.init is not None:
                self.init_input(i, seed)
            elif i in state_inputs and not info.is_param:
                self.set_input(i, np.zeros(info.shape, info.dtype))
            else:
                kind = "parameter" if info.is_param else "input"
                raise Error(f"{info.label} is not given ({kind}, "
                            f"{info.shape} {info.dtype})")
        losses, times = [], []
        for step in range(1, steps + 1):
            _check(self._lib.fbl_session_train_step(self._live(), step, 0))
            times.append(self.median_ms)
            loss = float(self.get_output(0).reshape(-1)[0])
            losses.append(loss)
            # The runtime stops a step whose loss is not finite; this keeps
            # the promise for a runtime that does not.
            if not np.isfinite(loss):
                raise Error(f"step {step}: loss is {loss}; training stopped")
            if callback is not None:
                callback(step, loss, times[-1])
        return TrainResult(losses, times,
                           [self.get_input(i) for i in range(len(self.inputs))])


def load_safetensors(path: Union[str, os.PathLike]) -> Dict[str, np.ndarray]:
    """Every tensor of the safetensors file `path`, as float32 arrays by
    name (F32, F16, BF16 exactly; F64 and I64/I32 when float32 holds them),
    read through libfbl_runtime's validating reader."""
    lib = _runtime()
    handle = ctypes.c_void_p()
    _check(lib.fbl_safetensors_open(_c_path(path), ctypes.byref(handle)))
    try:
        tensors = {}
        for k in range(lib.fbl_safetensors_num_tensors(handle)):
            name = ctypes.c_char_p()
            shape = ctypes.POINTER(ctypes.c_int64)()
            rank = ctypes.c_size_t()
            _check(lib.fbl_safetensors_tensor_info(
                handle, k, ctypes.byref(name), None, ctypes.byref(shape),
                ctypes.byref(rank)))
            array = np.empty(tuple(shape[d] for d in range(rank.value)),
                             np.float32)
            _check(lib.fbl_safetensors_read_f32(
                handle, k, array.ctypes.data_as(ctypes.c_void_p), array.size))
            tensors[name.value.decode()] = array
        return tensors
    finally:
        lib.fbl_safetensors_close(handle)


def safetensors_metadata(path: Union[str, os.PathLike]) -> Dict[str, str]:
    """The `__metadata__` of the safetensors file `path`."""
    lib = _runtime()
    handle = ctypes.c_void_p()
    _check(lib.fbl_safetensors_open(_c_path(path), ctypes.byref(handle)))
    try:
        metadata = {}
        for k in range(lib.fbl_safetensors_num_metadata(handle)):
            key, value = ctypes.c_char_p(), ctypes.c_char_p()
            _check(lib.fbl_safetensors_metadata(handle, k, ctypes.byref(key),
                                                ctypes.byref(value)))
            metadata[key.value.decode()] = value.value.decode()
        return metadata
    finally:
        lib.fbl_safetensors_close(handle)


def save_safetensors(path: Union[str, os.PathLike],
                     tensors: Mapping[str, np.ndarray],
                     metadata: Optional[Mapping[str, str]] = None,
                     dtype: str = "F32") -> None:
    """Writes `tensors` (float arrays by name) to the safetensors file
    `path` as `dtype` ("F32", "F16" or "BF16", rounded to nearest even),
    with `metadata` as `__metadata__`, through libfbl_runtime's writer
    (a temporary file renamed when complete)."""
    if not isinstance(tensors, Mapping):
        raise Error("tensors must be a mapping of names to arrays, got "
                    f"{type(tensors).__name__}")
    lib = _runtime()
    handle = ctypes.c_void_p()
    _check(lib.fbl_safetensors_writer_create(ctypes.byref(handle)))
    try:
        for name, value in tensors.items():
            if not isinstance(name, str):
                raise Error(f"tensor names are strings, got {name!r}")
            array = np.asarray(value)
            if array.dtype.kind == "f":
                # Rounded like the F16/BF16 conversions, but never to inf.
                with np.errstate(over="ignore"):
                    cast = array.astype(np.float32)
                if np.any(np.isinf(cast) & np.isfinite(array)):
                    raise Error(f"tensor {name!r}: values outside the "
                                "float32 range")
                array = cast
            elif array.dtype.kind in "iub":
                array = _exact_cast(array, np.dtype(np.float32),
                                    f"tensor {name!r}")
            else:
                raise Error(f"tensor {name!r}: cannot save {array.dtype} "
                            "data as floats")
            array = np.asarray(array, order="C")  # keeps 0-d arrays 0-d
            shape = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
            _check(lib.fbl_safetensors_writer_add_f32(
                handle, _c_text(name, "tensor name"), shape, array.ndim,
                array.ctypes.data_as(ctypes.c_void_p),
                _c_text(dtype, "dtype")))
        for key, value in (metadata or {}).items():
            _check(lib.fbl_safetensors_writer_add_metadata(
                handle, _c_text(str(key), "metadata key"),
                _c_text(str(value), "metadata value")))
        _check(lib.fbl_safetensors_writer_write(handle, _c_path(path)))
    finally:
        lib.fbl_safetensors_writer_free(handle)
