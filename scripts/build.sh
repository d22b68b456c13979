#!/usr/bin/env bash
# Configures (once) and builds fbl with Ninja: a Release build into build/,
# or with --sanitizers a build into build-asan/ with clang-22 under
# AddressSanitizer and UndefinedBehaviorSanitizer, plus the libFuzzer
# targets (docs/Testing.md). FBL_BUILD_DIR / FBL_ASAN_BUILD_DIR override the
# directories.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${FBL_BUILD_DIR:-build}
args=(-DCMAKE_BUILD_TYPE=Release)
if [ "${1:-}" = --sanitizers ]; then
  build=${FBL_ASAN_BUILD_DIR:-build-asan}
  args+=(-DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22
         "-DLLVM_USE_SANITIZER=Address;Undefined" -DFBL_BUILD_FUZZERS=ON)
fi
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S . -B "$build" "${args[@]}"
fi
cmake --build "$build"
