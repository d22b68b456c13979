//===- DecomposeAggregates.cpp - The fbl-decompose-aggregates pass --------===//
//
// Replaces ops implementing linalg's AggregatedOpInterface (softmax) by the
// structured ops they decompose into.
//
//===----------------------------------------------------------------------===//

#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::fbl {
#define GEN_PASS_DEF_FBLDECOMPOSEAGGREGATESPASS
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"
} // namespace mlir::fbl

using namespace mlir;

namespace {
struct DecomposeAggregatesPass
    : public mlir::fbl::impl::FBLDecomposeAggregatesPassBase<
          DecomposeAggregatesPass> {
  void runOnOperation() override {
    SmallVector<linalg::AggregatedOpInterface> ops;
    getOperation().walk(
        [&](linalg::AggregatedOpInterface op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::AggregatedOpInterface op : ops) {
      rewriter.setInsertionPoint(op);
      FailureOr<SmallVector<Value>> results = op.decomposeOperation(rewriter);
      if (failed(results)) {
        op->emitError("fbl-decompose-aggregates: cannot decompose");
        return signalPassFailure();
      }
      // Decomposed ops keep the phase the classification gave the original.
      if (Attribute phase = op->getAttr("fbl.phase"))
        for (Value v : *results)
          if (Operation *def = v.getDefiningOp())
            def->setAttr("fbl.phase", phase);
      rewriter.replaceOp(op, *results);
    }
  }
};
} // namespace
