//===- fbl-translate.cpp - fbl translation driver -------------------------===//
//
// mlir-translate with fbl's translations out of MLIR. The bundle
// translations write a directory: `fbl-translate --fbl-to-opencl IN -o DIR`
// (or --fbl-to-spirv) is handled here; everything else goes to
// mlirTranslateMain.
//
//===----------------------------------------------------------------------===//

#include "fbl/Dialect/FBL/IR/FBLDialect.h"
#include "fbl/Target/LayoutReport/LayoutReport.h"
#include "fbl/Target/OpenCL/OpenCLEmitter.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

/// `fbl-translate --fbl-to-opencl|--fbl-to-spirv [--fbl-entry=F] IN -o DIR`.
static int writeBundleMain(int argc, char **argv) {
  std::string input = "-", dir, entry;
  bool spirv = false;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef a(argv[i]);
    if (a == "--fbl-to-opencl" || a == "-fbl-to-opencl")
      continue;
    if (a == "--fbl-to-spirv" || a == "-fbl-to-spirv") {
      spirv = true;
    } else if (a == "-o" && i + 1 < argc) {
      dir = argv[++i];
    } else if (a.consume_front("--fbl-entry=") ||
               a.consume_front("-fbl-entry=")) {
      entry = a.str();
    } else if (a.starts_with("-") && a != "-") {
      llvm::errs() << "fbl-translate: unknown option '" << a
                   << "' for a bundle\n";
      return 1;
    } else {
      input = a.str();
    }
  }
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  registry.insert<mlir::fbl::FBLDialect>();
  mlir::MLIRContext context(registry);
  std::string error;
  auto file = mlir::openInputFile(input, &error);
  if (!file) {
    llvm::errs() << "fbl-translate: " << error << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  return mlir::failed(mlir::fbl::writeBundle(*module, dir, entry, spirv));
}

int main(int argc, char **argv) {
  bool bundle = false, hasOutput = false;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef a(argv[i]);
    bundle |= a == "--fbl-to-opencl" || a == "-fbl-to-opencl" ||
              a == "--fbl-to-spirv" || a == "-fbl-to-spirv";
    hasOutput |= a == "-o";
  }
  if (bundle && hasOutput)
    return writeBundleMain(argc, argv);
  mlir::fbl::registerToLayoutReportTranslation();
  mlir::fbl::registerToOpenCLTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "fbl translation driver\n"));
}
