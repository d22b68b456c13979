//===- PlanMemory.cpp - The fbl-plan-memory pass --------------------------===//
//
// Linear-scan allocation of kernel outputs over the schedule (the function's
// op order): an output lives from the kernel that writes it to the last op
// that reads it or a view of it; a memory object is free again after its
// last reader, and the next output with the same image descriptor takes it.
// On a target with half_storage, images that hold neither a parameter, nor
// optimizer state, nor a result of the step store half floats.
//
//===----------------------------------------------------------------------===//

#include "fbl/Dialect/FBL/IR/FBLOps.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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

Descriptor describe(RankedTensorType type, Type storage) {
  auto enc = getLayoutEncoding(type);
  fl::Extents e = enc.getExtents(type.getShape());
  return {enc.getStorageKind(type.getRank()),
          e.width,
          e.height,
          e.layers,
          storage,
          enc.getDeviceBytes(type.getShape(), storage)};
}

/// Whether every float constant in the body of `dispatch` is a half float.
bool constantsAreHalf(DispatchOp dispatch) {
  WalkResult walk = dispatch.getBody().walk([](arith::ConstantOp c) {
    auto f = dyn_cast<FloatAttr>(c.getValue());
    if (!f)
      return WalkResult::advance();
    bool losesInfo = false;
    APFloat v = f.getValue();
    v.convert(APFloat::IEEEhalf(), APFloat::rmNearestTiesToEven, &losesInfo);
    return losesInfo ? WalkResult::interrupt() : WalkResult::advance();
  });
  return !walk.wasInterrupted();
}

/// Whether some op that reads `v` or a view of it satisfies `pred`.
bool anyReader(Value v, function_ref<bool(Operation *)> pred) {
  for (Operation *user : v.getUsers()) {
    if (pred(user))
      return true;
    if (isa<TransposeViewOp, ReshapeViewOp>(user) &&
        anyReader(user->getResult(0), pred))
      return true;
  }
  return false;
}

/// Whether a kernel that only copies or selects reads `v` or a view of it.
bool readBySelects(Value v) {
  return anyReader(v, [](Operation *user) {
    auto d = dyn_cast<DispatchOp>(user);
    return d && d.onlySelects();
  });
}

