"""An independent PyTorch implementation of the LLaMA, Qwen2 and Gemma causal
language models, written from the published model definitions (the
Hugging Face `modeling_llama.py`, `modeling_qwen2.py`, `modeling_gemma.py`
forward passes), for checking fbl's model builder with autograd.

`loss_and_grads(config, weights, ids, labels)` returns the shifted
next-token cross-entropy (mean over labels != -100) and the gradient of every
weight, keyed by its Hugging Face name. Computed in float64 so that the
reference itself adds no rounding to the comparison.
"""
import math

import torch

from torch_layers import linear_of, loss_and_grads_of


def _activation(config):
    family = config["model_type"]
    name = config.get("hidden_activation") or config.get("hidden_act", "silu")
    if family == "gemma" and not config.get("hidden_activation") and name == "gelu":
        name = "gelu_pytorch_tanh"  # what Gemma's reference code uses
    if name in ("silu", "swish"):
        return torch.nn.functional.silu
    if name in ("gelu_pytorch_tanh", "gelu_new", "gelu_fast"):
        return lambda x: torch.nn.functional.gelu(x, approximate="tanh")
    if name == "gelu":
        return torch.nn.functional.gelu
    raise ValueError(name)


def _inv_freq(config, head_dim):
    theta = config.get("rope_theta", 10000.0)
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
    scaling = config.get("rope_scaling")
    if scaling:
        # LLaMA-3 "llama3" rope type.
        factor = scaling["factor"]
        low, high = scaling["low_freq_factor"], scaling["high_freq_factor"]
        old = scaling["original_max_position_embeddings"]
        low_wave, high_wave = old / low, old / high
        wave = 2 * math.pi / inv
        scaled = torch.where(wave > low_wave, inv / factor, inv)
        smooth = (old / wave - low) / (high - low)
        blended = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wave < high_wave) & ~(wave > low_wave)
        inv = torch.where(medium, blended, scaled)
    return inv


def _rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def loss_and_grads(config, weights, ids, labels, lora=None, trainable=None):
    """`lora` = (rank, alpha): every "<prefix>.lora_A.weight" /
    "<prefix>.lora_B.weight" pair in `weights` adds (alpha / rank) B A to
    "<prefix>.weight", as PEFT's LoRA layers do. `trainable` (names) limits
    the returned gradients; None: every weight."""
    ids_t = torch.tensor(ids, dtype=torch.long)
    labels_t = torch.tensor(labels, dtype=torch.long)
    return loss_and_grads_of(
        weights, trainable, lambda w: forward_loss(config, w, ids_t, labels_t, lora))


def forward_loss(config, w, ids_t, labels_t, lora=None):
    """The model's loss from weight tensors `w` (any dtype and device; the
    computation follows them) on token ids and labels (long tensors)."""
    family = config["model_type"]
    hidden = config["hidden_size"]
    heads = config["num_attention_heads"]
    kv_heads = config.get("num_key_value_heads", heads)
    head_dim = config.get("head_dim") or hidden // heads
    layers = config["num_hidden_layers"]
    eps = config.get("rms_norm_eps", 1e-6)
    tied = config.get("tie_word_embeddings", family == "gemma")
    act = _activation(config)
    some = next(iter(w.values()))
    dtype, device = some.dtype, some.device
    batch, seq = ids_t.shape

    def rms_norm(x, weight):
        variance = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(variance + eps)
        if family == "gemma":
            return x * (1.0 + weight)
        return weight * x

    linear = linear_of(w, lora)

    # cos/sin from float32 inv_freq, as the reference computes them.
    inv = _inv_freq(config, head_dim)
    pos = torch.arange(seq, dtype=torch.float32)
    freqs = torch.outer(pos, inv)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos = emb.cos().to(dtype=dtype, device=device)
    sin = emb.sin().to(dtype=dtype, device=device)

    x = torch.nn.functional.embedding(ids_t, w["model.embed_tokens.weight"])
    if family == "gemma":
        x = x * torch.tensor(hidden ** 0.5, dtype=torch.float32).to(dtype)
    causal = torch.triu(torch.ones(seq, seq, dtype=torch.bool, device=device),
                        diagonal=1)
    for i in range(layers):
        p = f"model.layers.{i}."
        h = rms_norm(x, w[p + "input_layernorm.weight"])
        q = linear(h, p + "self_attn.q_proj").view(batch, seq, heads, head_dim).transpose(1, 2)
        k = linear(h, p + "self_attn.k_proj").view(batch, seq, kv_heads, head_dim).transpose(1, 2)
        v = linear(h, p + "self_attn.v_proj").view(batch, seq, kv_heads, head_dim).transpose(1, 2)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        rep = heads // kv_heads
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        scores = (q @ k.transpose(2, 3)) / math.sqrt(head_dim)
        scores = scores.masked_fill(causal, float("-inf"))
        o = torch.softmax(scores, dim=-1) @ v
        o = o.transpose(1, 2).reshape(batch, seq, heads * head_dim)
        x = x + linear(o, p + "self_attn.o_proj")
        h = rms_norm(x, w[p + "post_attention_layernorm.weight"])
        gate = linear(h, p + "mlp.gate_proj")
        up = linear(h, p + "mlp.up_proj")
        x = x + linear(act(gate) * up, p + "mlp.down_proj")
    x = rms_norm(x, w["model.norm.weight"])
    head = w["model.embed_tokens.weight"] if tied else w["lm_head.weight"]
    logits = x @ head.t()
    shift_logits = logits[:, :-1, :].reshape(-1, logits.shape[-1])
    shift_labels = labels_t[:, 1:].reshape(-1)
    return torch.nn.functional.cross_entropy(shift_logits, shift_labels,
                                             ignore_index=-100)
