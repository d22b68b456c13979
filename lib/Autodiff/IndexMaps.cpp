//===- IndexMaps.cpp - Index maps autodiff and kernels accept -------------===//

#include "fbl/Autodiff/IndexMaps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::fbl;

/// True when some result of `op`'s maps is the constant 0 on a size-1 dim and
/// every other result is a loop dim: the form unit-dim folding turns into
/// projected permutations.
static bool hasFoldableUnitDimConstant(linalg::GenericOp op) {
  bool found = false;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    for (auto [i, e] : llvm::enumerate(map.getResults())) {
      if (isa<AffineDimExpr>(e))
        continue;
      auto c = dyn_cast<AffineConstantExpr>(e);
      if (!c || c.getValue() != 0 || !type || type.getDimSize(i) != 1)
        return false;
      found = true;
    }
  }
  return found;
}

bool mlir::fbl::normalizeUnitDimIndexMaps(func::FuncOp func) {
  SmallVector<linalg::GenericOp> candidates;
  func.walk([&](linalg::GenericOp op) {
    if (op.hasPureTensorSemantics() && hasFoldableUnitDimConstant(op))
      candidates.push_back(op);
  });
  if (candidates.empty())
    return false;
  IRRewriter rewriter(func.getContext());
  linalg::ControlDropUnitDims options;
  bool changed = false;
  for (linalg::GenericOp op : candidates) {
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::DropUnitDimsResult> result =
        linalg::dropUnitDims(rewriter, op, options);
    // A failure leaves the op as it was; the map check refuses it.
    if (failed(result))
      continue;
    rewriter.replaceOp(op, result->replacements);
    changed = true;
  }
  if (!changed)
    return false;
  // Fold the reshape pairs the rewrite put between consecutive generics and
  // the reshapes of tensor.empty inits.
  RewritePatternSet patterns(func.getContext());
  tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns,
                                                       func.getContext());
  tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns,
                                                     func.getContext());
  tensor::populateFoldTensorEmptyPatterns(patterns);
  (void)applyPatternsGreedily(
      func, std::move(patterns),
      GreedyRewriteConfig().setRegionSimplificationLevel(
          GreedySimplifyRegionLevel::Disabled));
  return true;
}

LogicalResult mlir::fbl::verifyProjectedPermutationMaps(Operation *root,
                                                        StringRef passName,
                                                        StringRef action) {
  WalkResult walk = root->walk([&](linalg::LinalgOp op) {
    for (OpOperand &operand : op->getOpOperands()) {
      AffineMap map = op.getMatchingIndexingMap(&operand);
      if (map.isProjectedPermutation(/*allowZeroInResults=*/false))
        continue;
      bool constant = llvm::any_of(map.getResults(), [](AffineExpr e) {
        return isa<AffineConstantExpr>(e);
      });
      bool shifted = llvm::any_of(map.getResults(), [](AffineExpr e) {
        return !isa<AffineDimExpr, AffineConstantExpr>(e);
      });
      InFlightDiagnostic diag = op.emitError();
      diag << passName << ": cannot " << action << " '" << op->getName()
           << "': operand #" << operand.getOperandNumber()
           << " is accessed through " << AffineMapAttr::get(map)
           << ", which is not a projected permutation; ";
      if (shifted)
        diag << "an index must be one position loop times a stride plus "
                "window (reduction) loops and an offset, all non-negative, "
                "inside the operand (reversed reads, div/mod, two position "
                "loops in one index and shifted outputs are not supported)";
      else if (constant)
        diag << "a constant index is supported only as 0 into a size-1 "
                "dimension";
      else
        diag << "each loop dim may index one dimension only";
      return WalkResult::interrupt();
    }
    // The verifier accepts iterator types that contradict the maps; autodiff
    // and the kernels derive loop roles from both and crash on a mismatch.
    // A loop is a reduction exactly when no output map indexes it.
    llvm::SmallBitVector inOutput(op.getNumLoops());
    for (OpOperand &init : op.getDpsInitsMutable())
      for (AffineExpr e : op.getMatchingIndexingMap(&init).getResults())
        if (auto dim = dyn_cast<AffineDimExpr>(e))
          inOutput.set(dim.getPosition());
    for (auto [d, type] : llvm::enumerate(op.getIteratorTypesArray())) {
      bool reduction = type == utils::IteratorType::reduction;
      if (reduction != inOutput.test(d))
        continue;
      op.emitError() << passName << ": cannot " << action << " '"
                     << op->getName() << "': loop dim #" << d << " is marked "
                     << (reduction ? "reduction" : "parallel")
                     << (reduction ? " but indexes an output"
                                   : " but indexes no output");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}
