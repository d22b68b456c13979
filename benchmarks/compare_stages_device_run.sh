#!/usr/bin/env bash
# Runs on the device machine (after '. .device/env.sh'), in one call, two or
# more stages of benchmarks/stage_every_row.sh side by side: the current
# preset and candidates (FBL_TARGET_FIELDS, FBL_GEMM_TILES there). Each
# training step with f32 images (the speed steps and every model's LoRA and
# full step) runs as `fbl-run FIRST --compare OTHER...` (one process,
# alternating rounds: drift between calls cannot decide); the GEMM rows run
# under tune_gemm.py for each stage in turn, twice, and print each GEMM's
# best of the two rounds per stage. Writes $OUT/compare-stages.log.
#   bash benchmarks/compare_stages_device_run.sh STAGE STAGE... [-- PART...]
# PARTs (default: all) are `speed` and model names, as for
# every_row_device_run.sh. FBL_COMPARE_DEVICE selects the device (gpu);
# FBL_COMPARE_GEMMS=0 leaves out the GEMM rows (stages that differ only in
# what is not a GEMM).
set -uo pipefail
stages=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do stages+=("$1"); shift; done
[ $# -gt 0 ] && shift
. "$(dirname "$0")/stage_parts.sh"
set_parts "$@"
[ ${#stages[@]} -ge 2 ] || { echo "usage: $0 STAGE STAGE... [-- PART...]" >&2; exit 2; }
out=${OUT:-/tmp}
device=${FBL_COMPARE_DEVICE:-gpu}
first=${stages[0]}
run=$first/speed/bin/fbl-run
export LD_LIBRARY_PATH=$first/speed/lib:${LD_LIBRARY_PATH:-}
work=/tmp/compare-stages
rm -rf "$work"; mkdir -p "$work"
{
  print_machine
  start=$(date +%s)
  # Each stage's f32 step bundles: STEP -> one directory per stage.
  names=()
  wants speed && for d in "$first"/speed/steps/*-f32; do names+=("speed/steps/$(basename "$d")"); done
  for model in $(staged_models "$first"); do
    for mode in lora full; do
      [ -f "$first/f32-$model/$model-$mode/bundle.tar.xz" ] &&
        names+=("f32-$model/$model-$mode")
    done
  done
  bundles=()
  for i in "${!stages[@]}"; do
    for name in "${names[@]}"; do
      src=${stages[$i]}/$name
      if [ -f "$src/bundle.tar.xz" ]; then
        mkdir -p "$work/$i/$name"
        tar -C "$work/$i/$name" -xJf "$src/bundle.tar.xz"
        bundles+=("$work/$i/$name/bundle")
      else
        bundles+=("$src")
      fi
    done
  done
  build_programs "$run" "$device" "${bundles[@]}"
  echo "programs built in $(( $(date +%s) - start )) s"
  echo "== steps, f32 images: ${stages[*]}"
  n=${#names[@]}
  for j in "${!names[@]}"; do
    cmd=("$run" "${bundles[$j]}")
    for ((i = 1; i < ${#stages[@]}; ++i)); do
      cmd+=(--compare "${bundles[$((i * n + j))]}")
    done
    # Short steps take more rounds, as speed_device_run.sh times them.
    rounds="--rounds 3 --iterations 10"
    [[ ${names[$j]} == speed/* ]] && rounds="--rounds 5 --iterations 20"
    echo "-- ${names[$j]}"
    timeout 300 "${cmd[@]}" --device "$device" --random-inputs 1 $rounds |
      grep "median step time"
  done
  if wants speed && [ "${FBL_COMPARE_GEMMS:-1}" != 0 ]; then
    echo "== GEMMs (kernel device time, TFLOP/s), two rounds"
    for round in 1 2; do
      for i in "${!stages[@]}"; do
        python3 benchmarks/tune_gemm.py run "${stages[$i]}/speed/gemm" \
          --fbl-run "$run" --device "$device" --iterations 20 \
          --results "$work/gemm-$i-$round.json" >/dev/null
      done
    done
    python3 - "$work" "${stages[@]}" <<'EOF'
import json, sys, glob
work, stages = sys.argv[1], sys.argv[2:]
best = {}
for i, _ in enumerate(stages):
    for path in glob.glob(f"{work}/gemm-{i}-*.json"):
        for r in json.load(open(path))["results"]:
            key = "%s-%s-%dx%dx%d" % (r["form"], r["layout"], *r["shape"])
            best.setdefault(key, {})
            best[key][i] = max(best[key].get(i, 0), r["tflops"])
print("gemm " + " | ".join(stages))
for key in sorted(best):
    row = best[key]
    cells = [f"{row[i]:.1f}" if i in row else "-" for i in range(len(stages))]
    ratio = (f" ({row[1] / row[0]:.3f})" if 0 in row and 1 in row else "")
    print(f"{key}: " + " | ".join(cells) + ratio)
EOF
  fi
  echo "== whole call: $(( $(date +%s) - start )) s"
} 2>&1 | tee "$out/compare-stages.log"
