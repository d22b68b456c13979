//===- RowKernels.cpp - One kernel per row group --------------------------===//
//
// The row kernel of fbl-lower-to-kernels: the ops of a row group
// (matchRowGroups: a softmax's maximum, sum and normalization; a softmax
// backward's sum of dy * y and its dx; a norm's statistics and the
// normalized rows) as one kernel with a work-group per 4 neighbouring rows
// where a tensor it stores packs 4 rows into a texel, else per 2 where its
// work-items hold both rows in registers, else per row.
// Its work-items stride along the row a texel at a time; a reduction
// accumulates in registers, then the work-group combines its partials in
// local memory (a tree of halvings, one barrier a level) and every
// work-item reads the row's value back. Elementwise members store their
// rows' texels as they compute them; a row value read outside is stored by
// the work-group's first work-item. Where a work-item's texels of the row
// fit in registers (RowGroup::holdsRows) its turns are unrolled and each
// tensor is read once for all passes: a softmax forward reads its scores
// once instead of once per pass, and three launches become one.
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
      : kb(kb), b(kb.b), loc(kb.loc), a{kb.b, kb.loc}, group(group),
        rowLoop(group.rows.size()), numRows(group.rowsPerGroup()) {}

  LogicalResult emit();

  /// The kernel output each stored member writes.
  llvm::DenseMap<Operation *, unsigned> outputOf;

private:
  /// A member's tensor input at loop values `ivs` (row `r` of the
  /// work-group, iteration `lane` of the step along the row).
  Value inputAt(linalg::LinalgOp op, OpOperand &operand, ValueRange ivs,
                unsigned r, unsigned lane);
  /// The member's body at loop values `ivs`; `acc` is its accumulator
  /// (reductions). Null on failure.
  Value body(linalg::LinalgOp op, ValueRange ivs, unsigned r, unsigned lane,
             Value acc);
  /// The index `map` gives at loop values `ivs`.
  SmallVector<Value> indexAt(AffineMap map, ValueRange ivs);
  /// Loop values of row `r`, iteration `lane` of the step at row texel `t`
  /// (past a row that ends inside its last texel: its last element).
  SmallVector<Value> rowIvs(unsigned r, Value t, unsigned lane);
  /// Whether iteration `lane` of the step at `t` lies in the row (null:
  /// always).
  Value laneInside(Value t, unsigned lane);
  /// The step of unrolled turn `k` (holdsRows) and whether it lies in the
  /// row (null: always); past the row, the row's last step.
  std::pair<Value, Value> turnAt(int64_t k);
  /// `x && y`, where null stands for true.
  Value both(Value x, Value y) { return !x ? y : !y ? x : a.andi(x, y); }
  /// Emits `each` for every step the work-item takes along the row: once
  /// per unrolled turn where it holds its rows (`inside`: whether the turn
  /// lies in the row, null: always), else in a loop over the steps. `accs`
  /// are carried from step to step (a reduction's partials) and hold their
  /// last values after.
  LogicalResult
  walkRow(SmallVectorImpl<Value> &accs,
          function_ref<LogicalResult(Value t, Value inside)> each);
  /// `then` under `cond` (null: always).
  void guarded(Value cond, function_ref<void()> then);
  /// The work-group's partials combined (a tree of halvings in local
  /// memory), as every work-item reads them: one per row.
  SmallVector<Value> reduceInGroup(ArrayRef<Value> partials,
                                   const ReductionCombiner &combiner);
  /// Stores a row value's `values` (one per row), by the first work-item.
  void storeRowValue(linalg::LinalgOp op, ArrayRef<Value> values);

  LogicalResult emitScalar(linalg::LinalgOp op);
  LogicalResult emitReduction(linalg::LinalgOp op);
  LogicalResult emitElementwise(linalg::LinalgOp op);

  KernelBuilder &kb;
  OpBuilder &b;
  Location loc;
  Addressing a;
  const RowGroup &group;
  unsigned rowLoop;
  int64_t numRows;
  /// Per row of the work-group: its index along each row loop (the last
  /// row along the grouped row loop where the rows run past it), and whether it
  /// is a row (null: always); `base` is the first row's.
  SmallVector<SmallVector<Value>> row;
  SmallVector<Value> rowValid;
  SmallVector<Value> base;
  Value item, scratch;
  /// Values per row: the results of reductions and scalar members.
  llvm::DenseMap<Value, SmallVector<Value>> rowValues;
  /// Texels read at the current step, per tensor, map, row (or iteration)
  /// and turn (holdsRows: all the work-item's turns, kept for every pass).
  llvm::DenseMap<std::tuple<Value, AffineMap, unsigned, int64_t>, Value> texels;
  /// The unrolled turn being emitted (holdsRows), else 0.
  int64_t turn = 0;
  /// Reads that are the same along the row, per tensor, map and row.
  llvm::DenseMap<std::tuple<Value, AffineMap, unsigned>, Value> rowInvariant;
  Value step;
  /// Values from above the bodies, cloned once for the kernel.
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

