//===- PlanMemory.cpp - The fbl-plan-memory pass --------------------------===//
//
// Linear-scan allocation of kernel outputs over the schedule (the function's
// op order): an output lives from the kernel that writes it to the last op
// that reads it or a view of it; a memory object is free again after its
// last reader, and the next output with the same image descriptor takes it.
//
//===----------------------------------------------------------------------===//

#include "fbl/Dialect/FBL/IR/FBLOps.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace mlir::fbl {
#define GEN_PASS_DEF_FBLPLANMEMORYPASS
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"
} // namespace mlir::fbl

using namespace mlir;
using namespace mlir::fbl;
namespace fl = ::fbl::layout;

namespace {

/// What must match for two tensors to share a memory object.
struct Descriptor {
  fl::StorageKind storage;
  int64_t width, height, layers;
  Type element;
  int64_t bytes;
  bool operator==(const Descriptor &o) const {
    return storage == o.storage && width == o.width && height == o.height &&
           layers == o.layers && element == o.element;
  }
};

Descriptor describe(RankedTensorType type) {
  auto enc = getLayoutEncoding(type);
  fl::Extents e = enc.getExtents(type.getShape());
  return {enc.getStorageKind(type.getRank()),
          e.width,
          e.height,
          e.layers,
          type.getElementType(),
          enc.getDeviceBytes(type.getShape(), type.getElementType())};
}

struct PlanMemoryPass
    : public mlir::fbl::impl::FBLPlanMemoryPassBase<PlanMemoryPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.getOps<DispatchOp>().empty())
        continue;
      plan(func);
    }
  }

  void plan(func::FuncOp func) {
    Block &block = func.getBody().front();
    llvm::DenseMap<Operation *, unsigned> position;
    for (Operation &op : block)
      position[&op] = position.size();
    unsigned end = position.size();
    // Last position at which `v` or a view of it is read.
    std::function<unsigned(Value)> lastUse = [&](Value v) -> unsigned {
      unsigned last = 0;
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        if (isa<func::ReturnOp>(user))
          return end; // an output: read after the step
        last = std::max(last, position.lookup(user));
        if (isa<TransposeViewOp, ReshapeViewOp>(user))
          last = std::max(last, lastUse(user->getResult(0)));
      }
      return last;
    };
    struct Slot {
      Descriptor desc;
      unsigned freeAfter;
    };
    SmallVector<Slot> slots;
    int64_t peak = 0, unplanned = 0;
    for (BlockArgument arg : block.getArguments())
      if (auto t = dyn_cast<RankedTensorType>(arg.getType());
          t && getLayoutEncoding(t)) {
        int64_t b = describe(t).bytes;
        peak += b;
        unplanned += b;
      }
    Builder b(func.getContext());
    for (DispatchOp dispatch : func.getOps<DispatchOp>()) {
      unsigned at = position.lookup(dispatch);
      for (auto [out, result] :
           llvm::zip(dispatch.getOuts(), dispatch.getResults())) {
        auto empty = out.getDefiningOp<tensor::EmptyOp>();
        if (!empty)
          continue;
        // CSE may have merged the empty outputs of several kernels: each
        // kernel gets its own, which carries its slot.
        if (!empty->hasOneUse()) {
          OpBuilder builder(dispatch);
          auto own = cast<tensor::EmptyOp>(builder.clone(*empty));
          dispatch->replaceUsesOfWith(empty.getResult(), own.getResult());
          empty = own;
        }
        Descriptor desc = describe(cast<RankedTensorType>(out.getType()));
        unplanned += desc.bytes;
        unsigned until = std::max(at, lastUse(result));
        // A slot is free when its last reader ran before this kernel.
        std::optional<unsigned> chosen;
        for (auto [i, slot] : llvm::enumerate(slots))
          if (slot.freeAfter < at && slot.desc == desc) {
            chosen = i;
            break;
          }
        if (!chosen) {
          slots.push_back({desc, until});
          chosen = slots.size() - 1;
          peak += desc.bytes;
        }
        slots[*chosen].freeAfter = until;
        empty->setAttr(FBLDialect::getSlotAttrName(),
                       b.getI64IntegerAttr(*chosen));
      }
    }
    func->setAttr(
        FBLDialect::getMemoryPlanAttrName(),
        b.getDictionaryAttr(
            {b.getNamedAttr("objects", b.getI64IntegerAttr(slots.size())),
             b.getNamedAttr("peak_bytes", b.getI64IntegerAttr(peak)),
             b.getNamedAttr("unplanned_bytes",
                            b.getI64IntegerAttr(unplanned))}));
  }
};
} // namespace
