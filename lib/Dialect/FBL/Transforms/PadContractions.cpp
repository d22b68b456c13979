//===- PadContractions.cpp - fbl-pad-contractions -------------------------===//
//
// Contractions whose sizes are not whole texels padded into ones that are,
// so that they take a GEMM kernel. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

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
    // Each contraction to pad: its M, N and K loops and their sizes in
    // whole texels. The local-tiled GEMM takes ragged tiles itself, so
    // padding to its tile would only add copies.
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
      auto texels = [](int64_t size) {
        return static_cast<int64_t>(llvm::alignTo(size, 4));
      };
      SmallVector<int64_t> multiples = {texels(m), texels(n), texels(k)};
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
