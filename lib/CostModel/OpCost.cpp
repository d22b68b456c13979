//===- OpCost.cpp - Cost of MLIR ops on encoded tensors -------------------===//
//
// Plans the kernel of an op for the layouts asked about and costs it;
// memoizes by (structure of the op, layouts).
//
//===----------------------------------------------------------------------===//

#include "fbl/CostModel/OpCost.h"
#include "fbl/CostModel/KernelPlan.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::fbl;
namespace fc = ::fbl::cost;

OpCostModel::OpCostModel(TargetAttr target)
    : target(target), device(fc::DeviceModel::of(target.getDescription())) {}

/// `type` without its encoding: ops of repeated layers share it.
static uintptr_t plainType(Type type) {
  if (auto t = dyn_cast<RankedTensorType>(type))
    type = RankedTensorType::get(t.getShape(), t.getElementType());
  return reinterpret_cast<uintptr_t>(type.getAsOpaquePointer());
}

uintptr_t OpCostModel::structureOf(Operation *op) {
  {
    std::shared_lock<std::shared_mutex> lock(mutex);
    auto it = structure.find(op);
    if (it != structure.end())
      return it->second;
  }
  // The op's name, attributes and properties, operand and result types
  // (without layouts), and the names of its body's ops: what planKernel
  // looks at.
  Key key = {
      reinterpret_cast<uintptr_t>(op->getName().getAsOpaquePointer()),
      reinterpret_cast<uintptr_t>(
          op->getRawDictionaryAttrs().getAsOpaquePointer()),
      // Inherent attributes (indexing maps, permutations, reassociations).
      reinterpret_cast<uintptr_t>(
          op->getPropertiesAsAttribute().getAsOpaquePointer())};
  // Operands from tensor.empty are never read (inserts into them).
  for (Value v : op->getOperands()) {
    key.push_back(plainType(v.getType()));
    key.push_back(v.getDefiningOp<tensor::EmptyOp>() ? 1 : 0);
  }
  key.push_back(0);
  for (Value v : op->getResults())
    key.push_back(plainType(v.getType()));
  for (Region &r : op->getRegions())
    r.walk([&](Operation *inner) {
      key.push_back(
          reinterpret_cast<uintptr_t>(inner->getName().getAsOpaquePointer()));
      for (Value v : inner->getOperands())
        if (auto arg = dyn_cast<BlockArgument>(v);
            arg && arg.getOwner()->getParentOp() == op)
          key.push_back(1000 + arg.getArgNumber());
    });
  // Identical structures get the same id (the first op's).
  std::unique_lock<std::shared_mutex> lock(mutex);
  auto [pos, inserted] =
      structureIds.try_emplace(std::move(key), reinterpret_cast<uintptr_t>(op));
  structure[op] = pos->second;
  return pos->second;
}

fc::KernelCost OpCostModel::opCost(Operation *op,
                                   ArrayRef<Attribute> operandLayouts,
                                   ArrayRef<Attribute> resultLayouts) {
  Key key;
  key.reserve(2 + operandLayouts.size() + resultLayouts.size());
  key.push_back(structureOf(op));
  for (Attribute a : operandLayouts)
    key.push_back(reinterpret_cast<uintptr_t>(a.getAsOpaquePointer()));
  key.push_back(0);
  for (Attribute a : resultLayouts)
    key.push_back(reinterpret_cast<uintptr_t>(a.getAsOpaquePointer()));
  {
    std::shared_lock<std::shared_mutex> lock(mutex);
    if (auto it = memo.find(key); it != memo.end())
      return it->second;
  }
  fc::KernelCost c;
  if (std::optional<fc::KernelShape> k =
          planKernel(op, operandLayouts, resultLayouts, target)) {
    // Reads that trace the same accesses cost the same, whichever op they
    // belong to: the search varies one layout at a time, and ops of
    // repeated layers and of one shape share their reads.
    std::vector<fc::ReadCost> reads;
    for (unsigned i = 0, e = k->inputs.size() + (k->readsInit ? 1 : 0); i < e;
         ++i)
      reads.push_back(readCost(*k, i));
    c = fc::launchCost(*k, reads, device);
  }
  std::unique_lock<std::shared_mutex> lock(mutex);
  memo.emplace(std::move(key), c);
  return c;
}

