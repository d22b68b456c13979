"""fbl-finetune end to end through the Python package (fbl.finetune runs the
tool): full fine-tuning, LoRA from the result, merge, cache, resume, a
weights file that lacks a tensor, and the text tokenized by a tokenizer.json.
Usage: finetune.py DATA.txt WORKDIR"""
import csv
import json
import math
import os
import re
import subprocess
import sys

import numpy as np

import fbl
from fbl.compiler import _tool

data, work = sys.argv[1], sys.argv[2]
cache = os.path.join(work, "cache")
common = dict(seq=16, batch=2, lr=3e-3, cache_dir=cache, checkpoint_every=0)
ok = True


def fail(message):
    global ok
    ok = False
    print("FAIL:", message)


def losses(folder):
    with open(os.path.join(folder, "loss.csv")) as f:
        return {int(r["step"]): float(r["loss"]) for r in csv.DictReader(f)}


# 1. Full fine-tuning from random weights.
full = os.path.join(work, "full")
s = fbl.finetune("tiny-llama", data, full, full=True, steps=12, **common)
verdict = "decreased" if s["final_loss"] < s["first_loss"] - 0.5 else "did not decrease"
print(f"full: loss {s['first_loss']:.3f} -> {s['final_loss']:.3f} ({verdict})")
weights = fbl.load_safetensors(os.path.join(full, "model.safetensors"))
model = fbl.build_model("tiny-llama", seq=16, batch=2)
expected = {}
for m in re.finditer(r"%arg\d+: tensor<([0-9x]+)xf32> \{[^}]*fbl\.name = \"([^\"]+)\"", model):
    expected[m.group(2)] = tuple(int(d) for d in m.group(1).split("x"))
got = {k: v.shape for k, v in weights.items()}
if got == expected:
    print(f"full: model.safetensors has the {len(got)} weights with their Hugging Face names and shapes")
else:
    fail(f"model.safetensors holds {sorted(got.items())}, expected {sorted(expected.items())}")

# 2. LoRA from those weights, merged.
lora_opts = {"rank": 4, "alpha": 8, "targets": ["q_proj", "v_proj"]}
lora = os.path.join(work, "lora")
s = fbl.finetune("tiny-llama", data, lora, weights=os.path.join(full, "model.safetensors"),
                 lora=lora_opts, steps=6, merge=True, **common)
adapters = fbl.load_safetensors(os.path.join(lora, "adapter_model.safetensors"))
merged = fbl.load_safetensors(os.path.join(lora, "model.safetensors"))
names_ok = all(re.fullmatch(r"base_model\.model\.model\.layers\.\d\.self_attn\.[qv]_proj\.lora_[AB]\.weight", k)
               for k in adapters)
shapes_ok = all(v.shape == ((4, 64) if ".lora_A." in k else (expected[k[len("base_model.model."):].replace(".lora_B", "")][0], 4))
                for k, v in adapters.items())
unchanged = all(np.array_equal(merged[k], weights[k]) for k in weights
                if not re.search(r"[qv]_proj\.weight$", k))
if names_ok and shapes_ok and len(adapters) == 8 and unchanged and s["trainable_parameters"] == sum(v.size for v in adapters.values()):
    print(f"lora: only adapters trained: {len(adapters)} tensors, base weights unchanged")
else:
    fail(f"adapters {sorted((k, v.shape) for k, v in adapters.items())}, unchanged={unchanged}")
worst = 0.0
for k, w in weights.items():
    if re.search(r"[qv]_proj\.weight$", k):
        prefix = "base_model.model." + k[:-len(".weight")]
        a, b = adapters[prefix + ".lora_A.weight"], adapters[prefix + ".lora_B.weight"]
        want = w.astype(np.float64) + 2.0 * (b.astype(np.float64) @ a.astype(np.float64))
        worst = max(worst, float(np.max(np.abs(merged[k] - want))))
if worst <= 1e-6:
    print("lora: merged weights equal W + 2 B A")
else:
    fail(f"merged weights differ from W + 2 B A by {worst}")

# 3. The same job again: the compiled step comes from the cache.
again = fbl.finetune("tiny-llama", data, os.path.join(work, "lora-again"),
                     weights=os.path.join(full, "model.safetensors"), lora=lora_opts,
                     steps=2, **common)
if again["compiled_from_cache"]:
    print("lora: compiled step from the cache")
