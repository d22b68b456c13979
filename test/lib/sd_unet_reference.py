"""An independent PyTorch implementation of Stable Diffusion's UNet
(Hugging Face diffusers `UNet2DConditionModel`, SD-1.5 style: sinusoidal
Timesteps + TimestepEmbedding, ResnetBlock2D, Transformer2DModel with 1x1-conv
projections and BasicTransformerBlocks of self-attention, cross-attention and
a GEGLU feed-forward, stride-2 conv downsamplers, nearest x2 + conv
upsamplers), written from the published model definition, computing the
noise-prediction MSE training loss for checking fbl's model builder with
autograd.

`loss_and_grads(config, weights, feeds)` returns the loss and the gradient of
every weight, keyed by its diffusers state-dict name, in float64.
`parameter_shapes(config)` lists every weight in the order the model is built,
so tests can draw weights for a config without a checkpoint.
"""
import math
from collections import OrderedDict

import numpy as np
import torch
import torch.nn.functional as F

from torch_layers import layer_norm_of, linear_of, loss_and_grads_of


def _per_block(config, key, default):
    """A per-down-block list of `config[key]`, which may be one int for all."""
    value = config.get(key) or default
    n = len(config["block_out_channels"])
    return list(value) if isinstance(value, (list, tuple)) else [value] * n


def _heads(config):
    """Heads per down block. SD-1.5 configs misname the head count
    `attention_head_dim`; newer ones call it `num_attention_heads`."""
    return _per_block(config, "num_attention_heads", config.get("attention_head_dim", 8))


def _tensors(feeds):
    """sample, timestep, encoder_hidden_states and noise: numpy arrays in
    float64, torch tensors as given (a GPU benchmark's float32)."""
    return (feeds[k] if torch.is_tensor(feeds[k])
            else torch.as_tensor(np.asarray(feeds[k], dtype=np.float64))
            for k in ("sample", "timestep", "encoder_hidden_states", "noise"))


def forward_loss(config, w, feeds, lora=None):
    channels = config["block_out_channels"]
    n, layers = len(channels), config.get("layers_per_block", 2)
    groups, eps = config.get("norm_num_groups", 32), config.get("norm_eps", 1e-5)
    heads, depth = _heads(config), _per_block(config, "transformer_layers_per_block", 1)
    linear = linear_of(w, lora)
    sample, timestep, context, noise = _tensors(feeds)

    def conv(x, prefix, stride=1, padding=None):
        weight = w[prefix + ".weight"]
        padding = weight.shape[-1] // 2 if padding is None else padding
        return F.conv2d(x, weight, w[prefix + ".bias"], stride, padding)

    def group_norm(x, prefix, norm_eps):
        return F.group_norm(x, groups, w[prefix + ".weight"], w[prefix + ".bias"], norm_eps)

    def resnet(x, prefix, scale=1.0):
        h = conv(F.silu(group_norm(x, prefix + "norm1", eps)), prefix + "conv1")
        h = h + linear(F.silu(temb), prefix + "time_emb_proj")[:, :, None, None]
        h = conv(F.silu(group_norm(h, prefix + "norm2", eps)), prefix + "conv2")
        has_shortcut = prefix + "conv_shortcut.weight" in w
        return ((conv(x, prefix + "conv_shortcut") if has_shortcut else x) + h) / scale

    def attention(x, kv, prefix, num_heads):
        batch, seq, dim = x.shape
        head_dim = dim // num_heads

        def split(t):
            return t.reshape(batch, t.shape[1], num_heads, head_dim).transpose(1, 2)

        q = split(linear(x, prefix + "to_q"))
        k = split(linear(kv, prefix + "to_k"))
        v = split(linear(kv, prefix + "to_v"))
        probs = torch.softmax(q @ k.transpose(-1, -2) * head_dim ** -0.5, dim=-1)
        out = (probs @ v).transpose(1, 2).reshape(batch, seq, dim)
        return linear(out, prefix + "to_out.0")

    def transformer(x, prefix, num_heads, num_layers):
        batch, _, height, width = x.shape
        h = conv(group_norm(x, prefix + "norm", 1e-6), prefix + "proj_in")
        dim = h.shape[1]
        h = h.permute(0, 2, 3, 1).reshape(batch, height * width, dim)
        layer_norm = layer_norm_of(w, dim, 1e-5)
        for i in range(num_layers):
            p = f"{prefix}transformer_blocks.{i}."
            n1 = layer_norm(h, p + "norm1")
            h = attention(n1, n1, p + "attn1.", num_heads) + h
            h = attention(layer_norm(h, p + "norm2"), context, p + "attn2.", num_heads) + h
            hidden, gate = linear(layer_norm(h, p + "norm3"), p + "ff.net.0.proj").chunk(2, dim=-1)
            h = linear(hidden * F.gelu(gate), p + "ff.net.2") + h
        h = h.reshape(batch, height, width, dim).permute(0, 3, 1, 2)
        return conv(h, prefix + "proj_out") + x

    half = channels[0] // 2
    exponent = -math.log(10000) * torch.arange(half, dtype=sample.dtype, device=sample.device) \
        / (half - config.get("freq_shift", 0))
    emb = timestep[:, None] * torch.exp(exponent)[None]
    emb = torch.cat([emb.sin(), emb.cos()], dim=-1)
    if config.get("flip_sin_to_cos", True):
        emb = torch.cat([emb[:, half:], emb[:, :half]], dim=-1)
    temb = linear(F.silu(linear(emb, "time_embedding.linear_1")), "time_embedding.linear_2")

    h = conv(sample, "conv_in")
    skips = [h]
    for i, kind in enumerate(config["down_block_types"]):
        p = f"down_blocks.{i}."
        for j in range(layers):
            h = resnet(h, f"{p}resnets.{j}.")
            if "CrossAttn" in kind:
                h = transformer(h, f"{p}attentions.{j}.", heads[i], depth[i])
            skips.append(h)
        if i < n - 1:
            # downsample_padding 0 pads right and bottom only, as diffusers.
            pad = config.get("downsample_padding", 1)
            h = conv(h if pad else F.pad(h, (0, 1, 0, 1)), p + "downsamplers.0.conv", 2, pad)
            skips.append(h)

    scale = config.get("mid_block_scale_factor", 1)
    h = resnet(h, "mid_block.resnets.0.", scale)
    h = transformer(h, "mid_block.attentions.0.", heads[-1], depth[-1])
    h = resnet(h, "mid_block.resnets.1.", scale)

    for i, kind in enumerate(config["up_block_types"]):
        p = f"up_blocks.{i}."
        for j in range(layers + 1):
            h = resnet(torch.cat([h, skips.pop()], dim=1), f"{p}resnets.{j}.")
            if "CrossAttn" in kind:
                h = transformer(h, f"{p}attentions.{j}.", heads[n - 1 - i], depth[n - 1 - i])
        if i < n - 1:
            # diffusers upsamples to the next skip's size: x2 unless the
            # matching downsample rounded an odd size up.
            h = F.interpolate(h, size=tuple(skips[-1].shape[2:]), mode="nearest")
            h = conv(h, p + "upsamplers.0.conv")

    h = conv(F.silu(group_norm(h, "conv_norm_out", eps)), "conv_out")
    return F.mse_loss(h, noise)


