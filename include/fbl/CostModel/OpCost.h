//===- OpCost.h - Cost of MLIR ops on encoded tensors -----------*- C++ -*-===//
//
// Applies the cost model to ops: the kernel fbl emits for an op with given
// operand and result layouts (fbl/CostModel/KernelPlan.h), costed for the
// target. Answers are memoized by the op's structure and the layouts, so
// the repeated layers of a model are costed once.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_COSTMODEL_OPCOST_H
#define FBL_COSTMODEL_OPCOST_H

#include "fbl/CostModel/CostModel.h"
#include "fbl/Dialect/FBL/IR/FBLAttrs.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/SmallVector.h"

#include <shared_mutex>
#include <unordered_map>
#include <vector>

namespace mlir::fbl {

struct RowGroup;

/// Thread-safe: the functions of a module may be costed in parallel, sharing
/// what one asked with the others.
class OpCostModel {
public:
  explicit OpCostModel(TargetAttr target);

  /// The cost of `op`'s kernel with its operands read in `operandLayouts`
  /// and its results written in `resultLayouts` (one entry each; null for
  /// non-tensors). Zero for ops that run no kernel.
  ::fbl::cost::KernelCost opCost(Operation *op,
                                 ArrayRef<Attribute> operandLayouts,
                                 ArrayRef<Attribute> resultLayouts);
  /// The cost of `op`'s kernel in the layouts its types carry.
  ::fbl::cost::KernelCost opCost(Operation *op);
  /// The cost of a relayout kernel for a tensor of `type`.
  ::fbl::cost::KernelCost relayoutCost(RankedTensorType type, Attribute from,
                                       Attribute to);

  /// The cost of the row kernel that computes `group` (matchRowGroups) in
  /// the layouts its members' types carry: one launch of a work-group per
  /// row (or 2 or 4 rows: RowGroup::rowsPerGroup), each member reading what
  /// comes from outside the group
  /// (row values stay in registers), the sinks and stored row values
  /// written, and each reduction's tree of halvings in local memory. A
  /// tensor read by several passes over the row misses once: a work-group's
  /// rows stay in the cache between its passes.
  ::fbl::cost::KernelCost rowKernelCost(const RowGroup &group);

  /// A key for `op`'s structure: equal for ops that plan the same kernel
  /// under the same layouts (the repeated layers of a model).
  uintptr_t structureOf(Operation *op);

  TargetAttr getTarget() const { return target; }
  const ::fbl::cost::DeviceModel &getDevice() const { return device; }

private:
  /// fc::readCost, memoized by fc::readKey: reads of different ops that
  /// trace the same accesses share one simulation.
  ::fbl::cost::ReadCost readCost(const ::fbl::cost::KernelShape &k,
                                 unsigned input);

  /// Memo keys: an op's structure and layouts fit inline (no allocation per
  /// question; the search asks millions).
  using Key = llvm::SmallVector<uintptr_t, 8>;
  struct KeyHash {
    size_t operator()(const Key &key) const {
      return llvm::hash_combine_range(key.begin(), key.end());
    }
  };
  struct ReadKeyHash {
    size_t operator()(const std::vector<int64_t> &key) const {
      return llvm::hash_combine_range(key.begin(), key.end());
    }
  };
  template <typename T> using KeyMap = std::unordered_map<Key, T, KeyHash>;

  TargetAttr target;
  ::fbl::cost::DeviceModel device;
  /// Guards the memos below.
  std::shared_mutex mutex;
  llvm::DenseMap<Operation *, uintptr_t> structure;
  KeyMap<uintptr_t> structureIds;
  KeyMap<::fbl::cost::KernelCost> memo;
  std::unordered_map<std::vector<int64_t>, ::fbl::cost::ReadCost, ReadKeyHash>
      readMemo;
};

} // namespace mlir::fbl

#endif // FBL_COSTMODEL_OPCOST_H