std::pair<Value, Value> RowKernelEmitter::turnAt(int64_t k) {
  int64_t size = group.groupSize();
  int64_t steps = llvm::divideCeil(group.length, fl::kTexelChannels);
  Value t = k == 0 ? item : a.add(item, a.c(k * size));
  if ((k + 1) * size <= steps)
    return {t, Value()};
  Value inside = a.lt(t, steps);
  // Never a read past the row: its values are dropped.
  return {arith::SelectOp::create(b, loc, inside, t, a.c(steps - 1)), inside};
}

Value RowKernelEmitter::laneInside(Value t, unsigned lane) {
  if (group.length % fl::kTexelChannels == 0 || lane == 0)
    return Value();
  return a.lt(a.add(a.mul(t, fl::kTexelChannels), a.c(lane)), group.length);
}

SmallVector<Value> RowKernelEmitter::rowIvs(unsigned r, Value t,
                                            unsigned lane) {
  SmallVector<Value> ivs(row[r]);
  Value i = a.add(a.mul(t, fl::kTexelChannels), a.c(lane));
  if (Value inside = laneInside(t, lane))
    i = arith::SelectOp::create(b, loc, inside, i, a.c(group.length - 1));
  ivs.push_back(i);
  return ivs;
}

void RowKernelEmitter::guarded(Value cond, function_ref<void()> then) {
  if (!cond)
    return then();
  auto branch = scf::IfOp::create(b, loc, cond, false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&branch.getThenRegion().front());
  then();
}

