//===- BundleTranslation.cpp - --fbl-to-opencl and --fbl-to-spirv ---------===//
//
// The translations that turn a compiled training step into a bundle: the
// entry function, the bundle directory (kernels.cl, manifest.json, and with
// SPIR-V kernels.spv through clang), and their mlir-translate registrations.
//
//===----------------------------------------------------------------------===//

#include "fbl/Dialect/FBL/IR/FBLOps.h"
#include "fbl/Target/OpenCL/OpenCLEmitter.h"

#include "mlir/InitAllDialects.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::fbl;

FailureOr<func::FuncOp> mlir::fbl::findBundleEntry(ModuleOp module,
                                                   StringRef entry) {
  SmallVector<func::FuncOp> withKernels;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.getOps<DispatchOp>().empty())
      withKernels.push_back(func);
  if (!entry.empty()) {
    auto func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func)
      return mlir::emitError(module.getLoc(), "fbl-to-opencl: no function @")
             << entry;
    return func;
  }
  for (StringRef suffix : {"_step", "_grad"})
    for (func::FuncOp f : withKernels)
      if (f.getSymName().ends_with(suffix))
        return f;
  if (withKernels.size() == 1)
    return withKernels.front();
  return mlir::emitError(
      module.getLoc(),
      "fbl-to-opencl: no function with fbl.dispatch kernels to emit; run "
      "fbl-opt --fbl-training-pipeline (or pick one with --fbl-entry)");
}

/// Runs one LLVM tool from FBL_LLVM_TOOLS_DIR on the bundle's files.
static LogicalResult runTool(ModuleOp module, StringRef name,
                             ArrayRef<StringRef> args) {
  llvm::ErrorOr<std::string> tool =
      llvm::sys::findProgramByName(name, {FBL_LLVM_TOOLS_DIR});
  if (!tool)
    return mlir::emitError(module.getLoc(), "fbl-to-spirv: no ")
           << name << " in " FBL_LLVM_TOOLS_DIR;
  SmallVector<StringRef> argv = {*tool};
  argv.append(args.begin(), args.end());
  std::string err;
  int rc = llvm::sys::ExecuteAndWait(*tool, argv, std::nullopt, {}, 0, 0, &err);
  if (rc != 0)
    return mlir::emitError(module.getLoc(), "fbl-to-spirv: ")
           << name << " failed (" << rc << ") " << err;
  return success();
}

/// Compiles `cl` to SPIR-V 1.0 for OpenCL 1.2: clang optimizes to LLVM IR,
/// the scalarizer splits vector operations, then llc's SPIR-V backend emits.
/// The middle step exists because LLVM folds a vector-valued if/else into a
/// `select i1, <4 x float>` and the SPIR-V backend prints that as an OpSelect
/// with a scalar condition, which only SPIR-V 1.4 allows.
static LogicalResult compileToSpirv(ModuleOp module, StringRef cl,
                                    StringRef spv) {
  SmallString<256> optimized(spv), scalarized(spv);
  optimized += ".opt.bc";
  scalarized += ".scalar.bc";
  llvm::scope_exit cleanup([&] {
    llvm::sys::fs::remove(optimized);
    llvm::sys::fs::remove(scalarized);
  });
  if (failed(runTool(module, "clang",
                     {"-cl-std=CL1.2", "--target=spirv64v1.0", "-Xclang",
                      "-finclude-default-header", "-O2", "-c", "-emit-llvm", cl,
                      "-o", optimized})) ||
      failed(runTool(module, "opt",
                     {"-passes=scalarizer", optimized, "-o", scalarized})))
    return failure();
  return runTool(
      module, "llc",
      {"-mtriple=spirv64v1.0", "-filetype=obj", scalarized, "-o", spv});
}

