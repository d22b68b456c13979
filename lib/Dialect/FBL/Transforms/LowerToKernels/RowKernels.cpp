//===- RowKernels.cpp - One kernel per row group --------------------------===//
//
// The row kernel of fbl-lower-to-kernels: the ops of a row group
// (matchRowGroups: a softmax's maximum, sum and normalization; a softmax
// backward's sum of dy * y and its dx) as one kernel with a work-group per
// row. Its work-items stride along the row a texel at a time; a reduction
// accumulates in registers, then the work-group combines its partials in
// local memory (a tree of halvings, one barrier a level) and every
// work-item reads the row's value back. Elementwise members store their
// row's texels as they compute them. Values per row never leave the
// kernel: a softmax forward reads its scores once from memory (later
// passes over the row hit the cache) instead of once per kernel, and three
// launches become one.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "KernelLowerings.h"

#include "fbl/CostModel/KernelPlan.h"
#include "fbl/Layout/Layout.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fbl;
using namespace mlir::fbl::kernels;
namespace fl = ::fbl::layout;

namespace {
/// Emits the body of one row kernel, member by member.
class RowKernelEmitter {
public:
  RowKernelEmitter(KernelBuilder &kb, const RowGroup &group)
      : kb(kb), b(kb.b), loc(kb.loc), a{kb.b, kb.loc}, group(group) {}

  LogicalResult emit();

  /// The kernel output each stored member writes.
  llvm::DenseMap<Operation *, unsigned> outputOf;

private:
  /// A member's tensor input at a step over the row: its texel (read once
  /// for the 4 iterations of the step, where its packed dim is the row's)
  /// or, per iteration, its element.
  Value inputAt(linalg::LinalgOp op, OpOperand &operand, ValueRange ivs,
                unsigned lane);
  /// The member's body at loop values `ivs`; `acc` is its accumulator
  /// (reductions). Null on failure (with a diagnostic).
  Value body(linalg::LinalgOp op, ValueRange ivs, unsigned lane, Value acc);
  /// The index `map` gives at loop values `ivs`.
  SmallVector<Value> indexAt(AffineMap map, ValueRange ivs);

  /// The work-group's partials combined (a tree of halvings in local
  /// memory), as every work-item reads it.
  Value reduceInGroup(Value partial, function_ref<Value(Value, Value)> combine);

  LogicalResult emitScalar(linalg::LinalgOp op);
  LogicalResult emitReduction(linalg::LinalgOp op);
  LogicalResult emitElementwise(linalg::LinalgOp op);
  /// Loop values of iteration `lane` of the step at row texel `t`.
  SmallVector<Value> rowIvs(Value t, unsigned lane);

  KernelBuilder &kb;
  OpBuilder &b;
  Location loc;
  Addressing a;
  const RowGroup &group;
  /// The row's index along each row loop, the work-item's place in the
  /// work-group, and the work-group's local memory.
  SmallVector<Value> row;
  Value item, scratch;
  /// Values per row: the results of reductions and scalar members.
  llvm::DenseMap<Value, Value> rowValues;
  /// Texels read at the current step (per operand), and values from above
  /// the bodies cloned once for the kernel.
  llvm::DenseMap<OpOperand *, Value> texels;
  Value step;
  IRMapping shared;
  bool failedBody = false;
};
} // namespace

SmallVector<Value> RowKernelEmitter::indexAt(AffineMap map, ValueRange ivs) {
  SmallVector<Value> idx;
  for (AffineExpr e : map.getResults()) {
    if (auto d = dyn_cast<AffineDimExpr>(e))
      idx.push_back(ivs[d.getPosition()]);
    else
      idx.push_back(a.c(cast<AffineConstantExpr>(e).getValue()));
  }
  return idx;
}

SmallVector<Value> RowKernelEmitter::rowIvs(Value t, unsigned lane) {
  SmallVector<Value> ivs(row);
  Value i = a.add(a.mul(t, fl::kTexelChannels), a.c(lane));
  // Past a row that ends inside its last texel: read the row's last element
  // (the value is dropped).
  if (group.length % fl::kTexelChannels && lane > 0) {
    Value inside = a.lt(i, group.length);
    i = arith::SelectOp::create(b, loc, inside, i, a.c(group.length - 1));
  }
  ivs.push_back(i);
  return ivs;
}

