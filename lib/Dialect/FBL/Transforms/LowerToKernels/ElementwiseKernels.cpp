//===- ElementwiseKernels.cpp - Generic linalg kernels --------------------===//
//
// The generic kernel of fbl-lower-to-kernels, for every linalg op that is
// not a GEMM (elementwise ops, broadcasts, reductions): one work-item per
// output texel (per element for buffers); each of the texel's four channels
// maps back to a logical output index (padding channels are written as
// zero), reduction loops run inside, inputs are read through their layouts,
// and the op's body is inlined.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "KernelLowerings.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::fbl;
using namespace mlir::fbl::kernels;

/// Lowers a linalg op on encoded tensors.
LogicalResult kernels::lowerLinalg(linalg::LinalgOp op, TargetAttr target,
                                   unsigned &counter) {
  if (op->getNumResults() != 1)
    return op.emitOpError("fbl-lower-to-kernels: ops with several results "
                          "are not supported");
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  for (Value v : op->getOperands())
    if (auto t = dyn_cast<RankedTensorType>(v.getType()); t && !t.getEncoding())
      return op.emitOpError("fbl-lower-to-kernels: operand without a layout; "
                            "run fbl-select-layouts first");
  OpBuilder b(op);
  Location loc = op.getLoc();
  KernelBuilder kb(b, loc, target);
  Block &body = *op.getBlock();
  OpOperand *init = op.getDpsInitOperand(0);
  bool readsInit = op.payloadUsesValueFromOperand(init);
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

  std::string name = ("k" + Twine(counter++) + "_" +
                      op->getName().getStringRef().drop_front(7))
                         .str();
  kb.begin(name, resultType, gridFor(resultType));
  IRMapping scalars;
  for (Value v : captured)
    if (isa<RankedTensorType>(v.getType()))
      scalars.map(v, kb.inputHandle(kb.addInput(v)));
  LogicalResult status = success();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  AffineMap outMap = maps.back();

  kb.forEachOutputElement([&](ValueRange outIdx) -> Value {
    Addressing a{b, loc};
    SmallVector<Value> ivs(op.getNumLoops());
    for (auto [r, e] : llvm::enumerate(outMap.getResults()))
      ivs[cast<AffineDimExpr>(e).getPosition()] = outIdx[r];
    Type elem = resultType.getElementType();
    Value acc =
        readsInit
            ? a.load(kb.inputHandle(inputIndex[init->getOperandNumber()]),
                     outIdx)
            : Value(arith::ConstantOp::create(b, loc, b.getZeroAttr(elem)));
    // The loop nest over reduction dims, outermost first.
    std::function<Value(unsigned, Value)> nest = [&](unsigned d,
                                                     Value acc) -> Value {
      while (d < ivs.size() && iters[d] != utils::IteratorType::reduction)
        ++d;
      if (d < ivs.size()) {
        Value step = a.c(1), end = a.c(ranges[d]), begin = a.c(0);
        auto loop =
            scf::ForOp::create(b, loc, begin, end, step, ValueRange{acc});
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(loop.getBody());
        ivs[d] = loop.getInductionVar();
        Value next = nest(d + 1, loop.getRegionIterArg(0));
        scf::YieldOp::create(b, loc, next);
        return loop.getResult(0);
      }
      // Innermost: load the inputs and inline the body.
      IRMapping mapping = scalars;
      // Recomputes the values `user` reads from above the body.
      auto mapCaptured = [&](Operation &user, IRMapping &mapping) {
        for (Value operand : user.getOperands())
          if (!mapping.contains(operand) &&
              operand.getParentRegion() != &op->getRegion(0) &&
              failed(cloneScalar(operand, kb, mapping))) {
            status = user.emitOpError("fbl-lower-to-kernels: cannot compute a "
                                      "captured value inside the kernel");
            return failure();
          }
        return success();
      };
      for (OpOperand *in : op.getDpsInputOperands()) {
        BlockArgument arg = body.getArgument(in->getOperandNumber());
        if (!isa<RankedTensorType>(in->get().getType())) {
          FailureOr<Value> s = cloneScalar(in->get(), kb, mapping);
          if (failed(s)) {
            status = op.emitOpError("fbl-lower-to-kernels: cannot compute a "
                                    "scalar operand inside the kernel");
            return acc;
          }
          mapping.map(arg, *s);
          continue;
        }
        AffineMap m = op.getMatchingIndexingMap(in);
        SmallVector<Value> idx;
        for (AffineExpr e : m.getResults())
          idx.push_back(ivs[cast<AffineDimExpr>(e).getPosition()]);
        mapping.map(
            arg,
            a.load(kb.inputHandle(inputIndex[in->getOperandNumber()]), idx));
      }
      mapping.map(body.getArgument(init->getOperandNumber()), acc);
      for (Operation &inner : body.without_terminator()) {
        if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
          mapping.map(index.getResult(), ivs[index.getDim()]);
          continue;
        }
        if (auto extract = dyn_cast<tensor::ExtractOp>(inner);
            extract && scalars.contains(extract.getTensor())) {
          SmallVector<Value> idx;
          for (Value i : extract.getIndices())
            idx.push_back(mapping.lookupOrDefault(i));
          mapping.map(extract.getResult(),
                      a.load(scalars.lookup(extract.getTensor()), idx));
          continue;
        }
        if (failed(mapCaptured(inner, mapping)))
          return acc;
        b.clone(inner, mapping);
      }
      // The yield may return a value from above (a constant after fusion).
      Operation *yield = body.getTerminator();
      if (failed(mapCaptured(*yield, mapping)))
        return acc;
      return mapping.lookupOrDefault(yield->getOperand(0));
    };
    return nest(0, acc);
  });
  DispatchOp dispatch = kb.end();
  if (failed(status))
    return failure();
  op->getResult(0).replaceAllUsesWith(dispatch.getResult(0));
  op->erase();
  return success();
}
