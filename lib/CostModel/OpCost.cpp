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
  auto it = structure.find(op);
  if (it != structure.end())
    return it->second;
  // The op's name, attributes, operand and result types (without layouts),
  // and the names of its body's ops: what planKernel looks at.
  std::vector<uintptr_t> key = {
      reinterpret_cast<uintptr_t>(op->getName().getAsOpaquePointer()),
      reinterpret_cast<uintptr_t>(
          op->getRawDictionaryAttrs().getAsOpaquePointer())};
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
  auto [pos, inserted] =
      structureIds.try_emplace(std::move(key), reinterpret_cast<uintptr_t>(op));
  structure[op] = pos->second;
  return pos->second;
}

fc::KernelCost OpCostModel::opCost(Operation *op,
                                   ArrayRef<Attribute> operandLayouts,
                                   ArrayRef<Attribute> resultLayouts) {
  std::vector<uintptr_t> key = {structureOf(op)};
  for (Attribute a : operandLayouts)
    key.push_back(reinterpret_cast<uintptr_t>(a.getAsOpaquePointer()));
  key.push_back(0);
  for (Attribute a : resultLayouts)
    key.push_back(reinterpret_cast<uintptr_t>(a.getAsOpaquePointer()));
  if (auto it = memo.find(key); it != memo.end())
    return it->second;
  fc::KernelCost c;
  if (std::optional<fc::KernelShape> k =
          planKernel(op, operandLayouts, resultLayouts, target)) {
    // Each read's cost depends on the kernel, the output's layout, the loop
    // the kernel walks 4 at a time (any input packed along it sets it) and
    // its own layout only: the search varies one layout at a time, so most
    // reads are costed already.
    std::vector<fc::ReadCost> reads;
    for (unsigned i = 0, e = k->inputs.size() + (k->readsInit ? 1 : 0); i < e;
         ++i) {
      Attribute own = i < k->inputs.size() ? operandLayouts[k->inputOperands[i]]
                                           : resultLayouts.front();
      std::vector<uintptr_t> readKey = {
          3,
          key.front(),
          static_cast<uintptr_t>(k->kind),
          static_cast<uintptr_t>(k->walkLoop + 1),
          reinterpret_cast<uintptr_t>(
              resultLayouts.front().getAsOpaquePointer()),
          i,
          reinterpret_cast<uintptr_t>(own.getAsOpaquePointer())};
      auto it = readMemo.find(readKey);
      if (it == readMemo.end())
        it = readMemo.emplace(std::move(readKey), fc::readCost(*k, i, device))
                 .first;
      reads.push_back(it->second);
    }
    c = fc::launchCost(*k, reads, device);
  }
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
  std::vector<uintptr_t> key = {
      2, plainType(type),
      reinterpret_cast<uintptr_t>(from.getAsOpaquePointer()),
      reinterpret_cast<uintptr_t>(to.getAsOpaquePointer())};
  if (auto it = memo.find(key); it != memo.end())
    return it->second;
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  fc::KernelCost c = fc::kernelCost(
      fc::relayoutKernel(shape, layoutOf(type, from), layoutOf(type, to)),
      device);
  memo.emplace(std::move(key), c);
  return c;
}
