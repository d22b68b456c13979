#!/usr/bin/env bash
# Runs on the device machine (after '. .device/env.sh'): the staged training
# steps for correctness, then fbl's GEMM kernels and CLBlast side by side.
# Writes $OUT/device.log and $OUT/e2e_outputs.tgz.
set -uo pipefail
stage=.device/stage
export LD_LIBRARY_PATH=$stage/lib:${LD_LIBRARY_PATH:-}
log=${OUT:-/tmp}/device.log
run=$stage/bin/fbl-run
device=${FBL_DEVICE:-gpu}
{
  echo "== devices"; $run --list-devices
  nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv 2>/dev/null
  echo "== target"; $run --print-target --device "$device"
  echo "== training steps"
  for d in $stage/e2e/*/; do
    name=$(basename "$d")
    args=()
    for f in "$d"/inputs/arg*.npy; do
      i=$(basename "$f" .npy); args+=(--input "$i=$f")
    done
    echo "-- $name"
    $run "$d/bundle" --device "$device" "${args[@]}" --iterations 10 \
      --output-dir "$stage/out/$name" | grep -E "device:|median|memory"
  done
  echo "== training steps at transformer scale"
  for d in $stage/steps/*/; do
    echo "-- $(basename "$d")"
    report=$($run "$d" --device "$device" --random-inputs 1 --iterations 20 --profile)
    grep -E "median step time|device memory" <<<"$report"
    # The five slowest kernels of the profile.
    awk '/^kernel / {p=1; next} p' <<<"$report" | sort -k2 -gr | head -5
  done
  echo "== gemm"
  for d in $stage/gemm/*/; do
    name=$(basename "$d")
    form=${name%%-*}; dims=${name##*-}
    m=${dims%%x*}; rest=${dims#*x}; n=${rest%%x*}; k=${rest#*x}
    report=$($run "$d" --device "$device" --random-inputs 1 --iterations 20 --profile)
    # The GEMM kernel's median device time, and the median wall time of the
    # whole bundle (zero-fill + GEMM + launches), as CLBlast's call time.
    ms=$(awk '/_gemm/ {print $2}' <<<"$report")
    wall=$(awk '/median step time/ {print $4}' <<<"$report")
    tf=$(awk -v m=$m -v n=$n -v k=$k -v t=$ms 'BEGIN {printf "%.2f", 2*m*n*k/t/1e9}')
    tfw=$(awk -v m=$m -v n=$n -v k=$k -v t=$wall 'BEGIN {printf "%.2f", 2*m*n*k/t/1e9}')
    echo "fbl $name: median $wall ms, $tfw TFLOP/s; kernel $ms ms, $tf TFLOP/s"
  done
  for dims in "512 2048 2048" "2048 2048 2048"; do
    for form in nn nt tn; do
      $stage/bin/clblast_gemm $dims $form 20 0
    done
  done
} 2>&1 | tee "$log"
tar czf ${OUT:-/tmp}/e2e_outputs.tgz -C "$stage" out
