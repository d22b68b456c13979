"""An independent PyTorch implementation of BERT (masked-LM and
sequence-classification heads), written from the published model definition
(Hugging Face `modeling_bert.py`: BertEmbeddings, BertSelfAttention with the
extended additive padding mask, post-norm BertSelfOutput/BertOutput,
BertPredictionHeadTransform with the tied decoder, BertPooler), in training
mode without dropout, for checking fbl's model builder with autograd.

`loss_and_grads(config, weights, inputs, task)` returns the loss and the
gradient of every weight, keyed by its Hugging Face name, in float64.
"""
import math

import numpy as np
import torch

from torch_layers import layer_norm_of, linear_of, loss_and_grads_of


def forward_loss(config, w, input_ids, token_type_ids, attention_mask, labels,
                 task, lora=None):
    """The loss from weight tensors `w` (any dtype and device; the
    computation follows them). `lora` = (rank, alpha): "<prefix>.lora_A/B
    .weight" pairs in `w` add (alpha / rank) B A to "<prefix>.weight", as
    PEFT's LoRA layers do."""
    hidden = config["hidden_size"]
    heads = config["num_attention_heads"]
    head_dim = hidden // heads
    eps = config.get("layer_norm_eps", 1e-12)
    batch, seq = input_ids.shape
    some = next(iter(w.values()))
    dtype = some.dtype

    linear = linear_of(w, lora)
    layer_norm = layer_norm_of(w, hidden, eps)

    positions = torch.arange(seq, device=input_ids.device) \
        .unsqueeze(0).expand(batch, seq)
    e = (w["bert.embeddings.word_embeddings.weight"][input_ids]
         + w["bert.embeddings.token_type_embeddings.weight"][token_type_ids]
         + w["bert.embeddings.position_embeddings.weight"][positions])
    x = layer_norm(e, "bert.embeddings.LayerNorm")
    # get_extended_attention_mask: (1 - mask) * finfo.min, [B, 1, 1, S].
    extended = (1.0 - attention_mask[:, None, None, :].to(dtype)) \
        * torch.finfo(dtype).min
    for i in range(config["num_hidden_layers"]):
        p = f"bert.encoder.layer.{i}."

        def heads_of(t):
            return t.view(batch, seq, heads, head_dim).permute(0, 2, 1, 3)

        q = heads_of(linear(x, p + "attention.self.query"))
        k = heads_of(linear(x, p + "attention.self.key"))
        v = heads_of(linear(x, p + "attention.self.value"))
        scores = q @ k.transpose(-1, -2) / math.sqrt(head_dim) + extended
        ctx = (torch.softmax(scores, dim=-1) @ v).permute(0, 2, 1, 3) \
            .reshape(batch, seq, hidden)
        x = layer_norm(linear(ctx, p + "attention.output.dense") + x,
                       p + "attention.output.LayerNorm")
        h = torch.nn.functional.gelu(linear(x, p + "intermediate.dense"))
        x = layer_norm(linear(h, p + "output.dense") + x,
                       p + "output.LayerNorm")
    if task == "classification":
        pooled = torch.tanh(linear(x[:, 0], "bert.pooler.dense"))
        logits = linear(pooled, "classifier")
        return torch.nn.functional.cross_entropy(logits, labels)
    t = torch.nn.functional.gelu(linear(x, "cls.predictions.transform.dense"))
    t = layer_norm(t, "cls.predictions.transform.LayerNorm")
    logits = t @ w["bert.embeddings.word_embeddings.weight"].t() \
        + w["cls.predictions.bias"]
    return torch.nn.functional.cross_entropy(
        logits.view(-1, logits.shape[-1]), labels.view(-1), ignore_index=-100)


def loss_and_grads(config, weights, inputs, task, trainable=None, lora=None):
    """`inputs`: dict of input_ids, token_type_ids, attention_mask, labels
    (integer arrays)."""
    t = {k: torch.tensor(np.asarray(v), dtype=torch.long)
         for k, v in inputs.items()}
    return loss_and_grads_of(weights, trainable, lambda w: forward_loss(
        config, w, t["input_ids"], t["token_type_ids"], t["attention_mask"],
        t["labels"], task, lora))
