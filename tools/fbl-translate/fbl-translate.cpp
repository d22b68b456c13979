//===- fbl-translate.cpp - fbl translation driver -------------------------===//
//
// mlir-translate with fbl's translations out of MLIR.
//
//===----------------------------------------------------------------------===//

#include "fbl/Target/LayoutReport/LayoutReport.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::fbl::registerToLayoutReportTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "fbl translation driver\n"));
}
