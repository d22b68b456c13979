//===- CompileStep.cpp - The training step of a model, cached -------------===//

#include "CompileStep.h"

#include "fbl/Dialect/FBL/IR/FBLDialect.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"
#include "fbl/Target/OpenCL/OpenCLEmitter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"

#include <chrono>

using namespace fbl::finetune;
using llvm::Expected;

/// A double as pass options parse it back, without losing digits.
static std::string number(double v) {
  return llvm::formatv("{0}", llvm::format("%.17g", v)).str();
}

std::string fbl::finetune::stepPipeline(const StepOptions &o) {
  std::string pipeline = "builtin.module(";
  if (o.lora) {
    pipeline +=
        llvm::formatv("fbl-insert-lora{{rank={0} alpha={1} "
                      "targets={2}",
                      o.lora->rank, number(o.lora->alpha), o.lora->targets)
            .str();
    if (!o.lora->trainable.empty())
      pipeline += " trainable=" + o.lora->trainable;
    pipeline += "},";
  }
  // Braces keep an attribute's commas and spaces in one option value.
  pipeline += llvm::formatv("fbl-training-pipeline{{policy={0} target={{{1}} "
                            "optimizer=adamw lr={2}})",
                            o.policy, o.target, number(o.learningRate))
                  .str();
  return pipeline;
}

/// Identifies the compiler: a rebuilt tool must not reuse old bundles.
static std::string compilerIdentity() {
  std::string exe = llvm::sys::fs::getMainExecutable(
      "fbl-finetune", reinterpret_cast<void *>(&compilerIdentity));
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(exe, status))
    return exe;
  return llvm::formatv(
             "{0}:{1}:{2}", exe, status.getSize(),
             status.getLastModificationTime().time_since_epoch().count())
      .str();
}

static llvm::Error compileError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

Expected<CompiledStep> fbl::finetune::compileStep(
    const models::ModelConfig &config, const StepOptions &options,
    const std::string &scratchDir, llvm::raw_ostream &log) {
  std::string pipeline = stepPipeline(options);
  std::string identity = compilerIdentity();
  llvm::SHA256 hash;
  for (llvm::StringRef part :
       {llvm::StringRef(options.configText), llvm::StringRef(pipeline),
        llvm::StringRef(identity)}) {
    hash.update(part);
    hash.update(llvm::StringRef("\0", 1));
  }
  hash.update(
      llvm::formatv("{0}x{1}", options.shape.batch, options.shape.seq).str());
  std::array<uint8_t, 32> digest = hash.final();
  std::string key = llvm::toHex(llvm::ArrayRef<uint8_t>(digest).take_front(12),
                                /*LowerCase=*/true);

  CompiledStep result;
  if (!options.cacheDir.empty()) {
    llvm::SmallString<256> cached(options.cacheDir);
    llvm::sys::path::append(cached, key);
    llvm::SmallString<256> manifest(cached);
    llvm::sys::path::append(manifest, "manifest.json");
    if (llvm::sys::fs::exists(manifest)) {
      result.bundleDir = std::string(cached);
      result.fromCache = true;
      return result;
    }
  }

  auto start = std::chrono::steady_clock::now();
  static bool registered = [] {
    mlir::fbl::registerFBLPasses();
    mlir::fbl::registerTrainingPipeline();
    return true;
  }();
  (void)registered;
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::fbl::FBLDialect>();
  mlir::MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  std::string firstError;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    if (d.getSeverity() == mlir::DiagnosticSeverity::Error) {
      if (firstError.empty())
        firstError = d.str();
    } else if (d.getSeverity() == mlir::DiagnosticSeverity::Warning) {
      log << "warning: " << d.str() << "\n";
    }
    return mlir::success();
  });

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
  if (failed(models::buildModel(*module, config, options.shape)))
    return compileError(firstError);

  mlir::PassManager pm(&context);
  std::string parseError;
  llvm::raw_string_ostream parseErrors(parseError);
  // The passes inside "builtin.module(...)": pm is anchored on the module.
  llvm::StringRef passes = llvm::StringRef(pipeline)
                               .drop_front(strlen("builtin.module("))
                               .drop_back(1);
  if (failed(mlir::parsePassPipeline(passes, pm, parseErrors)))
    return compileError("internal error: bad pipeline '" + pipeline +
                        "': " + parseError);
  // Like LLVM's opt: the input and the output are verified, not the IR
  // between passes (which, for a model of many layers, costs more than the
  // passes themselves).
  pm.enableVerifier(false);
  if (failed(mlir::verify(*module)) || failed(pm.run(*module)) ||
      failed(mlir::verify(*module)))
    return compileError(firstError.empty() ? "the training pipeline failed"
                                           : firstError);

  // Write into a scratch folder, then move it into the cache in one rename.
  llvm::SmallString<256> out(scratchDir);
  llvm::sys::path::append(out, "bundle-" + key);
  llvm::sys::fs::remove_directories(out);
  if (failed(mlir::fbl::writeBundle(*module, out, "", /*spirv=*/false)))
    return compileError(firstError.empty() ? "writing the bundle failed"
                                           : firstError);
  result.compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  result.bundleDir = std::string(out);
  if (!options.cacheDir.empty()) {
    llvm::SmallString<256> cached(options.cacheDir);
    if (!llvm::sys::fs::create_directories(cached)) {
      llvm::sys::path::append(cached, key);
      if (!llvm::sys::fs::rename(out, cached))
        result.bundleDir = std::string(cached);
    }
  }
  return result;
}
