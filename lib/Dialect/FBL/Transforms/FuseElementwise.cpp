//===- FuseElementwise.cpp - The fbl-fuse-elementwise pass ----------------===//
//
// Fuses chains of elementwise linalg ops into their consumers so each chain
// becomes one kernel, using upstream linalg's producer-consumer fusion with a
// control that keeps what layout selection and the GEMM kernel need:
//  - contractions are never a fusion consumer (their body stays acc + a * b,
//    which the register-tiled GEMM kernel requires);
//  - a producer is fused only into its single user, so values read twice
//    (forward activations the backward pass re-reads) stay materialized;
//  - except where computing it again costs less than storing it: an
//    elementwise producer that reads at most one tensor of its own size
//    (the rest broadcast, as a softmax's `exp(x - max)` reads x and the
//    row maxima) and whose every reader fuses it is copied into each
//    reader, which then reads that tensor instead of the producer's result
//    (as many reads, and the producer's write and kernel saved). ViT-B/16's
//    attention wrote `exp(x - max)` (384 x 197 x 197) for the row sum and
//    the normalization to read back.
// Upstream fuses into linalg.generic consumers only, so named elementwise
// ops (the linalg.add that sums two gradient contributions, a residual
// add) are generalized first: ViT-B/16's full step had 97 such adds, each
// reading a broadcast or an elementwise result another kernel had written.
// Elementwise ops between a keepdim's unit-dim reshapes (a norm's
// `sum / D` on [N, 1] between the [N] reduction and its [N] broadcast) are
// collapsed to the reshapes' source first, so that the reshapes cancel and
// the op fuses; each reshape pair had become a relayout there and back.
//
//===----------------------------------------------------------------------===//

#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fbl {
#define GEN_PASS_DEF_FBLFUSEELEMENTWISEPASS
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"
} // namespace mlir::fbl

using namespace mlir;

/// Whether `fusedOperand`'s producer may be fused into its owner.
static bool shouldFuse(OpOperand *fusedOperand) {
  auto producer = fusedOperand->get().getDefiningOp<linalg::LinalgOp>();
  auto consumer = dyn_cast<linalg::LinalgOp>(fusedOperand->getOwner());
  if (!producer || !consumer)
    return false;
  if (linalg::isaContractionOpInterface(consumer))
    return false;
  // Fusion keeps a producer's result as a result of the fused op where the
  // producer reads its init (a sum over a unit dim folded into an
  // elementwise op): an op with several results that reads its inits, which
  // no kernel computes. Where something else reads a result of the
  // producer, it is kept too, indexed through the consumer's loops: over a
  // reduction loop that is no valid op.
  if (llvm::any_of(producer.getDpsInitsMutable(), [&](OpOperand &init) {
        return producer.payloadUsesValueFromOperand(&init);
      }))
    return false;
  if (consumer.getNumReductionLoops() > 0 &&
      llvm::any_of(producer->getResults(), [&](Value r) {
        return r != fusedOperand->get() && !r.use_empty();
      }))
    return false;
  return fusedOperand->get().hasOneUse();
}

/// Whether `op` is worth computing again in each of its readers rather
/// than once: an elementwise generic of one result that reads at most one
/// tensor of its result's size (a permutation map; others are broadcast
/// along some dim) and has no effects, each of whose readers is a generic in
/// its block that upstream fusion can fuse it into.
static bool cheaperToRecompute(linalg::GenericOp op) {
  if (op->getNumResults() != 1 ||
      op.getNumLoops() != op.getNumParallelLoops() ||
      op->getResult(0).hasOneUse() || op->getResult(0).use_empty())
    return false;
  unsigned whole = 0;
  for (OpOperand *in : op.getDpsInputOperands())
    if (isa<RankedTensorType>(in->get().getType()) &&
        op.getMatchingIndexingMap(in).isPermutation())
      ++whole;
  if (whole > 1)
    return false;
  // Computed again, an op with effects would have them again.
  if (llvm::any_of(op.getBlock()->without_terminator(),
                   [](Operation &inner) { return !isPure(&inner); }))
    return false;
  return llvm::all_of(op->getResult(0).getUses(), [&](OpOperand &use) {
    auto reader = dyn_cast<linalg::GenericOp>(use.getOwner());
    return reader && reader->getBlock() == op->getBlock() &&
           !linalg::isaContractionOpInterface(
               cast<linalg::LinalgOp>(reader.getOperation())) &&
           linalg::areElementwiseOpsFusable(&use);
  });
}

