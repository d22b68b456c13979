//===- fbl-fuzz-compile.cpp - Fuzz the compiler, text to bundle -----------===//
//
// libFuzzer target: MLIR text through fbl-training-pipeline (target
// pocl-cpu) to the bundle fbl-translate writes, kept in memory. The first
// byte picks the pipeline's options, the rest is the module.
//
// A diagnostic is a fine outcome. Bugs are: a crash or sanitizer report, a
// failure without an error diagnostic (the tools would exit 1 silently),
// and a manifest the runtime rejects (fbl-run could not load the bundle).
//
//===----------------------------------------------------------------------===//

#include "Bundle.h"
#include "Error.h"

#include "fbl/Dialect/FBL/IR/FBLDialect.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"
#include "fbl/Dialect/TMTensor/IR/TMTensor.h"
#include "fbl/Target/OpenCL/OpenCLEmitter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace mlir;

/// The dialects fbl-opt registers.
static DialectRegistry &registry() {
  static DialectRegistry *r = [] {
    auto *reg = new DialectRegistry;
    registerAllDialects(*reg);
    registerAllExtensions(*reg);
    reg->insert<mlir::fbl::FBLDialect>();
    reg->insert<mlir::fbl::tm_tensor::TMTensorDialect>();
    return reg;
  }();
  return *r;
}

/// Aborts the run with `what`: libFuzzer saves the input as a crash.
[[noreturn]] static void bug(const llvm::Twine &what) {
  llvm::errs() << "fbl-fuzz-compile: " << what << "\n";
  std::abort();
}

/// Sets `options` from the options byte: bits 0-1 the policy, 2-3 the
/// optimizer, 4 fuse, 5 whether pocl-cpu overrides the module's fbl.target
/// or only stands in for a missing one.
static void setPipelineOptions(uint8_t byte,
                               mlir::fbl::TrainingPipelineOptions &options) {
  static const char *const policies[] = {"fblayout", "reuse-forward",
                                         "explicit-transpose", "fblayout"};
  static const char *const optimizers[] = {"none", "sgd", "adamw", "none"};
  options.policy = policies[byte & 3];
  options.optimizer = optimizers[(byte >> 2) & 3];
  options.fuse = (byte >> 4) & 1;
  if ((byte >> 5) & 1)
    options.target = "pocl-cpu";
  else
    options.fallbackTarget = "pocl-cpu";
}

/// Whether `text` has a `permutation` or `dimensions` list that MLIR 22's
/// linalg parsers cannot read: they store the null attribute of a failed
/// DenseI64ArrayAttr::parse and crash (linalg.transpose, linalg.broadcast,
/// linalg.reduce; mlir-opt and fbl-opt alike). That bug is upstream's, and
/// the fuzzer would find it again within seconds of every run, so such
/// inputs are skipped: a list must be `[` integers of at most 18 digits,
/// separated by commas, `]`.
static bool hasUnreadableI64List(llvm::StringRef text) {
  for (llvm::StringRef keyword : {"permutation", "dimensions"}) {
    for (size_t at = text.find(keyword); at != llvm::StringRef::npos;
         at = text.find(keyword, at + 1)) {
      llvm::StringRef rest = text.drop_front(at + keyword.size()).ltrim();
      if (!rest.consume_front("="))
        continue;
      rest = rest.ltrim();
      if (!rest.consume_front("["))
        return true;
      rest = rest.ltrim();
      if (rest.consume_front("]"))
        continue;
      while (true) {
        rest.consume_front("-");
        size_t digits = rest.find_if_not(llvm::isDigit);
        if (digits == 0 || digits > 18)
          return true;
        rest = rest.drop_front(digits).ltrim();
        if (rest.consume_front("]"))
          break;
        if (!rest.consume_front(","))
          return true;
        rest = rest.ltrim();
      }
    }
  }
  return false;
}

/// Whether `text` has a `tensor.expand_shape` whose reassociation has an
/// empty group (`[[], [0, 1]]`): MLIR 22's verifier of expand_shape builds
/// affine maps from the groups and dereferences the null expression of an
/// empty one (mlir-opt and fbl-opt alike; collapse_shape reports an
/// error). Upstream's bug again, skipped like the lists above.
static bool hasEmptyExpandGroup(llvm::StringRef text) {
  for (size_t at = text.find("expand_shape"); at != llvm::StringRef::npos;
       at = text.find("expand_shape", at + 1)) {
    // The reassociation is the first `[` ... `]]` after the op's name.
    llvm::StringRef rest = text.drop_front(at);
    size_t open = rest.find('[');
    if (open == llvm::StringRef::npos)
      return false;
    rest = rest.drop_front(open + 1);
    if (rest.ltrim().starts_with("]"))
      continue; // `[]`: no groups (a rank-0 source), which is fine.
    llvm::StringRef groups = rest.take_front(rest.find("]]"));
    for (size_t g = groups.find('['); g != llvm::StringRef::npos;
         g = groups.find('[', g + 1))
      if (groups.drop_front(g + 1).ltrim().starts_with("]"))
        return true;
  }
  return false;
}

