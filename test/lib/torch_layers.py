"""What the PyTorch reference implementations (llm_reference.py,
bert_reference.py, vit_reference.py, whisper_reference.py) share: linear
layers with optional PEFT-style LoRA adapters and LayerNorms over a dict of
Hugging Face-named weights, and the float64 autograd around a model's loss.
"""
import numpy as np
import torch


def linear_of(w, lora=None):
    """linear(x, prefix): x · W^T (+ (alpha / rank) (x · A^T) · B^T when the
    "<prefix>.lora_A/B.weight" pair is in `w` and `lora` = (rank, alpha))
    (+ the bias when `w` holds one)."""
    def linear(x, prefix):
        y = x @ w[prefix + ".weight"].t()
        if lora and prefix + ".lora_A.weight" in w:
            rank, alpha = lora
            y = y + (alpha / rank) * ((x @ w[prefix + ".lora_A.weight"].t())
                                      @ w[prefix + ".lora_B.weight"].t())
        if prefix + ".bias" in w:
            y = y + w[prefix + ".bias"]
        return y
    return linear


def layer_norm_of(w, size, eps):
    """norm(x, prefix): LayerNorm over the last `size` features with
    "<prefix>.weight" and "<prefix>.bias"."""
    def norm(x, prefix):
        return torch.nn.functional.layer_norm(
            x, (size,), w[prefix + ".weight"], w[prefix + ".bias"], eps)
    return norm


def loss_and_grads_of(weights, trainable, loss_of):
    """`loss_of(w)` on float64 leaf tensors of `weights` (numpy arrays by
    name), each requiring its gradient when in `trainable` (None: all);
    returns the loss and the gradient of every trainable weight."""
    w = {k: torch.tensor(np.asarray(v, dtype=np.float64),
                         requires_grad=trainable is None or k in trainable)
         for k, v in weights.items()}
    loss = loss_of(w)
    loss.backward()
    return float(loss), {k: t.grad.numpy() if t.grad is not None else np.zeros(t.shape)
                         for k, t in w.items() if t.requires_grad}