else:
    fail("the second run compiled again")

# 4. Resume: 3 steps, then continue to 6; steps 4-6 as in the 6-step run.
resumed = os.path.join(work, "resumed")
args = dict(weights=os.path.join(full, "model.safetensors"), lora=lora_opts, **common)
fbl.finetune("tiny-llama", data, resumed, steps=3, **args)
fbl.finetune("tiny-llama", data, resumed, steps=6, resume=True, **args)
a, b = losses(lora), losses(resumed)
if all(abs(a[k] - b[k]) <= 1e-5 * abs(a[k]) for k in (4, 5, 6)) and sorted(b) == [1, 2, 3, 4, 5, 6]:
    print("resume: steps 4-6 match the uninterrupted run")
else:
    fail(f"resumed losses {b} differ from {a}")

# 5. A weights file without the final norm is refused, naming the tensor.
partial = os.path.join(work, "partial.safetensors")
fbl.save_safetensors(partial, {k: v for k, v in weights.items() if k != "model.norm.weight"})
try:
    fbl.finetune("tiny-llama", data, os.path.join(work, "refused"), weights=partial,
                 lora=lora_opts, steps=2, **common)
    fail("a weights file without model.norm.weight was accepted")
except fbl.Error as e:
    print("missing weight refused:", e)

# 6. The text tokenized by a tokenizer.json, SentencePiece-style BPE whose
# ids fit tiny-llama's 260: <unk>, <s>, </s>, the 256 byte-fallback tokens,
# and one merge ("t" "h"). Through Python and through the command line; the
# compiled step is the one of part 2, from the cache.
vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
for b in range(256):
    vocab["<0x%02X>" % b] = 3 + b
vocab["<0x74><0x68>"] = 259
tokenizer = os.path.join(work, "tokenizer.json")
with open(tokenizer, "w") as f:
    json.dump({"version": "1.0",
               "added_tokens": [{"id": i, "content": t, "single_word": False, "lstrip": False,
                                 "rstrip": False, "normalized": False, "special": True}
                                for i, t in enumerate(["<unk>", "<s>", "</s>"])],
               "normalizer": {"type": "Sequence", "normalizers": [
                   {"type": "Prepend", "prepend": "\u2581"},
                   {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
               "pre_tokenizer": None,
               "post_processor": {"type": "TemplateProcessing",
                                  "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                             {"Sequence": {"id": "A", "type_id": 0}}],
                                  "special_tokens": {"<s>": {"id": "<s>", "ids": [1],
                                                             "tokens": ["<s>"]}}},
               "model": {"type": "BPE", "unk_token": "<unk>", "byte_fallback": True,
                         "fuse_unk": True, "vocab": vocab, "merges": ["<0x74> <0x68>"]}}, f)
with open(data, encoding="utf-8") as f:
    normalized = "\u2581" + f.read().replace(" ", "\u2581")
# <s>, then a token per byte but one per "th".
want = 1 + len(normalized.encode()) - normalized.count("th")
s = fbl.finetune("tiny-llama", data, os.path.join(work, "bpe"), tokenizer=tokenizer,
                 steps=3, **args)
if s["tokenizer"] == tokenizer and s["data_tokens"] == want and s["compiled_from_cache"] \
        and math.isfinite(s["final_loss"]):
    print(f"bpe: trained 3 steps on {want} tokens (the step from the cache)")
else:
    fail(f"bpe: summary {s}, expected {want} tokens from {tokenizer}")
proc = subprocess.run([_tool("fbl-finetune"), "--model", "tiny-llama", "--data", data,
                       "--tokenizer", tokenizer, "--save", os.path.join(work, "bpe-cli"),
                       "--weights", os.path.join(full, "model.safetensors"),
                       "--lora", "rank=4,alpha=8.0,targets=q_proj,v_proj", "--steps", "3",
                       "--seq", "16", "--batch", "2", "--lr", "0.003",
                       "--checkpoint-every", "0", "--cache-dir", cache],
                      capture_output=True, text=True)
for line in proc.stdout.splitlines():
    if line.startswith(("data ", "training step", "trained ")):
        print("bpe cli:", line)
if proc.returncode != 0:
    fail(f"fbl-finetune --tokenizer: {proc.stderr.strip()}")

print("FINETUNE PASS" if ok else "FINETUNE FAIL")
sys.exit(0 if ok else 1)
