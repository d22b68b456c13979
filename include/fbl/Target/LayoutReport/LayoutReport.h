//===- LayoutReport.h - Layout report of a module ---------------*- C++ -*-===//
//
// Describes every encoded tensor of a module as JSON: layout, storage kind,
// image extents, bytes, texel map, and whether it fits the module's target.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_TARGET_LAYOUTREPORT_LAYOUTREPORT_H
#define FBL_TARGET_LAYOUTREPORT_LAYOUTREPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::fbl {

/// Writes the layout report of `module` to `os`.
LogicalResult writeLayoutReport(ModuleOp module, llvm::raw_ostream &os);

/// Registers `fbl-translate --fbl-to-layout-json`.
void registerToLayoutReportTranslation();

} // namespace mlir::fbl

#endif // FBL_TARGET_LAYOUTREPORT_LAYOUTREPORT_H
