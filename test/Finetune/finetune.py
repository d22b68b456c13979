"""fbl-finetune end to end through the Python package (fbl.finetune runs the
tool): full fine-tuning, LoRA from the result, merge, cache, resume, and a
weights file that lacks a tensor. Usage: finetune.py DATA.txt WORKDIR"""
import csv
import os
import re
import sys

import numpy as np

import fbl

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

print("FINETUNE PASS" if ok else "FINETUNE FAIL")
sys.exit(0 if ok else 1)