def loss_and_grads(config, weights, feeds, trainable=None, lora=None):
    return loss_and_grads_of(weights, trainable, lambda w: forward_loss(config, w, feeds, lora))


def parameter_shapes(config):
    """Every weight's name and shape (no LoRA), in build order: conv_in,
    time_embedding, each down block (resnet, attention, ... downsampler), the
    mid block, each up block likewise, conv_norm_out, conv_out. Channel
    bookkeeping follows diffusers' UNet2DConditionModel.__init__."""
    shapes = OrderedDict()
    channels, cross = config["block_out_channels"], config["cross_attention_dim"]
    n, layers, temb = len(channels), config.get("layers_per_block", 2), 4 * channels[0]
    depth = _per_block(config, "transformer_layers_per_block", 1)

    def param(prefix, out, *fan_in, bias=True):
        shapes[prefix + ".weight"] = [out, *fan_in]
        if bias:
            shapes[prefix + ".bias"] = [out]

    def resnet(prefix, inp, out):
        param(prefix + "norm1", inp)
        param(prefix + "conv1", out, inp, 3, 3)
        param(prefix + "time_emb_proj", out, temb)
        param(prefix + "norm2", out)
        param(prefix + "conv2", out, out, 3, 3)
        if inp != out:
            param(prefix + "conv_shortcut", out, inp, 1, 1)

    def transformer(prefix, dim, num_layers):
        param(prefix + "norm", dim)
        param(prefix + "proj_in", dim, dim, 1, 1)
        for i in range(num_layers):
            p = f"{prefix}transformer_blocks.{i}."
            for a, kv_dim in ((1, dim), (2, cross)):
                param(f"{p}norm{a}", dim)
                param(f"{p}attn{a}.to_q", dim, dim, bias=False)
                param(f"{p}attn{a}.to_k", dim, kv_dim, bias=False)
                param(f"{p}attn{a}.to_v", dim, kv_dim, bias=False)
                param(f"{p}attn{a}.to_out.0", dim, dim)
            param(p + "norm3", dim)
            param(p + "ff.net.0.proj", 8 * dim, dim)
            param(p + "ff.net.2", dim, 4 * dim)
        param(prefix + "proj_out", dim, dim, 1, 1)

    param("conv_in", channels[0], config["in_channels"], 3, 3)
    param("time_embedding.linear_1", temb, channels[0])
    param("time_embedding.linear_2", temb, temb)
    out = channels[0]
    for i, kind in enumerate(config["down_block_types"]):
        inp, out = out, channels[i]
        for j in range(layers):
            resnet(f"down_blocks.{i}.resnets.{j}.", inp if j == 0 else out, out)
            if "CrossAttn" in kind:
                transformer(f"down_blocks.{i}.attentions.{j}.", out, depth[i])
        if i < n - 1:
            param(f"down_blocks.{i}.downsamplers.0.conv", out, out, 3, 3)
    resnet("mid_block.resnets.0.", channels[-1], channels[-1])
    transformer("mid_block.attentions.0.", channels[-1], depth[-1])
    resnet("mid_block.resnets.1.", channels[-1], channels[-1])
    rev = list(reversed(channels))
    out = rev[0]
    for i, kind in enumerate(config["up_block_types"]):
        prev, out, inp = out, rev[i], rev[min(i + 1, n - 1)]
        for j in range(layers + 1):
            skip = inp if j == layers else out
            resnet(f"up_blocks.{i}.resnets.{j}.", (prev if j == 0 else out) + skip, out)
            if "CrossAttn" in kind:
                transformer(f"up_blocks.{i}.attentions.{j}.", out, depth[n - 1 - i])
        if i < n - 1:
            param(f"up_blocks.{i}.upsamplers.0.conv", out, out, 3, 3)
    param("conv_norm_out", channels[0])
    param("conv_out", config["out_channels"], channels[0], 3, 3)
    return shapes


