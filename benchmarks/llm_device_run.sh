#!/usr/bin/env bash
# Runs on the device machine (after '. .device/env.sh'): the staged LLM
# training steps (benchmarks/stage_llm.sh) under each policy with fbl-run,
# then the PyTorch eager reference of the same model, in one call.
# Writes $OUT/llm.log.
set -uo pipefail
stage=.device/stage/llm
export LD_LIBRARY_PATH=$stage/lib:${LD_LIBRARY_PATH:-}
log=${OUT:-/tmp}/llm.log
read -r name layers seq batch < "$stage/shape.txt"
{
  echo "== $name, $layers layers, seq $seq, batch $batch"
  nvidia-smi --query-gpu=name,clocks.max.sm --format=csv 2>/dev/null
  for policy in fblayout reuse-forward explicit-transpose; do
    echo "-- fbl $policy"
    start=$(date +%s)
    report=$($stage/bin/fbl-run "$stage/$policy" --device gpu --random-inputs 1 \
      --iterations 20 --profile 2>&1)
    echo "(first run incl. OpenCL build: $(( $(date +%s) - start )) s)"
    echo "$report" > "${OUT:-/tmp}/fbl-$policy.txt"
    cp "$stage/$policy/estimates.json" "${OUT:-/tmp}/estimates-$policy.json"
    grep -E "loss|median step time|device memory|kernels" <<<"$report" | head -8
    awk '/^kernel / {p=1; next} p' <<<"$report" | sort -k2 -gr | head -5
  done
  echo "-- PyTorch eager"
  python3 benchmarks/llm_step_torch.py --config "$stage/config.json" \
    --params "$stage/params.json" --seq "$seq" --batch "$batch"
} 2>&1 | tee "$log"