Value RowKernelEmitter::inputAt(linalg::LinalgOp op, OpOperand &operand,
                                ValueRange ivs, unsigned r, unsigned lane) {
  Value v = operand.get();
  if (auto it = rowValues.find(v); it != rowValues.end())
    return it->second[r];
  Value handle = kb.inputHandle(kb.addInput(v));
  auto type = cast<RankedTensorType>(v.getType());
  AffineMap map = op.getMatchingIndexingMap(&operand);
  auto texelType = VectorType::get({4}, b.getF32Type());
  // The same all along the row (a statistic an earlier kernel stored, a
  // vector over the rows): read once per row, at the kernel's top level,
  // where every pass over the row finds it.
  int packed = isa<BufferLayoutAttr>(type.getEncoding())
                   ? -1
                   : layoutOf(type, type.getEncoding()).packedDim();
  AffineExpr along = packed >= 0 ? map.getResult(packed) : AffineExpr();
  int grouped = group.groupedRow();
  bool alongGroup =
      along && grouped >= 0 && along == b.getAffineDimExpr(grouped);
  // The whole texel holding the element at `at`.
  auto loadTexel = [&](ArrayRef<Value> at) -> Value {
    std::array<Value, 4> texel = a.texelOf(type, indexAt(map, at));
    return LoadTexelOp::create(b, loc, texelType, handle, texel[0], texel[1],
                               texel[2]);
  };
  // Row r's channel of a texel that holds the work-group's rows (4 packed
  // rows, or 2 paired rows from an even one).
  auto groupChannel = [&](Value texel) -> Value {
    if (group.packedRow >= 0)
      return vector::ExtractOp::create(b, loc, texel, r);
    Value channel = a.add(a.rem(base[grouped], fl::kTexelChannels), a.c(r));
    return vector::ExtractOp::create(b, loc, texel, channel);
  };
  if (op.getNumLoops() > rowLoop && !map.isFunctionOfDim(rowLoop)) {
    // One texel for all the work-group's rows where it holds them.
    Value &value = rowInvariant[{v, map, alongGroup ? numRows : r}];
    if (!value) {
      OpBuilder::InsertionGuard guard(b);
      kb.setInsertionPointToTopLevel();
      SmallVector<Value> at(alongGroup ? base : row[r]);
      at.push_back(a.c(0));
      value = alongGroup ? loadTexel(at) : a.load(handle, indexAt(map, at));
    }
    return alongGroup ? groupChannel(value) : value;
  }
  if (packed >= 0 && op.getNumLoops() > rowLoop) {
    // Packed along the row: one texel holds the step's 4 iterations.
    if (along && along == b.getAffineDimExpr(rowLoop)) {
      Value &texel = texels[{v, map, r, turn}];
      if (!texel) {
        SmallVector<Value> first(ivs);
        first.back() = a.mul(step, fl::kTexelChannels);
        texel = loadTexel(first);
      }
      return vector::ExtractOp::create(b, loc, texel, lane);
    }
    // Packed along the rows the work-group takes: one texel holds its rows.
    if (alongGroup) {
      Value &texel = texels[{v, map, numRows + lane, turn}];
      if (!texel) {
        SmallVector<Value> first(base);
        first.push_back(ivs.back());
        texel = loadTexel(first);
      }
      return groupChannel(texel);
    }
  }
  return a.load(handle, indexAt(map, ivs));
}

Value RowKernelEmitter::body(linalg::LinalgOp op, ValueRange ivs, unsigned r,
                             unsigned lane, Value acc) {
  FailureOr<SmallVector<Value>> results = inlineBody(
      op, kb, ivs, [&](OpOperand &in) { return inputAt(op, in, ivs, r, lane); },
      acc ? ValueRange(acc) : ValueRange(), IRMapping(), shared);
  if (failed(results)) {
    failedBody = true;
    return {};
  }
  return results->front();
}

void RowKernelEmitter::storeRowValue(linalg::LinalgOp op,
                                     ArrayRef<Value> values) {
  auto it = outputOf.find(op);
  if (it == outputOf.end())
    return;
  Value handle = kb.outputHandle(it->second);
  OpResult result = op->getResult(0);
  auto type = cast<RankedTensorType>(result.getType());
  AffineMap out = op.getIndexingMapMatchingResult(result);
  // The row loop (reductions) indexes no element of it.
  auto ivsOf = [&](ArrayRef<Value> at) {
    SmallVector<Value> ivs(at);
    if (op.getNumLoops() > rowLoop)
      ivs.push_back(a.c(0));
    return ivs;
  };
  guarded(a.lt(item, 1), [&] {
    if (isa<BufferLayoutAttr>(type.getEncoding())) {
      for (unsigned r = 0; r < numRows; ++r)
        guarded(rowValid[r], [&] {
          StoreElementOp::create(b, loc, values[r], handle,
                                 a.linear(type, indexAt(out, ivsOf(row[r]))));
        });
      return;
    }
    // A texel of the work-group's rows (one row: the matcher stores only
    // into buffers or a single row's scalar then); rows past the end are
    // padding, written as zero.
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
    SmallVector<Value> channels;
    for (unsigned r = 0; r < fl::kTexelChannels; ++r)
      channels.push_back(r >= numRows ? zero
                         : rowValid[r]
                             ? Value(arith::SelectOp::create(
                                   b, loc, rowValid[r], values[r], zero))
                             : values[r]);
    std::array<Value, 4> at = a.texelOf(type, indexAt(out, ivsOf(base)));
    Value texel = vector::FromElementsOp::create(
        b, loc, VectorType::get({4}, b.getF32Type()), channels);
    StoreTexelOp::create(b, loc, texel, handle, at[0], at[1], at[2]);
  });
}