def _module_loss(config, w, feeds):
    """The same UNet from torch.nn modules (Conv2d, GroupNorm, LayerNorm,
    Linear, MultiheadAttention, Upsample, GELU) and a differently written
    timestep embedding: a cross-check of the functional ops' conventions."""
    nn = torch.nn
    groups, eps = config["norm_num_groups"], config.get("norm_eps", 1e-5)
    n, layers, heads = len(config["block_out_channels"]), config["layers_per_block"], _heads(config)
    sample, timestep, context, noise = _tensors(feeds)

    def load(module, prefix, state=None):
        module = module.double()
        module.load_state_dict(state or {k: w[f"{prefix}.{k}"] for k in module.state_dict()})
        return module

    def conv(p, stride=1):
        o, i, k, _ = w[p + ".weight"].shape
        return load(nn.Conv2d(i, o, k, stride, k // 2), p)

    def linear(p):
        o, i = w[p + ".weight"].shape
        return load(nn.Linear(i, o, bias=p + ".bias" in w), p)

    def group_norm(p, norm_eps):
        return load(nn.GroupNorm(groups, w[p + ".weight"].shape[0], norm_eps), p)

    def mha(p, num_heads):
        dim, kv_dim = w[p + "to_k.weight"].shape
        module = nn.MultiheadAttention(dim, num_heads, kdim=kv_dim, vdim=kv_dim, batch_first=True)
        q, k, v = (w[f"{p}to_{x}.weight"] for x in "qkv")
        state = {"in_proj_bias": torch.zeros(3 * dim), "out_proj.weight": w[p + "to_out.0.weight"],
                 "out_proj.bias": w[p + "to_out.0.bias"]}
        state.update({"in_proj_weight": torch.cat([q, k, v])} if kv_dim == dim
                     else {"q_proj_weight": q, "k_proj_weight": k, "v_proj_weight": v})
        module = load(module, p, state)
        return lambda x, kv: module(x, kv, kv, need_weights=False)[0]

    def resnet(x, p):
        h = conv(p + "conv1")(F.silu(group_norm(p + "norm1", eps)(x)))
        h = h + linear(p + "time_emb_proj")(F.silu(temb)).unsqueeze(-1).unsqueeze(-1)
        h = conv(p + "conv2")(F.silu(group_norm(p + "norm2", eps)(h)))
        return h + (conv(p + "conv_shortcut")(x) if p + "conv_shortcut.weight" in w else x)

    def transformer(x, p, num_heads):
        b, c, height, width = x.shape
        h = conv(p + "proj_in")(group_norm(p + "norm", 1e-6)(x)).flatten(2).transpose(1, 2)
        q = p + "transformer_blocks.0."
        norm = [load(nn.LayerNorm(c, eps=1e-5), f"{q}norm{a}") for a in (1, 2, 3)]
        h = h + mha(q + "attn1.", num_heads)(norm[0](h), norm[0](h))
        h = h + mha(q + "attn2.", num_heads)(norm[1](h), context)
        hidden, gate = linear(q + "ff.net.0.proj")(norm[2](h)).chunk(2, dim=-1)
        h = h + linear(q + "ff.net.2")(hidden * nn.GELU()(gate))
        return x + conv(p + "proj_out")(h.transpose(1, 2).reshape(b, c, height, width))

    half = config["block_out_channels"][0] // 2
    angle = timestep[:, None] * 10000.0 ** (-torch.arange(half, dtype=torch.float64) / half)
    temb = linear("time_embedding.linear_2")(F.silu(
        linear("time_embedding.linear_1")(torch.cat([angle.cos(), angle.sin()], dim=1))))
    h = conv("conv_in")(sample)
    skips = [h]
    for i, kind in enumerate(config["down_block_types"]):
        for j in range(layers):
            h = resnet(h, f"down_blocks.{i}.resnets.{j}.")
            if "CrossAttn" in kind:
                h = transformer(h, f"down_blocks.{i}.attentions.{j}.", heads[i])
            skips.append(h)
        if i < n - 1:
            skips.append(h := conv(f"down_blocks.{i}.downsamplers.0.conv", 2)(h))
    h = resnet(h, "mid_block.resnets.0.")
    h = resnet(transformer(h, "mid_block.attentions.0.", heads[-1]), "mid_block.resnets.1.")
    for i, kind in enumerate(config["up_block_types"]):
        for j in range(layers + 1):
            h = resnet(torch.cat([h, skips.pop()], dim=1), f"up_blocks.{i}.resnets.{j}.")
            if "CrossAttn" in kind:
                h = transformer(h, f"up_blocks.{i}.attentions.{j}.", heads[n - 1 - i])
        if i < n - 1:
            h = conv(f"up_blocks.{i}.upsamplers.0.conv")(nn.Upsample(scale_factor=2.0)(h))
    h = conv("conv_out")(F.silu(group_norm("conv_norm_out", eps)(h)))
    return ((h - noise) ** 2).mean()


if __name__ == "__main__":
    config = {"in_channels": 4, "out_channels": 4, "block_out_channels": [8, 16],
              "down_block_types": ["CrossAttnDownBlock2D", "DownBlock2D"],
              "up_block_types": ["UpBlock2D", "CrossAttnUpBlock2D"], "layers_per_block": 1,
              "attention_head_dim": 2, "cross_attention_dim": 12, "norm_num_groups": 4}
    rng = np.random.default_rng(0)
    # Norm gains near 1, small biases, other weights at 1/sqrt(fan_in):
    # activations stay O(1), so every gradient is well above rounding.
    weights = {name: np.float32(
        rng.standard_normal(shape) / math.sqrt(np.prod(shape[1:])) if len(shape) > 1
        else 1 + 0.1 * rng.standard_normal(shape) if name.endswith(".weight")
        else 0.1 * rng.standard_normal(shape)) for name, shape in parameter_shapes(config).items()}
    feeds = {"sample": rng.standard_normal((2, 4, 8, 8)).astype(np.float32),
             "timestep": rng.integers(0, 1000, 2).astype(np.int64),
             "encoder_hidden_states": rng.standard_normal((2, 5, 12)).astype(np.float32),
             "noise": rng.standard_normal((2, 4, 8, 8)).astype(np.float32)}

    loss, grads = loss_and_grads(config, weights, feeds)
    assert np.isfinite(loss) and set(grads) == set(weights)
    for name, grad in grads.items():
        assert grad.shape == weights[name].shape and np.any(grad != 0), name
    print(f"loss {loss:.12f}, {len(grads)} gradients with their weights' shapes, all nonzero")

    w = {k: torch.tensor(np.asarray(v, dtype=np.float64)) for k, v in weights.items()}
    names = sorted(weights)
    for _ in range(5):
        name = names[rng.integers(len(names))]
        index = tuple(int(rng.integers(s)) for s in weights[name].shape)
        step, base = 1e-5, float(w[name][index])
        values = []
        for delta in (step, -step):
            w[name][index] = base + delta
            values.append(float(forward_loss(config, w, feeds)))
        w[name][index] = base
        numeric, exact = (values[0] - values[1]) / (2 * step), float(grads[name][index])
        rel = abs(numeric - exact) / max(abs(numeric), abs(exact), 1e-300)
        print(f"  d loss / d {name}{list(index)}: autograd {exact:+.10e} "
              f"finite diff {numeric:+.10e} rel err {rel:.1e}")
        assert rel < 1e-6, (name, index, rel)

    with torch.no_grad():
        module_loss = float(_module_loss(config, w, feeds))
    print(f"torch.nn module loss {module_loss:.12f}, |diff| {abs(module_loss - loss):.1e}")
    assert abs(module_loss - loss) < 1e-10
    print("SD UNET REFERENCE SELF-CHECK PASS")
