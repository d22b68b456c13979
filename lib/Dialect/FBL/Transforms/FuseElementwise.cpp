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
//
//===----------------------------------------------------------------------===//

#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
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
