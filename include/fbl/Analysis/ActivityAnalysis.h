//===- ActivityAnalysis.h - Which values need derivatives -------*- C++ -*-===//
//
// A value is active when it depends on a differentiated argument (varied)
// and the loss depends on it (useful), and it holds floats. Only active
// values get adjoints; everything else is primal-only code.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_ANALYSIS_ACTIVITYANALYSIS_H
#define FBL_ANALYSIS_ACTIVITYANALYSIS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::fbl {

class ActivityAnalysis {
public:
  /// Analyzes the single-block `func` for derivatives of `target` (a value
  /// of the function's top-level block) with respect to `wrtArgs`.
  ActivityAnalysis(func::FuncOp func, ArrayRef<unsigned> wrtArgs, Value target);

  bool isVaried(Value v) const { return varied.contains(v); }
  bool isUseful(Value v) const { return useful.contains(v); }
  /// Varied, useful and of a float (or float tensor) type.
  bool isActive(Value v) const;
  /// True when any result of `op` is active.
  bool isActive(Operation *op) const;

private:
  llvm::DenseSet<Value> varied;
  llvm::DenseSet<Value> useful;
};

/// True for float scalars and ranked tensors of floats.
bool isDifferentiableType(Type type);

/// The operands of `op` and the values its regions use from above: all the
/// values its results depend on.
SmallVector<Value> getOperandsAndCapturedValues(Operation *op);

} // namespace mlir::fbl

#endif // FBL_ANALYSIS_ACTIVITYANALYSIS_H
