#!/usr/bin/env bash
# Regenerates the generated parts of docs/ from the build: the dialect
# reference (mlir-tblgen -gen-dialect-doc) and the layout pictures (drawn by
# fbl-render-layout from the layout algebra).
#   scripts/gen-docs.sh          write them into docs/
#   scripts/gen-docs.sh --check  fail if docs/ differs from what the build makes
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FBL_BUILD_DIR:-$root/build}
check=0
[ "${1:-}" = "--check" ] && check=1

out=$root/docs
if [ $check -eq 1 ]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out/images" "$out/reference"

render=$build/bin/fbl-render-layout
"$render" 8 8 channel_packed:1 rtile:4x4:1:x:row rtile:8x8:1:linear:row \
  > "$out/images/layouts-8x8.svg"
"$render" 8 8 rtile:4x4:1:x:row rtile:4x4:0:y:col \
  > "$out/images/rtile-transpose-view.svg"
"$render" 6 10 rtile:4x4:1:x:row \
  > "$out/images/rtile-padding-6x10.svg"
# The attention block's output projection W_o (16x16 of its 512x512; the
# map repeats): the R-Tile fblayout stores it in, the baselines' layout.
"$render" 16 16 rtile:4x4:1:x:row channel_packed:1 \
  > "$out/images/attention-wo-tiles.svg"
# One [W, C] plane of an NHWC activation (8 positions, 8 channels): packed
# along the channels (the mobile convention, what fbl chose for the 3x3
# convolution of docs/Convolutions.md) and along the positions.
"$render" 8 8 channel_packed:1 channel_packed:0 \
  > "$out/images/conv-nhwc-plane.svg"
cp "$build/docs/Dialects/FBLDialect.md" "$out/reference/FBLDialect.md"
cp "$build/docs/FBLPasses.md" "$out/reference/FBLPasses.md"
cp "$build/docs/Dialects/TMTensorDialect.md" "$out/reference/TMTensorDialect.md"

if [ $check -eq 1 ]; then
  status=0
  for f in images/layouts-8x8.svg images/rtile-transpose-view.svg \
           images/rtile-padding-6x10.svg images/conv-nhwc-plane.svg \
           reference/FBLDialect.md \
           reference/FBLPasses.md reference/TMTensorDialect.md; do
    if ! cmp -s "$out/$f" "$root/docs/$f"; then
      echo "docs/$f is stale: run scripts/gen-docs.sh"
      status=1
    fi
  done
  [ $status -eq 0 ] && echo "generated docs are up to date"
  exit $status
fi
echo "docs regenerated"