LogicalResult mlir::fbl::writeBundle(ModuleOp module, StringRef dir,
                                     StringRef entry, bool spirv) {
  FailureOr<func::FuncOp> func = findBundleEntry(module, entry);
  if (failed(func))
    return failure();
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return mlir::emitError(module.getLoc(), "cannot create ")
           << dir << ": " << ec.message();
  auto write = [&](StringRef file,
                   function_ref<LogicalResult(llvm::raw_ostream &)> fn)
      -> LogicalResult {
    SmallString<256> path(dir);
    llvm::sys::path::append(path, file);
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return mlir::emitError(module.getLoc(), "cannot write ")
             << path << ": " << ec.message();
    return fn(os);
  };
  FailureOr<KernelFunctions> kernels = collectKernelFunctions(*func);
  if (failed(kernels))
    return failure();
  if (failed(write("kernels.cl",
                   [&](llvm::raw_ostream &os) {
                     emitOpenCLKernels(*func, *kernels, os);
                     return success();
                   })) ||
      failed(write("manifest.json", [&](llvm::raw_ostream &os) {
        return emitManifest(*func, *kernels, os);
      })))
    return failure();
  if (spirv) {
    SmallString<256> cl(dir), spv(dir);
    llvm::sys::path::append(cl, "kernels.cl");
    llvm::sys::path::append(spv, "kernels.spv");
    return compileToSpirv(module, cl, spv);
  }
  return success();
}

/// The path of mlirTranslateMain's `-o`, where the bundle translations write
/// their directory; std::nullopt for the default output (stdout). The tool
/// owns that option, so it is looked up among the registered ones.
static std::optional<std::string> outputPath() {
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find("o");
  if (it == options.end())
    return std::nullopt;
  // mlirTranslateMain declares `-o` as a cl::opt<std::string>.
  const std::string &path =
      *static_cast<llvm::cl::opt<std::string> *>(it->second);
  if (path.empty() || path == "-")
    return std::nullopt;
  return path;
}

/// Writes the bundle into the directory `-o` names. The tool has already
/// created an empty file there for the output stream; the directory takes
/// its place.
static LogicalResult writeBundleToOutput(Operation *op, StringRef dir,
                                         StringRef entry, bool spirv) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    return op->emitError("expected a builtin.module");
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(dir, status) &&
      llvm::sys::fs::is_regular_file(status) && status.getSize() == 0)
    if (std::error_code ec = llvm::sys::fs::remove(dir))
      return mlir::emitError(module.getLoc(), "cannot replace ")
             << dir << " by a directory: " << ec.message();
  return writeBundle(module, dir, entry, spirv);
}

void mlir::fbl::registerToOpenCLTranslation() {
  static llvm::cl::opt<std::string> entry(
      "fbl-entry",
      llvm::cl::desc("the function to emit (default: the *_step function, "
                     "else *_grad, else the only one with kernels)"),
      llvm::cl::init(""));
  auto registerDialects = [](DialectRegistry &registry) {
    registerAllDialects(registry);
    registry.insert<FBLDialect>();
  };
  TranslateFromMLIRRegistration opencl(
      "fbl-to-opencl",
      "print the OpenCL C kernels of a compiled training step (with -o DIR: "
      "write the bundle: kernels.cl, manifest.json)",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        if (std::optional<std::string> dir = outputPath())
          return writeBundleToOutput(op, *dir, entry, /*spirv=*/false);
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        FailureOr<func::FuncOp> func = findBundleEntry(module, entry);
        if (failed(func))
          return failure();
        return emitOpenCLKernels(*func, os);
      },
      registerDialects);
  TranslateFromMLIRRegistration spirv(
      "fbl-to-spirv",
      "with -o DIR: write the bundle with its kernels also compiled to "
      "OpenCL SPIR-V (kernels.spv)",
      [](Operation *op, raw_ostream &) -> LogicalResult {
        if (std::optional<std::string> dir = outputPath())
          return writeBundleToOutput(op, *dir, entry, /*spirv=*/true);
        return op->emitError("fbl-to-spirv writes a bundle directory: use -o "
                             "DIR");
      },
      registerDialects);
}
