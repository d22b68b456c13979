"""An independent PyTorch implementation of Whisper's training loss, written
from the published model definition (Hugging Face `modeling_whisper.py`:
WhisperEncoder with two Conv1d + GELU and sinusoidal positions,
WhisperEncoderLayer / WhisperDecoderLayer pre-norm with k_proj unbiased,
cross-attention to the encoder, the output projection tied to the token
table), in training mode without dropout, for checking fbl's model builder
with autograd.

`loss_and_grads(config, weights, features, decoder_ids, labels)` returns the
token cross-entropy (labels -100 ignored) and the gradient of every weight,
keyed by its Hugging Face name, in float64.
"""
import math

import numpy as np
import torch

from torch_layers import layer_norm_of, linear_of, loss_and_grads_of


def sinusoids(length, channels, max_timescale=10000):
    increment = np.log(max_timescale) / (channels // 2 - 1)
    inv = torch.exp(-increment * torch.arange(channels // 2))
    scaled = torch.arange(length).view(-1, 1) * inv.view(1, -1)
    return torch.cat([scaled.sin(), scaled.cos()], dim=1)


def forward_loss(config, w, features, decoder_ids, labels, lora=None):
    d = config["d_model"]
    heads = config["decoder_attention_heads"]
    head_dim = d // heads
    batch = features.shape[0]
    gelu = torch.nn.functional.gelu

    linear = linear_of(w, lora)
    norm = layer_norm_of(w, d, 1e-5)

    def attention(x, prefix, memory=None, causal=False):
        src = x if memory is None else memory
        lq, lk = x.shape[1], src.shape[1]
        q = (linear(x, prefix + ".q_proj") * head_dim ** -0.5) \
            .view(batch, lq, heads, head_dim).transpose(1, 2)
        k = linear(src, prefix + ".k_proj").view(batch, lk, heads, head_dim).transpose(1, 2)
        v = linear(src, prefix + ".v_proj").view(batch, lk, heads, head_dim).transpose(1, 2)
        scores = q @ k.transpose(-1, -2)
        if causal:
            future = torch.triu(torch.ones(lq, lk, dtype=torch.bool,
                                           device=x.device), diagonal=1)
            scores = scores.masked_fill(future, float("-inf"))
        o = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(batch, lq, d)
        return linear(o, prefix + ".out_proj")

    conv1d = torch.nn.functional.conv1d
    x = gelu(conv1d(features, w["model.encoder.conv1.weight"],
                    w["model.encoder.conv1.bias"], padding=1))
    x = gelu(conv1d(x, w["model.encoder.conv2.weight"],
                    w["model.encoder.conv2.bias"], stride=2, padding=1))
    x = x.permute(0, 2, 1)
    x = x + sinusoids(x.shape[1], d).to(dtype=x.dtype, device=x.device)
    for i in range(config["encoder_layers"]):
        p = f"model.encoder.layers.{i}."
        x = x + attention(norm(x, p + "self_attn_layer_norm"), p + "self_attn")
        h = norm(x, p + "final_layer_norm")
        x = x + linear(gelu(linear(h, p + "fc1")), p + "fc2")
    memory = norm(x, "model.encoder.layer_norm")

    table = w["model.decoder.embed_tokens.weight"]
    seq = decoder_ids.shape[1]
    y = table[decoder_ids] + w["model.decoder.embed_positions.weight"][:seq]
    for i in range(config["decoder_layers"]):
        p = f"model.decoder.layers.{i}."
        y = y + attention(norm(y, p + "self_attn_layer_norm"), p + "self_attn",
                          causal=True)
        y = y + attention(norm(y, p + "encoder_attn_layer_norm"), p + "encoder_attn",
                          memory=memory)
        h = norm(y, p + "final_layer_norm")
        y = y + linear(gelu(linear(h, p + "fc1")), p + "fc2")
    y = norm(y, "model.decoder.layer_norm")
    logits = y @ table.t()
    return torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=-100)


def loss_and_grads(config, weights, features, decoder_ids, labels, trainable=None,
                   lora=None):
    feats = torch.tensor(np.asarray(features, dtype=np.float64))
    dec = torch.tensor(np.asarray(decoder_ids), dtype=torch.long)
    targets = torch.tensor(np.asarray(labels), dtype=torch.long)
    return loss_and_grads_of(weights, trainable, lambda w: forward_loss(
        config, w, feats, dec, targets, lora))
