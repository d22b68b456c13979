//===- MaterializeRTile.cpp - The fbl-materialize-rtile pass --------------===//
//
// Class IV ops read the forward tensors they share with the forward pass as
// R-Tiles and record the kernel configuration that reads them: which loops
// are reduced, the 4x4 register tile, the reduction loop walked 4 at a time,
// and what each operand read delivers (whole tiles, whole texels, or single
// channels when the kernel walks the packed dim one element at a time).
//
//===----------------------------------------------------------------------===//

#include "fbl/Analysis/OpClassification.h"
#include "fbl/CostModel/KernelPlan.h"
#include "fbl/Dialect/FBL/IR/FBLOps.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::fbl {
#define GEN_PASS_DEF_FBLMATERIALIZERTILEPASS
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"
} // namespace mlir::fbl

using namespace mlir;
using namespace mlir::fbl;

/// A 4x4 R-Tile packed along the last dim that fits `target`, or null.
static Attribute rtileFor(RankedTensorType type, TargetAttr target) {
  return fitEncodingToLimits(
      type,
      RTileLayoutAttr::get(type.getContext(), {4, 4}, type.getRank() - 1,
                           IntraTileOrder::RowsOnX, InterTileOrder::RowMajor,
                           BatchFold::Y),
      target.getLimits());
}

namespace {
struct MaterializeRTilePass
    : public mlir::fbl::impl::FBLMaterializeRTilePassBase<
          MaterializeRTilePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TargetAttr targetAttr = TargetAttr::lookupOrEmitError(module);
    if (!targetAttr)
      return signalPassFailure();
    for (auto func : module.getOps<func::FuncOp>()) {
      FailureOr<OpClassification> classes =
          OpClassification::fromAttributes(func);
      if (failed(classes))
        continue;
      for (Operation *op : classes->getOps()) {
        const OpInfo *info = classes->lookup(op);
        auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
        if (!linalgOp || info->opClass != OpClass::IV)
          continue;
        if (failed(materialize(linalgOp, *info, targetAttr)))
          return signalPassFailure();
      }
    }
  }

  /// Puts the operands `op` shares with the forward pass on R-Tiles and
  /// records its kernel configuration.
  LogicalResult materialize(linalg::LinalgOp op, const OpInfo &info,
                            TargetAttr targetAttr) {
    Builder b(op.getContext());
    for (const ReuseEdge &edge : info.reuse) {
      unsigned n = edge.operandNumber;
      Value v = op->getOperand(n);
      auto type = cast<RankedTensorType>(v.getType());
      if (getLayoutEncoding(type))
        continue; // laid out by selection
      if (type.getRank() < 2)
        return op->emitOpError("fbl-materialize-rtile: class IV operand #")
               << n << " of type " << type
               << " has fewer than 2 dims and cannot be R-Tiled";
      Attribute rtile = rtileFor(type, targetAttr);
      if (!rtile)
        return op->emitOpError("fbl-materialize-rtile: class IV operand #")
               << n << " of type " << type
               << " fits no R-Tile image of target '" << targetAttr.getName()
               << "'";
      if (failed(setTensorEncoding(v, rtile)))
        return op->emitOpError("fbl-materialize-rtile: operand #")
               << n << " is a constant whose data is not in the module";
    }
    // The kernel configuration.
    SmallVector<int64_t> reduced;
    int64_t unrolled = -1;
    for (auto [i, it] : llvm::enumerate(op.getIteratorTypesArray()))
      if (it == utils::IteratorType::reduction) {
        reduced.push_back(i);
        unrolled = i;
      }
    SmallVector<Attribute> reads;
    // The kernel the op gets: operands not laid out yet are taken as
    // channel-packed along their last dim, as selection starts them.
    SmallVector<Attribute> layouts;
    for (Value v : op->getOperands()) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      Attribute enc = type ? type.getEncoding() : Attribute();
      if (type && !enc && type.getRank() > 0)
        enc = ChannelPackedLayoutAttr::get(op.getContext(), type.getRank() - 1,
                                           BatchFold::Y);
      layouts.push_back(enc);
    }
    bool gemm = matchGemm(op, layouts).has_value();
    for (OpOperand &operand : op->getOpOperands()) {
      auto enc = getLayoutEncoding(operand.get().getType());
      StringRef kind = "unassigned";
      if (!isa<RankedTensorType>(operand.get().getType())) {
        kind = "scalar";
      } else if (op.isDpsInit(&operand) &&
                 !op.payloadUsesValueFromOperand(&operand)) {
        kind = "written";
      } else if (enc) {
        // GEMM kernels read whole texels (4x4 tiles from an R-Tile); the
        // generic kernel reads one element per fetch.
        kind = !gemm                       ? "channels"
               : isa<RTileLayoutAttr>(enc) ? "tiles"
                                           : "texels";
      }
      reads.push_back(b.getStringAttr(kind));
    }
    op->setAttr(
        FBLDialect::getKernelAttrName(),
        b.getDictionaryAttr(
            {b.getNamedAttr("register_tile", b.getDenseI64ArrayAttr({4, 4})),
             b.getNamedAttr("reduced_loops", b.getDenseI64ArrayAttr(reduced)),
             b.getNamedAttr("unrolled_loop", b.getI64IntegerAttr(unrolled)),
             b.getNamedAttr("reads", b.getArrayAttr(reads))}));
    return success();
  }
};
} // namespace
