#!/usr/bin/env bash
# Stages real-width LLM training steps for the device into .device/stage/llm
# (git-ignored; the device call carries .device): a model from a bundled
# config with fewer layers (NAME LAYERS; the vocabulary, widths and heads of
# the real config), its AdamW step compiled for TARGET under each policy,
# the config and parameter list for the PyTorch reference.
#   benchmarks/stage_llm.sh [NAME] [LAYERS] [SEQ] [BATCH] [TARGET]
# Then, in the device call: '. .device/env.sh; bash benchmarks/llm_device_run.sh'.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
name=${1:-tinyllama-1.1b}; layers=${2:-2}; seq=${3:-128}; batch=${4:-1}
target=${5:-nvidia-h200}
build=${FBL_BUILD_DIR:-build}
stage=.device/stage/llm
rm -rf "$stage"; mkdir -p "$stage/bin" "$stage/lib"
cp "$build/bin/fbl-run" "$stage/bin/"
cp -P "$build"/lib/libfbl_runtime.so* "$stage/lib/"
"$build/bin/fbl-model" --model "$name" --print-config |
  /usr/bin/python3 -c "import json,sys; c=json.load(sys.stdin); c['num_hidden_layers']=$layers; json.dump(c, open('$stage/config.json','w'))"
"$build/bin/fbl-model" --model "$stage/config.json" --seq "$seq" --batch "$batch" \
  -o "$stage/model.mlir"
/usr/bin/python3 - "$stage" <<'PY'
import json, sys
sys.path.insert(0, "test/lib")
import model_check
text = open(sys.argv[1] + "/model.mlir").read()
json.dump([[n, d] for n, d, _, p in model_check.model_arguments(text) if p],
          open(sys.argv[1] + "/params.json", "w"))
PY
echo "$name $layers $seq $batch" > "$stage/shape.txt"
for policy in fblayout reuse-forward explicit-transpose; do
  start=$(date +%s.%N)
  "$build/bin/fbl-opt" "$stage/model.mlir" \
    --fbl-training-pipeline="policy=$policy target=$target optimizer=adamw" \
    -o "$stage/step.mlir"
  "$build/bin/fbl-translate" "$stage/step.mlir" --fbl-to-opencl -o "$stage/$policy"
  # The cost model's per-kernel estimates, for benchmarks/calibrate.py.
  /usr/bin/python3 benchmarks/kernel_estimates.py "$stage/step.mlir" \
    "$stage/$policy/estimates.json"
  rm "$stage/step.mlir"
  echo "$policy: compiled in $(echo "$(date +%s.%N) - $start" | bc) s"
done
rm "$stage/model.mlir"
du -sh "$stage"
