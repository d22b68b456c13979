//===- PadContractions.cpp - fbl-pad-contractions -------------------------===//
//
// Contractions whose sizes are not whole texels padded into ones that are,
// so that they take a GEMM kernel. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "fbl/Dialect/FBL/IR/FBLAttrs.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fbl {
#define GEN_PASS_DEF_FBLPADCONTRACTIONSPASS
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"
} // namespace mlir::fbl

using namespace mlir;
using namespace mlir::fbl;

namespace {

/// `size` rounded up to `tile` where that adds at most an eighth, else to
/// a multiple of 4.
int64_t paddedSize(int64_t size, int64_t tile) {
  int64_t toTile = llvm::alignTo(size, tile);
  if (tile > 0 && (toTile - size) * 8 <= size)
    return toTile;
  return llvm::alignTo(size, 4);
}

/// The sides of the local-tiled GEMM's tile of C and its k slice for a
/// GEMM of `outputs` elements of C, or whole texels (4) without one.
std::pair<int64_t, int64_t> tileFor(TargetAttr target, int64_t outputs) {
  if (!target || !target.getLocalTiledGemm())
    return {4, 4};
  ::fbl::target::GemmTile t = target.getGemmTileFor(outputs);
  return {t.tile(), t.localK};
}

struct FBLPadContractionsPass
    : mlir::fbl::impl::FBLPadContractionsPassBase<FBLPadContractionsPass> {
  using FBLPadContractionsPassBase::FBLPadContractionsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (minVolume < 0) {
      module.emitError("fbl-pad-contractions: min-volume=")
          << static_cast<int64_t>(minVolume)
          << " is not valid; it must be 0 or more";
      return signalPassFailure();
    }
    TargetAttr target = TargetAttr::lookup(module);
    // Each contraction to pad: its M, N and K loops and the size each is
    // padded to a multiple of (the local GEMM tile for the size, K to its
    // slice; whole texels without one).
    struct Candidate {
      linalg::LinalgOp op;
      SmallVector<int64_t> loops, multiples;
    };
    SmallVector<Candidate> candidates;
    module.walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics() || op.hasDynamicShape() ||
          op->getParentOfType<linalg::LinalgOp>() ||
          !linalg::isaContractionOpInterface(op))
        return;
      FailureOr<linalg::ContractionDimensions> dims =
          linalg::inferContractionDims(op);
      if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
          dims->k.size() != 1)
        return;
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      int64_t m = ranges[dims->m[0]], n = ranges[dims->n[0]],
              k = ranges[dims->k[0]];
      if (m * n * k < minVolume)
        return;
      auto [tile, localK] = tileFor(target, m * n);
      SmallVector<int64_t> multiples = {paddedSize(m, tile),
                                        paddedSize(n, tile),
                                        paddedSize(k, localK)};
      // Whole texels and the local tile out of reach (or none): nothing
      // to gain.
      if (multiples == SmallVector<int64_t>{m, n, k})
        return;
      candidates.push_back(
          {op, {dims->m[0], dims->n[0], dims->k[0]}, multiples});
    });

    IRRewriter rewriter(&getContext());
    SmallVector<Operation *> pads;
    for (auto &[op, loops, multiples] : candidates) {
      linalg::LinalgPaddingOptions options;
      options.setPaddingDimensions(loops);
      options.setPadToMultipleOf(multiples);
      SmallVector<Attribute> zeros;
      for (OpOperand &operand : op->getOpOperands())
        zeros.push_back(rewriter.getZeroAttr(
            getElementTypeOrSelf(operand.get().getType())));
      options.setPaddingValues(zeros);
      options.copyBackOp = linalg::LinalgPaddingOptions::CopyBackOp::None;
      rewriter.setInsertionPoint(op);
      linalg::LinalgOp padded;
      SmallVector<Value> replacements;
      SmallVector<tensor::PadOp> padOps;
      if (failed(linalg::rewriteAsPaddedOp(rewriter, op, options, padded,
                                           replacements, padOps))) {
        op->emitError("fbl-pad-contractions: cannot pad this contraction");
        return signalPassFailure();
      }
      rewriter.replaceOp(op, replacements);
      for (tensor::PadOp pad : padOps)
        pads.push_back(pad);
    }
    if (pads.empty())
      return;
    // The pads as the rest of fbl takes them: a fill and an inserted slice.
    RewritePatternSet patterns(&getContext());
    linalg::populateDecomposePadPatterns(patterns);
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    if (failed(applyOpPatternsGreedily(pads, std::move(patterns), config)))
      return signalPassFailure();
  }
};

} // namespace
