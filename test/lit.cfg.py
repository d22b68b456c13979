# -*- Python -*-
# lit configuration for fbl's IR tests.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "FBL"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".c", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.fbl_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   "install-consumer"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%shlibext", config.llvm_shlib_ext))
config.substitutions.append(("%fbl_src_root", config.fbl_src_root))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
# The OpenCL device the runs take (fbl-run's default selector) and what the
# ICD loader and the drivers read: the suite runs on another implementation
# with `FBL_DEVICE=rusticl RUSTICL_ENABLE=llvmpipe lit build/test`.
llvm_config.with_system_environment(
    ["FBL_DEVICE", "OCL_ICD_VENDORS", "OCL_ICD_FILENAMES", "RUSTICL_ENABLE",
     "FBL_TEST_GEMM_VARIANTS"])
llvm_config.use_default_substitutions()

# Tools come from the build tree first, then LLVM's bin (FileCheck, not, ...).
tool_dirs = [config.fbl_tools_dir, config.llvm_tools_dir]
tools = [
    "fbl-opt",
    "fbl-translate",
    "fbl-cachesim",
    ToolSubst("fbl-capi-test", unresolved="ignore"),
    ToolSubst("mlir-opt", unresolved="fatal"),
    ToolSubst("not", unresolved="fatal"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# Gradient checks: fbl-autodiff output run by upstream mlir-opt + mlir-runner
# against central finite differences (test/lib/gradcheck.py).
config.substitutions.append(
    ("%gradcheck",
     "/usr/bin/python3 {0}/test/lib/gradcheck.py --fbl-opt {1}/fbl-opt "
     "--llvm-bin {2}".format(config.fbl_src_root, config.fbl_tools_dir,
                             config.llvm_tools_dir)))
config.excludes += ["lib", "Inputs", "regressions", "corpus", "dict"]

# End-to-end: compile with fbl, run on OpenCL (PoCL in CI), compare with the
# upstream oracle (test/lib/e2e_check.py).
config.substitutions.append(
    ("%e2e",
     "/usr/bin/python3 {0}/test/lib/e2e_check.py --fbl-opt {1}/fbl-opt "
     "--fbl-translate {1}/fbl-translate --fbl-run {1}/fbl-run "
     "--llvm-bin {2}".format(config.fbl_src_root, config.fbl_tools_dir,
                             config.llvm_tools_dir)))
# tm_tensor.attention's decomposition against PyTorch autograd
# (test/lib/attention_vs_torch.py).
config.substitutions.append(
    ("%attention_vs_torch",
     "/usr/bin/python3 {0}/test/lib/attention_vs_torch.py --fbl-opt {1}/fbl-opt "
     "--llvm-bin {2}".format(config.fbl_src_root, config.fbl_tools_dir,
                             config.llvm_tools_dir)))
# The tolerance of steps that store intermediates as f16 images (targets
# with half_storage; docs/Testing.md derives it).
config.substitutions.append(("%f16_tol", "--rtol 4e-3 --atol 4e-3 --atol-of-max"))
# Models built by fbl-model against an independent PyTorch implementation
# and their bundles against the upstream oracle (test/lib/model_check.py).
config.substitutions.append(
    ("%model_check",
     "/usr/bin/python3 {0}/test/lib/model_check.py --fbl-bin {1} "
     "--llvm-bin {2}".format(config.fbl_src_root, config.fbl_tools_dir,
                             config.llvm_tools_dir)))
# GroupNorm's decomposition against PyTorch (test/lib/group_norm_vs_torch.py).
config.substitutions.append(
    ("%group_norm_vs_torch",
     "/usr/bin/python3 {0}/test/lib/group_norm_vs_torch.py --fbl-opt {1}/fbl-opt "
     "--llvm-bin {2}".format(config.fbl_src_root, config.fbl_tools_dir,
                             config.llvm_tools_dir)))
# Random convolutions (forms, strides, dilations, padding, kernels) and
# their gradients against PyTorch autograd (test/lib/conv_vs_torch.py).
config.substitutions.append(
    ("%conv_vs_torch",
     "/usr/bin/python3 {0}/test/lib/conv_vs_torch.py --fbl-bin {1} "
     "--llvm-bin {2}".format(config.fbl_src_root, config.fbl_tools_dir,
                             config.llvm_tools_dir)))
# Random GEMMs (forms, layouts, kernels, tiles) against numpy
# (test/lib/gemm_property.py).
config.substitutions.append(
    ("%gemm_property",
     "/usr/bin/python3 {0}/test/lib/gemm_property.py --fbl-bin {1}".format(
         config.fbl_src_root, config.fbl_tools_dir)))
# Random row reductions of training steps split by fbl-split-reductions
# under random targets and policies, against the oracle
# (test/lib/split_property.py).
config.substitutions.append(
    ("%split_property",
     "/usr/bin/python3 {0}/test/lib/split_property.py --fbl-bin {1} "
     "--llvm-bin {2}".format(config.fbl_src_root, config.fbl_tools_dir,
                             config.llvm_tools_dir)))
# Random chains of overlapping, strided inserts (one kernel per chain)
# against the oracle (test/lib/insert_chain_property.py).
config.substitutions.append(
    ("%insert_chain_property",
     "/usr/bin/python3 {0}/test/lib/insert_chain_property.py --fbl-bin {1} "
     "--llvm-bin {2}".format(config.fbl_src_root, config.fbl_tools_dir,
                             config.llvm_tools_dir)))
# Random elementwise producers read by several readers, computed again in
# each by fbl-fuse-elementwise or stored once, against the oracle
# (test/lib/recompute_property.py).
config.substitutions.append(
    ("%recompute_property",
     "/usr/bin/python3 {0}/test/lib/recompute_property.py --fbl-bin {1} "
     "--llvm-bin {2}".format(config.fbl_src_root, config.fbl_tools_dir,
                             config.llvm_tools_dir)))
# Random row groups (softmax, norms, reductions read back along the row) as
# one row kernel each, against the oracle (test/lib/row_property.py).
config.substitutions.append(
    ("%row_property",
     "/usr/bin/python3 {0}/test/lib/row_property.py --fbl-bin {1} "
     "--llvm-bin {2}".format(config.fbl_src_root, config.fbl_tools_dir,
                             config.llvm_tools_dir)))
# The libFuzzer targets (FBL_BUILD_FUZZERS).
if config.fbl_fuzzers:
    config.available_features.add("fuzzers")
for tool in ["fbl-run", "fbl-model", "fbl-finetune", "spirv-val",
             "fbl-fuzz-compile", "fbl-fuzz-manifest", "fbl-fuzz-npy"]:
    llvm_config.add_tool_substitutions(
        [ToolSubst(tool, unresolved="ignore")],
        [config.fbl_tools_dir, "/usr/bin"])

# The Python package from the build tree, run by Debian's python3 (numpy).
config.environment["PYTHONPATH"] = os.path.join(config.fbl_obj_root,
                                                "python_packages")
python = "/usr/bin/python3"
# A sanitized build (LLVM_USE_SANITIZER): tests run with the options and
# suppressions CMake chose (FBLSanitizers.cmake), then the user's own, which
# win. Python loads libfbl_runtime through ctypes: the uninstrumented
# interpreter needs the ASan runtime preloaded.
for entry in filter(None, config.fbl_sanitizer_env.split(";")):
    name, value = entry.split("=", 1)
    user = os.environ.get(name)
    config.environment[name] = value + (":" + user if user else "")
if config.fbl_asan_runtime:
    config.available_features.add("asan")
    python = "env LD_PRELOAD={} {}".format(config.fbl_asan_runtime, python)
# Replaces lit's own %python (the interpreter running lit), which comes
# first and would win.
config.substitutions = [s for s in config.substitutions if s[0] != "%python"]
config.substitutions.append(("%python", python))
