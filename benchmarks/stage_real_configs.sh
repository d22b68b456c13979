#!/usr/bin/env bash
# Stages the bundled real configs, every layer and the real vocabulary, for
# the device into .device/stage/real (git-ignored; the device call carries
# .device): for each model a LoRA step (rank 8 on the query and value
# projections: q_proj,v_proj, or query,value for BERT and ViT; every
# attention projection of a diffusion UNet, as diffusers' scripts) and a
# full fine-tuning step, AdamW, policy fblayout, compiled for TARGET; the
# config and the weight list for the PyTorch reference. Bundles travel as
# .tar.xz (a 22-layer step's kernels.cl compresses 20-fold). TARGET is a
# preset or a #fbl.target<...> attribute; FBL_STAGE names another staging
# folder (to stage two targets side by side); FBL_PIPELINE_EXTRA adds
# pipeline options (merge=false for per-kernel profiles).
#   benchmarks/stage_real_configs.sh [SEQ] [BATCH] [TARGET] [MODELS...]
# Then, in the device call:
#   '. .device/env.sh; bash benchmarks/real_configs_device_run.sh'.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
seq=${1:-256}; batch=${2:-1}; target=${3:-nvidia-h200}
shift 3 2>/dev/null || shift $#
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(tinyllama-1.1b llama-3.2-1b qwen2.5-0.5b gemma-2b)
build=${FBL_BUILD_DIR:-build}
stage=${FBL_STAGE:-.device/stage/real}
rm -rf "$stage"; mkdir -p "$stage/bin" "$stage/lib"
cp "$build/bin/fbl-run" "$stage/bin/"
cp -P "$build"/lib/libfbl_runtime.so* "$stage/lib/"
echo "$seq $batch" > "$stage/shape.txt"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for name in "${models[@]}"; do
  "$build/bin/fbl-model" --model "$name" --print-config > "$tmp/config.json"
  "$build/bin/fbl-model" --model "$name" --seq "$seq" --batch "$batch" -o "$tmp/full.mlir"
  targets=q_proj,v_proj
  grep -qE '"model_type": "(bert|vit)"' "$tmp/config.json" && targets=query,value
  grep -q '"_class_name": "UNet2DConditionModel"' "$tmp/config.json" &&
    targets=to_k,to_q,to_v,to_out.0
  lora="rank=8 alpha=16 targets=$targets"
  "$build/bin/fbl-opt" "$tmp/full.mlir" --fbl-insert-lora="$lora" -o "$tmp/lora.mlir"
  for mode in lora full; do
    dir="$stage/$name-$mode"
    mkdir -p "$dir"
    cp "$tmp/config.json" "$dir/config.json"
    /usr/bin/python3 - "$tmp/$mode.mlir" "$dir/params.json" <<'PY'
import json, sys
sys.path.insert(0, "test/lib")
import model_check
text = open(sys.argv[1]).read()
inputs = model_check.input_names(text)
json.dump([[n, d, p] for n, d, e, p in model_check.model_arguments(text)
           if n not in inputs],
          open(sys.argv[2], "w"))
PY
    start=$(date +%s.%N)
    if ! "$build/bin/fbl-opt" "$tmp/$mode.mlir" \
        --pass-pipeline="builtin.module(fbl-training-pipeline{policy=fblayout target={$target} optimizer=adamw${FBL_PIPELINE_EXTRA:+ $FBL_PIPELINE_EXTRA}})" \
        -o "$tmp/step.mlir" 2> "$dir/compile-error.txt"; then
      echo "$name $mode: refused: $(grep -m1 error: "$dir/compile-error.txt")"
      continue
    fi
    rm "$dir/compile-error.txt"
    "$build/bin/fbl-translate" "$tmp/step.mlir" --fbl-to-opencl -o "$tmp/bundle"
    echo "$name $mode: compiled and translated in $(echo "$(date +%s.%N) - $start" | bc) s," \
      "$(grep -c '__kernel' "$tmp/bundle/kernels.cl") kernel functions"
    tar -C "$tmp" -cJf "$dir/bundle.tar.xz" bundle
    rm -rf "$tmp/bundle" "$tmp/step.mlir"
  done
done
du -sh "$stage"
