#!/usr/bin/env bash
# Stages everything issue 12's table measures, for one device call
# (benchmarks/every_row_device_run.sh): the speed table's steps and GEMMs
# (stage_speed.sh) and each zoo model at its real config, LoRA and full
# fine-tuning, compiled with f32 and with f16 image storage
# (stage_real_configs.sh; ViT-B/16 32 images, BERT-base 8 x 128 tokens,
# Whisper-tiny 8 x 64 tokens, SD-1.5's UNet at 2 levels, batch 2, 77 text
# tokens, Llama-3.2-1B 1 x 256 tokens).
#   benchmarks/stage_every_row.sh [STAGE]   (.device/stage/every-row)
# FBL_TARGET_FIELDS (", key = value, ...") overrides fields of the H200
# preset in every step, FBL_GEMM_TILES the GEMM rows' tiles ("preset",
# the default: each shape with the tile the target gives it, as the steps
# get it; or "8,2,16;..." to time those tiles at every shape):
# to stage a candidate preset beside the current one; FBL_STORAGES ("f32
# f16") the image storages staged, FBL_MODELS ("vit-base-patch16-224 ...")
# the models (default: all five), FBL_PIPELINE_EXTRA pipeline options of
# every step ("rows=false": the same compiler without row kernels).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
stage=${1:-.device/stage/every-row}
rm -rf "$stage"; mkdir -p "$stage"
fields=${FBL_TARGET_FIELDS:-}
FBL_STAGE="$stage/speed" bash benchmarks/stage_speed.sh nvidia-h200 \
  "${FBL_GEMM_TILES:-preset}" >/dev/null
while read -r model seq batch; do
  [[ -z "${FBL_MODELS:-}" || " $FBL_MODELS " == *" $model "* ]] || continue
  for storage in ${FBL_STORAGES:-f32 f16}; do
    target=nvidia-h200
    [ -n "$fields" ] && target="#fbl.target<\"nvidia-h200\"$fields>"
    [ "$storage" = f16 ] &&
      target="#fbl.target<\"nvidia-h200\", half_storage = true$fields>"
    FBL_STAGE="$stage/$storage-$model" \
      bash benchmarks/stage_real_configs.sh "$seq" "$batch" "$target" "$model"
  done
done <<'MODELS'
vit-base-patch16-224 0 32
bert-base-uncased 128 8
whisper-tiny 64 8
sd-1.5-unet-2-levels 77 2
llama-3.2-1b 256 1
MODELS
# One fbl-run and runtime for all: speed/'s (each stage_*.sh copied its own).
rm -rf "$stage"/f*-*/bin "$stage"/f*-*/lib
du -sh "$stage"
