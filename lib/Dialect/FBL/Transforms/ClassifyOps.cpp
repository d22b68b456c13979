//===- ClassifyOps.cpp - The fbl-classify-ops pass ------------------------===//
//
// Records the operator classification on the IR: `fbl.phase` on every op of
// a training function, `fbl.class` on backward ops, and `fbl.reuse` on the
// backward ops that read forward values.
//
//===----------------------------------------------------------------------===//

#include "fbl/Analysis/OpClassification.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::fbl {
#define GEN_PASS_DEF_FBLCLASSIFYOPSPASS
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"
} // namespace mlir::fbl

using namespace mlir;
using namespace mlir::fbl;

static Attribute accessAttr(Builder &b, const AccessPattern &access) {
  return b.getDictionaryAttr(
      {b.getNamedAttr("reduced", b.getDenseI64ArrayAttr(access.reducedDims)),
       b.getNamedAttr("innermost", b.getI64IntegerAttr(access.innermostDim))});
}

namespace {
struct ClassifyOpsPass
    : public mlir::fbl::impl::FBLClassifyOpsPassBase<ClassifyOpsPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    getOperation().walk([&](func::FuncOp func) {
      FailureOr<OpClassification> classes = OpClassification::analyze(func);
      if (failed(classes))
        return;
      for (Operation *op : classes->getOps()) {
        const OpInfo *info = classes->lookup(op);
        op->setAttr("fbl.phase", b.getStringAttr(stringifyPhase(info->phase)));
        if (info->phase != Phase::Backward)
          continue;
        op->setAttr("fbl.class",
                    b.getI64IntegerAttr(static_cast<int>(info->opClass)));
        if (info->reuse.empty())
          continue;
        SmallVector<Attribute> edges;
        for (const ReuseEdge &edge : info->reuse)
          edges.push_back(b.getDictionaryAttr(
              {b.getNamedAttr("operand",
                              b.getI64IntegerAttr(edge.operandNumber)),
               b.getNamedAttr("access", accessAttr(b, edge.access)),
               b.getNamedAttr("forward", accessAttr(b, edge.forwardAccess)),
               b.getNamedAttr("conflict", b.getBoolAttr(edge.conflicting))}));
        op->setAttr("fbl.reuse", b.getArrayAttr(edges));
      }
    });
  }
};
} // namespace