LogicalResult RowKernelEmitter::emitScalar(linalg::LinalgOp op) {
  SmallVector<Value> values;
  for (unsigned r = 0; r < numRows; ++r) {
    Value v = body(op, row[r], r, 0, Value());
    if (!v)
      return failure();
    values.push_back(v);
  }
  storeRowValue(op, values);
  rowValues[op->getResult(0)] = values;
  return success();
}

LogicalResult RowKernelEmitter::walkRow(
    SmallVectorImpl<Value> &accs,
    function_ref<LogicalResult(Value t, Value inside)> each) {
  if (group.holdsRows()) {
    for (turn = 0; turn < group.turns(); ++turn) {
      auto [t, inside] = turnAt(turn);
      step = t;
      if (failed(each(t, inside)))
        return failure();
    }
    turn = 0;
    return success();
  }
  int64_t steps = llvm::divideCeil(group.length, fl::kTexelChannels);
  auto loop = scf::ForOp::create(b, loc, item, a.c(steps),
                                 a.c(group.groupSize()), accs);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    texels.clear();
    accs.assign(loop.getRegionIterArgs().begin(),
                loop.getRegionIterArgs().end());
    step = loop.getInductionVar();
    if (failed(each(step, Value())))
      return failure();
    // A loop without results has its terminator already.
    if (!accs.empty())
      scf::YieldOp::create(b, loc, accs);
    texels.clear();
  }
  accs.assign(loop.getResults().begin(), loop.getResults().end());
  return success();
}

LogicalResult RowKernelEmitter::emitReduction(linalg::LinalgOp op) {
  ReductionCombiner combiner = *matchReductionCombiner(op);
  // Each work-item's partials over the texels it strides to, from the
  // combiner's neutral element (the op's initial value joins once, last).
  SmallVector<Value> accs(numRows,
                          arith::ConstantOp::create(b, loc, combiner.neutral));
  // Adds the texels of the step at `t` where `inside` (null: always).
  auto accumulate = [&](Value t, Value inside) -> LogicalResult {
    for (unsigned r = 0; r < numRows; ++r)
      for (unsigned lane = 0; lane < fl::kTexelChannels; ++lane) {
        Value next = body(op, rowIvs(r, t, lane), r, lane, accs[r]);
        if (!next)
          return failure();
        if (Value in = both(inside, laneInside(t, lane)))
          next = arith::SelectOp::create(b, loc, in, next, accs[r]);
        accs[r] = next;
      }
    return success();
  };
  if (failed(walkRow(accs, accumulate)))
    return failure();
  SmallVector<Value> totals(accs);
  if (group.groupSize() > 1)
    totals = reduceInGroup(totals, combiner);
  // The op's initial value joins once, where it is not the neutral one.
  TypedAttr init = initConstant(op);
  if (init != combiner.neutral)
    for (Value &total : totals)
      total = combiner.build(b, loc, arith::ConstantOp::create(b, loc, init),
                             total);
  storeRowValue(op, totals);
  rowValues[op->getResult(0)] = totals;
  return success();
}

