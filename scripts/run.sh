#!/usr/bin/env bash
# The main job: set up, build, then compile a model's training step and
# train it on the local OpenCL device (the first GPU, else the CPU device).
#  1. fbl-training-pipeline on the bundled attention block (or MODEL.mlir):
#     gradient + AdamW step, operator classes, layouts, kernels; the three
#     layout policies' reports side by side;
#  2. fbl-translate --fbl-to-opencl: the bundle (kernels.cl, manifest.json);
#  3. fbl-run --train: STEPS training steps with progress, loss, step time.
# Usage: scripts/run.sh [MODEL.mlir] [STEPS]
# FBL_TARGET overrides the target preset chosen from the local device.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${FBL_BUILD_DIR:-build}
model=${1:-examples/attention.mlir}
steps=${2:-40}

bash scripts/setup.sh
bash scripts/build.sh >/dev/null

# A target preset for the local device: its limits bound every image.
devices=$("$build/bin/fbl-run" --list-devices)
echo "== OpenCL devices"; echo "$devices"
# The preset for the local device (by vendor, else PoCL's).
target=${FBL_TARGET:-$("$build/bin/fbl-run" --print-preset)}

echo "== compiling the training step of $model (target $target)"
for policy in reuse-forward explicit-transpose fblayout; do
  "$build/bin/fbl-opt" "$model" \
    --fbl-training-pipeline="policy=$policy target=$target optimizer=adamw lr=0.01 report=$build/report.$policy.json" \
    -o "$build/model.$policy.mlir"
done
"$build/bin/fbl-opt" "$model" --fbl-autodiff="optimizer=adamw" --fbl-print-op-classes -o /dev/null |
  awk '/fbl-print-op-classes: @.*_step/{name=$2} name && /forward [0-9]+, backward/{print name ":" $0; name=""}'
python3 test/lib/compare_policies.py "$build/report.fblayout.json" \
  "$build/report.reuse-forward.json" "$build/report.explicit-transpose.json" || true

bundle=$build/model.bundle
rm -rf "$bundle"
"$build/bin/fbl-translate" --fbl-to-opencl "$build/model.fblayout.mlir" -o "$bundle"
echo "== bundle $bundle: $(grep -c '"name"' "$bundle/manifest.json") kernels"

echo "== training $steps steps on the local device (fbl-run --train)"
"$build/bin/fbl-run" "$bundle" --random-inputs 1 --train "$steps" \
  --output-dir "$build/model.trained"
