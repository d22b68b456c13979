//===- LayoutSelection.h - Global layout selection --------------*- C++ -*-===//
//
// Chooses a layout for every tensor of a training function and the layout
// each use reads it in (a different one costs a relayout), under a policy:
//
//  - reuse-forward (MNN-like): activations channel-packed along their last
//    dim, weights and inputs in their first forward reader's layout, every
//    reader reads that layout (transposed reads where the backward needs
//    them); index transforms are copies unless the layout happens to fit.
//  - explicit-transpose (TFLite-like): the same stored layouts, but every
//    reader reads its preferred layout (packed along the dim it reduces or
//    walks innermost), with a relayout kernel wherever that differs.
//  - fblayout: global, cost-driven selection over channel-packed and R-Tile
//    candidates and the composed layouts of views (docs/LayoutSelection.md).
//
// All three run through the same cost function, so their estimates compare.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_ANALYSIS_LAYOUTSELECTION_H
#define FBL_ANALYSIS_LAYOUTSELECTION_H

#include "fbl/CostModel/OpCost.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::fbl {

enum class LayoutPolicy { FBLayout, ReuseForward, ExplicitTranspose };
std::optional<LayoutPolicy> parseLayoutPolicy(StringRef name);
StringRef stringifyLayoutPolicy(LayoutPolicy policy);

/// The outcome of selection.
struct LayoutPlan {
  /// Layout each tensor value is stored in.
  llvm::DenseMap<Value, Attribute> valueLayout;
  /// Layout each tensor use reads (differs from the value's: a relayout).
  llvm::DenseMap<OpOperand *, Attribute> readLayout;
  /// Estimated time (ns) of the function's kernels under the plan.
  double cost = 0.0;
};

/// Chooses layouts for the single-block `func` under `policy`. Fails with a
/// diagnostic when a tensor fits no image or buffer of the target.
FailureOr<LayoutPlan> selectLayouts(func::FuncOp func, LayoutPolicy policy,
                                    OpCostModel &costs);

/// Estimated time (ns) of `func` as its types and ops are now: every op's
/// kernel in the layouts its types carry, relayouts, views for free.
double estimateCost(func::FuncOp func, OpCostModel &costs);

} // namespace mlir::fbl

#endif // FBL_ANALYSIS_LAYOUTSELECTION_H
