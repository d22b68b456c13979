"""An independent PyTorch implementation of ViT for image classification,
written from the published model definition (Hugging Face
`modeling_vit.py`: ViTPatchEmbeddings as a stride-P Conv2d, the class token
and position embeddings, pre-norm ViTLayer, the final LayerNorm and the
classifier over the class token), in training mode without dropout, for
checking fbl's model builder with autograd.

`loss_and_grads(config, weights, pixel_values, labels)` returns the loss and
the gradient of every weight, keyed by its Hugging Face name, in float64.
"""
import math

import numpy as np
import torch

from torch_layers import layer_norm_of, linear_of, loss_and_grads_of


def forward_loss(config, w, pixel_values, labels, lora=None):
    hidden = config["hidden_size"]
    heads = config["num_attention_heads"]
    head_dim = hidden // heads
    eps = config.get("layer_norm_eps", 1e-12)
    patch = config.get("patch_size", 16)
    batch = pixel_values.shape[0]

    linear = linear_of(w, lora)
    layer_norm = layer_norm_of(w, hidden, eps)

    p = "vit.embeddings."
    x = torch.nn.functional.conv2d(
        pixel_values, w[p + "patch_embeddings.projection.weight"],
        w[p + "patch_embeddings.projection.bias"], stride=patch)
    x = x.flatten(2).transpose(1, 2)
    x = torch.cat((w[p + "cls_token"].expand(batch, -1, -1), x), dim=1)
    x = x + w[p + "position_embeddings"]
    seq = x.shape[1]
    for i in range(config["num_hidden_layers"]):
        p = f"vit.encoder.layer.{i}."
        h = layer_norm(x, p + "layernorm_before")

        def heads_of(t):
            return t.view(batch, seq, heads, head_dim).permute(0, 2, 1, 3)

        q = heads_of(linear(h, p + "attention.attention.query"))
        k = heads_of(linear(h, p + "attention.attention.key"))
        v = heads_of(linear(h, p + "attention.attention.value"))
        scores = q @ k.transpose(-1, -2) / math.sqrt(head_dim)
        ctx = (torch.softmax(scores, dim=-1) @ v).permute(0, 2, 1, 3) \
            .reshape(batch, seq, hidden)
        x = x + linear(ctx, p + "attention.output.dense")
        h = layer_norm(x, p + "layernorm_after")
        h = torch.nn.functional.gelu(linear(h, p + "intermediate.dense"))
        x = x + linear(h, p + "output.dense")
    x = layer_norm(x, "vit.layernorm")
    logits = linear(x[:, 0], "classifier")
    return torch.nn.functional.cross_entropy(logits, labels)


def loss_and_grads(config, weights, pixel_values, labels, trainable=None,
                   lora=None):
    pixels = torch.tensor(np.asarray(pixel_values, dtype=np.float64))
    classes = torch.tensor(np.asarray(labels), dtype=torch.long)
    return loss_and_grads_of(
        weights, trainable, lambda w: forward_loss(config, w, pixels, classes, lora))
