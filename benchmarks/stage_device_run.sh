#!/usr/bin/env bash
# Stages everything the GPU run needs into .device/stage (git-ignored; the
# device call carries .device): fbl-run, libfbl_runtime, the CLBlast
# reference, end-to-end bundles of the MLP and attention training steps
# (with inputs and oracle results), and GEMM bundles (register-tiled and
# local-memory tiled kernels on both layouts).
#   benchmarks/stage_device_run.sh [TARGET]   (default nvidia-h200)
# Then, in the device call: '. .device/env.sh; bash benchmarks/device_run.sh'.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
target=${1:-nvidia-h200}
build=${FBL_BUILD_DIR:-build}
stage=.device/stage
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/lib" "$stage/e2e" "$stage/gemm" "$stage/steps"
cp "$build/bin/fbl-run" "$build/bin/clblast_gemm" "$stage/bin/"
cp -P "$build"/lib/libfbl_runtime.so* "$stage/lib/"

for model in mlp attention; do
  for policy in fblayout reuse-forward explicit-transpose; do
    /usr/bin/python3 test/lib/e2e_check.py "examples/$model.mlir" \
      --policy "$policy" --target "$target" \
      --fbl-opt "$build/bin/fbl-opt" --fbl-translate "$build/bin/fbl-translate" \
      --fbl-run "$build/bin/fbl-run" --llvm-bin /usr/lib/llvm-22/bin \
      --prepare "$stage/e2e/$model-$policy" >/dev/null
  done
done

# The local-memory tiled GEMMs (forward and backward) against the oracle.
/usr/bin/python3 test/lib/e2e_check.py test/E2E/Inputs/gemm-local.mlir \
  --target "$target" \
  --fbl-opt "$build/bin/fbl-opt" --fbl-translate "$build/bin/fbl-translate" \
  --fbl-run "$build/bin/fbl-run" --llvm-bin /usr/lib/llvm-22/bin \
  --prepare "$stage/e2e/gemm-local-fblayout" >/dev/null

for shape in "512 2048 2048" "2048 2048 2048"; do
  set -- $shape
  for form in nn nt tn; do
    for layout in channel_packed rtile; do
      for kernel in register local; do
        name="$form-$layout-$kernel-$1x$2x$3"
        python3 benchmarks/gen_gemm.py "$1" "$2" "$3" "$form" "$layout" \
          "$target" "$kernel" |
          "$build/bin/fbl-opt" --fbl-lower-to-kernels |
          "$build/bin/fbl-translate" --fbl-to-opencl -o "$stage/gemm/$name"
      done
    done
  done
done
# A transformer-scale attention block (sequence 512, hidden 512, 8 heads):
# its AdamW training step under each policy, and under fblayout with the
# register-tiled GEMM (the preset's local_tiled_gemm turned off).
python3 benchmarks/gen_attention.py 512 512 8 >"$stage/attention-512.mlir"
for policy in fblayout reuse-forward explicit-transpose; do
  "$build/bin/fbl-opt" "$stage/attention-512.mlir" \
    --fbl-training-pipeline="policy=$policy target=$target optimizer=adamw" |
    "$build/bin/fbl-translate" --fbl-to-opencl -o "$stage/steps/attention-512-$policy"
done
/usr/bin/python3 - "$stage/attention-512.mlir" "$target" <<'PY' |
import sys
lines = open(sys.argv[1]).read().splitlines()
aliases = [l for l in lines if l.startswith("#")]
body = [l for l in lines if not l.startswith("#")]
print("\n".join(aliases))
print(f'module attributes {{fbl.target = #fbl.target<"{sys.argv[2]}", local_tiled_gemm = false>}} {{')
print("\n".join(body))
print("}")
PY
  "$build/bin/fbl-opt" --fbl-training-pipeline="policy=fblayout optimizer=adamw" |
  "$build/bin/fbl-translate" --fbl-to-opencl -o "$stage/steps/attention-512-fblayout-register"
du -sh "$stage"
