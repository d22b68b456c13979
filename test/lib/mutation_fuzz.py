#!/usr/bin/env python3
"""Mutation fuzzer for fbl's compiler: mutates the repository's own .mlir
files and runs fbl-opt's training pipeline (and, when it succeeds,
fbl-translate) on each mutant. A clean error or a success is fine; a crash
(a signal, LLVM's stack dump) or a hang is a finding. Mutants that crash are
written to OUT/crash-N.mlir with the command that crashed.

  mutation_fuzz.py --fbl-opt build/bin/fbl-opt --fbl-translate \
      build/bin/fbl-translate --seeds test examples --count 200 --seed 1 \
      --out /tmp/fuzz

Exit 1 when any mutant crashed. Deterministic for a given seed and corpus.
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

NUMBER = re.compile(r"(?<![\w#%@])\d+(?![\w])")
INTERESTING = ["0", "1", "-1", "3", "4", "5", "7", "16", "4611686018427387904",
               "2147483648", "9223372036854775807"]


def mutate(text, rng):
    lines = text.split("\n")
    kind = rng.randrange(8)
    if kind == 0 and len(lines) > 2:  # drop a line
        del lines[rng.randrange(len(lines))]
    elif kind == 1 and lines:  # duplicate a line
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
    elif kind == 2:  # replace a number
        spots = [(i, m) for i, l in enumerate(lines) for m in NUMBER.finditer(l)]
        if spots:
            i, m = rng.choice(spots)
            l = lines[i]
            lines[i] = l[:m.start()] + rng.choice(INTERESTING) + l[m.end():]
    elif kind == 3:  # flip an iterator type
        text = "\n".join(lines)
        spots = [m.start() for m in re.finditer(r'"(parallel|reduction)"', text)]
        if spots:
            s = rng.choice(spots)
            old = "parallel" if text[s + 1] == "p" else "reduction"
            new = "reduction" if old == "parallel" else "parallel"
            text = text[:s + 1] + new + text[s + 1 + len(old):]
        return text
    elif kind == 4:  # perturb an affine expression
        text = "\n".join(lines)
        spots = [m for m in re.finditer(r"\(d(\d)|\b([ijkmn])\b(?=[,)])", text)]
        if spots:
            m = rng.choice(spots)
            e = rng.choice([" + 1", " * 2", " floordiv 2", " mod 3"])
            text = text[:m.end()] + e + text[m.end():]
        return text
    elif kind == 5:  # swap two dims of a shape
        text = "\n".join(lines)
        spots = list(re.finditer(r"tensor<(\d+)x(\d+)", text))
        if spots:
            m = rng.choice(spots)
            text = (text[:m.start()] + f"tensor<{m.group(2)}x{m.group(1)}" +
                    text[m.end():])
        return text
    elif kind == 6:  # change an element type
        text = "\n".join(lines)
        spots = list(re.finditer(r"\b(f32|i64|i32)\b", text))
        if spots:
            m = rng.choice(spots)
            text = (text[:m.start()] + rng.choice(["f16", "f64", "i32", "i1",
                                                   "index"]) + text[m.end():])
        return text
    else:  # remove an attribute
        text = "\n".join(lines)
        for attr in ("{fbl.param}", "fbl.param", "fbl.target"):
            if attr in text and rng.random() < 0.5:
                return text.replace(attr, "", 1)
        return text
    return "\n".join(lines)


def crashed(proc):
    return proc.returncode < 0 or "Stack dump" in proc.stderr or \
        "PLEASE submit a bug report" in proc.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fbl-opt", required=True)
    ap.add_argument("--fbl-translate", required=True)
    ap.add_argument("--seeds", nargs="+", required=True,
                    help="folders whose .mlir files seed the corpus")
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--out", required=True)
    ap.add_argument("--trainable-share", type=float, default=0.75,
                    help="share of mutants drawn from modules with fbl.param "
                         "arguments: only those reach the whole pipeline "
                         "and fbl-translate")
    args = ap.parse_args()
    corpus = []
    for folder in args.seeds:
        for root, _, files in os.walk(folder):
            for f in sorted(files):
                if f.endswith(".mlir"):
                    path = os.path.join(root, f)
                    text = open(path).read()
                    # Whole modules only: split-input-file chunks apart.
                    corpus += [(path, c) for c in text.split("// -----")]
    corpus.sort(key=lambda e: e[0])
    trainable = [e for e in corpus if "fbl.param" in e[1]] or corpus
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    counts = {"ok": 0, "error": 0, "crash": 0, "hang": 0}
    with tempfile.TemporaryDirectory() as work:
        for n in range(args.count):
            pool = trainable if rng.random() < args.trainable_share else corpus
            path, text = rng.choice(pool)
            for _ in range(rng.randint(1, 3)):
                text = mutate(text, rng)
            mutant = os.path.join(work, "mutant.mlir")
            with open(mutant, "w") as f:
                f.write(text)
            policy = rng.choice(["fblayout", "reuse-forward",
                                 "explicit-transpose"])
            cmds = [[args.fbl_opt, mutant,
                     f"--fbl-training-pipeline=policy={policy} "
                     "target=pocl-cpu optimizer=adamw",
                     "-o", os.path.join(work, "out.mlir")],
                    [args.fbl_translate, "--fbl-to-opencl",
                     os.path.join(work, "out.mlir"), "-o",
                     os.path.join(work, "bundle")]]
            outcome = "ok"
            for cmd in cmds:
                try:
                    proc = subprocess.run(cmd, capture_output=True, text=True,
                                          timeout=args.timeout)
                except subprocess.TimeoutExpired:
                    outcome = "hang"
                    break
                if crashed(proc):
                    outcome = "crash"
                    break
                if proc.returncode != 0:
                    outcome = "error"
                    break
            counts[outcome] += 1
            if outcome in ("crash", "hang"):
                dst = os.path.join(args.out, f"{outcome}-{n}.mlir")
                with open(dst, "w") as f:
                    f.write(f"// from {path}\n// {' '.join(cmd)}\n{text}")
                print(f"{outcome}: {dst}", flush=True)
    print(f"mutants {args.count}: ok {counts['ok']}, error {counts['error']}, "
          f"crash {counts['crash']}, hang {counts['hang']}")
    return 1 if counts["crash"] or counts["hang"] else 0


if __name__ == "__main__":
    sys.exit(main())
