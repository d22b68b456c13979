//===- SplitReductions.cpp - The fbl-split-reductions pass ----------------===//
//
// A reduction of a whole tensor to a scalar (a loss) lowers to a kernel of
// one work-item that walks every element. This pass splits it in two: a
// reduction over all but the outermost dim, parallel along it, into a
// vector of partial results, then a reduction of that vector into the
// scalar. The combiner must be associative and commutative with a neutral
// element (add, mul, max, min), so the split changes only the summation
// order.
//
//===----------------------------------------------------------------------===//

#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::fbl {
#define GEN_PASS_DEF_FBLSPLITREDUCTIONSPASS
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"
} // namespace mlir::fbl

using namespace mlir;

/// Splits `op` when it reduces every loop of at least `minElements`
/// iterations into one scalar with a single associative combiner.
static LogicalResult splitReduction(RewriterBase &rewriter,
                                    linalg::GenericOp op, int64_t minElements) {
  if (op.getNumDpsInits() != 1 || op.getNumLoops() < 2 ||
      op.getNumParallelLoops() != 0 || op.hasIndexSemantics())
    return failure();
  OpOperand *init = op.getDpsInitOperand(0);
  auto initType = dyn_cast<RankedTensorType>(init->get().getType());
  if (!initType || initType.getRank() != 0)
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamicShape(ranges) ||
      ShapedType::getNumElements(ranges) < minElements)
    return failure();
  SmallVector<Operation *> combiners;
  BlockArgument acc = op.getMatchingBlockArgument(init);
  if (!matchReduction({acc}, 0, combiners) || combiners.size() != 1)
    return failure();
  Operation *combiner = combiners.front();
  std::optional<TypedAttr> neutral = arith::getNeutralElement(combiner);
  if (!neutral || combiner->getNumOperands() != 2)
    return failure();
  unsigned accPos = combiner->getOperand(0) == acc ? 0 : 1;

  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  Type elem = initType.getElementType();
  // partial[d0] = combine over d1.. of the body, from the neutral element.
  auto partialType = RankedTensorType::get({ranges[0]}, elem);
  Value identity = arith::ConstantOp::create(rewriter, loc, *neutral);
  Value empty =
      tensor::EmptyOp::create(rewriter, loc, partialType.getShape(), elem);
  Value filled =
      linalg::FillOp::create(rewriter, loc, identity, empty).getResult(0);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  maps.back() = AffineMap::get(op.getNumLoops(), 0, getAffineDimExpr(0, ctx));
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  iters[0] = utils::IteratorType::parallel;
  auto partial = linalg::GenericOp::create(
      rewriter, loc, TypeRange{partialType}, op.getDpsInputs(),
      ValueRange{filled}, maps, iters);
  rewriter.cloneRegionBefore(op.getRegion(), partial.getRegion(),
                             partial.getRegion().end());
  // result = combine(init, partial[d0] over d0).
  AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
  AffineMap scalar = AffineMap::get(1, 0, {}, ctx);
  auto total = linalg::GenericOp::create(
      rewriter, loc, TypeRange{initType}, ValueRange{partial.getResult(0)},
      ValueRange{init->get()}, ArrayRef<AffineMap>{id, scalar},
      ArrayRef<utils::IteratorType>{utils::IteratorType::reduction},
      [&](OpBuilder &b, Location l, ValueRange args) {
        SmallVector<Value> operands(2);
        operands[accPos] = args[1];
        operands[1 - accPos] = args[0];
        Operation *c =
            b.create(l, combiner->getName().getIdentifier(), operands,
                     TypeRange{elem}, combiner->getAttrs());
        linalg::YieldOp::create(b, l, c->getResult(0));
      });
  rewriter.replaceOp(op, total.getResults());
  return success();
}

namespace {
struct SplitReductionsPass
    : public mlir::fbl::impl::FBLSplitReductionsPassBase<SplitReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops) {
      rewriter.setInsertionPoint(op);
      (void)splitReduction(rewriter, op, minElements);
    }
  }
};
} // namespace
