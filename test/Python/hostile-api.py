# RUN: %python %s %fbl_src_root/examples/mlp.mlir | FileCheck %s
#
# The Python API as a hostile caller uses it: every bad argument gives an
# fbl.Error of one line, nothing reaches the C API cut short or wrapped
# around (ctypes truncates strings at a NUL and wraps integers in silence),
# nothing smuggles pipeline options, and a failed compile leaves no
# temporary directory behind.

import os
import sys
import tempfile

import numpy as np

import fbl

model = sys.argv[1]
tmp = tempfile.mkdtemp()
tempfile.tempdir = tmp


def expect_error(what, fn):
    try:
        fn()
    except fbl.Error as e:
        message = str(e)
        assert "\n" not in message, f"{what}: several lines: {message!r}"
        print(f"{what}: {message}")
        return e
    raise AssertionError(f"{what}: no error")


# fbl.compile: one line per error, the rest in `diagnostics`.
# CHECK: syntax: fbl-opt: {{.*}}model.mlir:1:14: error: expected non-function type
e = expect_error("syntax", lambda: fbl.compile("func.func @f( {"))
# CHECK: diagnostics: 3 lines
print("diagnostics:", len(e.diagnostics.strip().splitlines()), "lines")
# CHECK: lr nan: fbl-opt: {{.*}}mlp.mlir:0:0: error: fbl-autodiff: lr=nan is not a valid value; lr must be a finite number >= 0
expect_error("lr nan", lambda: fbl.compile(model, target="pocl-cpu",
                                           optimizer="sgd", lr=float("nan")))
# A string would reach the pipeline quoted: refused as what it is.
# CHECK: lr text: lr must be a number, got '0.1'
expect_error("lr text", lambda: fbl.compile(model, lr="0.1"))
# CHECK: model type: model must be a .mlir path or MLIR text, got int
expect_error("model type", lambda: fbl.compile(123))
# CHECK: left after failed compiles: []
print("left after failed compiles:", os.listdir(tmp))

# A report path with a space is one path, not a second option.
report = os.path.join(tmp, "r optimizer=sgd")
bundle = fbl.compile(model, target="pocl-cpu", report=report,
                     out_dir=os.path.join(tmp, "b"))
# CHECK: report written: True
print("report written:", os.path.isfile(report))
# CHECK: report quote: report path {{.*}}: quotes and control characters are not supported
expect_error("report quote", lambda: fbl.compile(
    model, target="pocl-cpu", report=os.path.join(tmp, "it's")))

with fbl.Session(bundle, "cpu") as s:
    # CHECK: not a step: True
    print("not a step:", not s.is_training_step)
    # ctypes would run 2**32 + 1 iterations as 1.
    # CHECK: iterations: iterations must be in [1, 2147483647], got 4294967297
    expect_error("iterations", lambda: s.run(iterations=2**32 + 1))
    # CHECK: iterations float: iterations must be an integer, got 1.5
    expect_error("iterations float", lambda: s.run(iterations=1.5))
    # CHECK: bool key: an input is named by a string or an index, got True
    expect_error("bool key", lambda: s.set_input(True, 0))
    # CHECK: float key: an input is named by a string or an index, got 1.0
    expect_error("float key", lambda: s.set_input(1.0, 0))
    # CHECK: output key: an output is named by its index, got 0.5
    expect_error("output key", lambda: s.get_output(0.5))
    # CHECK: seed: seed must be in [0, 18446744073709551615], got -1
    expect_error("seed", lambda: s.init_input(0, seed=-1))
    # CHECK: nul path: path '{{.*}}w.safetensors\x00.txt' contains a NUL character
    expect_error("nul path", lambda: s.save_weights(
        os.path.join(tmp, "w.safetensors\0.txt")))
    # CHECK: nul filter: filter 'a\x00b' contains a NUL character
    expect_error("nul filter", lambda: s.save_weights(
        os.path.join(tmp, "w.safetensors"), filter="a\0b"))
    # CHECK: text: input arg0 needs float32, got <U1
    expect_error("text", lambda: s.set_input(0, np.full((4, 6), "x")))
    # CHECK: object: input arg0 needs float32, got object
    expect_error("object", lambda: s.set_input(
        0, np.array([[None] * 6] * 4, dtype=object)))
# CHECK: nul device: device 'cpu\x00gpu' contains a NUL character
expect_error("nul device", lambda: fbl.Session(bundle, "cpu\0gpu"))
# CHECK: nul bundle: bundle '{{.*}}b\x00x' contains a NUL character
expect_error("nul bundle", lambda: fbl.Session(bundle + "\0x"))

step = fbl.compile(model, target="pocl-cpu", optimizer="sgd")
with fbl.Session(step, "cpu") as s:
    # CHECK: steps: steps must be an integer, got 2.5
    expect_error("steps", lambda: s.train({}, 2.5))