/// Whether `reshape` only adds or drops unit dims: every reassociation group
/// holds at most one dim larger than 1.
static bool onlyUnitDims(Operation *reshape) {
  SmallVector<ReassociationIndices> groups;
  ArrayRef<int64_t> shape;
  if (auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(reshape)) {
    groups = expand.getReassociationIndices();
    shape = expand.getResultType().getShape();
  } else if (auto collapse =
                 dyn_cast_or_null<tensor::CollapseShapeOp>(reshape)) {
    groups = collapse.getReassociationIndices();
    shape = collapse.getSrcType().getShape();
  } else {
    return false;
  }
  return llvm::all_of(groups, [&](const ReassociationIndices &group) {
    return llvm::count_if(group, [&](int64_t d) { return shape[d] != 1; }) <= 1;
  });
}

/// Whether the unit-dim reshape at `fusedOperand` may be folded into the
/// elementwise generic on its other side by collapsing the generic's loops.
static bool shouldCollapse(OpOperand *fusedOperand) {
  Operation *owner = fusedOperand->getOwner();
  Operation *producer = fusedOperand->get().getDefiningOp();
  auto elementwise = [](Operation *op) {
    auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
    return generic && generic.getNumLoops() == generic.getNumParallelLoops();
  };
  // An expand_shape into a generic, or a generic into a collapse_shape.
  return (elementwise(owner) && onlyUnitDims(producer)) ||
         (elementwise(producer) && onlyUnitDims(owner));
}

namespace {
/// A named elementwise op over whole operands (not a fill: fills stay the
/// GEMMs' zero inits; not a transpose or broadcast, which stay as the
/// importer wrote them) as the linalg.generic upstream fusion takes.
struct GeneralizeNamedElementwise
    : public OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (isa<linalg::GenericOp, linalg::FillOp>(op) ||
        !linalg::isElementwise(op) ||
        !llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }))
      return failure();
    return linalg::generalizeNamedOp(rewriter, op);
  }
};

/// Gives every reader but the first of a producer cheaperToRecompute finds
/// a copy of its own, which then fuses into that reader alone.
struct CopyCheapProducer : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!cheaperToRecompute(op))
      return failure();
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : op->getResult(0).getUses())
      uses.push_back(&use);
    for (OpOperand *use : llvm::drop_begin(uses)) {
      Operation *copy = rewriter.clone(*op);
      rewriter.modifyOpInPlace(use->getOwner(),
                               [&] { use->set(copy->getResult(0)); });
    }
    return success();
  }
};

struct FuseElementwisePass
    : public mlir::fbl::impl::FBLFuseElementwisePassBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<GeneralizeNamedElementwise, CopyCheapProducer>(&getContext());
    linalg::populateFoldReshapeOpsByCollapsingPatterns(patterns,
                                                       shouldCollapse);
    linalg::populateElementwiseOpsFusionPatterns(patterns, shouldFuse);
    // The function is one block: nothing for region simplification to do
    // but walk every region after every rewrite.
    if (failed(applyPatternsGreedily(
            getOperation(), std::move(patterns),
            GreedyRewriteConfig().setRegionSimplificationLevel(
                GreedySimplifyRegionLevel::Disabled))))
      return signalPassFailure();
  }
};
} // namespace
