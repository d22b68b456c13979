#!/usr/bin/env bash
# The main job, as far as fbl goes today: set up, build, and compile the
# bundled attention example (or the .mlir given) for its target: verify the
# layouts against the target's image limits, fold views, and print where
# every tensor lives (image kind, extents, bytes) from the layout report.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${FBL_BUILD_DIR:-build}
input=${1:-examples/attention_layouts.mlir}

bash scripts/setup.sh
bash scripts/build.sh >/dev/null

echo "== fbl-opt -canonicalize $input"
"$build/bin/fbl-opt" "$input" -canonicalize -o "$build/example.canonical.mlir"
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
