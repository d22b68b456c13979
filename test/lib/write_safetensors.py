"""Inputs for test/E2E/weights.test, written without fbl: safetensors files
by their format's description (an 8-byte little-endian header length, the
JSON header, the data), and .npy data.

usage: write_safetensors.py DIR                  writes DIR/base.safetensors,
                                                 DIR/wrong.safetensors, *.npy
       write_safetensors.py DIR --check FILE...  prints each file's tensors
"""

import json
import os
import struct
import sys

import numpy as np

_CODES = {"F32": "<f4", "F16": "<f2", "BF16": "<u2"}


def write(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        blob = np.ascontiguousarray(array, "<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    metadata = header.pop("__metadata__", {})
    data = raw[8 + n:]
    tensors = {}
    for name, e in sorted(header.items()):
        begin, end = e["data_offsets"]
        tensors[name] = (e["dtype"], e["shape"],
                         np.frombuffer(data[begin:end], _CODES[e["dtype"]]))
    return tensors, metadata


def main():
    out = sys.argv[1]
    if len(sys.argv) > 2 and sys.argv[2] == "--check":
        for path in sys.argv[3:]:
            tensors, metadata = read(path)
            listed = ", ".join(f"{name} {dtype} {shape}"
                               for name, (dtype, shape, _) in tensors.items())
            trained = any(np.any(v != 0) for name, (_, _, v) in tensors.items()
                          if "lora_B" in name)
            print(f"{os.path.basename(path)}: {listed}; metadata {metadata}; "
                  f"lora_B {'trained' if trained else 'zero'}")
        return
    rng = np.random.default_rng(11)
    w1 = rng.standard_normal((8, 6)).astype(np.float32)
    write(os.path.join(out, "base.safetensors"), {
        "model.fc1.weight": w1,
        "lm_head.weight": rng.standard_normal((5, 8)).astype(np.float32),
        "model.embed_tokens.weight": np.ones((3, 2), np.float32)})
    write(os.path.join(out, "wrong.safetensors"),
          {"lm_head.weight": np.zeros((8, 5), np.float32)})
    np.save(os.path.join(out, "w1.npy"), w1)
    np.save(os.path.join(out, "x.npy"),
            rng.standard_normal((4, 6)).astype(np.float32))
    np.save(os.path.join(out, "labels.npy"), np.array([0, 1, 2, 4], np.int64))
    np.save(os.path.join(out, "bad-labels.npy"),
            np.array([0, 1, 2, 5], np.int64))


if __name__ == "__main__":
    main()
