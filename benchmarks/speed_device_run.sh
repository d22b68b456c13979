#!/usr/bin/env bash
# Runs on the device machine (after '. .device/env.sh') what
# benchmarks/stage_speed.sh staged, side by side in one call: fbl's GEMMs
# (tune_gemm.py run), CLBlast's and cuBLAS's (PyTorch, TF32 off); each
# training step under fbl with f32 and f16 images (fbl-run --compare: the
# two in one process, alternating) and PyTorch eager fp32
# (benchmarks/step_torch.py). Writes $OUT/speed.log and $OUT/gemm.json.
#   bash benchmarks/speed_device_run.sh [STAGE]   (.device/stage/speed)
set -uo pipefail
stage=${1:-.device/stage/speed}
out=${OUT:-/tmp}
export LD_LIBRARY_PATH=$stage/lib:${LD_LIBRARY_PATH:-}
run=$stage/bin/fbl-run
{
  nvidia-smi --query-gpu=name,clocks.max.sm --format=csv 2>/dev/null
  echo "== GEMM: fbl (kernel device time), CLBlast, cuBLAS"
  python3 benchmarks/tune_gemm.py run "$stage/gemm" --fbl-run "$run" --device gpu \
    --iterations 20 --results "$out/gemm.json" | grep -E "TFLOP/s( \(\S+\))?$|^  \[|^best"
  for dims in "512 2048 2048" "2048 2048 2048"; do
    for form in nn nt tn; do
      [ -x "$stage/bin/clblast_gemm" ] && "$stage/bin/clblast_gemm" $dims $form 20 0
    done
    python3 benchmarks/step_torch.py gemm $dims
  done
  echo "== training steps: fbl f32 / f16 images, PyTorch eager fp32"
  for d in "$stage"/steps/*-f32; do
    name=$(basename "$d" -f32)
    echo "-- $name"
    $run "$d" --compare "${d%-f32}-f16" --device gpu --random-inputs 1 \
      --rounds 5 --iterations 20 | grep -v "rounds (ms)"
    $run "$d" --device gpu --random-inputs 1 --iterations 5 --profile |
      awk '/^k[0-9]+_/ && !/ runs variant / {n++} END {print "kernels per step:", n}'
    case $name in
      mlp-*) set -- ${name#mlp-}; dims=${1//x/ }
             python3 benchmarks/step_torch.py mlp $dims --optimizer sgd ;;
      attention-*) set -- ${name#attention-}; dims=${1//x/ }
             python3 benchmarks/step_torch.py attention $dims --optimizer adamw ;;
    esac
  done
} 2>&1 | tee "$out/speed.log"