SmallVector<Value>
RowKernelEmitter::reduceInGroup(ArrayRef<Value> partials,
                                const ReductionCombiner &combiner) {
  int64_t size = group.groupSize();
  // Row r's partial of work-item i at r * size + i.
  auto at = [&](unsigned r, Value i) { return a.add(a.c(r * size), i); };
  for (unsigned r = 0; r < numRows; ++r)
    memref::StoreOp::create(b, loc, partials[r], scratch,
                            ValueRange{at(r, item)});
  BarrierOp::create(b, loc);
  for (int64_t half = size / 2; half >= 1; half /= 2) {
    guarded(a.lt(item, half), [&] {
      for (unsigned r = 0; r < numRows; ++r) {
        Value mine =
            memref::LoadOp::create(b, loc, scratch, ValueRange{at(r, item)});
        Value other = memref::LoadOp::create(
            b, loc, scratch, ValueRange{at(r, a.add(item, a.c(half)))});
        memref::StoreOp::create(b, loc, combiner.build(b, loc, mine, other),
                                scratch, ValueRange{at(r, item)});
      }
    });
    BarrierOp::create(b, loc);
  }
  SmallVector<Value> totals;
  for (unsigned r = 0; r < numRows; ++r)
    totals.push_back(
        memref::LoadOp::create(b, loc, scratch, ValueRange{at(r, a.c(0))}));
  // Before the next reduction stores its partials.
  BarrierOp::create(b, loc);
  return totals;
}

LogicalResult RowKernelEmitter::emitElementwise(linalg::LinalgOp op) {
  OpResult result = op->getResult(0);
  Value handle = kb.outputHandle(outputOf.lookup(op));
  auto type = cast<RankedTensorType>(result.getType());
  AffineMap out = op.getIndexingMapMatchingResult(result);
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  auto texelType = VectorType::get({4}, b.getF32Type());
  // Computes and stores the texels of the step at `t` where `inside` (null:
  // always).
  auto storeStep = [&](Value t, Value inside) -> LogicalResult {
    // values[r][lane]: row r's element at iteration `lane` of the step.
    SmallVector<SmallVector<Value, 4>> values(numRows);
    for (unsigned r = 0; r < numRows; ++r)
      for (unsigned lane = 0; lane < fl::kTexelChannels; ++lane) {
        Value v = body(op, rowIvs(r, t, lane), r, lane, Value());
        if (!v)
          return failure();
        values[r].push_back(v);
      }
    if (isa<BufferLayoutAttr>(type.getEncoding())) {
      for (unsigned r = 0; r < numRows; ++r)
        for (unsigned lane = 0; lane < fl::kTexelChannels; ++lane)
          guarded(both(inside, both(laneInside(t, lane), rowValid[r])), [&] {
            StoreElementOp::create(
                b, loc, values[r][lane], handle,
                a.linear(type, indexAt(out, rowIvs(r, t, lane))));
          });
      return success();
    }
    int packed = layoutOf(type, type.getEncoding()).packedDim();
    if (out.getDimPosition(packed) == rowLoop) {
      // Whole texels along each row; channels past the row are padding,
      // written as zero.
      for (unsigned r = 0; r < numRows; ++r) {
        SmallVector<Value> channels;
        for (unsigned lane = 0; lane < fl::kTexelChannels; ++lane) {
          Value v = values[r][lane];
          if (Value in = laneInside(t, lane))
            v = arith::SelectOp::create(b, loc, in, v, zero);
          channels.push_back(v);
        }
        guarded(both(inside, rowValid[r]), [&] {
          std::array<Value, 4> at =
              a.texelOf(type, indexAt(out, rowIvs(r, t, 0)));
          Value texel =
              vector::FromElementsOp::create(b, loc, texelType, channels);
          StoreTexelOp::create(b, loc, texel, handle, at[0], at[1], at[2]);
        });
      }
      return success();
    }
    // Texels of the work-group's 4 rows, one per iteration of the step;
    // rows past the end are padding, written as zero.
    for (unsigned lane = 0; lane < fl::kTexelChannels; ++lane) {
      SmallVector<Value> channels;
      for (unsigned r = 0; r < fl::kTexelChannels; ++r)
        channels.push_back(
            rowValid[r] ? Value(arith::SelectOp::create(b, loc, rowValid[r],
                                                        values[r][lane], zero))
                        : values[r][lane]);
      guarded(both(inside, laneInside(t, lane)), [&] {
        SmallVector<Value> ivs(base);
        ivs.push_back(a.add(a.mul(t, fl::kTexelChannels), a.c(lane)));
        std::array<Value, 4> at = a.texelOf(type, indexAt(out, ivs));
        Value texel =
            vector::FromElementsOp::create(b, loc, texelType, channels);
        StoreTexelOp::create(b, loc, texel, handle, at[0], at[1], at[2]);
      });
    }
    return success();
  };
  SmallVector<Value> noAccs;
  return walkRow(noAccs, storeStep);
}

