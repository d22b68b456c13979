"""Writes labelled examples for test/Finetune/classifiers.test: images whose
class is the bright quadrant (ViT), and byte sequences whose class is
whether byte 'z' occurs (BERT for sequence classification), as .npy."""
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(0)
n = 64
labels = rng.integers(0, 4, size=n)
images = 0.3 * rng.standard_normal((n, 3, 32, 32))
for i, l in enumerate(labels):
    y, x = divmod(int(l), 2)
    images[i, :, 16 * y:16 * y + 16, 16 * x:16 * x + 16] += 1.0
np.save(f"{out}/images.npy", images.astype(np.float32))
np.save(f"{out}/image-labels.npy", labels.astype(np.int64))
np.save(f"{out}/bad-labels.npy", np.where(labels == 3, 10, labels).astype(np.int64))
np.save(f"{out}/small-images.npy", images[:, :, :16, :16].astype(np.float32))

seq = 12
labels = rng.integers(0, 2, size=n)
ids = rng.integers(0, 256, size=(n, seq))
ids[ids == 122] = 121
for i, l in enumerate(labels):
    if l:
        ids[i, rng.integers(1, seq // 2)] = 122
ids[:, 0] = 256       # [CLS]
ids[:8, -3:] = 259    # [PAD]: not attended to
np.save(f"{out}/ids.npy", ids.astype(np.int64))
np.save(f"{out}/id-labels.npy", labels.astype(np.int64))
