//===- ScatterKernels.cpp - Scatter loop kernels --------------------------===//
//
// The scatter kernels of fbl-lower-to-kernels: an scf.for nest whose tensor
// iter_args live in buffers (a scatter-add gradient, say) runs in place,
// one work-item per iteration of a loop whose iterations touch disjoint
// elements (else a single work-item), each copying its slice of the initial
// buffer first. Where every access indexes one more dim with one value (an
// embedding gradient's row, the token's id), that dim is split into chunks
// too, each work-item owning one: the copy and the scan spread over as many
// work-items as the target runs at once (a 30522x768 table's gradient was
// 768 work-items copying 30522 rows each: 3.5 ms on the H200). The scan
// computes each token's row first and the rest only for a row the
// work-item owns (reading every token's update made that scan 0.43 ms on
// the H100).
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "KernelLowerings.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <algorithm>

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
  /// A dim every access indexes with one value computed in the block of
  /// all the accesses (a scattered row): work-items split it into chunks.
  std::optional<unsigned> chunkDim;
  /// That value.
  Value chunkRow;
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
  Block *block = accesses.front().first->getBlock();
  bool oneBlock = llvm::all_of(accesses, [&](auto &access) {
    return access.first->getBlock() == block;
  });
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
        best = ParallelScatterLoop{f, d, *ub, std::nullopt};
        break;
      }
  }
  // Chunks test the row once in the block of the accesses, which must be a
  // loop's body of the nest (cloneScatterNest clones those).
  if (!best || !oneBlock ||
      llvm::none_of(loops, [&](scf::ForOp f) { return f.getBody() == block; }))
    return best;
  unsigned rank = accesses.front().second.size();
  for (unsigned d = 0; d < rank; ++d) {
    Value row = accesses.front().second[d];
    if (d != best->dim && row.getParentBlock() == block &&
        llvm::all_of(accesses,
                     [&](auto &access) { return access.second[d] == row; })) {
      best->chunkDim = d;
      best->chunkRow = row;
      break;
    }
  }
  return best;
}

namespace {
/// The rows [begin, end) of the chunk dim a work-item owns; `row` is the
/// nest's value that indexes that dim.
struct ScatterChunk {
  unsigned dim;
  Value row;
  Value begin, end;
};
} // namespace

/// Clones the loop nest of a scatter loop into a kernel, in place on `out`.
/// The parallel loop, if any, is not a loop: its iterations are the
/// work-items (`item`).
static LogicalResult
cloneScatterNest(scf::ForOp loop, Value out, KernelBuilder &kb,
                 IRMapping &mapping, llvm::DenseSet<Value> &bufferValues,
                 std::optional<ParallelScatterLoop> parallel, Value item,
                 const std::optional<ScatterChunk> &chunk) {
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
  // In the block of the accesses, the ops that compute the chunk dim's row
  // come first and everything else under one test that the work-item owns
  // that row: it reads a token's update (a texel of the gradient) and the
  // buffer only for its own rows, not for every token it scans.
  Block *body = loop.getBody();
  llvm::SetVector<Operation *> rowSlice;
  bool chunked = chunk && Value(chunk->row).getParentBlock() == body;
  if (Operation *def = chunked ? Value(chunk->row).getDefiningOp() : nullptr) {
    BackwardSliceOptions options;
    options.inclusive = true;
    options.omitBlockArguments = true;
    options.omitUsesFromAbove = false; // what the ops' regions use
    options.filter = [&](Operation *op) { return op->getBlock() == body; };
    // Fails only on a block argument it may not omit.
    [[maybe_unused]] LogicalResult sliced =
        getBackwardSlice(def, &rowSlice, options);
    assert(succeeded(sliced) && "the row's slice omits block arguments");
  }
  auto cloneOp = [&](Operation &op) -> LogicalResult {
    if (auto nested = dyn_cast<scf::ForOp>(op)) {
      if (failed(cloneScatterNest(nested, out, kb, mapping, bufferValues,
                                  parallel, item, chunk)))
        return failure();
      for (Value r : nested.getResults())
        bufferValues.insert(r);
      return success();
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
      return success();
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
      return success();
    }
    for (Value operand : op.getOperands())
      if (!mapping.contains(operand) &&
          !kb.dispatch->isAncestor(operand.getParentRegion()->getParentOp()))
        if (failed(cloneScalar(operand, kb, mapping)))
          return failure();
    b.clone(op, mapping);
    return success();
  };
  for (Operation &op : body->without_terminator())
    if ((!chunked || rowSlice.contains(&op)) && failed(cloneOp(op)))
      return failure();
  if (!chunked)
    return success();
  // Unsigned: a row below zero (an id out of range) is in no chunk.
  Value fromBegin =
      arith::SubIOp::create(b, loc, mapping.lookup(chunk->row), chunk->begin);
  Value size = arith::SubIOp::create(b, loc, chunk->end, chunk->begin);
  Value owned =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, fromBegin, size);
  b.setInsertionPointToStart(
      &scf::IfOp::create(b, loc, owned, false).getThenRegion().front());
  for (Operation &op : body->without_terminator())
    if (!rowSlice.contains(&op) && failed(cloneOp(op)))
      return failure();
  return success();
}

