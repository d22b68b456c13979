//===- ScatterKernels.cpp - Scatter loop kernels --------------------------===//
//
// The scatter kernels of fbl-lower-to-kernels: an scf.for nest whose tensor
// iter_args live in buffers (a scatter-add gradient, say) runs in place,
// one work-item per iteration of a loop whose iterations touch disjoint
// elements (else a single work-item), each copying its slice of the initial
// buffer first.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "KernelLowerings.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::fbl;
using namespace mlir::fbl::kernels;

namespace {

/// A loop of a scatter nest whose iterations touch disjoint elements of the
/// scattered tensor: every access to it takes the loop's induction variable
/// as the index of dimension `dim`.
struct ParallelScatterLoop {
  scf::ForOp loop;
  unsigned dim;
  int64_t tripCount;
};

} // namespace

/// Finds the parallel loop of the nest with the most iterations (static
/// bounds from 0 by 1), if any.
static std::optional<ParallelScatterLoop> findParallelLoop(scf::ForOp nest) {
  llvm::DenseSet<Value> buffer;
  SmallVector<scf::ForOp> loops;
  SmallVector<std::pair<Operation *, SmallVector<Value>>> accesses;
  WalkResult walk = nest->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto f = dyn_cast<scf::ForOp>(op)) {
      loops.push_back(f);
      for (Value v : f.getRegionIterArgs())
        buffer.insert(v);
      for (Value v : f.getResults())
        buffer.insert(v);
    } else if (auto insert = dyn_cast<tensor::InsertOp>(op)) {
      if (!buffer.contains(insert.getDest()))
        return WalkResult::interrupt();
      buffer.insert(insert.getResult());
      accesses.push_back({op, llvm::to_vector(insert.getIndices())});
    } else if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
      if (buffer.contains(extract.getTensor()))
        accesses.push_back({op, llvm::to_vector(extract.getIndices())});
    } else if (llvm::any_of(op->getOperands(),
                            [&](Value v) { return buffer.contains(v); }) &&
               !isa<scf::YieldOp>(op)) {
      return WalkResult::interrupt(); // the buffer escapes: keep it serial
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted() || accesses.empty())
    return std::nullopt;
  std::optional<ParallelScatterLoop> best;
  for (scf::ForOp f : loops) {
    auto lb = getConstantIntValue(f.getLowerBound());
    auto ub = getConstantIntValue(f.getUpperBound());
    auto step = getConstantIntValue(f.getStep());
    if (!lb || !ub || !step || *lb != 0 || *step != 1 || *ub < 2)
      continue;
    Value iv = f.getInductionVar();
    unsigned rank = accesses.front().second.size();
    for (unsigned d = 0; d < rank; ++d)
      if (llvm::all_of(accesses,
                       [&](auto &access) { return access.second[d] == iv; }) &&
          (!best || *ub > best->tripCount)) {
        best = ParallelScatterLoop{f, d, *ub};
        break;
      }
  }
  return best;
}

/// Clones the loop nest of a scatter loop into a kernel, in place on `out`.
/// The parallel loop, if any, is not a loop: its iterations are the
/// work-items (`item`).
static LogicalResult
cloneScatterNest(scf::ForOp loop, Value out, KernelBuilder &kb,
                 IRMapping &mapping, llvm::DenseSet<Value> &bufferValues,
                 std::optional<ParallelScatterLoop> parallel, Value item) {
  OpBuilder &b = kb.b;
  Location loc = loop.getLoc();
  OpBuilder::InsertionGuard guard(b);
  if (parallel && parallel->loop == loop) {
    mapping.map(loop.getInductionVar(), item);
  } else {
    SmallVector<Value> bounds;
    for (Value v :
         {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()}) {
      FailureOr<Value> m = cloneScalar(v, kb, mapping);
      if (failed(m))
        return failure();
      bounds.push_back(*m);
    }
    auto inner = scf::ForOp::create(b, loc, bounds[0], bounds[1], bounds[2]);
    b.setInsertionPointToStart(inner.getBody());
    mapping.map(loop.getInductionVar(), inner.getInductionVar());
  }
  for (BlockArgument arg : loop.getRegionIterArgs())
    bufferValues.insert(arg);
  Addressing a{b, loc};
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (auto nested = dyn_cast<scf::ForOp>(op)) {
      if (failed(cloneScatterNest(nested, out, kb, mapping, bufferValues,
                                  parallel, item)))
        return failure();
      for (Value r : nested.getResults())
        bufferValues.insert(r);
      continue;
    }
    if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
      SmallVector<Value> idx;
      for (Value i : extract.getIndices())
        idx.push_back(mapping.lookupOrDefault(i));
      Value t = extract.getTensor();
      Value handle = bufferValues.contains(t) ? out : mapping.lookupOrNull(t);
      if (!handle)
        return failure();
      auto type = cast<RankedTensorType>(handle.getType());
      Value v = isa<BufferLayoutAttr>(type.getEncoding()) && handle == out
                    ? Value(LoadElementOp::create(b, loc, type.getElementType(),
                                                  out, a.linear(type, idx)))
                    : a.load(handle, idx);
      mapping.map(extract.getResult(), v);
      continue;
    }
    if (auto insert = dyn_cast<tensor::InsertOp>(op)) {
      SmallVector<Value> idx;
      for (Value i : insert.getIndices())
        idx.push_back(mapping.lookupOrDefault(i));
      auto type = cast<RankedTensorType>(out.getType());
      StoreElementOp::create(b, loc,
                             mapping.lookupOrDefault(insert.getScalar()), out,
                             a.linear(type, idx));
      bufferValues.insert(insert.getResult());
      continue;
    }
    for (Value operand : op.getOperands())
      if (!mapping.contains(operand) &&
          !kb.dispatch->isAncestor(operand.getParentRegion()->getParentOp()))
        if (failed(cloneScalar(operand, kb, mapping)))
          return failure();
    b.clone(op, mapping);
  }
  return success();
}

