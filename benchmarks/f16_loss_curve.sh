#!/usr/bin/env bash
# The loss curve of a fine-tuning run with f16 image storage against f32:
# fbl-finetune trains the same model from the same seed twice on the local
# OpenCL device, once for TARGET as given and once with half_storage set,
# and prints the curves side by side every 10 steps with their largest and
# mean absolute difference.
#   benchmarks/f16_loss_curve.sh [MODEL] [STEPS] [TARGET] [BUILD]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
model=${1:-tiny-llama}
steps=${2:-150}
target=${3:-pocl-cpu}
build=${4:-$root/build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() {
  "$build/bin/fbl-finetune" --model "$model" \
    --data "$root/examples/data/layouts.txt" --full --steps "$steps" \
    --seq 64 --batch 4 --lr 3e-3 --seed 1 --target "$2" --save "$out/$1" \
    | tail -1
}
run f32 "#fbl.target<\"$target\", half_storage = false>"
run f16 "#fbl.target<\"$target\", half_storage = true>"
paste -d, "$out/f32/loss.csv" "$out/f16/loss.csv" | awk -F, '
  NR == 1 { print "step  loss f32  loss f16"; next }
  { d = $2 - $6; if (d < 0) d = -d; if (d > m) m = d; s += d; n++ }
  NR % 10 == 2 || NR == 2 { printf "%4d  %8.4f  %8.4f\n", $1, $2, $6 }
  END { printf "max |difference| %.4f, mean %.4f over %d steps\n", m, s / n, n }'
