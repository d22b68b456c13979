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
struct FuseElementwisePass
    : public mlir::fbl::impl::FBLFuseElementwisePassBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
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
