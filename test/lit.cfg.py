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

# The checking scripts of test/lib, run by the system interpreter (with
# numpy and PyTorch) and told where fbl's tools and LLVM's are.
FBL_OPT = "--fbl-opt {0}/fbl-opt".format(config.fbl_tools_dir)
FBL_BIN = "--fbl-bin {0}".format(config.fbl_tools_dir)
LLVM_BIN = "--llvm-bin {0}".format(config.llvm_tools_dir)


def add_script(name, script, *flags):
    config.substitutions.append(
        (name, " ".join(["/usr/bin/python3 {0}/test/lib/{1}".format(
            config.fbl_src_root, script), *flags])))


# Gradient checks: fbl-autodiff output run by upstream mlir-opt + mlir-runner
# against central finite differences (test/lib/gradcheck.py).
add_script("%gradcheck", "gradcheck.py", FBL_OPT, LLVM_BIN)
config.excludes += ["lib", "Inputs", "regressions", "corpus", "dict"]

# End-to-end: compile with fbl, run on OpenCL (PoCL in CI), compare with the
# upstream oracle (test/lib/e2e_check.py).
add_script("%e2e", "e2e_check.py", FBL_OPT,
           "--fbl-translate {0}/fbl-translate --fbl-run {0}/fbl-run".format(
               config.fbl_tools_dir), LLVM_BIN)
# tm_tensor.attention's decomposition against PyTorch autograd
# (test/lib/attention_vs_torch.py).
add_script("%attention_vs_torch", "attention_vs_torch.py", FBL_OPT, LLVM_BIN)
# The tolerance of steps that store intermediates as f16 images (targets
# with half_storage; docs/Testing.md derives it).
config.substitutions.append(("%f16_tol", "--rtol 4e-3 --atol 4e-3 --atol-of-max"))
# Models built by fbl-model against an independent PyTorch implementation
# and their bundles against the upstream oracle (test/lib/model_check.py).
add_script("%model_check", "model_check.py", FBL_BIN, LLVM_BIN)
# GroupNorm's decomposition against PyTorch (test/lib/group_norm_vs_torch.py).
add_script("%group_norm_vs_torch", "group_norm_vs_torch.py", FBL_OPT,
           LLVM_BIN)
# Random convolutions (forms, strides, dilations, padding, kernels) and
# their gradients against PyTorch autograd (test/lib/conv_vs_torch.py).
add_script("%conv_vs_torch", "conv_vs_torch.py", FBL_BIN, LLVM_BIN)
# Random GEMMs (forms, layouts, kernels, tiles) against numpy
# (test/lib/gemm_property.py).
add_script("%gemm_property", "gemm_property.py", FBL_BIN)
# Random row reductions of training steps split by fbl-split-reductions
# under random targets and policies, against the oracle
# (test/lib/split_property.py).
add_script("%split_property", "split_property.py", FBL_BIN, LLVM_BIN)
# Random chains of overlapping, strided inserts (one kernel per chain)
# against the oracle (test/lib/insert_chain_property.py).
add_script("%insert_chain_property", "insert_chain_property.py", FBL_BIN,
           LLVM_BIN)
# Random elementwise producers read by several readers, computed again in
# each by fbl-fuse-elementwise or stored once, against the oracle
# (test/lib/recompute_property.py).
add_script("%recompute_property", "recompute_property.py", FBL_BIN, LLVM_BIN)
# Random row groups (softmax, norms, reductions read back along the row) as
# one row kernel each, against the oracle (test/lib/row_property.py).
add_script("%row_property", "row_property.py", FBL_BIN, LLVM_BIN)
# Random embedding steps, their table gradients scatter kernels of one or
# many row chunks, against the oracle (test/lib/scatter_property.py).
add_script("%scatter_property", "scatter_property.py", FBL_BIN, LLVM_BIN)
# The libFuzzer targets (FBL_BUILD_FUZZERS).
if config.fbl_fuzzers:
    config.available_features.add("fuzzers")
for tool in ["fbl-run", "fbl-model", "fbl-finetune", "spirv-val", "image_residency",
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
# win (the *_OPTIONS lists joined, any other variable replaced: the OpenCL
# driver list). Python loads libfbl_runtime through ctypes: the
# uninstrumented interpreter needs the ASan runtime preloaded.
for entry in filter(None, config.fbl_sanitizer_env.split(";")):
    name, value = entry.split("=", 1)
    user = os.environ.get(name)
    if name.endswith("_OPTIONS"):
        config.environment[name] = value + (":" + user if user else "")
    else:
        config.environment[name] = user or value
if config.fbl_asan_runtime:
    config.available_features.add("asan")
    python = "env LD_PRELOAD={} {}".format(config.fbl_asan_runtime, python)
# Replaces lit's own %python (the interpreter running lit), which comes
# first and would win.
config.substitutions = [s for s in config.substitutions if s[0] != "%python"]
config.substitutions.append(("%python", python))
