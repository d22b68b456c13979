#!/usr/bin/env bash
# The main job: set up, build, then fine-tune the bundled tiny LLaMA on the
# bundled text on the local OpenCL device (the first GPU, else PoCL on the
# CPU), with progress, loss and step time:
#  1. a short full fine-tuning from random weights gives the base model
#     (out/base/model.safetensors), as a pretrained checkpoint would;
#  2. LoRA fine-tuning of that base (adapters on q/k/v/o), saving the
#     adapters in PEFT's format, the merged weights, loss.csv, loss.svg and
#     summary.json in out/lora/.
# Usage: scripts/run.sh [MODEL] [DATA] [STEPS]
#   MODEL: a preset (fbl-model --list-presets) or a config.json; DATA: a
#   text file or folder. FBL_DEVICE picks the OpenCL device.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${FBL_BUILD_DIR:-build}
model=${1:-tiny-llama}
data=${2:-examples/data/layouts.txt}
steps=${3:-200}
out=${FBL_OUT:-out}
device=()
if [ -n "${FBL_DEVICE:-}" ]; then device=(--device "$FBL_DEVICE"); fi

bash scripts/setup.sh
bash scripts/build.sh >/dev/null

echo "== OpenCL devices"
"$build/bin/fbl-run" --list-devices

echo "== 1. base model: full fine-tuning of $model from random weights"
"$build/bin/fbl-finetune" --model "$model" --data "$data" --full \
  --steps "$steps" --seq 64 --batch 4 --lr 3e-3 "${device[@]}" \
  --save "$out/base"

echo "== 2. LoRA fine-tuning of the base (rank 8 on q/k/v/o)"
"$build/bin/fbl-finetune" --model "$model" --data "$data" \
  --weights "$out/base/model.safetensors" \
  --lora rank=8,alpha=16,targets=q_proj,k_proj,v_proj,o_proj \
  --steps "$steps" --seq 64 --batch 4 --lr 3e-3 --merge "${device[@]}" \
  --save "$out/lora"
echo "== results in $out/lora:"
ls "$out/lora"
