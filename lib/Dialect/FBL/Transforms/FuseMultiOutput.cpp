//===- FuseMultiOutput.cpp - The fbl-fuse-multi-output pass ---------------===//
//
// Fuses an elementwise producer whose result is read again later into its
// elementwise consumer, keeping the result as one more output of the fused
// op: one kernel then computes both and writes both, where two kernels
// wrote the producer's result and read it back. fbl-fuse-elementwise leaves
// such producers alone (it fuses single uses only, before layouts exist);
// this runs after layout selection, so it fuses only where all results
// share one type and layout - the generic kernel stores each texel to every
// output at the same place. AdamW's moment updates and the parameter update
// that reads them become one kernel this way.
//
//===----------------------------------------------------------------------===//

#include "fbl/CostModel/KernelPlan.h"
#include "fbl/Dialect/FBL/IR/FBLOps.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::fbl {
#define GEN_PASS_DEF_FBLFUSEMULTIOUTPUTPASS
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"
} // namespace mlir::fbl

using namespace mlir;
using namespace mlir::fbl;

/// An elementwise op the generic kernel writes several outputs of
/// (writesResultsTogether), over its results' whole iteration space, with a
/// layout.
static bool isElementwise(linalg::GenericOp op) {
  if (!writesResultsTogether(op) ||
      !op.getIndexingMapMatchingResult(op->getResult(0)).isIdentity())
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return type && type.getEncoding();
}

/// Whether `operand`'s producer may be fused into its owner, keeping the
/// producer's results that are read elsewhere; `epilogues` are what GEMM
/// kernels compute.
static bool shouldFuse(OpOperand &operand, GemmEpilogueKinds epilogues) {
  auto consumer = dyn_cast<linalg::GenericOp>(operand.getOwner());
  auto producer = operand.get().getDefiningOp<linalg::GenericOp>();
  if (!consumer || !producer || producer->getBlock() != consumer->getBlock())
    return false;
  if (!isElementwise(consumer) || !isElementwise(producer) ||
      producer->getResult(0).getType() != consumer->getResult(0).getType())
    return false;
  if (!consumer.getMatchingIndexingMap(&operand).isIdentity() ||
      !linalg::areElementwiseOpsFusable(&operand))
    return false;
  // A GEMM kernel computing either as its only reader's epilogue saves
  // more; one that stores its result for other readers too saves about as
  // much as this fusion, which goes first.
  epilogues.besideOtherReaders = false;
  if (isGemmEpilogue(consumer, epilogues) ||
      isGemmEpilogue(producer, epilogues))
    return false;
  // Fusion goes through one operand: a consumer reading a second result of
  // the producer would keep reading it from the producer's kernel.
  if (llvm::count_if(consumer->getOperands(), [&](Value v) {
        return v.getDefiningOp() == producer.getOperation();
      }) != 1)
    return false;
  // Its kernel takes both ops' inputs and outputs: no more than the target
  // lets one kernel take (counted before shared inputs are deduplicated).
  int64_t reads = producer.getNumDpsInputs() + consumer.getNumDpsInputs() - 1;
  int64_t writes = producer->getNumResults() + consumer->getNumResults();
  ::fbl::target::KernelArguments fused =
      DispatchOp::isBufferArgument(consumer->getResult(0).getType())
          ? ::fbl::target::KernelArguments{0, 0, reads + writes}
          : ::fbl::target::KernelArguments{reads, writes, 0};
  if (!::fbl::target::exceededArguments(
           fused, TargetAttr::lookupKernelArguments(consumer))
           .empty())
    return false;
  // The fused op replaces the producer where the consumer is: every other
  // reader must come after it.
  for (Value result : producer->getResults())
    for (Operation *user : result.getUsers())
      if (user != consumer.getOperation() &&
          (user->getBlock() != consumer->getBlock() ||
           !consumer->isBeforeInBlock(user)))
        return false;
  return true;
}

/// Fuses one producer into `consumer`; returns the fused op, or null.
static Operation *fuseOneProducer(RewriterBase &rewriter,
                                  linalg::GenericOp consumer,
                                  GemmEpilogueKinds epilogues) {
  for (OpOperand *operand : consumer.getDpsInputOperands()) {
    if (!shouldFuse(*operand, epilogues))
      continue;
    Operation *producer = operand->get().getDefiningOp();
    rewriter.setInsertionPoint(consumer);
    FailureOr<linalg::ElementwiseOpFusionResult> fused =
        linalg::fuseElementwiseOps(rewriter, operand);
    if (failed(fused))
      continue;
    for (auto [original, replacement] : fused->replacements)
      rewriter.replaceUsesWithIf(original, replacement, [&](OpOperand &use) {
        return use.getOwner() != consumer.getOperation() &&
               use.getOwner() != fused->fusedOp;
      });
    rewriter.eraseOp(consumer);
    if (producer->use_empty())
      rewriter.eraseOp(producer);
    // Both ops may read the same tensor (AdamW's moments both read the
    // gradient): the kernel then fetches it once.
    FailureOr<linalg::GenericOp> deduplicated =
        linalg::deduplicateOperandsAndRemoveDeadResults(
            rewriter, cast<linalg::GenericOp>(fused->fusedOp),
            /*removeOutputs=*/false);
    return succeeded(deduplicated) ? deduplicated->getOperation()
                                   : fused->fusedOp;
  }
  return nullptr;
}

namespace {
struct FuseMultiOutputPass
    : public mlir::fbl::impl::FBLFuseMultiOutputPassBase<FuseMultiOutputPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<GemmEpilogueKinds> epilogues = GemmEpilogueKinds::fromOption(
        gemmEpilogues, getOperation(), "fbl-fuse-multi-output");
    if (failed(epilogues))
      return signalPassFailure();
    IRRewriter rewriter(&getContext());
    getOperation().walk([&](func::FuncOp func) {
      if (func.isExternal())
        return;
      // In order: a consumer's producers come before it, so erasing them
      // never touches what is left to visit. A fused op may take in its next
      // producer.
      Block &block = func.getBody().front();
      for (Operation *op = &block.front(); op;) {
        Operation *next = op->getNextNode();
        auto consumer = dyn_cast<linalg::GenericOp>(op);
        while (consumer)
          consumer = dyn_cast_or_null<linalg::GenericOp>(
              fuseOneProducer(rewriter, consumer, *epilogues));
        op = next;
      }
    });
  }
};
} // namespace