Value RowKernelEmitter::inputAt(linalg::LinalgOp op, OpOperand &operand,
                                ValueRange ivs, unsigned lane) {
  Value v = operand.get();
  if (auto it = rowValues.find(v); it != rowValues.end())
    return it->second;
  Value handle = kb.inputHandle(kb.addInput(v));
  auto type = cast<RankedTensorType>(v.getType());
  AffineMap map = op.getMatchingIndexingMap(&operand);
  unsigned rowLoop = group.rows.size();
  // Packed along the row: one texel holds the step's 4 iterations.
  if (op.getNumLoops() > rowLoop &&
      !isa<BufferLayoutAttr>(type.getEncoding())) {
    int packed = layoutOf(type, type.getEncoding()).packedDim();
    if (packed >= 0 && map.getResult(packed) == b.getAffineDimExpr(rowLoop)) {
      Value &texel = texels[&operand];
      if (!texel) {
        SmallVector<Value> first(ivs);
        first.back() = a.mul(step, fl::kTexelChannels);
        std::array<Value, 4> t = a.texelOf(type, indexAt(map, first));
        texel =
            LoadTexelOp::create(b, loc, VectorType::get({4}, b.getF32Type()),
                                handle, t[0], t[1], t[2]);
      }
      return vector::ExtractOp::create(b, loc, texel, lane);
    }
  }
  return a.load(handle, indexAt(map, ivs));
}

Value RowKernelEmitter::body(linalg::LinalgOp op, ValueRange ivs, unsigned lane,
                             Value acc) {
  Block &block = op->getRegion(0).front();
  IRMapping mapping;
  for (OpOperand *in : op.getDpsInputOperands()) {
    BlockArgument arg = block.getArgument(in->getOperandNumber());
    if (isa<RankedTensorType>(in->get().getType())) {
      mapping.map(arg, inputAt(op, *in, ivs, lane));
      continue;
    }
    FailureOr<Value> scalar = cloneScalar(in->get(), kb, shared);
    if (failed(scalar)) {
      failedBody = true;
      return {};
    }
    mapping.map(arg, *scalar);
  }
  if (acc)
    mapping.map(block.getArgument(op.getDpsInitOperand(0)->getOperandNumber()),
                acc);
  auto fromAbove = [&](Operation &inner) {
    for (Value operand : inner.getOperands())
      if (operand.getParentRegion() != &op->getRegion(0) &&
          !mapping.contains(operand)) {
        FailureOr<Value> m = cloneScalar(operand, kb, shared);
        if (failed(m))
          return false;
        mapping.map(operand, *m);
      }
    return true;
  };
  for (Operation &inner : block.without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    if (!fromAbove(inner)) {
      failedBody = true;
      return {};
    }
    b.clone(inner, mapping);
  }
  Operation *yield = block.getTerminator();
  if (!fromAbove(*yield)) {
    failedBody = true;
    return {};
  }
  return mapping.lookupOrDefault(yield->getOperand(0));
}

LogicalResult RowKernelEmitter::emitScalar(linalg::LinalgOp op) {
  Value v = body(op, row, 0, Value());
  if (!v)
    return failure();
  rowValues[op->getResult(0)] = v;
  return success();
}

