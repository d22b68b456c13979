#!/usr/bin/env bash
# Installs what fbl needs to build and test on Debian 12, with apt. Idempotent:
# when every package is already installed it returns at once without
# touching the network.
set -euo pipefail

packages=(
  # toolchain
  cmake ninja-build g++ lld python3
  # LLVM / MLIR 22: headers, CMake packages, mlir-tblgen, lit, FileCheck
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  # unit tests
  libgtest-dev
  # OpenCL: headers, ICD loader, the PoCL CPU device, JSON for the runtime
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd nlohmann-json3-dev
  # a second, independent OpenCL implementation with images (Mesa's rusticl
  # on llvmpipe, RUSTICL_ENABLE=llvmpipe): the E2E tests run on it too
  mesa-opencl-icd
  # SPIR-V emission (clang-22's SPIR-V backend) and validation; clang-22
  # also compiles the sanitizer build, with its ASan/UBSan runtimes and
  # libFuzzer
  clang-22 spirv-tools libclang-rt-22-dev
  # end-to-end checks write and compare .npy arrays
  python3-numpy
  # model layers are checked against PyTorch autograd (CPU)
  python3-torch
  # the CLBlast GEMM reference beside fbl's in benchmarks/ (clblast_gemm)
  libclblast-dev
  # benchmarks/ draw their plots (every_row_table.py --svg)
  python3-matplotlib
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
