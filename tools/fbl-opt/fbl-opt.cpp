//===- fbl-opt.cpp - fbl optimizer driver ---------------------------------===//
//
// mlir-opt with the fbl dialect and passes: every upstream dialect, pass and
// extension a linalg-on-tensors pipeline needs is registered too, so fbl-opt
// runs the same pipelines as mlir-opt.
//
//===----------------------------------------------------------------------===//

#include "fbl/Dialect/FBL/IR/FBLDialect.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"
#include "fbl/Dialect/TMTensor/IR/TMTensor.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

/// Output streams report a failed write (`-o /dev/full`, a full disk) as a
/// fatal error when they close; make that one diagnostic line instead of
/// "LLVM ERROR" (report_fatal_error exits 1 after the handler).
static void ioErrorHandler(void *, const char *reason, bool) {
  llvm::errs() << "fbl-opt: error: " << reason << "\n";
}

int main(int argc, char **argv) {
  llvm::install_fatal_error_handler(ioErrorHandler);
  mlir::registerAllPasses();
  mlir::fbl::registerFBLPasses();
  mlir::fbl::registerTrainingPipeline();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::fbl::FBLDialect>();
  // torch-mlir's attention op, so fbl-opt reads its output.
  registry.insert<mlir::fbl::tm_tensor::TMTensorDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "fbl optimizer driver\n", registry));
}