fc::ReadCost OpCostModel::readCost(const fc::KernelShape &k, unsigned input) {
  std::vector<int64_t> key = fc::readKey(k, input);
  {
    std::shared_lock<std::shared_mutex> lock(mutex);
    if (auto it = readMemo.find(key); it != readMemo.end())
      return it->second;
  }
  fc::ReadCost r = fc::readCost(k, input, device);
  std::unique_lock<std::shared_mutex> lock(mutex);
  readMemo.emplace(std::move(key), r);
  return r;
}

fc::KernelCost OpCostModel::opCost(Operation *op) {
  return opCost(op, encodingsOf(op->getOperands()),
                encodingsOf(op->getResults()));
}

fc::KernelCost OpCostModel::rowKernelCost(const RowGroup &group) {
  llvm::SmallPtrSet<Operation *, 8> members, stored;
  for (linalg::LinalgOp m : group.members)
    members.insert(m);
  for (linalg::LinalgOp m : group.storedMembers())
    stored.insert(m);
  llvm::SmallPtrSet<void *, 8> read;
  llvm::DenseSet<std::pair<Value, AffineMap>> held;
  fc::KernelCost c;
  c.launches = 1;
  int64_t reductions = 0;
  for (linalg::LinalgOp m : group.members) {
    std::optional<fc::KernelShape> k = planKernel(
        m, encodingsOf(m->getOperands()), encodingsOf(m->getResults()), target);
    if (!k)
      continue;
    // A reduction's initial value is a constant the kernel starts from.
    bool reduction = m.getNumReductionLoops() > 0;
    reductions += reduction;
    // The row kernel runs one row (or one texel of packed rows) a
    // work-group, however the member's own kernel would group its items:
    // traced so, a cache line that spans two rows misses in each row's
    // group, as it does on the device.
    std::array<int64_t, 3> grid = fc::gridOf(*k);
    fc::DeviceModel rowDevice = device;
    rowDevice.preferredWorkgroup = {grid[1] > 1 ? grid[0] : 1, 1};
    std::vector<fc::ReadCost> reads;
    for (unsigned i = 0; i < k->inputs.size(); ++i) {
      Value v = m->getOperand(k->inputOperands[i]);
      if (members.contains(v.getDefiningOp()))
        continue;
      fc::ReadCost r = fc::readCost(*k, i, rowDevice);
      if (!read.insert(v.getAsOpaquePointer()).second)
        r.misses = 0;
      // A work-item that holds its rows reads a tensor once for all passes.
      AffineMap map =
          m.getMatchingIndexingMap(&m->getOpOperand(k->inputOperands[i]));
      if (group.holdsRows() && !held.insert({v, map}).second)
        r.fetches = 0;
      reads.push_back(r);
    }
    fc::KernelCost member = fc::launchCost(*k, reads, device);
    c.fetches += member.fetches;
    c.misses += member.misses;
    c.multiplies += member.multiplies;
    // The other row values live in registers.
    if (stored.contains(m))
      c.writes += member.writes;
  }
  int64_t groups = group.numGroups(), items = group.groupSize();
  ::fbl::target::LaunchWork work;
  work.fetches = static_cast<double>(c.fetches);
  work.misses = static_cast<double>(c.misses);
  work.writes = static_cast<double>(c.writes);
  work.multiplies = static_cast<double>(c.multiplies);
  work.itemAccesses =
      static_cast<double>(c.fetches + c.writes) /
          static_cast<double>(std::max<int64_t>(1, groups * items)) +
      static_cast<double>(reductions * llvm::Log2_64_Ceil(items));
  work.groups = groups;
  work.groupItems = items;
  c.itemAccesses = work.itemAccesses;
  c.timeNs = ::fbl::target::launchTimeNs(device.execution, work);
  return c;
}

fc::KernelCost OpCostModel::relayoutCost(RankedTensorType type, Attribute from,
                                         Attribute to) {
  Key key = {2, plainType(type),
             reinterpret_cast<uintptr_t>(from.getAsOpaquePointer()),
             reinterpret_cast<uintptr_t>(to.getAsOpaquePointer())};
  {
    std::shared_lock<std::shared_mutex> lock(mutex);
    if (auto it = memo.find(key); it != memo.end())
      return it->second;
  }
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  fc::KernelCost c = fc::kernelCost(
      fc::relayoutKernel(shape, layoutOf(type, from), layoutOf(type, to)),
      device);
  std::unique_lock<std::shared_mutex> lock(mutex);
  memo.emplace(std::move(key), c);
  return c;
}