/// Lowers a scatter loop nest (tensor iter_args in buffers) to a kernel
/// that runs it in place: one work-item per iteration of its parallel loop
/// (each copying and updating its own slice), else a single work-item.
LogicalResult kernels::lowerScatterLoop(scf::ForOp loop, TargetAttr target,
                                        unsigned &counter) {
  if (loop.getNumResults() != 1)
    return loop.emitOpError("fbl-lower-to-kernels: loops with several "
                            "results are not supported");
  auto type = cast<RankedTensorType>(loop.getResult(0).getType());
  std::optional<ParallelScatterLoop> parallel = findParallelLoop(loop);
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  KernelBuilder kb(b, loc, target);
  unsigned initIndex = kb.addInput(loop.getInitArgs()[0]);
  llvm::DenseSet<Value> seen;
  addCapturedInputs(loop.getRegion(), kb, seen);
  for (Value v : {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()})
    collectScalarInputs(v, kb, seen);
  int64_t items = parallel ? parallel->tripCount : 1;
  kb.begin(("k" + Twine(counter++) + "_scatter").str(), type, {items, 1, 1});
  Value out = kb.outputHandle();
  IRMapping mapping;
  for (auto [i, v] : llvm::enumerate(kb.ins))
    mapping.map(v, kb.inputHandle(i));
  Addressing a{b, loc};
  Value item = kb.workItem(0);
  auto guard = scf::IfOp::create(b, loc, a.lt(item, items), false);
  b.setInsertionPointToStart(&guard.getThenRegion().front());
  // Copy the initial values (the work-item's slice along the parallel dim),
  // then scatter in place.
  int64_t sliceDim = parallel ? parallel->dim : -1;
  int64_t copied = type.getNumElements() / items;
  Value step = a.c(1), end = a.c(copied), begin = a.c(0);
  auto copy = scf::ForOp::create(b, loc, begin, end, step);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(copy.getBody());
    SmallVector<Value> idx(type.getRank());
    Value rest = copy.getInductionVar();
    for (int64_t d = type.getRank() - 1; d >= 0; --d) {
      if (d == sliceDim) {
        idx[d] = item;
        continue;
      }
      idx[d] = a.rem(rest, type.getDimSize(d));
      rest = a.div(rest, type.getDimSize(d));
    }
    Value offset = a.linear(type, idx);
    StoreElementOp::create(b, loc, a.load(kb.inputHandle(initIndex), idx), out,
                           offset);
  }
  for (Value v : {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()})
    if (failed(cloneScalar(v, kb, mapping)))
      return loop.emitOpError("fbl-lower-to-kernels: cannot compute the loop "
                              "bounds inside the kernel");
  llvm::DenseSet<Value> bufferValues;
  if (failed(cloneScatterNest(loop, out, kb, mapping, bufferValues, parallel,
                              item))) {
    kb.end();
    return loop.emitOpError("fbl-lower-to-kernels: cannot lower this loop");
  }
  b.setInsertionPointAfter(guard);
  DispatchOp dispatch = kb.end();
  loop.getResult(0).replaceAllUsesWith(dispatch.getResult(0));
  loop.erase();
  return success();
}
