#!/usr/bin/env bash
# The main job, as far as fbl goes today: set up, build, then
#  1. compile the bundled attention block's training step: fbl-autodiff builds
#     the gradient and an AdamW step, fbl-classify-ops marks phases and
#     classes, and the class table of the step is printed;
#  2. compile it with fbl-training-pipeline under the three layout policies
#     and compare their reports (relayouts, bytes, views, estimated cost);
#  3. verify the hand-laid-out attention example against its target and print
#     where every tensor lives (image kind, extents, bytes).
# FBL_TARGET picks the target preset (default adreno-a740).
# Usage: scripts/run.sh [MODEL.mlir [LAYOUTS.mlir]]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${FBL_BUILD_DIR:-build}
model=${1:-examples/attention.mlir}
layouts=${2:-examples/attention_layouts.mlir}
target=${FBL_TARGET:-adreno-a740}

bash scripts/setup.sh
bash scripts/build.sh >/dev/null

echo "== training step of $model (fbl-autodiff optimizer=adamw, fbl-classify-ops)"
"$build/bin/fbl-opt" "$model" --fbl-autodiff="optimizer=adamw lr=1e-3" \
  --fbl-classify-ops -o "$build/model.step.mlir"
echo "step IR: $build/model.step.mlir"
"$build/bin/fbl-opt" "$build/model.step.mlir" --fbl-print-op-classes -o /dev/null |
  awk '/fbl-print-op-classes: @.*_step/{p=1} p && /^  [0-9]/ && $4 != "forward" && $5 != "-" && $5 != "I" {print} p && /forward [0-9]+, backward/{print; p=0}'

echo "== fbl-training-pipeline on $model under each layout policy (target $target)"
for policy in fblayout reuse-forward explicit-transpose; do
  "$build/bin/fbl-opt" "$model" --fbl-training-pipeline="policy=$policy target=$target optimizer=adamw report=$build/report.$policy.json" \
    -o "$build/model.$policy.mlir"
done
python3 test/lib/compare_policies.py "$build/report.fblayout.json" \
  "$build/report.reuse-forward.json" "$build/report.explicit-transpose.json" || true

echo "== fbl-opt -canonicalize $layouts"
"$build/bin/fbl-opt" "$layouts" -canonicalize -o "$build/example.canonical.mlir"
echo "verified against the target; canonical IR in $build/example.canonical.mlir"

echo "== fbl-translate --fbl-to-layout-json"
"$build/bin/fbl-translate" --fbl-to-layout-json "$build/example.canonical.mlir" \
  -o "$build/example.layouts.json"
python3 - "$build/example.layouts.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
for fn in report["functions"]:
    print(f"function @{fn['name']}")
    print(f"  {'value':<8} {'storage':<14} {'extents (w x h x layers)':<26} {'KiB':>12}  layout")
    for t in fn["tensors"]:
        w, h, l = t["extents"]
        layout = t["type"].split(", #", 1)[1][:-1] if ", #" in t["type"] else "-"
        kib = f"view of {t['view_of']}" if "view_of" in t else f"{t['bytes'] / 1024:.1f}"
        print(f"  {t['value']:<8} {t['storage']:<14} {f'{w} x {h} x {l}':<26} "
              f"{kib:>12}  #{layout}")
print(f"target {report.get('target', '(none)')}: {report['images']} images, "
      f"{report['buffers']} buffers, {report['views']} zero-copy views, "
      f"{report['total_bytes'] / 2**20:.2f} MiB, "
      f"{report['over_target_limits']} over the target's limits")
print("tensors by layout:", ", ".join(f"{k} {v}" for k, v in report["tensors_by_layout"].items()))
PY
