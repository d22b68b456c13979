#!/usr/bin/env python3
"""Checks a model built by fbl-model against PyTorch autograd and its
compiled bundles against the upstream-MLIR oracle.

  model_check.py --model PRESET|CONFIG.json --seq S --batch B --fbl-bin DIR
      --llvm-bin DIR [--policies P,...] [--target T] [--seed N]

1. fbl-model writes the forward model; weights, token ids and labels (some
   -100) are drawn from a fixed seed.
2. Reference: llm_reference.py (decoders) or bert_reference.py (BERT), an
   independent PyTorch implementation of the family, in float64 autograd.
3. fbl's gradient (@model_grad from fbl-autodiff) run by upstream mlir-opt +
   mlir-runner must match the reference: |fbl - ref| <= rtol |ref| + atol
   max|ref| per tensor (rtol 1e-3, atol 1e-4: fbl computes in float32).
4. For each policy the training pipeline's bundle run by fbl-run on the
   OpenCL device must match the oracle of step 3 (the same bound).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_check  # noqa: E402
import gradcheck  # noqa: E402
import bert_reference  # noqa: E402
import llm_reference  # noqa: E402
import sd_unet_reference  # noqa: E402
import vit_reference  # noqa: E402
import whisper_reference  # noqa: E402


def model_arguments(text):
    """[(name, dims, elem, is_param)] of the model function's arguments."""
    m = re.search(r"func\.func @\w+\((.*?)\)\s*->\s*tensor<f32>", text, re.S)
    out = []
    for a in gradcheck.split_top(m.group(1)):
        am = re.match(r"\s*%\w+\s*:\s*(tensor<[^>]*>)\s*(\{.*\})?", a, re.S)
        attrs = am.group(2) or ""
        name = re.search(r'fbl\.name\s*=\s*"([^"]*)"', attrs).group(1)
        dims, elem = gradcheck.parse_tensor_type(am.group(1))
        out.append((name, dims, elem, "fbl.param" in attrs))
    return out


def input_names(text):
    """Names of the model's data inputs (token ids, masks, labels, pixels,
    features): the arguments fbl-model gives no `fbl.init`."""
    m = re.search(r"func\.func @\w+\((.*?)\)\s*->\s*tensor<f32>", text, re.S)
    names = set()
    for a in gradcheck.split_top(m.group(1)):
        attrs = re.match(r"\s*%\w+\s*:\s*tensor<[^>]*>\s*(\{.*\})?", a, re.S).group(1) or ""
        if "fbl.init" not in attrs:
            names.add(re.search(r'fbl\.name\s*=\s*"([^"]*)"', attrs).group(1))
    return names


def config_json(fbl_bin, model):
    """The config the tool read, as a dict (presets are printed by
    fbl-model --print-config)."""
    text = subprocess.run([os.path.join(fbl_bin, "fbl-model"), "--model", model,
                           "--print-config"], capture_output=True, text=True,
                          check=True).stdout
    return json.loads(text)


