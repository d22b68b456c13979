#!/usr/bin/env bash
# Sets up the machine, builds fbl and runs every test: the lit suite (IR,
# diagnostics, C API, Python, end-to-end on OpenCL, short fuzzer runs), then
# ctest (GoogleTest suites, installed-package consumer, docs freshness) -
# once on the Release build (build/), then again on the sanitizer build
# (build-asan/: ASan+UBSan, libFuzzer targets; docs/Testing.md), with the
# end-to-end tests once more on Mesa's rusticl between them. Fails when any
# run fails. FBL_TEST_SANITIZERS=0 skips the sanitizer run and
# FBL_TEST_RUSTICL=0 the rusticl one, and each says so.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# Prints how long the phase that just ended took, so that a CI log shows
# where its time limit goes.
phase_start=$SECONDS
phase_done() {
  echo "== $1: $((SECONDS - phase_start)) s (total $SECONDS s) =="
  phase_start=$SECONDS
}

bash scripts/setup.sh || exit 1
phase_done setup

# Runs lit and ctest on build directory $1; returns non-zero when either
# fails.
run_suite() {
  local dir=$1 label=$2 lit_status ctest_status
  echo "== lit ($label) =="
  /usr/lib/llvm-22/bin/lit -sv "$dir/test"
  lit_status=$?
  phase_done "lit ($label)"
  echo "== ctest ($label) =="
  ctest --test-dir "$dir" --output-on-failure -j "$(nproc)"
  ctest_status=$?
  phase_done "ctest ($label)"
  if [ $lit_status -ne 0 ] || [ $ctest_status -ne 0 ]; then
    echo "$label: tests failed (lit: $lit_status, ctest: $ctest_status)"
    return 1
  fi
}

failed=()
bash scripts/build.sh || exit 1
phase_done "build (release)"
run_suite "${FBL_BUILD_DIR:-build}" release || failed+=(release)

# The end-to-end oracle tests again on a second, independent OpenCL
# implementation (Mesa's rusticl on llvmpipe): what one driver forgives, such
# as a read past an image or a race between work-items, the other may not.
if [ "${FBL_TEST_RUSTICL:-1}" = 0 ]; then
  echo "== E2E on rusticl: skipped (FBL_TEST_RUSTICL=0) =="
else
  echo "== lit E2E (rusticl) =="
  # GEMM variants without fma(): llvmpipe emulates it exactly, and a GEMM
  # kernel of them takes minutes to compile (PoCL checks every variant).
  FBL_DEVICE=rusticl RUSTICL_ENABLE=llvmpipe FBL_TEST_GEMM_VARIANTS='[[8, 0]]' \
    /usr/lib/llvm-22/bin/lit -sv "${FBL_BUILD_DIR:-build}/test/E2E" ||
    failed+=("E2E on rusticl")
  phase_done "lit E2E (rusticl)"
fi

if [ "${FBL_TEST_SANITIZERS:-1}" = 0 ]; then
  echo "== sanitizers: skipped (FBL_TEST_SANITIZERS=0) =="
else
  if bash scripts/build.sh --sanitizers; then
    phase_done "build (asan+ubsan)"
    run_suite "${FBL_ASAN_BUILD_DIR:-build-asan}" "asan+ubsan" ||
      failed+=("asan+ubsan")
  else
    failed+=("asan+ubsan build")
  fi
fi

if [ ${#failed[@]} -ne 0 ]; then
  echo "tests failed: ${failed[*]}"
  exit 1
fi
echo "all tests passed"
