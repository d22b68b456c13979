//===- fbl-opt.cpp - fbl optimizer driver ---------------------------------===//
//
// mlir-opt with the fbl dialect and passes: every upstream dialect, pass and
// extension a linalg-on-tensors pipeline needs is registered too, so fbl-opt
// runs the same pipelines as mlir-opt.
//
//===----------------------------------------------------------------------===//

#include "fbl/Dialect/FBL/IR/FBLDialect.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::fbl::registerFBLPasses();
  mlir::fbl::registerTrainingPipeline();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::fbl::FBLDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "fbl optimizer driver\n", registry));
}