def random_config(seed):
    """A small config of a random family with odd sizes, grouped-query
    attention, head_dim not hidden/heads, and sometimes LLaMA-3 RoPE scaling
    or tied embeddings."""
    rng = np.random.default_rng(seed)
    family = ["llama", "qwen2", "gemma"][rng.integers(3)]
    kv = int(rng.integers(1, 3))
    heads = kv * int(rng.integers(1, 4))
    config = {
        "model_type": family,
        "hidden_size": int(rng.integers(5, 13)) * 4 + int(rng.integers(0, 2)) * 2,
        "intermediate_size": int(rng.integers(20, 80)),
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "head_dim": 2 * int(rng.integers(2, 9)),
        "num_hidden_layers": int(rng.integers(1, 3)),
        "vocab_size": int(rng.integers(30, 300)),
        "rms_norm_eps": float(10.0 ** -rng.integers(5, 7)),
        "rope_theta": float(rng.choice([10000.0, 500000.0, 1000000.0])),
        "tie_word_embeddings": bool(rng.integers(2)),
        "max_position_embeddings": 64,
    }
    if family == "llama" and rng.integers(2):
        config["rope_scaling"] = {"rope_type": "llama3", "factor": 8.0,
                                  "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                  "original_max_position_embeddings": 16}
    if family == "gemma":
        config["hidden_act"] = "gelu"
    return config


def draw_weights(args_info, rng, family, inputs):
    """(weights, float inputs) by name, drawn in argument order; `inputs`
    names the data inputs (integer ones are drawn by the caller)."""
    weights, floats = {}, {}
    for name, dims, elem, is_param in args_info:
        if elem == "i64":
            continue
        if name in inputs:
            floats[name] = rng.standard_normal(dims).astype(np.float32)
            continue
        if re.search(r"(norm\d?|norm_out|LayerNorm)\.weight$", name):
            base = 0.0 if family == "gemma" else 1.0
            v = base + 0.1 * rng.standard_normal(dims)
        elif name.endswith(".bias"):
            v = 0.1 * rng.standard_normal(dims)
        else:
            v = 0.08 * rng.standard_normal(dims)
        weights[name] = v.astype(np.float32)
    return weights, floats


def compare(tag, got, want, rtol, atol_rel, floor=0.0):
    """|got - want| <= rtol |want| + max(atol_rel max|want|, floor): `floor`
    is for gradients that are zero in exact arithmetic (a key bias shifts
    every score of a softmax row alike), whose float32 value is rounding."""
    got = np.asarray(got, np.float64).ravel()
    want = np.asarray(want, np.float64).ravel()
    if got.size != want.size:
        print(f"  {tag}: {got.size} elements, want {want.size}")
        return False
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    tol = rtol * np.abs(want) + max(atol_rel * scale, floor, 1e-30)
    err = np.abs(got - want)
    bad = int(np.sum(~(err <= tol)))
    worst = float(np.max(err / tol)) if want.size else 0.0
    print(f"  {tag}: {want.size} elements, worst err/tol {worst:.3f}, {bad} out of tolerance")
    return bad == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", help="preset or config.json")
    ap.add_argument("--random-config", type=int, metavar="SEED",
                    help="check a random small config instead of --model")
    ap.add_argument("--seq", type=int, default=8)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--fbl-bin", required=True)
    ap.add_argument("--llvm-bin", required=True)
    ap.add_argument("--policies", default="fblayout,reuse-forward,explicit-transpose")
    ap.add_argument("--target", default="pocl-cpu")
    ap.add_argument("--device", default="")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--task", default="",
                    help="fbl-model --task (masked-lm, classification for BERT)")
    ap.add_argument("--lora", default="",
                    help="fbl-insert-lora options (rank=R alpha=A targets=...): "
                         "the adapters' B starts non-zero so every gradient is checked")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--bundle-tol", type=float, default=None, metavar="T",
                    help="rtol and atol (of max|oracle|) of the bundle against "
                         "the oracle (default --rtol, --atol): 4e-3 for targets "
                         "that store f16 images")
    args = ap.parse_args()

    tool = lambda name: os.path.join(args.fbl_bin, name)  # noqa: E731
    rng = np.random.default_rng(args.seed)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        if args.random_config is not None:
            args.model = os.path.join(tmp, f"random-{args.random_config}.json")
            json.dump(random_config(args.random_config), open(args.model, "w"))
            crng = np.random.default_rng(args.random_config + 1000)
            args.seq = int(crng.integers(3, 10))
            args.batch = int(crng.integers(1, 4))
            print(f"random config {args.random_config} (batch {args.batch}, seq {args.seq}): "
                  + open(args.model).read())
        config = config_json(args.fbl_bin, args.model)
        model = os.path.join(tmp, "model.mlir")
        gradcheck.run([tool("fbl-model"), "--model", args.model, "--seq", str(args.seq),
                       "--batch", str(args.batch), "-o", model]
                      + (["--task", args.task] if args.task else []))
        if args.lora:
            lora_model = os.path.join(tmp, "lora.mlir")
            gradcheck.run([tool("fbl-opt"), model, f"--fbl-insert-lora={args.lora}",
                           "-o", lora_model])
            model = lora_model
        text = open(model).read()
        info = model_arguments(text)
        data = input_names(text)
        diffusion = config.get("_class_name") == "UNet2DConditionModel"
        family = "unet" if diffusion else config["model_type"]
        weights, floats = draw_weights(info, rng, family, data)
        vocab = config.get("vocab_size", 1)
        ids = rng.integers(0, vocab, size=(args.batch, args.seq))
        labels = ids.copy()
        labels[0, args.seq // 2] = -100  # an ignored position counts for nothing
        labels[-1, -1] = -100
        encoder = family == "bert"
        vision = family == "vit"
        speech = family == "whisper"
        task = args.task or ("classification" if encoder and any(
            a.endswith("ForSequenceClassification")
            for a in config.get("architectures", [])) else "masked-lm")
        if encoder:
            # Segments A then B; the last sequence padded after half its
            # length; masked-LM labels at a few positions (never padding).
            types = np.zeros_like(ids)
            types[:, args.seq // 2:] = 1
            mask = np.ones_like(ids)
            mask[-1, (args.seq + 1) // 2:] = 0
            if task == "classification":
                labels = rng.integers(0, len(config.get("id2label", {})) or
                                      config.get("num_labels", 2), size=(args.batch,))
            else:
                labels = np.where((rng.random(ids.shape) < 0.4) & (mask == 1), ids, -100)
                labels[0, 0] = ids[0, 0]
            feeds = {"input_ids": ids, "token_type_ids": types,
                     "attention_mask": mask, "labels": labels}
        elif vision:
            labels = rng.integers(0, config.get("num_labels", 2), size=(args.batch,))
            feeds = {"labels": labels}
        elif diffusion:
            # Timesteps over the scheduler's whole range: the sinusoids of
            # t = 999 are where float32 angles lose the most.
            feeds = {"timestep": rng.integers(0, 1000, size=(args.batch,))}
        elif speech:
            # The decoder reads the labels shifted right behind its start
            # token (-100 shown as padding), as Whisper's training does.
            start, pad = config["decoder_start_token_id"], config["pad_token_id"]
            dec = np.concatenate([np.full((args.batch, 1), start), labels[:, :-1]], axis=1)
            dec = np.where(dec == -100, pad, dec)
            feeds = {"decoder_input_ids": dec, "labels": labels}
        else:
            feeds = {"input_ids": ids, "labels": labels}
        feeds.update(floats)

        lora = None
        if args.lora:
            opts = dict(kv.split("=", 1) for kv in args.lora.split())
            lora = (int(opts["rank"]), float(opts.get("alpha", opts["rank"])))
        trainable = {a[0] for a in info if a[3]}
        if diffusion:
            ref_loss, ref_grads = sd_unet_reference.loss_and_grads(
                config, weights, feeds, trainable=trainable, lora=lora)
        elif speech:
            ref_loss, ref_grads = whisper_reference.loss_and_grads(
                config, weights, feeds["input_features"], feeds["decoder_input_ids"],
                labels, trainable=trainable, lora=lora)
        elif vision:
            ref_loss, ref_grads = vit_reference.loss_and_grads(
                config, weights, feeds["pixel_values"], labels, trainable=trainable,
                lora=lora)
        elif encoder:
            ref_loss, ref_grads = bert_reference.loss_and_grads(
                config, weights, feeds, task, trainable=trainable, lora=lora)
        else:
            ref_loss, ref_grads = llm_reference.loss_and_grads(
                config, weights, ids, labels, lora=lora, trainable=trainable)
        print(f"{os.path.basename(args.model)}: {len(info) - len(data)} parameters, "
              f"reference loss {ref_loss:.6f}")

        inputs = []
        for name, dims, elem, is_param in info:
            if name in data:
                inputs.append((list(feeds[name].shape), elem,
                               feeds[name].ravel().tolist()))
            else:
                inputs.append((dims, elem, weights[name].ravel().tolist()))
        params = [i for i, a in enumerate(info) if a[3]]
        oracle = e2e_check.oracle_results(tool("fbl-opt"), model, "model", inputs,
                                          params, args.llvm_bin)
        print("fbl-autodiff (upstream MLIR oracle) vs PyTorch autograd:")
        ok &= compare("loss", oracle[0], [ref_loss], args.rtol, 0.0)
        # 1e-6 of the largest gradient: float32 rounding of an exact zero.
        floor = 1e-6 * max(float(np.max(np.abs(g))) for g in ref_grads.values())
        for k, p in enumerate(params):
            ok &= compare(f"d {info[p][0]}", oracle[k + 1], ref_grads[info[p][0]],
                          args.rtol, args.atol, floor)

        for policy in [p for p in args.policies.split(",") if p]:
            bundle = e2e_check.compile_bundle(tool("fbl-opt"), tool("fbl-translate"),
                                              model, policy, args.target, tmp)
            line, results = e2e_check.run_bundle(tool("fbl-run"), bundle, inputs, tmp,
                                                 args.device)
            print(f"bundle policy={policy} vs oracle: {line}")
            worst_ok = True
            for j, want in enumerate(oracle):
                got = results[j] if j < len(results) else np.zeros(0)
                tag = "loss" if j == 0 else f"d {info[params[j - 1]][0]}"
                tol = (args.bundle_tol, args.bundle_tol) if args.bundle_tol \
                    else (args.rtol, args.atol)
                worst_ok &= compare(tag, got, want, *tol, floor=tol[1] * 1e-2 * max(
                    float(np.max(np.abs(o))) for o in oracle[1:]))
            ok &= worst_ok
    print("MODEL CHECK PASS" if ok else "MODEL CHECK FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
