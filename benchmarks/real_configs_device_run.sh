#!/usr/bin/env bash
# Runs on the device machine (after '. .device/env.sh'): each staged real
# config (benchmarks/stage_real_configs.sh), LoRA and full fine-tuning, with
# fbl-run (random weights and tokens, median of the steps), then the PyTorch
# eager reference of the same model and trainable set, side by side.
# Writes $OUT/real-configs.log (FBL_STAGE: another staging folder, its log
# named after it; FBL_NO_TORCH=1 leaves the PyTorch runs out; FBL_TORCH_PROFILE=1
# adds its kernel times, GEMMs apart).
#   real_configs_device_run.sh [ITERATIONS] [STAGED...]   (default: all, LoRA first)
set -uo pipefail
stage=${FBL_STAGE:-.device/stage/real}
iterations=${1:-10}
shift $(( $# > 0 ? 1 : 0 ))
dirs=()
for name in "$@"; do dirs+=("$stage/$name"); done
[ ${#dirs[@]} -gt 0 ] || dirs=("$stage"/*-lora "$stage"/*-full)
export LD_LIBRARY_PATH=$stage/lib:${LD_LIBRARY_PATH:-}
log=${OUT:-/tmp}/$(basename "$stage" | sed 's/^real/real-configs/').log
read -r seq batch < "$stage/shape.txt"
{
  echo "== real configs, seq $seq, batch $batch, AdamW, fblayout"
  nvidia-smi --query-gpu=name,memory.total --format=csv 2>/dev/null
  for dir in "${dirs[@]}"; do
    [ -f "$dir/bundle.tar.xz" ] || { echo "-- $(basename "$dir"): not staged"; continue; }
    echo "-- $(basename "$dir")"
    rm -rf /tmp/fbl-bundle && mkdir -p /tmp/fbl-bundle
    tar -C /tmp/fbl-bundle -xJf "$dir/bundle.tar.xz"
    start=$(date +%s)
    $stage/bin/fbl-run /tmp/fbl-bundle/bundle --device gpu --random-inputs 1 \
      --iterations "$iterations" --profile > /tmp/fbl-report.txt 2>&1
    echo "fbl (exit $?, $(( $(date +%s) - start )) s incl. program build and weights):"
    grep -E "loss|median step time|device memory|error" /tmp/fbl-report.txt | head -6
    cp /tmp/fbl-report.txt "${OUT:-/tmp}/fbl-$(basename "$stage")-$(basename "$dir").txt"
    [ "${FBL_NO_TORCH:-0}" = 1 ] && continue
    lora=""
    case "$dir" in *-lora) lora="--lora 8,16" ;; esac
    timeout 300 python3 benchmarks/llm_step_torch.py --config "$dir/config.json" ${FBL_TORCH_PROFILE:+--profile} \
      --params "$dir/params.json" --seq "$seq" --batch "$batch" $lora --steps 10 --warmup 3
  done
} 2>&1 | tee "$log"