# safetensors: a NUL would cut a name or path short.
st = os.path.join(tmp, "t.safetensors")
# CHECK: nul name: tensor name 'a\x00b' contains a NUL character
expect_error("nul name", lambda: fbl.save_safetensors(st, {"a\0b": np.ones(2)}))
# CHECK: nul key: metadata key 'k\x00' contains a NUL character
expect_error("nul key", lambda: fbl.save_safetensors(
    st, {"a": np.ones(2)}, metadata={"k\0": "v"}))
# CHECK: nul st path: path '{{.*}}t.safetensors\x00' contains a NUL character
expect_error("nul st path", lambda: fbl.save_safetensors(st + "\0",
                                                         {"a": np.ones(2)}))
# CHECK: not a mapping: tensors must be a mapping of names to arrays, got list
expect_error("not a mapping", lambda: fbl.save_safetensors(st, [np.ones(2)]))
# CHECK: f64 huge: tensor 'a': values outside the float32 range
expect_error("f64 huge", lambda: fbl.save_safetensors(st, {"a": np.array([1e300])}))
# CHECK: text data: tensor 'a': cannot save <U1 data as floats
expect_error("text data", lambda: fbl.save_safetensors(st, {"a": np.array(["x"])}))
# CHECK: dtype: {{.*}}F64{{.*}}
expect_error("dtype", lambda: fbl.save_safetensors(st, {"a": np.ones(2)},
                                                   dtype="F64"))
# CHECK: nothing written: False
print("nothing written:", os.path.exists(st))
# CHECK: load path type: path must be a path, got int
expect_error("load path type", lambda: fbl.load_safetensors(123))
# CHECK: load dir: {{.*}}: a directory, not a safetensors file
expect_error("load dir", lambda: fbl.load_safetensors(tmp))
with open(st, "wb") as f:
    f.write(b"\xff" * 7)
# CHECK: load garbage: {{.*}}t.safetensors: not a safetensors file: 7 bytes, fewer than the 8 of the header length
expect_error("load garbage", lambda: fbl.load_safetensors(st))

# build_model and finetune refuse before starting a job.
# CHECK: seq float: seq must be an integer, got 1.5
expect_error("seq float", lambda: fbl.build_model("tiny-llama", seq=1.5))
# CHECK: seq zero: seq must be in [1, 9223372036854775807], got 0
expect_error("seq zero", lambda: fbl.build_model("tiny-llama", seq=0))
# CHECK: preset: fbl-model: error: no-such-model: not a preset
expect_error("preset", lambda: fbl.build_model("no-such-model"))
# CHECK: nul model: argument 'tiny-llama\x00' contains a NUL character
expect_error("nul model", lambda: fbl.build_model("tiny-llama\0"))
# CHECK: task: fbl-model: error: model builder: a llama model cannot be trained as masked-lm (causal-lm)
expect_error("task", lambda: fbl.build_model("tiny-llama", task="masked-lm"))
# CHECK: task smuggle: task must be a name (letters, digits, '_', '.', '-'), got 'masked-lm --seq=1'
expect_error("task smuggle", lambda: fbl.build_model("tiny-bert", task="masked-lm --seq=1"))
# CHECK: bert classifier: func.func @model(%arg0: tensor<2x4xi64> {fbl.name = "input_ids"}
print("bert classifier:", next(l.strip() for l in fbl.build_model(
    "tiny-bert", seq=4, batch=2, task="classification").splitlines()
    if "func.func @model" in l)[:68])
data = os.path.join(tmp, "data.txt")
with open(data, "w") as f:
    f.write("hello world\n" * 10)
out = os.path.join(tmp, "ft")
# A name cannot add a key to fbl-finetune's --lora list.
# CHECK: lora smuggle: lora targets entry must be a name (letters, digits, '_', '.', '-'), got 'rank=64'
expect_error("lora smuggle", lambda: fbl.finetune(
    "tiny-llama", data, out, lora={"targets": ["q_proj", "rank=64"]}))
# CHECK: lora type: lora must be a dict (rank, alpha, targets, trainable), got 8
expect_error("lora type", lambda: fbl.finetune("tiny-llama", data, out, lora=8))
# CHECK: lora rank: lora rank must be an integer, got '8'
expect_error("lora rank", lambda: fbl.finetune("tiny-llama", data, out,
                                               lora={"rank": "8"}))
# CHECK: target smuggle: target must be a preset name or a #fbl.target<...> attribute, got 'pocl-cpu lr=1'
expect_error("target smuggle", lambda: fbl.finetune(
    "tiny-llama", data, out, target="pocl-cpu lr=1"))
# CHECK: ft steps: steps must be an integer, got 1.5
expect_error("ft steps", lambda: fbl.finetune("tiny-llama", data, out,
                                              steps=1.5))
# CHECK: ft policy: unknown policy 'fast'; one of fblayout, reuse-forward, explicit-transpose
expect_error("ft policy", lambda: fbl.finetune("tiny-llama", data, out,
                                               policy="fast"))
# fbl-finetune's own refusal, one line.
# CHECK: ft lr: fbl-finetune: error: --lr must be a positive number
expect_error("ft lr", lambda: fbl.finetune("tiny-llama", data, out, lr=-1))
print("done")
# CHECK: done
