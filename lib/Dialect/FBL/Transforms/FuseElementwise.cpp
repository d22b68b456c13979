//===- FuseElementwise.cpp - The fbl-fuse-elementwise pass ----------------===//
//
// Fuses chains of elementwise linalg ops into their consumers so each chain
// becomes one kernel, using upstream linalg's producer-consumer fusion with a
// control that keeps what layout selection and the GEMM kernel need:
//  - contractions are never a fusion consumer (their body stays acc + a * b,
//    which the register-tiled GEMM kernel requires);
//  - a producer is fused only into its single user, so values read twice
//    (forward activations the backward pass re-reads) stay materialized and
//    nothing is computed twice.
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
  return fusedOperand->get().hasOneUse();
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

struct FuseElementwisePass
    : public mlir::fbl::impl::FBLFuseElementwisePassBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<GeneralizeNamedElementwise>(&getContext());
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
