//===- ActivityAnalysis.cpp - Which values need derivatives ---------------===//
//
// Two sweeps over the top-level block: forward from the differentiated
// arguments (varied), backward from the loss (useful). Values an op's
// regions capture from above count as its operands, so a gather from a
// table inside a linalg body makes the result depend on the table.
//
//===----------------------------------------------------------------------===//

#include "fbl/Analysis/ActivityAnalysis.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace mlir::fbl;

bool mlir::fbl::isDifferentiableType(Type type) {
  if (auto shaped = dyn_cast<RankedTensorType>(type))
    return isa<FloatType>(shaped.getElementType());
  return isa<FloatType>(type);
}

SmallVector<Value> mlir::fbl::getOperandsAndCapturedValues(Operation *op) {
  SmallVector<Value> inputs(op->getOperands());
  if (op->getNumRegions()) {
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    inputs.append(captured.begin(), captured.end());
  }
  return inputs;
}

ActivityAnalysis::ActivityAnalysis(func::FuncOp func,
                                   ArrayRef<unsigned> wrtArgs, Value target) {
  Block &body = func.getBody().front();
  for (unsigned i : wrtArgs)
    varied.insert(body.getArgument(i));
  for (Operation &op : body) {
    if (llvm::any_of(getOperandsAndCapturedValues(&op),
                     [&](Value v) { return varied.contains(v); }))
      for (Value r : op.getResults())
        varied.insert(r);
  }
  useful.insert(target);
  for (Operation &op : llvm::reverse(body)) {
    if (llvm::any_of(op.getResults(),
                     [&](Value v) { return useful.contains(v); }))
      for (Value in : getOperandsAndCapturedValues(&op))
        useful.insert(in);
  }
}

bool ActivityAnalysis::isActive(Value v) const {
  return varied.contains(v) && useful.contains(v) &&
         isDifferentiableType(v.getType());
}

bool ActivityAnalysis::isActive(Operation *op) const {
  return llvm::any_of(op->getResults(), [&](Value v) { return isActive(v); });
}
