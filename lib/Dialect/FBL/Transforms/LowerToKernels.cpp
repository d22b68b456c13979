//===- LowerToKernels.cpp - The fbl-lower-to-kernels pass -----------------===//
//
// Turns each computing op of a laid-out function into an fbl.dispatch whose
// body is explicit: work-item ids, address arithmetic derived from the
// layout algebra's factor terms, texel and element accesses, and the op's
// scalar code. The emitters only print it.
//
// This file is the pass driver: it resolves the target, walks the top-level
// ops of each laid-out function and hands each to its family's lowering
// (LowerToKernels/):
//  - contractions: the register- or local-tiled GEMM kernels
//    (ContractionKernels.cpp), else the generic kernel;
//  - other linalg ops: the generic per-texel kernel (ElementwiseKernels.cpp);
//  - fbl.relayout, slices, tensor.insert and constant tensors: copy kernels
//    (CopyKernels.cpp);
//  - scf.for scatter loops over buffers: in-place kernels
//    (ScatterKernels.cpp).
// Scalars the kernels use (constants, bias corrections computed from a step
// count) are recomputed inside each kernel that needs them. cf.assert is a
// host-side input check: kernels do not evaluate it; before lowering, the
// valid range of each integer input is recorded (InputRanges.cpp) for the
// runtime's check before upload.
//
//===----------------------------------------------------------------------===//

#include "LowerToKernels/KernelLowerings.h"

#include "fbl/Autodiff/IndexMaps.h"
#include "fbl/CostModel/OpCost.h"
#include "fbl/Dialect/FBL/IR/FBLOps.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::fbl {
#define GEN_PASS_DEF_FBLLOWERTOKERNELSPASS
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"
} // namespace mlir::fbl

using namespace mlir;
using namespace mlir::fbl;
using namespace mlir::fbl::kernels;

/// Lowers `op`, a top-level op of a laid-out function, with its family's
/// lowering.
static LogicalResult lowerOp(Operation *op, TargetAttr target,
                             unsigned &counter) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    FailureOr<DispatchOp> gemm = lowerContraction(linalgOp, target, counter);
    if (failed(gemm))
      return lowerLinalg(linalgOp, target, counter);
    linalgOp->getResult(0).replaceAllUsesWith(gemm->getResult(0));
    linalgOp->erase();
    return success();
  }
  if (auto relayout = dyn_cast<RelayoutOp>(op)) {
    lowerRelayout(relayout, target, counter);
    return success();
  }
  if (isa<tensor::ExtractSliceOp, tensor::InsertSliceOp>(op))
    return lowerSlice(op, target, counter);
  if (auto insert = dyn_cast<tensor::InsertOp>(op))
    return lowerInsert(insert, target, counter);
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return lowerConstant(constant, target, counter);
  return lowerScatterLoop(cast<scf::ForOp>(op), target, counter);
}

/// The cost model's estimate as `fbl.estimate`.
static DictionaryAttr estimateAttr(MLIRContext *ctx,
                                   const ::fbl::cost::KernelCost &c) {
  Builder b(ctx);
  return b.getDictionaryAttr(
      {b.getNamedAttr("fetches", b.getI64IntegerAttr(c.fetches)),
       b.getNamedAttr("misses", b.getI64IntegerAttr(c.misses)),
       b.getNamedAttr("writes", b.getI64IntegerAttr(c.writes)),
       b.getNamedAttr("multiplies", b.getI64IntegerAttr(c.multiplies)),
       b.getNamedAttr("item_accesses", b.getF64FloatAttr(c.itemAccesses)),
       b.getNamedAttr("time_ns", b.getF64FloatAttr(c.timeNs))});
}

namespace {
struct LowerToKernelsPass
    : public mlir::fbl::impl::FBLLowerToKernelsPassBase<LowerToKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TargetAttr targetAttr = TargetAttr::lookupOrEmitError(module);
    if (!targetAttr)
      return signalPassFailure();
    // Only laid-out functions are lowered. The kernels index each operand by
    // loop ids: refuse any other map before lowering anything.
    SmallVector<func::FuncOp> funcs;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() &&
          llvm::any_of(func.getArgumentTypes(),
                       [](Type t) { return getLayoutEncoding(t) != nullptr; }))
        funcs.push_back(func);
    for (func::FuncOp func : funcs)
      if (failed(verifyProjectedPermutationMaps(func, "fbl-lower-to-kernels",
                                                "lower")))
        return signalPassFailure();
    unsigned counter = 0;
    OpCostModel costs(targetAttr);
    for (func::FuncOp func : funcs) {
      recordInputRanges(func);
      SmallVector<Operation *> work;
      for (Operation &op : func.getBody().front())
        if (isa<linalg::LinalgOp, RelayoutOp, scf::ForOp,
                tensor::ExtractSliceOp, tensor::InsertSliceOp,
                tensor::InsertOp>(op) ||
            (isa<arith::ConstantOp>(op) &&
             getLayoutEncoding(op.getResult(0).getType())))
          work.push_back(&op);
      for (Operation *op : work) {
        // The cost model's estimate of the kernel, asked before the op is
        // gone, goes on the dispatch that replaces it.
        ::fbl::cost::KernelCost estimate =
            isa<RelayoutOp>(op)
                ? costs.relayoutCost(
                      cast<RelayoutOp>(op).getType(),
                      cast<RelayoutOp>(op).getSource().getType().getEncoding(),
                      cast<RelayoutOp>(op).getType().getEncoding())
                : costs.opCost(op);
        Operation *next = op->getNextNode();
        if (failed(lowerOp(op, targetAttr, counter)))
          return signalPassFailure();
        if (auto dispatch = dyn_cast_or_null<DispatchOp>(next->getPrevNode()))
          dispatch->setAttr(FBLDialect::getEstimateAttrName(),
                            estimateAttr(dispatch.getContext(), estimate));
      }
      // Assertions became input ranges the runtime checks on the host
      // (recordInputRanges); kernels do not evaluate them.
      Block &block = func.getBody().front();
      for (Operation &op : llvm::make_early_inc_range(block))
        if (isa<cf::AssertOp>(op))
          op.erase();
      // Scalar code and tensors only kernels used are dead now.
      for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
        if (!isa<DispatchOp>(op) && isOpTriviallyDead(&op))
          op.erase();
    }
  }
};
} // namespace
