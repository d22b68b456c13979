#!/usr/bin/env bash
# Sets up the machine, builds fbl and runs every test: the lit suite (IR,
# diagnostics, C API), then ctest (GoogleTest suites, installed-package
# consumer, docs freshness). Ends with ctest's summary.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${FBL_BUILD_DIR:-build}

bash scripts/setup.sh || exit 1
bash scripts/build.sh || exit 1

echo "== lit =="
/usr/lib/llvm-22/bin/lit -sv "$build/test"
lit_status=$?

echo "== ctest =="
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
ctest_status=$?

if [ $lit_status -ne 0 ] || [ $ctest_status -ne 0 ]; then
  echo "tests failed (lit: $lit_status, ctest: $ctest_status)"
  exit 1
fi