LogicalResult RowKernelEmitter::emitReduction(linalg::LinalgOp op) {
  ReductionCombiner combiner = *matchReductionCombiner(op);
  int64_t size = group.groupSize();
  int64_t steps = llvm::divideCeil(group.length, fl::kTexelChannels);
  // Each work-item's partial over the texels it strides to, from the
  // combiner's neutral element (the op's initial value joins once, last).
  Value start = arith::ConstantOp::create(b, loc, combiner.neutral);
  auto loop = scf::ForOp::create(b, loc, item, a.c(steps), a.c(size),
                                 ValueRange{start});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    texels.clear();
    Value t = step = loop.getInductionVar();
    Value acc = loop.getRegionIterArgs()[0];
    for (unsigned lane = 0; lane < fl::kTexelChannels; ++lane) {
      SmallVector<Value> ivs = rowIvs(t, lane);
      Value next = body(op, ivs, lane, acc);
      if (!next)
        return failure();
      if (group.length % fl::kTexelChannels && lane > 0) {
        Value i = a.add(a.mul(t, fl::kTexelChannels), a.c(lane));
        next =
            arith::SelectOp::create(b, loc, a.lt(i, group.length), next, acc);
      }
      acc = next;
    }
    scf::YieldOp::create(b, loc, acc);
    texels.clear();
  }
  // The work-group's partials, halved level by level.
  auto combine = [&](Value acc, Value x) {
    SmallVector<Value> operands(2);
    operands[combiner.accPos] = acc;
    operands[1 - combiner.accPos] = x;
    return b
        .create(loc, combiner.op->getName().getIdentifier(), operands,
                TypeRange{acc.getType()}, combiner.op->getAttrs())
        ->getResult(0);
  };
  Value total = loop.getResult(0);
  if (size > 1)
    total = reduceInGroup(total, combine);
  // The op's initial value joins once, where it is not the neutral one.
  TypedAttr init = initConstant(op);
  if (init != combiner.neutral)
    total = combine(arith::ConstantOp::create(b, loc, init), total);
  rowValues[op->getResult(0)] = total;
  return success();
}

Value RowKernelEmitter::reduceInGroup(
    Value partial, function_ref<Value(Value, Value)> combine) {
  int64_t size = group.groupSize();
  memref::StoreOp::create(b, loc, partial, scratch, item);
  BarrierOp::create(b, loc);
  for (int64_t half = size / 2; half >= 1; half /= 2) {
    auto lower = scf::IfOp::create(b, loc, a.lt(item, half), false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&lower.getThenRegion().front());
      Value mine = memref::LoadOp::create(b, loc, scratch, item);
      Value other = memref::LoadOp::create(b, loc, scratch,
                                           ValueRange{a.add(item, a.c(half))});
      memref::StoreOp::create(b, loc, combine(mine, other), scratch, item);
    }
    BarrierOp::create(b, loc);
  }
  Value total = memref::LoadOp::create(b, loc, scratch, ValueRange{a.c(0)});
  // Before the next reduction stores its partials.
  BarrierOp::create(b, loc);
  return total;
}

LogicalResult RowKernelEmitter::emitElementwise(linalg::LinalgOp op) {
  int64_t size = group.groupSize();
  int64_t steps = llvm::divideCeil(group.length, fl::kTexelChannels);
  auto loop = scf::ForOp::create(b, loc, item, a.c(steps), a.c(size));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  texels.clear();
  Value t = step = loop.getInductionVar();
  OpResult result = op->getResult(0);
  Value handle = kb.outputHandle(outputOf.lookup(op));
  auto type = cast<RankedTensorType>(result.getType());
  AffineMap out = op.getIndexingMapMatchingResult(result);
  bool ragged = group.length % fl::kTexelChannels;
  SmallVector<Value> lanes;
  for (unsigned lane = 0; lane < fl::kTexelChannels; ++lane) {
    SmallVector<Value> ivs = rowIvs(t, lane);
    Value v = body(op, ivs, lane, Value());
    if (!v)
      return failure();
    Value inside;
    if (ragged && lane > 0)
      inside =
          a.lt(a.add(a.mul(t, fl::kTexelChannels), a.c(lane)), group.length);
    if (isa<BufferLayoutAttr>(type.getEncoding())) {
      Value offset = a.linear(type, indexAt(out, ivs));
      if (!inside) {
        StoreElementOp::create(b, loc, v, handle, offset);
        continue;
      }
      auto store = scf::IfOp::create(b, loc, inside, false);
      OpBuilder::InsertionGuard storeGuard(b);
      b.setInsertionPointToStart(&store.getThenRegion().front());
      StoreElementOp::create(b, loc, v, handle, offset);
      continue;
    }
    // Channels past the row are padding, written as zero.
    if (inside)
      v = arith::SelectOp::create(
          b, loc, inside, v,
          arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0)));
    lanes.push_back(v);
  }
  texels.clear();
  if (isa<BufferLayoutAttr>(type.getEncoding()))
    return success();
  SmallVector<Value> ivs = rowIvs(t, 0);
  std::array<Value, 4> at = a.texelOf(type, indexAt(out, ivs));
  Value texel = vector::FromElementsOp::create(
      b, loc, VectorType::get({4}, b.getF32Type()), lanes);
  StoreTexelOp::create(b, loc, texel, handle, at[0], at[1], at[2]);
  return success();
}

