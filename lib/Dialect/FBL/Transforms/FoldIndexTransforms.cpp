//===- FoldIndexTransforms.cpp - The fbl-fold-index-transforms pass -------===//
//
// Index-transform elimination: a reshape or transpose whose result layout is
// the composed layout of its source's becomes a view (no kernel). One that
// is not keeps its data movement, but as an explicit fbl.relayout of the
// source into the layout whose view is the result, so every byte moved is an
// op the report counts.
//
//===----------------------------------------------------------------------===//

#include "fbl/Dialect/FBL/IR/FBLOps.h"
#include "fbl/Dialect/FBL/IR/IndexTransforms.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::fbl {
#define GEN_PASS_DEF_FBLFOLDINDEXTRANSFORMSPASS
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"
} // namespace mlir::fbl

using namespace mlir;
using namespace mlir::fbl;

/// Creates the view `op` performs, reading `source`, with result `type`.
static Value createView(OpBuilder &b, Operation *op, Value source,
                        RankedTensorType type) {
  Location loc = op->getLoc();
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return ReshapeViewOp::create(b, loc, type, source,
                                 expand.getReassociation());
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    return ReshapeViewOp::create(b, loc, type, source,
                                 collapse.getReassociation());
  SmallVector<int64_t> perm = *getIndexPermutation(op);
  return TransposeViewOp::create(b, loc, type, source,
                                 b.getDenseI64ArrayAttr(perm));
}

static bool sameAddressing(Attribute a, Attribute b, RankedTensorType type) {
  if (a == b)
    return true;
  auto la = cast<LayoutEncodingAttrInterface>(a);
  auto lb = cast<LayoutEncodingAttrInterface>(b);
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  return la.getLayout(type.getRank())
      .sameAddressing(lb.getLayout(type.getRank()), shape);
}

/// Rewrites one index transform on encoded tensors.
static LogicalResult foldIndexTransform(Operation *op) {
  Value source = op->getOperand(0);
  auto srcType = cast<RankedTensorType>(source.getType());
  auto dstType = cast<RankedTensorType>(op->getResult(0).getType());
  Attribute src = srcType.getEncoding(), dst = dstType.getEncoding();
  if (!getLayoutEncoding(srcType) || !getLayoutEncoding(dstType))
    return op->emitError("fbl-fold-index-transforms: expects encoded tensors "
                         "(run fbl-select-layouts first)");
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value result;
  Attribute composed = composedLayout(op, src);
  if (composed && sameAddressing(composed, dst, dstType)) {
    result = createView(b, op, source, dstType);
  } else if (Attribute inverse = inverseComposedLayout(op, dst)) {
    Value moved =
        RelayoutOp::create(b, loc, withEncoding(srcType, inverse), source);
    result = createView(b, op, moved, dstType);
  } else {
    // Row-major buffers reshape as views; transposes go through the
    // source's channel-packed layout.
    // The layout moved through must fit the target, as every chosen one
    // does (a vocabulary-sized table is spread over array layers).
    Attribute via = BufferLayoutAttr::get(op->getContext());
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op)) {
      via = ChannelPackedLayoutAttr::get(
          op->getContext(), std::max<int64_t>(srcType.getRank() - 1, 0),
          BatchFold::Y);
      if (TargetAttr target = TargetAttr::lookup(op))
        via = fitEncodingToLimits(srcType, via, target.getLimits());
      if (!via)
        return op->emitError("fbl-fold-index-transforms: no channel-packed "
                             "layout of ")
               << srcType << " fits the target";
    }
    Value moved =
        RelayoutOp::create(b, loc, withEncoding(srcType, via), source);
    Attribute viewed = composedLayout(op, via);
    if (!viewed)
      return op->emitError("fbl-fold-index-transforms: cannot express this "
                           "index transform on ")
             << srcType;
    Value view = createView(b, op, moved, withEncoding(dstType, viewed));
    result = RelayoutOp::create(b, loc, dstType, view);
  }
  // The op that now produces the result keeps the transform's phase and
  // class (relayouts before it are counted as relayouts).
  for (StringRef name :
       {FBLDialect::getPhaseAttrName(), FBLDialect::getClassAttrName()})
    if (Attribute a = op->getAttr(name))
      result.getDefiningOp()->setAttr(name, a);
  op->getResult(0).replaceAllUsesWith(result);
  // The init of a transpose is dead now.
  SmallVector<Value> inits;
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
    inits.append(dps.getDpsInits().begin(), dps.getDpsInits().end());
  op->erase();
  for (Value init : inits)
    if (Operation *def = init.getDefiningOp())
      if (def->use_empty() && isa<tensor::EmptyOp>(def))
        def->erase();
  return success();
}

namespace {
struct FoldIndexTransformsPass
    : public mlir::fbl::impl::FBLFoldIndexTransformsPassBase<
          FoldIndexTransformsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> transforms;
    getOperation().walk([&](Operation *op) {
      if (isIndexTransform(op) && getLayoutEncoding(op->getResult(0).getType()))
        transforms.push_back(op);
    });
    for (Operation *op : transforms)
      if (failed(foldIndexTransform(op)))
        return signalPassFailure();
  }
};
} // namespace
