#!/usr/bin/env bash
# Stages issue-12's speed table for one device call (benchmarks/speed_device_run.sh):
# fbl-run, libfbl_runtime and the CLBlast reference; the training steps of
# the MLP (gen_mlp.py, SGD) at 128x256x1024, 512x2048x2048 and 2048^3 and of
# the attention block (gen_attention.py 512 512 8, AdamW) under fblayout with
# f32 and with f16 image storage; the GEMMs at 512x2048x2048 and 2048^3,
# NN/NT/TN on both layouts, under each tile named (the preset's first).
#   benchmarks/stage_speed.sh [TARGET] [TILES]   (nvidia-h200, "8,2,8;8,2,16;16,2,8";
#   "preset": each GEMM shape with the tile the target gives it)
# FBL_TARGET_FIELDS (", key = value, ...") overrides fields of the TARGET
# preset for the training steps (the GEMMs take TILES, and the fields too
# with "preset"); FBL_STORAGES ("f32
# f16") the image storages staged; FBL_PIPELINE_EXTRA adds pipeline options
# to the training steps ("rows=false": the same compiler without row
# kernels, to stage beside it for compare_stages_device_run.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
target=${1:-nvidia-h200}
tiles=${2:-8,2,8;8,2,16;16,2,8}
build=${FBL_BUILD_DIR:-build}
stage=${FBL_STAGE:-.device/stage/speed}
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/lib" "$stage/steps"
cp "$build/bin/fbl-run" "$stage/bin/"
[ -x "$build/bin/clblast_gemm" ] && cp "$build/bin/clblast_gemm" "$stage/bin/"
cp -P "$build"/lib/libfbl_runtime.so* "$stage/lib/"

step() { # NAME OPTIMIZER GENERATOR ARGS...
  local name=$1 optimizer=$2; shift 2
  /usr/bin/python3 "benchmarks/$1" "${@:2}" >"$stage/$name.mlir"
  for storage in ${FBL_STORAGES:-f32 f16}; do
    local fields=${FBL_TARGET_FIELDS:-} t="$target"
    [ "$storage" = f16 ] && fields=", half_storage = true$fields"
    [ -n "$fields" ] && t="{#fbl.target<\"$target\"$fields>}"
    "$build/bin/fbl-opt" "$stage/$name.mlir" \
      --fbl-training-pipeline="policy=fblayout target=$t optimizer=$optimizer${FBL_PIPELINE_EXTRA:+ $FBL_PIPELINE_EXTRA}" |
      "$build/bin/fbl-translate" --fbl-to-opencl -o "$stage/steps/$name-$storage"
  done
  rm "$stage/$name.mlir"
}
step mlp-128x256x1024 sgd gen_mlp.py 128 256 1024
step mlp-512x2048x2048 sgd gen_mlp.py 512 2048 2048
step mlp-2048x2048x2048 sgd gen_mlp.py 2048 2048 2048
step attention-512x512x8 adamw gen_attention.py 512 512 8

# "preset": each shape with the target's own tile (FBL_TARGET_FIELDS's
# classes too, as the steps get them).
gemm_fields=()
[ "$tiles" = preset ] && gemm_fields=(--target-fields "${FBL_TARGET_FIELDS:-}")
/usr/bin/python3 benchmarks/tune_gemm.py stage "$stage/gemm" --target "$target" \
  --tiles "$tiles" "${gemm_fields[@]}" --fbl-opt "$build/bin/fbl-opt" \
  --fbl-translate "$build/bin/fbl-translate" >/dev/null
du -sh "$stage"