LogicalResult RowKernelEmitter::emit() {
  int64_t size = group.groupSize();
  // Local memory first: the kernel's top level.
  scratch = memref::AllocaOp::create(
      b, loc,
      MemRefType::get({size}, b.getF32Type(), AffineMap(),
                      b.getI64IntegerAttr(/*local*/ 3)));
  item = LocalIdOp::create(b, loc, b.getIndexType(), b.getI64IntegerAttr(0));
  Value rest =
      GroupIdOp::create(b, loc, b.getIndexType(), b.getI64IntegerAttr(0));
  row.assign(group.rows.size(), Value());
  for (int64_t d = group.rows.size() - 1; d >= 0; --d) {
    row[d] = d == 0 ? rest : a.rem(rest, group.rows[d]);
    rest = a.div(rest, group.rows[d]);
  }
  for (linalg::LinalgOp op : group.members) {
    LogicalResult status = success();
    if (outputOf.count(op))
      status = emitElementwise(op);
    else if (op.getNumLoops() == group.rows.size())
      status = emitScalar(op);
    else
      status = emitReduction(op);
    if (failed(status) || failedBody)
      return op.emitOpError(
          "fbl-lower-to-kernels: cannot compute a value of the op's body "
          "inside its row kernel");
  }
  return success();
}

FailureOr<DispatchOp> kernels::lowerRowGroup(const RowGroup &group,
                                             TargetAttr target,
                                             unsigned &counter) {
  OpBuilder b(group.place);
  KernelBuilder kb(b, group.place->getLoc(), target);
  // Outputs: the results of the elementwise members, read outside.
  SmallVector<RankedTensorType> outputs;
  SmallVector<linalg::LinalgOp> stored;
  RowKernelEmitter emitter(kb, group);
  // Inputs: what the members read from outside the group, and the tensors
  // their scalar operands and captured scalars read.
  llvm::DenseSet<Value> seen;
  for (linalg::LinalgOp op : group.members) {
    for (OpOperand *in : op.getDpsInputOperands()) {
      Value v = in->get();
      if (!isa<RankedTensorType>(v.getType()))
        collectScalarInputs(v, kb, seen);
      else if (!llvm::is_contained(group.members, v.getDefiningOp()))
        kb.addInput(v);
    }
    addCapturedInputs(op->getRegion(0), kb, seen);
  }
  for (linalg::LinalgOp op : group.members) {
    bool elementwise =
        op.getNumLoops() > group.rows.size() && op.getNumReductionLoops() == 0;
    if (!elementwise)
      continue;
    emitter.outputOf[op] = outputs.size();
    outputs.push_back(cast<RankedTensorType>(op->getResult(0).getType()));
    stored.push_back(op);
  }
  int64_t size = group.groupSize();
  std::string name = ("k" + Twine(counter++) + "_rows").str();
  kb.begin(name, outputs, {size * group.numRows()}, {size});
  LogicalResult status = emitter.emit();
  DispatchOp dispatch = kb.end();
  if (failed(status)) {
    dispatch->erase();
    return failure();
  }
  for (auto [r, op] : llvm::enumerate(stored))
    op->getResult(0).replaceAllUsesWith(dispatch.getResult(r));
  // A reduction another group reads stays for that group's kernel.
  for (linalg::LinalgOp op : llvm::reverse(group.members))
    if (op->use_empty())
      op->erase();
  return dispatch;
}
