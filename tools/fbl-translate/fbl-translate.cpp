//===- fbl-translate.cpp - fbl translation driver -------------------------===//
//
// mlir-translate with fbl's translations out of MLIR. The bundle
// translations (--fbl-to-opencl, --fbl-to-spirv) take their directory from
// `-o DIR` themselves.
//
//===----------------------------------------------------------------------===//

#include "fbl/Target/LayoutReport/LayoutReport.h"
#include "fbl/Target/OpenCL/OpenCLEmitter.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::fbl::registerToLayoutReportTranslation();
  mlir::fbl::registerToOpenCLTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "fbl translation driver\n"));
}