LogicalResult RowKernelEmitter::emit() {
  int64_t size = group.groupSize();
  // Local memory first: the kernel's top level.
  scratch = memref::AllocaOp::create(
      b, loc,
      MemRefType::get({numRows * size}, b.getF32Type(), AffineMap(),
                      b.getI64IntegerAttr(/*local*/ 3)));
  item = LocalIdOp::create(b, loc, b.getIndexType(), b.getI64IntegerAttr(0));
  // The work-group's rows: its id unravelled over the row loops, its
  // numRows rows along the grouped row loop.
  Value rest =
      GroupIdOp::create(b, loc, b.getIndexType(), b.getI64IntegerAttr(0));
  int grouped = group.groupedRow();
  base.assign(rowLoop, Value());
  for (int64_t d = static_cast<int64_t>(rowLoop) - 1; d >= 0; --d) {
    int64_t extent = group.rows[d];
    if (d == grouped)
      extent = llvm::divideCeil(extent, numRows);
    base[d] = d == 0 ? rest : a.rem(rest, extent);
    rest = a.div(rest, extent);
    if (d == grouped)
      base[d] = a.mul(base[d], numRows);
  }
  for (unsigned r = 0; r < numRows; ++r) {
    SmallVector<Value> idx(base);
    Value valid;
    if (grouped >= 0) {
      int64_t extent = group.rows[grouped];
      Value i = a.add(base[grouped], a.c(r));
      if (extent % numRows && r > 0) {
        valid = a.lt(i, extent);
        i = arith::SelectOp::create(b, loc, valid, i, a.c(extent - 1));
      }
      idx[grouped] = i;
    }
    row.push_back(idx);
    rowValid.push_back(valid);
  }
  for (linalg::LinalgOp op : group.members) {
    // A row value an earlier kernel stored is read from memory instead.
    if (!outputOf.count(op) && op->use_empty())
      continue;
    LogicalResult status = success();
    if (op.getNumLoops() == rowLoop)
      status = emitScalar(op);
    else if (op.getNumReductionLoops() > 0)
      status = emitReduction(op);
    else
      status = emitElementwise(op);
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
  // Outputs: the elementwise members' results, then the row values read
  // outside.
  SmallVector<RankedTensorType> outputs;
  SmallVector<linalg::LinalgOp> stored = group.storedMembers();
  for (linalg::LinalgOp op : stored) {
    emitter.outputOf[op] = outputs.size();
    outputs.push_back(cast<RankedTensorType>(op->getResult(0).getType()));
  }
  int64_t size = group.groupSize();
  std::string name = ("k" + Twine(counter++) + "_rows").str();
  kb.begin(name, outputs, {size * group.numGroups()}, {size});
  LogicalResult status = emitter.emit();
  DispatchOp dispatch = kb.end();
  if (failed(status)) {
    dispatch->erase();
    return failure();
  }
  for (auto [r, op] : llvm::enumerate(stored))
    op->getResult(0).replaceAllUsesWith(dispatch.getResult(r));
  return dispatch;
}