/// Lowers a scatter loop nest (tensor iter_args in buffers) to a kernel
/// that runs it in place: one work-item per iteration of its parallel loop
/// and chunk of its chunk dim (each copying and updating its own slice),
/// else a single work-item.
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
  // Chunks of the chunk dim enough for the work-items the device runs at
  // once; each work-item scans the whole nest, so no more than that.
  int64_t rows = 1, rowsPerChunk = 1, chunks = 1;
  if (parallel && parallel->chunkDim) {
    const ::fbl::target::ExecutionModel &e = target.getExecution();
    int64_t atOnce = std::max<int64_t>(1, e.computeUnits * e.residentItems);
    rows = type.getDimSize(*parallel->chunkDim);
    chunks = std::clamp<int64_t>(llvm::divideCeil(atOnce, items), 1, rows);
    rowsPerChunk = llvm::divideCeil(rows, chunks);
    chunks = llvm::divideCeil(rows, rowsPerChunk);
  }
  kb.begin(("k" + Twine(counter++) + "_scatter").str(), type,
           {items, chunks, 1});
  Value out = kb.outputHandle();
  IRMapping mapping;
  for (auto [i, v] : llvm::enumerate(kb.ins))
    mapping.map(v, kb.inputHandle(i));
  Addressing a{b, loc};
  Value item = kb.workItem(0), chunkId = kb.workItem(1);
  Value inChunks = a.lt(chunkId, chunks);
  Value inItems = a.lt(item, items);
  auto guard = scf::IfOp::create(b, loc, a.andi(inItems, inChunks), false);
  b.setInsertionPointToStart(&guard.getThenRegion().front());
  std::optional<ScatterChunk> chunk;
  if (chunks > 1) {
    Value begin = a.mul(chunkId, rowsPerChunk);
    Value past = a.add(begin, a.c(rowsPerChunk));
    Value last = a.c(rows);
    Value shortChunk = a.lt(past, rows);
    Value end = arith::SelectOp::create(b, loc, shortChunk, past, last);
    chunk = ScatterChunk{*parallel->chunkDim, parallel->chunkRow, begin, end};
  }
  // Copy the initial values (the work-item's slice along the parallel dim,
  // its chunk's rows of the chunk dim), then scatter in place.
  int64_t sliceDim = parallel ? parallel->dim : -1;
  int64_t copied = type.getNumElements() / items / rows * rowsPerChunk;
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
      if (chunk && d == static_cast<int64_t>(chunk->dim)) {
        idx[d] = a.add(chunk->begin, a.rem(rest, rowsPerChunk));
        rest = a.div(rest, rowsPerChunk);
        continue;
      }
      idx[d] = a.rem(rest, type.getDimSize(d));
      rest = a.div(rest, type.getDimSize(d));
    }
    // The last chunk may end before its rowsPerChunk.
    if (chunk && rows % rowsPerChunk) {
      auto inside =
          scf::IfOp::create(b, loc, a.lt(idx[chunk->dim], rows), false);
      b.setInsertionPointToStart(&inside.getThenRegion().front());
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
                              item, chunk))) {
    kb.end();
    return loop.emitOpError("fbl-lower-to-kernels: cannot lower this loop");
  }
  b.setInsertionPointAfter(guard);
  DispatchOp dispatch = kb.end();
  loop.getResult(0).replaceAllUsesWith(dispatch.getResult(0));
  loop.erase();
  return success();
}
