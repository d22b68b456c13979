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
         ++i) {
      std::vector<int64_t> readKey = fc::readKey(*k, i);
      {
        std::shared_lock<std::shared_mutex> lock(mutex);
        if (auto it = readMemo.find(readKey); it != readMemo.end()) {
          reads.push_back(it->second);
          continue;
        }
      }
      fc::ReadCost r = fc::readCost(*k, i, device);
      std::unique_lock<std::shared_mutex> lock(mutex);
      readMemo.emplace(std::move(readKey), r);
      reads.push_back(r);
    }
    c = fc::launchCost(*k, reads, device);
  }
  std::unique_lock<std::shared_mutex> lock(mutex);
  memo.emplace(std::move(key), c);
  return c;
}

fc::KernelCost OpCostModel::opCost(Operation *op) {
  SmallVector<Attribute> in, out;
  for (Value v : op->getOperands()) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    in.push_back(t ? t.getEncoding() : Attribute());
  }
  for (Value v : op->getResults()) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    out.push_back(t ? t.getEncoding() : Attribute());
  }
  return opCost(op, in, out);
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