/// Whether `text` has a `linalg.generic` whose trait dictionary is followed
/// by `<` and something other than a dictionary (`{...} <f32>`): MLIR 22's
/// parser of linalg.generic takes what follows `<` as the op's properties
/// and reads it as a DictionaryAttr unchecked, a read of uninitialized
/// memory (mlir-opt aborts alike under MALLOC_PERTURB_). Upstream's bug,
/// skipped like the ones above.
static bool hasNonDictGenericProperties(llvm::StringRef text) {
  for (size_t at = text.find("linalg.generic"); at != llvm::StringRef::npos;
       at = text.find("linalg.generic", at + 1)) {
    llvm::StringRef rest =
        text.drop_front(at + llvm::StringRef("linalg.generic").size()).ltrim();
    if (!rest.starts_with("{"))
      continue;
    // The end of the trait dictionary: braces balanced outside strings.
    int depth = 0;
    bool inString = false;
    size_t end = 0;
    for (; end < rest.size(); ++end) {
      char c = rest[end];
      if (inString) {
        if (c == '\\')
          ++end;
        else if (c == '"')
          inString = false;
      } else if (c == '"') {
        inString = true;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}' && --depth == 0) {
        break;
      }
    }
    if (end >= rest.size())
      continue;
    llvm::StringRef after = rest.drop_front(end + 1).ltrim();
    if (after.consume_front("<") && !after.ltrim().starts_with("{"))
      return true;
  }
  return false;
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  (void)registry();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  mlir::fbl::TrainingPipelineOptions options;
  setPipelineOptions(data[0], options);
  // NUL-terminated, as every buffer fbl-opt parses (a file): the lexer of
  // mlir::parseSourceString reads one past the end of a string without the
  // NUL (Token::getSymbolReference at a trailing `@sym`), which no fbl tool
  // hands it.
  std::string text(reinterpret_cast<const char *>(data) + 1, size - 1);
  if (hasUnreadableI64List(text) || hasEmptyExpandGroup(text) ||
      hasNonDictGenericProperties(text))
    return -1;

  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  unsigned errors = 0;
  ScopedDiagnosticHandler countErrors(&context, [&](Diagnostic &diag) {
    errors += diag.getSeverity() == DiagnosticSeverity::Error;
    return success();
  });
  // Fails only with an error diagnostic, else it is a bug.
  auto failedWithoutError = [&](LogicalResult result) {
    return failed(result) && errors == 0;
  };

  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  if (!module) {
    if (errors == 0)
      bug("the parser failed without an error");
    return 0;
  }
  PassManager pm(&context);
  mlir::fbl::buildTrainingPipeline(pm, options);
  LogicalResult ran = pm.run(*module);
  if (failedWithoutError(ran))
    bug("fbl-training-pipeline failed without an error");
  if (failed(ran))
    return 0;

  FailureOr<func::FuncOp> entry = mlir::fbl::findBundleEntry(*module, "");
  if (failedWithoutError(entry))
    bug("no bundle entry, and no error saying so");
  if (failed(entry))
    return 0;
  std::string kernels, manifest;
  llvm::raw_string_ostream kernelsOs(kernels), manifestOs(manifest);
  FailureOr<mlir::fbl::KernelFunctions> functions =
      mlir::fbl::collectKernelFunctions(*entry);
  LogicalResult emitted = failure(failed(functions));
  if (succeeded(emitted)) {
    mlir::fbl::emitOpenCLKernels(*entry, *functions, kernelsOs);
    emitted = mlir::fbl::emitManifest(*entry, *functions, manifestOs);
  }
  if (failedWithoutError(emitted))
    bug("the bundle emitter failed without an error");
  if (failed(emitted))
    return 0;

  // What the compiler writes, the runtime must load.
  try {
    (void)::fbl::runtime::Bundle::parse(manifest);
  } catch (const std::exception &e) {
    bug(llvm::Twine("the runtime rejects the manifest: ") + e.what() + "\n" +
        manifest);
  }
  return 0;
}
