# RUN: %python %s %fbl_src_root/test/E2E/Inputs/named-lora.mlir | FileCheck %s
#
# safetensors through fbl against an independent reader and writer (struct
# and json, below): files either side writes, the other reads bit for bit,
# F16/BF16 rounded to nearest even like numpy. A session finds inputs by the
# model's names, loads weights by name (reporting what is missing or
# unused, or refusing with strict), initializes the rest from fbl.init,
# trains, and saves the trained parameters by name.

import json
import os
import struct
import sys
import tempfile

import numpy as np

import fbl

model = sys.argv[1]
tmp = tempfile.mkdtemp()
rng = np.random.default_rng(3)


def expect_error(what, fn):
    try:
        fn()
    except fbl.Error as e:
        print(f"{what}: {e}")
        return
    raise AssertionError(f"{what}: no error")


# An independent writer and reader: the format from its description.
_CODES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I64": "<i8",
          "I32": "<i4", "BF16": "<u2"}


def write_independent(path, tensors, metadata=None):
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, (dtype, array) in tensors.items():
        blob = np.ascontiguousarray(array, _CODES[dtype]).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_independent(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        begin, end = e["data_offsets"]
        out[name] = (e["dtype"], np.frombuffer(data[begin:end], _CODES[e["dtype"]])
                     .reshape(e["shape"]))
    return header, n, out


def bf16_bits(x):
    """float32 -> bfloat16 bits, round to nearest even (NaN kept NaN)."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(x, np.float32))
    return np.where(nan, (u >> 16).astype(np.uint16) | 0x40, r)


# --- independent writer -> fbl reader --------------------------------------
w = rng.standard_normal((3, 4)).astype(np.float32)
half = np.array([1.0, -2.5, 65504, 6e-8, np.inf], np.float16)
bf = np.array([0x3F80, 0xC000, 0x7F80, 0x0001], np.uint16)
path = os.path.join(tmp, "theirs.safetensors")
write_independent(path, {"w": ("F32", w), "h": ("F16", half),
                         "b": ("BF16", bf), "d": ("F64", np.array([0.5, -3.0])),
                         "i": ("I64", np.array([[7, -8]]))},
                  metadata={"format": "pt", "source": "test"})
got = fbl.load_safetensors(path)
# CHECK: names: ['b', 'd', 'h', 'i', 'w']
print("names:", sorted(got))
assert got["w"].dtype == np.float32 and np.array_equal(got["w"], w)
assert np.array_equal(got["h"], half.astype(np.float32))
assert np.array_equal(got["b"], (bf.astype(np.uint32) << 16).view(np.float32))
assert got["b"][0] == 1.0 and got["b"][1] == -2.0 and got["b"][3] > 0
assert np.array_equal(got["d"], [0.5, -3.0]) and got["i"].shape == (1, 2)
# CHECK: metadata: {'format': 'pt', 'source': 'test'}
print("metadata:", fbl.safetensors_metadata(path))

# --- fbl writer -> independent reader --------------------------------------
values = np.array([1.0, 1 + 2**-11, 1 + 3 * 2**-11, 65519, 65520, 2**-25,
                   1.5 * 2**-25, -0.0, np.nan, 1 + 2**-8, 3.14159],
                  np.float32)
path = os.path.join(tmp, "ours.safetensors")
fbl.save_safetensors(path, {"f32": w, "f16": values, "bf16": values,
                            "scalar": np.float64(2.5)},
                     metadata={"format": "pt"})
fbl.save_safetensors(os.path.join(tmp, "h.safetensors"), {"f16": values},
                     dtype="F16")
fbl.save_safetensors(os.path.join(tmp, "b.safetensors"), {"bf16": values},
                     dtype="BF16")
header, n, theirs = read_independent(path)
# CHECK: header: 8-byte multiple True, metadata {'format': 'pt'}
print(f"header: 8-byte multiple {n % 8 == 0}, metadata {header['__metadata__']}")
assert np.array_equal(theirs["f32"][1], w) and theirs["scalar"][1].shape == ()
_, _, h = read_independent(os.path.join(tmp, "h.safetensors"))
_, _, b = read_independent(os.path.join(tmp, "b.safetensors"))
with np.errstate(over="ignore"):
    want16 = values.astype(np.float16)  # numpy rounds to nearest even
same = (h["f16"][1] == want16) | (np.isnan(h["f16"][1]) & np.isnan(want16))
same &= np.signbit(h["f16"][1]) == np.signbit(want16)
# CHECK: f16 as numpy rounds: True
print("f16 as numpy rounds:", bool(np.all(same)))
# CHECK: bf16 to nearest even: True
print("bf16 to nearest even:", bool(np.array_equal(b["bf16"][1],
                                                  bf16_bits(values))))
# Through fbl again: the rounded values, read back exactly.
back = fbl.load_safetensors(os.path.join(tmp, "h.safetensors"))["f16"]
assert np.array_equal(back, want16.astype(np.float32), equal_nan=True)

# CHECK: corrupt: {{.*}}bad.safetensors: header length 1000 exceeds the file (18 bytes)
bad = os.path.join(tmp, "bad.safetensors")
open(bad, "wb").write(struct.pack("<Q", 1000) + b"{}        ")
expect_error("corrupt", lambda: fbl.load_safetensors(bad))
# CHECK: range: tensor 'x': values outside the float32 range
expect_error("range", lambda: fbl.save_safetensors(
    os.path.join(tmp, "x.safetensors"), {"x": np.array([1e300])}))
# CHECK: dtype: cannot add tensor 'x': dtype I8 is none of F32, F16, BF16 that fbl writes
expect_error("dtype", lambda: fbl.save_safetensors(
    os.path.join(tmp, "x.safetensors"), {"x": np.zeros(2)}, dtype="I8"))

# --- sessions: names, weights in and out ------------------------------------
bundle = fbl.compile(model, target="pocl-cpu", optimizer="adamw", lr=0.05)
with fbl.Session(bundle, "cpu") as s:
    # CHECK: inputs: inputs_embeds labels model.fc1.weight model.fc1.bias
    # CHECK-SAME: lm_head.weight.exp_avg model.fc1.bias.exp_avg_sq
    # CHECK-SAME: lm_head.weight.exp_avg_sq step{{$}}
    print("inputs:", " ".join(i.name for i in s.inputs))
    # CHECK: inits: {'model.fc1.bias': 'zeros', 'model.fc1.lora_A.weight': 'uniform:0.25', 'model.fc1.lora_B.weight': 'zeros', 'model.fc1.bias.exp_avg': 'zeros'
    print("inits:", {i.name: i.init for i in s.inputs if i.init})
    # CHECK: outputs: loss model.fc1.bias model.fc1.lora_A.weight
    print("outputs:", " ".join(o.name for o in s.outputs))
    # CHECK: label error: input 'labels' (arg 1): element 3 is 5, outside [0, 5)
    expect_error("label error",
                 lambda: s.set_input("labels", np.array([0, 1, 2, 5])))
    # CHECK: shape error: input 'model.fc1.weight' (arg 2) needs shape (8, 6), got (6, 8)
    expect_error("shape error",
                 lambda: s.set_input("model.fc1.weight", np.zeros((6, 8))))
    # Names and "argI" find the same input.
    s.set_input("arg1", np.array([0, 1, 2, 4]))
    # CHECK: by arg: [0 1 2 4]
    print("by arg:", s.get_input("labels"))

    base = {"model.fc1.weight": rng.standard_normal((8, 6)).astype(np.float32),
            "lm_head.weight": rng.standard_normal((5, 8)).astype(np.float32),
            "model.embed_tokens.weight": np.zeros((3, 2), np.float32)}
    base_path = os.path.join(tmp, "base.safetensors")
    write_independent(base_path, {k: ("F32", v) for k, v in base.items()})
    wrong = os.path.join(tmp, "wrong.safetensors")
    write_independent(wrong, {"lm_head.weight": ("F32", np.zeros((8, 5)))})
    # CHECK: wrong shape: {{.*}}wrong.safetensors: tensor 'lm_head.weight' has shape [8, 5], input 'lm_head.weight' (arg 6) has [5, 8]
    expect_error("wrong shape", lambda: s.load_weights(wrong))
    # CHECK: strict: {{.*}}base.safetensors: 1 tensor matches no input ('model.embed_tokens.weight')
    expect_error("strict", lambda: s.load_weights(base_path, strict=True))
    # CHECK: not set: input 'lm_head.weight' (arg 6) was not set
    expect_error("not set", lambda: s.get_input("lm_head.weight"))
    report = s.load_weights(base_path)
    # CHECK: report: ['lm_head.weight', 'model.fc1.weight'] [] ['model.embed_tokens.weight']
    print("report:", sorted(report.loaded), report.missing, report.unused)
    assert np.array_equal(s.get_input("lm_head.weight"), base["lm_head.weight"])

    # Initializers: deterministic per seed and name, within their bounds.
    s.init_input("model.fc1.lora_A.weight", seed=5)
    a5 = s.get_input("model.fc1.lora_A.weight")
    s.init_input("model.fc1.lora_A.weight", seed=5)
    assert np.array_equal(a5, s.get_input("model.fc1.lora_A.weight"))
    s.init_input("model.fc1.lora_A.weight", seed=6)
    assert not np.array_equal(a5, s.get_input("model.fc1.lora_A.weight"))
    # CHECK: uniform within bound: True
    print("uniform within bound:", bool(np.all(np.abs(a5) <= 0.25)))
    # CHECK: no init: input 'lm_head.weight' (arg 6) has no initializer
    expect_error("no init", lambda: s.init_input("lm_head.weight"))

    x = rng.standard_normal((4, 6)).astype(np.float32)
    labels = np.array([0, 1, 2, 4])
    result = s.train({"inputs_embeds": x, "labels": labels}, steps=30)
    # CHECK: loss decreased: True
    print("loss decreased:", result.losses[-1] < result.losses[0])
    # The frozen base weight is unchanged; the adapter moved.
    assert np.array_equal(s.get_input("model.fc1.weight"),
                          base["model.fc1.weight"])

    adapters = os.path.join(tmp, "adapter_model.safetensors")
    s.save_weights(adapters, filter="lora_")
    header, _, saved = read_independent(adapters)
    # CHECK: adapters: ['model.fc1.lora_A.weight', 'model.fc1.lora_B.weight'] {'format': 'pt'}
    print("adapters:", sorted(saved), header["__metadata__"])
    assert np.array_equal(saved["model.fc1.lora_B.weight"][1],
                          result.state[[i.name for i in s.inputs].index(
                              "model.fc1.lora_B.weight")])
    # CHECK: lora_B trained: True
    print("lora_B trained:", bool(np.any(saved["model.fc1.lora_B.weight"][1])))

    everything = os.path.join(tmp, "all.safetensors")
    s.save_weights(everything, optimizer_state=True, dtype="BF16")
    _, _, saved = read_independent(everything)
    # CHECK: saved: 12 tensors, BF16, with exp_avg_sq True
    print(f"saved: {len(saved)} tensors, {saved['lm_head.weight'][0]}, with "
          f"exp_avg_sq {'lm_head.weight.exp_avg_sq' in saved}")
    # CHECK: no match: no named parameter with 'nothing' in its name; nothing written to
    expect_error("no match", lambda: s.save_weights(everything,
                                                    filter="nothing"))

# A new session resumes from the saved file: strict loading sets every
# parameter and the moments, nothing is missing.
with fbl.Session(bundle, "cpu") as s:
    full = os.path.join(tmp, "full.safetensors")
    write_independent(full, {k: ("F32", v) for k, v in base.items()
                             if k != "model.embed_tokens.weight"})
    # CHECK: base: ['lm_head.weight', 'model.fc1.weight'] missing []
    r = s.load_weights(full)
    print("base:", sorted(r.loaded), "missing", r.missing)
    report = s.load_weights(everything, strict=True)
    # CHECK: resumed: 12 loaded, missing [], unused []
    print(f"resumed: {len(report.loaded)} loaded, missing {report.missing}, "
          f"unused {report.unused}")
print("done")
# CHECK: done
