//===- ElementwiseKernels.cpp - Generic linalg kernels --------------------===//
//
// The generic kernel of fbl-lower-to-kernels, for every linalg op that is
// not a GEMM (elementwise ops, broadcasts, reductions): one work-item per
// output texel (per element for buffers) computing the texel's four channels
// together (padding channels are written as zero); the reduction nest runs
// once with an accumulator per channel, and each input is fetched as the
// kernel plan (fbl/CostModel/KernelPlan.h) decided: a whole texel for the 4
// channels when it is packed along the output's packed loop, a whole texel
// for 4 iterations of the innermost reduction loop when packed along that,
// once before the nest when no reduction loop indexes it. The op's body is
// inlined per channel and iteration, in the op's order of iterations. An
// elementwise op with several results of one type (fbl-fuse-multi-output)
// is one kernel that stores each texel to all of its outputs.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "KernelLowerings.h"

#include "fbl/CostModel/KernelPlan.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::fbl;
using namespace mlir::fbl::kernels;

/// Lowers a linalg op on encoded tensors.
LogicalResult kernels::lowerLinalg(linalg::LinalgOp op, TargetAttr target,
                                   unsigned &counter) {
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  // Several results (fbl-fuse-multi-output): one kernel writes all of them
  // at the same places.
  unsigned numResults = op->getNumResults();
  if (numResults > 1 && !writesResultsTogether(op))
    return op.emitOpError("fbl-lower-to-kernels: an op with several results "
                          "needs parallel loops, one result type and map, "
                          "and inits it does not read");
  for (Value v : op->getOperands())
    if (auto t = dyn_cast<RankedTensorType>(v.getType()); t && !t.getEncoding())
      return op.emitOpError("fbl-lower-to-kernels: operand without a layout; "
                            "run fbl-select-layouts first");
  OpBuilder b(op);
  Location loc = op.getLoc();
  KernelBuilder kb(b, loc, target);
  OpOperand *init = op.getDpsInitOperand(0);
  // An init filled with a constant is not read: the accumulators start at it.
  TypedAttr initValue = initConstant(op);
  bool readsInit = op.payloadUsesValueFromOperand(init) && !initValue;
  // Kernel inputs: tensor inputs, the init when read, captured tensors, and
  // tensors that captured or operand scalars read.
  SmallVector<int> inputIndex(op->getNumOperands(), -1);
  for (OpOperand *in : op.getDpsInputOperands())
    if (isa<RankedTensorType>(in->get().getType()))
      inputIndex[in->getOperandNumber()] = kb.addInput(in->get());
  if (readsInit)
    inputIndex[init->getOperandNumber()] = kb.addInput(init->get());
  llvm::DenseSet<Value> seen;
  llvm::SetVector<Value> captured =
      addCapturedInputs(op->getRegion(0), kb, seen);
  for (OpOperand *in : op.getDpsInputOperands())
    if (!isa<RankedTensorType>(in->get().getType()))
      collectScalarInputs(in->get(), kb, seen);

  // The kernel and its reads as planned for these layouts (the cost model
  // asks the same plan).
  std::optional<::fbl::cost::KernelShape> plan = planLinalgKernel(
      op, encodingsOf(op->getOperands()), resultType.getEncoding(), target);
  if (!plan || (plan->kind != ::fbl::cost::KernelKind::PerTexel &&
                plan->kind != ::fbl::cost::KernelKind::PerElement))
    return op.emitOpError("fbl-lower-to-kernels: no per-texel kernel plan");
  SmallVector<unsigned> planInputs;
  SmallVector<int> planIndex(op->getNumOperands(), -1);
  for (auto [i, operand] : llvm::enumerate(plan->inputOperands)) {
    planInputs.push_back(inputIndex[operand]);
    planIndex[operand] = i;
  }

  std::string name = ("k" + Twine(counter++) + "_" +
                      op->getName().getStringRef().drop_front(7))
                         .str();
  kb.begin(name, SmallVector<RankedTensorType>(numResults, resultType),
           gridFor(resultType));
  IRMapping scalars;
  for (Value v : captured)
    if (isa<RankedTensorType>(v.getType()))
      scalars.map(v, kb.inputHandle(kb.addInput(v)));

  // One lane's step of the body: the inputs' values given, the body inlined.
  auto laneBody = [&](ValueRange ivs, ValueRange values, ValueRange acc,
                      IRMapping &shared) {
    return inlineBody(
        op, kb, ivs,
        [&](OpOperand &in) { return values[planIndex[in.getOperandNumber()]]; },
        acc, scalars, shared);
  };
  std::optional<unsigned> initInput;
  if (readsInit)
    initInput = inputIndex[init->getOperandNumber()];
  LogicalResult status =
      emitPlannedKernel(kb, *plan, planInputs, initInput, initValue, laneBody);
  DispatchOp dispatch = kb.end();
  if (failed(status))
    return failure();
  op->replaceAllUsesWith(dispatch.getResults());
  op->erase();
  return success();
}
