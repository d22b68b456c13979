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

/// The OpenCL C functions of `func`'s kernels. Dispatches whose kernels
/// print the same code (the same op in every layer of a model) share one
/// function, named after the first of them.
struct KernelFunctions {
  /// (name, OpenCL C text) in first-use order.
  std::vector<std::pair<std::string, std::string>> functions;
  /// The function each dispatch runs.
  llvm::DenseMap<Operation *, std::string> functionOf;
  /// The functions of its variants, for dispatches that have them.
  llvm::DenseMap<Operation *, std::vector<std::string>> variantsOf;
};
FailureOr<KernelFunctions> collectKernelFunctions(func::FuncOp func);

/// Writes the OpenCL C source of `kernels`: the shared helpers, then each
/// function once.
void emitOpenCLKernels(func::FuncOp func, const KernelFunctions &kernels,
                       llvm::raw_ostream &os);
/// The same, collecting `func`'s kernel functions first.
LogicalResult emitOpenCLKernels(func::FuncOp func, llvm::raw_ostream &os);

/// Writes the manifest of `func` (JSON); each kernel runs the function
/// `kernels` gives its dispatch.
LogicalResult emitManifest(func::FuncOp func, const KernelFunctions &kernels,
                           llvm::raw_ostream &os);

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
