//===- ClassifyOps.cpp - The fbl-classify-ops pass ------------------------===//
//
// Records the operator classification on the IR: `fbl.phase` on every op of
// a training function, `fbl.class` on backward ops, and `fbl.reuse` on the
// backward ops that read forward values.
//
//===----------------------------------------------------------------------===//

#include "fbl/Analysis/OpClassification.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"

namespace mlir::fbl {
#define GEN_PASS_DEF_FBLCLASSIFYOPSPASS
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"
} // namespace mlir::fbl

using namespace mlir;
using namespace mlir::fbl;

namespace {
struct ClassifyOpsPass
    : public mlir::fbl::impl::FBLClassifyOpsPassBase<ClassifyOpsPass> {
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp func) {
      if (FailureOr<OpClassification> classes = OpClassification::analyze(func);
          succeeded(classes))
        classes->annotate();
    });
  }
};
} // namespace
