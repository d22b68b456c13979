#!/usr/bin/env python3
"""Writes the seed corpora of the libFuzzer targets (tools/fbl-fuzz) into
test/Fuzz/corpus/<target>/, from the repository itself:

  compile/   every .mlir input of test/ and examples/ (split at `// -----`,
             comment lines dropped), each behind an options byte that cycles
             through the pipeline options fbl-fuzz-compile decodes;
  manifest/  the manifests of bundles compiled from examples/ (policies,
             optimizers) and the runtime tests' hand-written bundles;
  npy/       .npy files numpy writes for the element types, orders and
             shapes fbl-run reads, and some it refuses.

Run from the repository root after a build:
  /usr/bin/python3 test/lib/fuzz_corpus.py --fbl-opt build/bin/fbl-opt \\
      --fbl-translate build/bin/fbl-translate
"""

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def mlir_inputs():
    for top in ("test", "examples"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(".mlir"):
                    yield os.path.join(dirpath, name)


def write_compile(out):
    count = 0
    for path in mlir_inputs():
        with open(path) as f:
            chunks = f.read().split("// -----")
        for chunk in chunks:
            lines = [l for l in chunk.splitlines()
                     if not l.lstrip().startswith("//")]
            text = "\n".join(lines).strip() + "\n"
            if text.strip() == "":
                continue
            # 37 is odd: the options byte walks all 64 combinations.
            options = bytes([(count * 37) % 64])
            data = options + text.encode()
            name = hashlib.sha1(data).hexdigest()[:16]
            with open(os.path.join(out, name), "wb") as f:
                f.write(data)
            count += 1
    return count


# (example, pipeline options) of the bundles whose manifests seed the
# manifest fuzzer.
BUNDLES = [
    ("mlp.mlir", "policy=fblayout"),
    ("mlp.mlir", "policy=explicit-transpose optimizer=adamw"),
    ("attention.mlir", "policy=fblayout optimizer=sgd"),
    ("attention.mlir", "policy=reuse-forward"),
    ("mlp.mlir", "policy=reuse-forward optimizer=sgd fuse=false"),
]


def write_manifest(out, fbl_opt, fbl_translate):
    count = 0
    with tempfile.TemporaryDirectory() as tmp:
        for example, options in BUNDLES:
            lowered = os.path.join(tmp, "lowered.mlir")
            bundle = os.path.join(tmp, "bundle%d" % count)
            subprocess.run(
                [fbl_opt, os.path.join(ROOT, "examples", example),
                 "--fbl-training-pipeline=target=pocl-cpu " + options,
                 "-o", lowered], check=True)
            subprocess.run([fbl_translate, "--fbl-to-opencl", lowered,
                            "-o", bundle], check=True)
            name = "%s-%s.json" % (example[:-5],
                                   options.replace("=", "-").replace(" ", "_"))
            shutil.copy(os.path.join(bundle, "manifest.json"),
                        os.path.join(out, name))
            count += 1
    # The runtime tests' hand-written bundles.
    for bundle in ("fill-bundle", "pitch-bundle"):
        shutil.copy(os.path.join(ROOT, "test", "Runtime", "Inputs", bundle,
                                 "manifest.json"),
                    os.path.join(out, bundle + ".json"))
    return count + 2


def write_npy(out):
    x = np.arange(24, dtype=np.float32).reshape(4, 6) / 24
    arrays = {
        "f32-2d.npy": x,
        "f32-fortran.npy": np.asfortranarray(x),
        "f32-3d-fortran.npy": np.asfortranarray(x.reshape(2, 3, 4)),
        "f64-1d.npy": np.linspace(-1, 1, 5),
        "i64-scalar.npy": np.array(7, dtype=np.int64),
        "i32-empty.npy": np.zeros((0, 4), dtype=np.int32),
        "i64-ids.npy": np.array([[1, 5], [2, 0]], dtype=np.int64),
        # Refused: element types fbl-run does not read.
        "f32-big-endian.npy": x.astype(">f4"),
        "bool.npy": np.array([True, False]),
    }
    for name, a in arrays.items():
        np.save(os.path.join(out, name), a)
    # A version-2.0 header (4-byte length).
    with open(os.path.join(out, "f32-v2.npy"), "wb") as f:
        np.lib.format.write_array(f, x, version=(2, 0))
    return len(arrays) + 1


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fbl-opt", required=True)
    p.add_argument("--fbl-translate", required=True)
    p.add_argument("--out", default=os.path.join(ROOT, "test", "Fuzz",
                                                 "corpus"))
    args = p.parse_args()
    counts = {}
    for target in ("compile", "manifest", "npy"):
        d = os.path.join(args.out, target)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    counts["compile"] = write_compile(os.path.join(args.out, "compile"))
    counts["manifest"] = write_manifest(os.path.join(args.out, "manifest"),
                                        args.fbl_opt, args.fbl_translate)
    counts["npy"] = write_npy(os.path.join(args.out, "npy"))
    print(", ".join("%s: %d" % kv for kv in counts.items()))


if __name__ == "__main__":
    sys.exit(main())
