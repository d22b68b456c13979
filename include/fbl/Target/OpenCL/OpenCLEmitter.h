//===- OpenCLEmitter.h - fbl kernels as an OpenCL bundle --------*- C++ -*-===//
//
// Prints the fbl.dispatch kernels of a lowered training function as OpenCL C
// 1.2 (image2d_t / image2d_array_t, read_imagef / write_imagef) and describes
// the function for the runtime: tensors with their layouts and memory
// objects, kernels with their arguments and work sizes, the launch schedule,
// and which tensors are inputs, parameters and outputs (manifest.json).
//
//===----------------------------------------------------------------------===//

#ifndef FBL_TARGET_OPENCL_OPENCLEMITTER_H
#define FBL_TARGET_OPENCL_OPENCLEMITTER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::fbl {

/// The function a bundle is made from: `entry` if given, else the module's
/// `*_step`, else `*_grad`, else its only function with kernels.
FailureOr<func::FuncOp> findBundleEntry(ModuleOp module, StringRef entry);

/// Writes the OpenCL C source of `func`'s kernels.
LogicalResult emitOpenCLKernels(func::FuncOp func, llvm::raw_ostream &os);

/// Writes the manifest of `func` (JSON).
LogicalResult emitManifest(func::FuncOp func, llvm::raw_ostream &os);

/// Writes `dir`/kernels.cl and `dir`/manifest.json; with `spirv`, also
/// compiles the kernels to `dir`/kernels.spv with clang.
LogicalResult writeBundle(ModuleOp module, StringRef dir, StringRef entry,
                          bool spirv);

/// Registers `--fbl-to-opencl` and `--fbl-to-spirv` and their option
/// `--fbl-entry`. With the tool's `-o DIR` they write the bundle into DIR;
/// without it --fbl-to-opencl prints kernels.cl.
void registerToOpenCLTranslation();

} // namespace mlir::fbl

#endif // FBL_TARGET_OPENCL_OPENCLEMITTER_H
