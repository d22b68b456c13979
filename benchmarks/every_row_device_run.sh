#!/usr/bin/env bash
# Runs on the device machine (after '. .device/env.sh'), in one call, every
# row of issue 12's table that benchmarks/stage_every_row.sh staged: fbl's
# GEMMs at 512x2048x2048 and 2048^3 (NN/NT/TN, both layouts, kernel device
# time) beside CLBlast's and cuBLAS's; the MLP and attention steps and each
# zoo model's LoRA and full step under fbl with f32 and with f16 images
# (fbl-run --compare: both in one process, alternating) and PyTorch eager
# fp32 with TF32 off beside them. Program builds are the slow part of a
# first run, so every bundle is built first, in parallel, into the runtime's
# binary cache. Prints the table with its ratios (every_row_table.py) and
# writes $OUT/every-row.log and $OUT/gemm.json.
#   bash benchmarks/every_row_device_run.sh [STAGE [PART...]]   (.device/stage/every-row)
# PARTs (default: all) are `speed` (the GEMMs and the MLP and attention
# steps) and model names: a run that would pass the device's per-call limit
# goes in two calls, e.g. `STAGE speed vit-base-patch16-224 bert-base-uncased`
# then the other models; every_row_table.py reads both logs as one.
set -uo pipefail
stage=${1:-.device/stage/every-row}
shift $(( $# > 0 ? 1 : 0 ))
. "$(dirname "$0")/stage_parts.sh"
set_parts "$@"
out=${OUT:-/tmp}
run=$stage/speed/bin/fbl-run
export LD_LIBRARY_PATH=$stage/speed/lib:${LD_LIBRARY_PATH:-}
work=/tmp/every-row
rm -rf "$work"; mkdir -p "$work"
# The models stage_every_row.sh staged (f32-MODEL/, f16-MODEL/).
mapfile -t models < <(staged_models "$stage")
steps=()
wants speed && steps=("$stage"/speed/steps/*)
{
  print_machine
  start=$(date +%s)
  for model in "${models[@]}"; do
    for storage in f32 f16; do
      for mode in lora full; do
        src=$stage/$storage-$model/$model-$mode
        [ -f "$src/bundle.tar.xz" ] || continue
        mkdir -p "$work/$storage-$model-$mode"
        tar -C "$work/$storage-$model-$mode" -xJf "$src/bundle.tar.xz"
      done
    done
  done
  build_programs "$run" gpu "${steps[@]}" "$work"/*/bundle
  echo "programs built in $(( $(date +%s) - start )) s"

  # The speed table's GEMMs and steps (its own log too: $OUT/speed.log).
  wants speed && bash benchmarks/speed_device_run.sh "$stage/speed"

  for model in "${models[@]}"; do
    read -r seq batch < "$stage/f32-$model/shape.txt"
    for mode in lora full; do
      f32=$work/f32-$model-$mode/bundle f16=$work/f16-$model-$mode/bundle
      [ -d "$f32" ] || continue
      echo "-- model $model $mode (seq $seq, batch $batch)"
      if [ -d "$f16" ]; then
        timeout 200 $run "$f32" --compare "$f16" --device gpu --random-inputs 1 \
          --rounds 3 --iterations 10 | grep "median step time"
      else
        timeout 200 $run "$f32" --device gpu --random-inputs 1 --iterations 10 |
          sed -n "s|^median step time|$f32: median step time|p"
      fi
      lora=""
      [ "$mode" = lora ] && lora="--lora 8,16"
      cfg=$stage/f32-$model/$model-$mode
      timeout 200 python3 benchmarks/llm_step_torch.py --config "$cfg/config.json" \
        --params "$cfg/params.json" --seq "$seq" --batch "$batch" $lora --steps 10 --warmup 3 |
        grep "^torch:"
    done
  done
  echo "== whole call: $(( $(date +%s) - start )) s"
} 2>&1 | tee "$out/every-row.log"
python3 benchmarks/every_row_table.py "$out/every-row.log" | tee "$out/every-row-table.md"