/// Whether `v` or a view of it is a result of the step.
bool isReturned(Value v) {
  return anyReader(v,
                   [](Operation *user) { return isa<func::ReturnOp>(user); });
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
    TargetAttr target = TargetAttr::lookup(func);
    Builder b(func.getContext());
    // Arguments the step updates (parameters, optimizer state) keep f32.
    llvm::SmallDenseSet<int64_t> updated;
    if (auto updates = func->getAttrOfType<DenseI64ArrayAttr>("fbl.updates"))
      updated.insert(updates.asArrayRef().begin(), updates.asArrayRef().end());
    // Values computed from constants and indices alone (positions, RoPE
    // angles, masks): small tables whose magnitudes f16 may not resolve.
    llvm::DenseSet<Value> fromConstants;
    // The element type memory holding `v` stores, decided in op order.
    llvm::DenseMap<Value, Type> storage;
    auto storageOf = [&](Value v) -> Type {
      auto type = cast<RankedTensorType>(v.getType());
      Type element = type.getElementType();
      if (!target || !target.getHalfStorage() || !element.isF32() ||
          getLayoutEncoding(type).getStorageKind(type.getRank()) ==
              fl::StorageKind::Buffer ||
          isReturned(v))
        return element;
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        if (updated.count(arg.getArgNumber()) ||
            func.getArgAttr(arg.getArgNumber(), FBLDialect::getParamAttrName()))
          return element;
        return b.getF16Type();
      }
      auto dispatch = v.getDefiningOp<DispatchOp>();
      if (!dispatch)
        return element;
      // The value of an input kept exactly stays exact: a max or a copy of
      // an f32 parameter is compared with it bit for bit (max gradients).
      bool selects = dispatch.onlySelects();
      if (selects && llvm::any_of(dispatch.getIns(), [&](Value in) {
            Type t = storage.lookup(viewedValue(in));
            return t && t.isF32();
          }))
        return element;
      if (fromConstants.contains(v) &&
          !(dispatch.getIns().empty() && selects && constantsAreHalf(dispatch)))
        return element;
      return b.getF16Type();
    };
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
      /// The kernel outputs it holds, with their tensor.empty.
      SmallVector<std::pair<Value, tensor::EmptyOp>> users;
    };
    SmallVector<Slot> slots;
    int64_t peak = 0, unplanned = 0;
    for (BlockArgument arg : block.getArguments())
      if (auto t = dyn_cast<RankedTensorType>(arg.getType());
          t && getLayoutEncoding(t)) {
        Type stored = storage[arg] = storageOf(arg);
        if (stored != t.getElementType())
          func.setArgAttr(arg.getArgNumber(), FBLDialect::getStorageAttrName(),
                          TypeAttr::get(stored));
        int64_t bytes = describe(t, stored).bytes;
        peak += bytes;
        unplanned += bytes;
      }
    for (DispatchOp dispatch : func.getOps<DispatchOp>()) {
      unsigned at = position.lookup(dispatch);
      if (llvm::all_of(dispatch.getIns(), [&](Value in) {
            return fromConstants.contains(viewedValue(in));
          }))
        fromConstants.insert(dispatch.getResults().begin(),
                             dispatch.getResults().end());
      for (auto [out, result] :
           llvm::zip(dispatch.getOuts(), dispatch.getResults())) {
        auto empty = out.getDefiningOp<tensor::EmptyOp>();
        if (!empty) {
          storage[result] =
              cast<RankedTensorType>(out.getType()).getElementType();
          continue;
        }
        // CSE may have merged the empty outputs of several kernels: each
        // kernel gets its own, which carries its slot.
        if (!empty->hasOneUse()) {
          OpBuilder builder(dispatch);
          auto own = cast<tensor::EmptyOp>(builder.clone(*empty));
          dispatch->replaceUsesOfWith(empty.getResult(), own.getResult());
          empty = own;
        }
        auto type = cast<RankedTensorType>(out.getType());
        Type stored = storageOf(result);
        Descriptor desc = describe(type, stored);
        unplanned += desc.bytes;
        unsigned until = std::max(at, lastUse(result));
        // A slot is free when its last reader ran before this kernel. An
        // output that may store f16 also takes a free f32 slot of its
        // extents rather than a new object (f32 holds it exactly).
        std::optional<unsigned> chosen;
        for (auto [i, slot] : llvm::enumerate(slots))
          if (slot.freeAfter < at && slot.desc == desc) {
            chosen = i;
            break;
          }
        if (!chosen && stored != type.getElementType()) {
          Descriptor wide = describe(type, type.getElementType());
          for (auto [i, slot] : llvm::enumerate(slots))
            if (slot.freeAfter < at && slot.desc == wide) {
              chosen = i;
              stored = type.getElementType();
              break;
            }
        }
        // An f32 output (an updated parameter, say) takes a free f16 slot
        // of its extents by widening it, so the step's results recycle the
        // memory of dead activations, unless a kernel that copies or
        // selects read a former user: its f16 copy would then differ from
        // the widened original.
        if (!chosen && stored.isF32()) {
          Descriptor narrow = describe(type, b.getF16Type());
          for (auto [i, slot] : llvm::enumerate(slots)) {
            if (slot.freeAfter >= at || !(slot.desc == narrow) ||
                llvm::any_of(slot.users, [&](auto &user) {
                  return readBySelects(user.first);
                }))
              continue;
            chosen = i;
            peak += desc.bytes - slot.desc.bytes;
            slot.desc = desc;
            for (auto &[value, userEmpty] : slot.users) {
              storage[value] = stored;
              userEmpty->removeAttr(FBLDialect::getStorageAttrName());
            }
            break;
          }
        }
        if (!chosen) {
          slots.push_back({desc, until, {}});
          chosen = slots.size() - 1;
          peak += desc.bytes;
        }
        slots[*chosen].users.push_back({result, empty});
        storage[result] = stored;
        if (stored != type.getElementType())
          empty->setAttr(FBLDialect::getStorageAttrName(),
                         TypeAttr::get(stored));
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
