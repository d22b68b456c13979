#!/usr/bin/env bash
# Runs on the device machine (after '. .device/env.sh'): the calibration
# kernels staged by 'calibrate_kinds.py stage --out .device/stage/calib'
# (when present), then each staged policy comparison DIR given
# ('policy_comparison.py stage --out DIR'). Copies each kernel's profile and
# each comparison's results.json to $OUT as it goes, so a run cut short
# still returns what it measured.
#   bash benchmarks/layout_device_run.sh [DIR...]
set -uo pipefail
stage=.device/stage
out=${OUT:-/tmp}
export LD_LIBRARY_PATH=$stage/lib:${LD_LIBRARY_PATH:-}
run=$stage/bin/fbl-run
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv 2>/dev/null
if [ -f "$stage/calib/cases.txt" ]; then
  python3 benchmarks/calibrate_kinds.py run "$stage/calib" --fbl-run "$run" \
    --iterations 20 > "$out/calib.log" 2>&1
  tail -2 "$out/calib.log"
  (cd "$stage" && tar czf "$out/calib-profiles.tgz" calib/device.txt calib/cases.txt calib/*/profile.txt)
fi
for dir in "$@"; do
  name=$(basename "$dir")
  python3 benchmarks/policy_comparison.py run "$dir" --fbl-run "$run" --rounds 3 \
    --iterations 20 --results "$out/$name.json" 2>&1 | tee "$out/$name.log"
  (cd "$(dirname "$dir")" && tar czf "$out/$name-profiles.tgz" "$name"/*/*.profile 2>/dev/null)
done
