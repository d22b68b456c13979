# UNSUPPORTED: asan
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s
#
# fbl.finetune on a classifier and on Whisper: the tiny ViT from images and
# class labels (.npy), the tiny Whisper from log-mel features and transcript
# token ids, each a few full fine-tuning steps on the local device, and the
# tiny SD UNet from latents and text context (LoRA); the
# progress callback sees samples/s (ViT) and tokens/s (Whisper) lines; a
# label out of range is an fbl.Error with fbl-finetune's one line.

import os
import sys

import numpy as np

import fbl

out = sys.argv[1]
rng = np.random.default_rng(0)
images = rng.standard_normal((12, 3, 32, 32)).astype(np.float32)
classes = rng.integers(0, 10, size=12)
np.save(os.path.join(out, "images.npy"), images)
np.save(os.path.join(out, "classes.npy"), classes)
seen = []
summary = fbl.finetune("tiny-vit", os.path.join(out, "images.npy"),
                       os.path.join(out, "vit"), labels=os.path.join(out, "classes.npy"),
                       full=True, steps=4, batch=4, log_every=1, cache_dir="none",
                       callback=lambda step, loss, rate: seen.append((step, loss)))
# CHECK: vit: image-classification, 12 examples, 3 progress lines
print(f"vit: {summary['task']}, {summary['data_examples']} examples, "
      f"{len(seen)} progress lines")
# CHECK: vit: losses finite True
print("vit: losses finite", all(np.isfinite(l) for _, l in seen))

features = rng.standard_normal((6, 8, 16)).astype(np.float32)
transcripts = rng.integers(0, 256, size=(6, 5))
np.save(os.path.join(out, "mel.npy"), features)
np.save(os.path.join(out, "text.npy"), transcripts)
summary = fbl.finetune("tiny-whisper", os.path.join(out, "mel.npy"),
                       os.path.join(out, "whisper"), labels=os.path.join(out, "text.npy"),
                       full=True, steps=3, batch=2, cache_dir="none")
# CHECK: whisper: speech-to-text, seq 5, tokens/s > 0 True
print(f"whisper: {summary['task']}, seq {summary['seq']}, tokens/s > 0",
      summary["tokens_per_second"] > 0)

latents = (0.5 * rng.standard_normal((4, 4, 8, 8))).astype(np.float32)
context = rng.standard_normal((4, 5, 24)).astype(np.float32)
np.save(os.path.join(out, "latents.npy"), latents)
np.save(os.path.join(out, "context.npy"), context)
summary = fbl.finetune("tiny-sd-unet", os.path.join(out, "latents.npy"),
                       os.path.join(out, "unet"), context=os.path.join(out, "context.npy"),
                       steps=2, batch=2, cache_dir="none")
# CHECK: unet: noise-prediction, 4 examples, samples/s > 0 True, adapters True
adapters = os.path.exists(os.path.join(out, "unet", "adapter_model.safetensors"))
print(f"unet: {summary['task']}, {summary['data_examples']} examples, "
      f"samples/s > 0 {summary['samples_per_second'] > 0}, adapters {adapters}")

np.save(os.path.join(out, "bad.npy"), np.full(12, 10))
try:
    fbl.finetune("tiny-vit", os.path.join(out, "images.npy"), os.path.join(out, "bad"),
                 labels=os.path.join(out, "bad.npy"), steps=1, cache_dir="none")
except fbl.Error as e:
    # CHECK: refused: fbl-finetune: error: --labels '{{.*}}bad.npy': label 10 of example 0 is outside [0, 10)
    print("refused:", e)
