//===- CopyKernels.cpp - Relayout, slice and insert kernels ---------------===//
//
// The copy kernels of fbl-lower-to-kernels: fbl.relayout (a 4x4 block
// transpose between packings where blocks cover the tensor, else a per-texel
// copy as its kernel plan says), tensor.extract_slice, tensor.insert_slice,
// tensor.insert of a scalar and constant tensors, each one work-item per
// output texel (per element for buffers) that reads the element its channel
// holds from the source.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "KernelLowerings.h"

#include "fbl/CostModel/KernelPlan.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::fbl;
using namespace mlir::fbl::kernels;

/// The block transpose of a relayout between packings: a work-item per 4x4
/// block over (the source's packed dim, the destination's) reads the
/// block's 4 source texels, transposes them in registers and writes 4
/// destination texels.
static void emitBlockTranspose(KernelBuilder &kb, RelayoutOp op,
                               const ::fbl::cost::KernelShape &plan,
                               unsigned src) {
  OpBuilder &b = kb.b;
  Location loc = op.getLoc();
  Addressing a{b, loc};
  RankedTensorType type = op.getType();
  auto sourceType = op.getSource().getType();
  unsigned source = plan.mLoop, dest = plan.nLoop;
  int64_t rows = type.getDimSize(source) / 4, cols = type.getDimSize(dest) / 4;
  Value bx = kb.workItem(0), by = kb.workItem(1), bz = kb.workItem(2);
  Value inY = a.lt(by, rows);
  Value inX = a.lt(bx, cols);
  auto guard = scf::IfOp::create(b, loc, a.andi(inX, inY), false);
  b.setInsertionPointToStart(&guard.getThenRegion().front());
  // The other dims from the batch id, the last fastest.
  SmallVector<Value> origin(type.getRank());
  Value rest = bz;
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    if (d == source || d == dest)
      continue;
    origin[d] = a.rem(rest, type.getDimSize(d));
    rest = a.div(rest, type.getDimSize(d));
  }
  origin[source] = a.mul(by, 4);
  origin[dest] = a.mul(bx, 4);
  auto texelType = VectorType::get({4}, b.getF32Type());
  // Source texel o: channels along `source` at `dest` offset o.
  SmallVector<Value> texels;
  for (int64_t o = 0; o < 4; ++o) {
    SmallVector<Value> idx = origin;
    idx[dest] = a.add(origin[dest], a.c(o));
    std::array<Value, 4> t = a.texelOf(sourceType, idx);
    texels.push_back(LoadTexelOp::create(b, loc, texelType, kb.inputHandle(src),
                                         t[0], t[1], t[2]));
  }
  // Destination texel o: channels along `dest` at `source` offset o.
  for (int64_t o = 0; o < 4; ++o) {
    SmallVector<Value> channels;
    for (int64_t ch = 0; ch < 4; ++ch)
      channels.push_back(vector::ExtractOp::create(b, loc, texels[ch], o));
    SmallVector<Value> idx = origin;
    idx[source] = a.add(origin[source], a.c(o));
    std::array<Value, 4> t = a.texelOf(type, idx);
    Value texel = vector::FromElementsOp::create(b, loc, texelType, channels);
    StoreTexelOp::create(b, loc, texel, kb.outputHandle(), t[0], t[1], t[2]);
  }
  b.setInsertionPointAfter(guard);
}

/// Lowers fbl.relayout to the copy kernel its plan says: a block transpose,
/// or the per-texel copy (a whole texel per output texel when the packed
/// dims agree).
void kernels::lowerRelayout(RelayoutOp op, TargetAttr target,
                            unsigned &counter) {
  OpBuilder b(op);
  KernelBuilder kb(b, op.getLoc(), target);
  unsigned src = kb.addInput(op.getSource());
  RankedTensorType type = op.getType();
  std::optional<::fbl::cost::KernelShape> plan =
      planKernel(op, {op.getSource().getType().getEncoding()},
                 {type.getEncoding()}, target);
  std::string name = ("k" + Twine(counter++) + "_relayout").str();
  if (plan->kind == ::fbl::cost::KernelKind::BlockTranspose) {
    std::array<int64_t, 3> items = ::fbl::cost::gridOf(*plan);
    kb.begin(name, type, items);
    emitBlockTranspose(kb, op, *plan, src);
  } else {
    kb.begin(name, type, gridFor(type));
    // A copy cannot fail: no body to inline.
    (void)emitPlannedKernel(
        kb, *plan, {src}, std::nullopt, TypedAttr(),
        [](ValueRange, ValueRange values, ValueRange, IRMapping &) {
          return FailureOr<SmallVector<Value>>(
              SmallVector<Value>{values.front()});
        });
  }
  DispatchOp dispatch = kb.end();
  op.getResult().replaceAllUsesWith(dispatch.getResult(0));
  op.erase();
}

/// Whether `insert` writes a region its kernel can test elements against:
/// static offsets, static strides of at least 1.
static bool hasStaticPlacement(tensor::InsertSliceOp insert) {
  return llvm::none_of(insert.getMixedOffsets(),
                       [](OpFoldResult s) { return isa<Value>(s); }) &&
         llvm::none_of(insert.getStaticStrides(),
                       [](int64_t s) { return s < 1; });
}

/// Whether `v` is zeros: a zero fill or splat constant.
static bool isZeros(Value v) {
  if (auto fill = v.getDefiningOp<linalg::FillOp>())
    return matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
  Attribute value;
  if (matchPattern(v, m_Constant(&value)))
    if (auto dense = dyn_cast<DenseFPElementsAttr>(value);
        dense && dense.isSplat() && dense.getSplatValue<APFloat>().isZero())
      return true;
  return false;
}

bool kernels::isChainedInsert(Operation *op) {
  auto insert = dyn_cast<tensor::InsertSliceOp>(op);
  if (!insert || !insert->hasOneUse() || !hasStaticPlacement(insert))
    return false;
  auto next = dyn_cast<tensor::InsertSliceOp>(*insert->user_begin());
  return next && next.getDest() == insert.getResult() &&
         next.getSource() != insert.getResult() &&
         next->getBlock() == insert->getBlock();
}

SmallVector<tensor::InsertSliceOp>
kernels::insertChainOf(tensor::InsertSliceOp op) {
  SmallVector<tensor::InsertSliceOp> chain = {op};
  while (auto prev =
             chain.back().getDest().getDefiningOp<tensor::InsertSliceOp>()) {
    if (!isChainedInsert(prev))
      break;
    chain.push_back(prev);
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

/// The element at `idx` of `insert`'s result: `readSource(i)`, the source's
/// element i, inside the inserted region (offset <= i < offset + size *
/// stride, (i - offset) % stride == 0), `outside()` elsewhere.
static Value insertedElement(OpBuilder &b, Location loc,
                             tensor::InsertSliceOp insert, ValueRange idx,
                             function_ref<Value(ValueRange)> readSource,
                             function_ref<Value()> outside) {
  Addressing a{b, loc};
  ArrayRef<int64_t> offsets = insert.getStaticOffsets();
  ArrayRef<int64_t> sizes = insert.getStaticSizes();
  ArrayRef<int64_t> strides = insert.getStaticStrides();
  llvm::SmallBitVector dropped = insert.getDroppedDims();
  Value inside;
  SmallVector<Value> srcIdx;
  for (unsigned d = 0; d < offsets.size(); ++d) {
    Value rel = arith::SubIOp::create(b, loc, idx[d], a.c(offsets[d]));
    Value ge = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, idx[d],
                                     a.c(offsets[d]));
    Value lt = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, idx[d],
                                     a.c(offsets[d] + sizes[d] * strides[d]));
    Value zero = a.c(0);
    Value phase = arith::RemSIOp::create(b, loc, rel, a.c(strides[d]));
    Value onStride =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, phase, zero);
    inside = a.andi(
        inside, arith::AndIOp::create(
                    b, loc, ge, arith::AndIOp::create(b, loc, lt, onStride)));
    if (!dropped.test(d))
      srcIdx.push_back(arith::DivSIOp::create(b, loc, rel, a.c(strides[d])));
  }
  Type elem = insert.getType().getElementType();
  auto pick = scf::IfOp::create(b, loc, TypeRange{elem}, inside, true);
  b.setInsertionPointToStart(&pick.getThenRegion().front());
  scf::YieldOp::create(b, loc, readSource(srcIdx));
  b.setInsertionPointToStart(&pick.getElseRegion().front());
  scf::YieldOp::create(b, loc, outside());
  b.setInsertionPointAfter(pick);
  return pick.getResult(0);
}

/// The index of `extract`'s source that its result's `idx` reads.
static SmallVector<Value> slicedIndex(OpBuilder &b, Location loc,
                                      tensor::ExtractSliceOp extract,
                                      ValueRange idx) {
  Addressing a{b, loc};
  llvm::SmallBitVector dropped = extract.getDroppedDims();
  SmallVector<Value> srcIdx;
  unsigned r = 0;
  for (auto [d, offset, stride] : llvm::enumerate(extract.getStaticOffsets(),
                                                  extract.getStaticStrides())) {
    Value i = dropped.test(d) ? a.c(0) : idx[r++];
    Value at = a.c(offset);
    srcIdx.push_back(a.add(a.mul(i, stride), at));
  }
  return srcIdx;
}

//===----------------------------------------------------------------------===//
// Copies read through
//===----------------------------------------------------------------------===//

/// Whether `op` is a copy a kernel can read through: a view, a slice of
/// static placement, or an insert of static placement into zeros.
static bool isReadableThrough(Operation &op) {
  if (isa<TransposeViewOp, ReshapeViewOp>(op))
    return true;
  if (auto extract = dyn_cast<tensor::ExtractSliceOp>(op))
    return llvm::none_of(extract.getStaticOffsets(), ShapedType::isDynamic) &&
           llvm::all_of(extract.getStaticStrides(),
                        [](int64_t s) { return s >= 1; });
  auto insert = dyn_cast<tensor::InsertSliceOp>(op);
  return insert && hasStaticPlacement(insert) && isZeros(insert.getDest());
}

ReadThrough::ReadThrough(Block &block) {
  // Readers come after what they read: decide from the last op up, each
  // copy knowing whether its readers are read through.
  for (Operation &op : llvm::reverse(block)) {
    if (!isReadableThrough(op) || op.use_empty())
      continue;
    bool allRead = llvm::all_of(op.getUses(), [&](OpOperand &use) {
      Operation *reader = use.getOwner();
      // Slices and inserts read their source element by element, in their
      // copy kernel or where they are read through themselves. A view's
      // reader addresses its source's storage, which must then exist.
      if (auto insert = dyn_cast<tensor::InsertSliceOp>(reader))
        return &use == &insert.getSourceMutable();
      if (isa<tensor::ExtractSliceOp>(reader))
        return use.getOperandNumber() == 0;
      return isa<TransposeViewOp, ReshapeViewOp>(reader) &&
             copies.contains(reader);
    });
    if (allRead)
      copies.insert(&op);
  }
}

Value ReadThrough::source(Value v) const {
  while (contains(v.getDefiningOp())) {
    Operation *copy = v.getDefiningOp();
    auto insert = dyn_cast<tensor::InsertSliceOp>(copy);
    v = insert ? insert.getSource() : copy->getOperand(0);
  }
  return v;
}

Value ReadThrough::load(OpBuilder &b, Location loc, Value v, Value handle,
                        ValueRange idx) const {
  Operation *copy = v.getDefiningOp();
  Addressing a{b, loc};
  if (!contains(copy))
    return a.load(handle, idx);
  auto next = [&](Value from, ValueRange at) {
    return load(b, loc, from, handle, at);
  };
  if (auto transpose = dyn_cast<TransposeViewOp>(copy)) {
    // Result dim i is source dim permutation[i].
    SmallVector<Value> at(idx.size());
    for (auto [i, p] : llvm::enumerate(transpose.getPermutation()))
      at[p] = idx[i];
    return next(transpose.getSource(), at);
  }
  if (auto reshape = dyn_cast<ReshapeViewOp>(copy)) {
    ArrayRef<int64_t> sourceShape = reshape.getSource().getType().getShape();
    ArrayRef<int64_t> shape = reshape.getType().getShape();
    SmallVector<Value> at;
    for (auto [j, group] : llvm::enumerate(reshape.getReassociationIndices())) {
      if (reshape.isCollapse()) {
        // Result dim j holds the group's source dims, the last fastest.
        SmallVector<Value> parts(group.size());
        Value rest = idx[j];
        for (int64_t g = group.size() - 1; g > 0; --g) {
          parts[g] = a.rem(rest, sourceShape[group[g]]);
          rest = a.div(rest, sourceShape[group[g]]);
        }
        parts[0] = rest;
        at.append(parts);
        continue;
      }
      // Source dim j holds the group's result dims.
      Value linear = idx[group.front()];
      for (int64_t d : ArrayRef<int64_t>(group).drop_front()) {
        Value scaled = a.mul(linear, shape[d]);
        linear = a.add(scaled, idx[d]);
      }
      at.push_back(linear);
    }
    return next(reshape.getSource(), at);
  }
  if (auto extract = dyn_cast<tensor::ExtractSliceOp>(copy))
    return next(extract.getSource(), slicedIndex(b, loc, extract, idx));
  auto insert = cast<tensor::InsertSliceOp>(copy);
  Type elem = insert.getType().getElementType();
  return insertedElement(
      b, loc, insert, idx,
      [&](ValueRange at) { return next(insert.getSource(), at); },
      [&] {
        return arith::ConstantOp::create(b, loc, b.getZeroAttr(elem))
            .getResult();
      });
}

/// Lowers tensor.extract_slice and tensor.insert_slice (static offsets,
/// sizes and strides) to copy kernels.
LogicalResult kernels::lowerSlice(Operation *op, const ReadThrough &through,
                                  TargetAttr target, unsigned &counter) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  KernelBuilder kb(b, loc, target);
  auto offsetsSizesStrides = cast<OffsetSizeAndStrideOpInterface>(op);
  if (!offsetsSizesStrides.hasUnitStride() &&
      llvm::any_of(offsetsSizesStrides.getMixedStrides(),
                   [](OpFoldResult s) { return isa<Value>(s); }))
    return op->emitOpError("fbl-lower-to-kernels: dynamic strides");
  if (llvm::any_of(offsetsSizesStrides.getMixedOffsets(),
                   [](OpFoldResult s) { return isa<Value>(s); }))
    return op->emitOpError("fbl-lower-to-kernels: dynamic offsets");
  ArrayRef<int64_t> strides = offsetsSizesStrides.getStaticStrides();
  // A zero stride reads one element several times or writes several into
  // one place; the insert's kernel divides by the stride.
  if (llvm::any_of(strides, [](int64_t s) { return s < 1; }))
    return op->emitOpError("fbl-lower-to-kernels: strides below 1");
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  std::string name = ("k" + Twine(counter++) + "_slice").str();
  if (auto extract = dyn_cast<tensor::ExtractSliceOp>(op)) {
    unsigned src = kb.addInput(through.source(extract.getSource()));
    kb.begin(name, resultType, gridFor(resultType));
    kb.forEachOutputElement([&](ValueRange idx) {
      SmallVector<Value> srcIdx = slicedIndex(b, loc, extract, idx);
      return through.load(b, loc, extract.getSource(), kb.inputHandle(src),
                          srcIdx);
    });
  } else {
    // The whole chain in one kernel: each element comes from the last insert
    // whose region holds it, else from the first one's destination.
    SmallVector<tensor::InsertSliceOp> chain =
        insertChainOf(cast<tensor::InsertSliceOp>(op));
    SmallVector<unsigned> sources;
    for (tensor::InsertSliceOp insert : chain)
      sources.push_back(kb.addInput(through.source(insert.getSource())));
    // A tensor.empty destination (tensor.concat decomposes into inserts into
    // one) is never allocated: fill what the slices leave out with zeros
    // instead of reading it.
    Value base = chain.front().getDest();
    std::optional<unsigned> dest;
    if (!base.getDefiningOp<tensor::EmptyOp>())
      dest = kb.addInput(base);
    Type elem = resultType.getElementType();
    kb.begin(name, resultType, gridFor(resultType));
    kb.forEachOutputElement([&](ValueRange idx) -> Value {
      Addressing a{b, loc};
      // Inserts from the last: the first whose region holds idx gives it.
      std::function<Value(unsigned)> pickFrom = [&](unsigned n) -> Value {
        if (n == 0)
          return dest ? a.load(kb.inputHandle(*dest), idx)
                      : arith::ConstantOp::create(b, loc, b.getZeroAttr(elem))
                            .getResult();
        tensor::InsertSliceOp insert = chain[n - 1];
        Value handle = kb.inputHandle(sources[n - 1]);
        return insertedElement(
            b, loc, insert, idx,
            [&](ValueRange i) {
              return through.load(b, loc, insert.getSource(), handle, i);
            },
            [&] { return pickFrom(n - 1); });
      };
      return pickFrom(chain.size());
    });
  }
  DispatchOp dispatch = kb.end();
  op->getResult(0).replaceAllUsesWith(dispatch.getResult(0));
  op->erase();
  return success();
}

//===----------------------------------------------------------------------===//
// Sums of inserts
//===----------------------------------------------------------------------===//

/// An elementwise add of two tensors of the result's shape (linalg.add, or a
/// generic whose body adds its two inputs) that does not read its init.
static bool isTensorAdd(Operation *op, GemmEpilogueKinds epilogues) {
  auto l = dyn_cast<linalg::LinalgOp>(op);
  if (!l || op->getNumResults() != 1 || l.getNumDpsInputs() != 2 ||
      l.getNumDpsInits() != 1 || l.getNumReductionLoops() != 0 ||
      isGemmEpilogue(l, epilogues))
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  OpOperand *init = l.getDpsInitOperand(0);
  if (!type || l.payloadUsesValueFromOperand(init) ||
      !l.getMatchingIndexingMap(init).isIdentity())
    return false;
  for (OpOperand *in : l.getDpsInputOperands()) {
    auto t = dyn_cast<RankedTensorType>(in->get().getType());
    if (!t || t.getShape() != type.getShape() ||
        t.getElementType() != type.getElementType() ||
        !l.getMatchingIndexingMap(in).isIdentity())
      return false;
  }
  Block &body = *l.getBlock();
  auto add = dyn_cast<arith::AddFOp>(&body.front());
  return add && body.getOperations().size() == 2 &&
         body.getTerminator()->getOperand(0) == add.getResult() &&
         llvm::is_contained(add->getOperands(), body.getArgument(0)) &&
         llvm::is_contained(add->getOperands(), body.getArgument(1));
}

/// An add read only by another add of the same block (so that one's sum
/// computes it).
static Operation *addUser(Operation *add, GemmEpilogueKinds epilogues) {
  if (!isTensorAdd(add, epilogues) || !add->hasOneUse())
    return nullptr;
  Operation *user = *add->user_begin();
  return isTensorAdd(user, epilogues) && user->getBlock() == add->getBlock()
             ? user
             : nullptr;
}

/// An insert of static placement into zeros, read only once.
static tensor::InsertSliceOp zeroDestInsert(Value v) {
  auto insert = v.getDefiningOp<tensor::InsertSliceOp>();
  if (!insert || !insert->hasOneUse() || !hasStaticPlacement(insert) ||
      !isZeros(insert.getDest()))
    return {};
  return insert;
}

std::optional<InsertSum> kernels::matchInsertSum(Operation *root,
                                                 GemmEpilogueKinds epilogues) {
  if (!isTensorAdd(root, epilogues) || addUser(root, epilogues))
    return std::nullopt;
  InsertSum sum;
  std::function<void(Operation *)> collect = [&](Operation *add) {
    for (OpOperand *in : cast<linalg::LinalgOp>(add).getDpsInputOperands()) {
      Operation *def = in->get().getDefiningOp();
      if (def && addUser(def, epilogues) == add) {
        sum.members.push_back(def);
        collect(def);
        continue;
      }
      sum.leaves.push_back(in);
      sum.inserts.push_back(zeroDestInsert(in->get()));
      if (sum.inserts.back())
        sum.members.push_back(sum.inserts.back());
    }
  };
  collect(root);
  if (llvm::none_of(sum.inserts,
                    [](tensor::InsertSliceOp i) { return bool(i); }))
    return std::nullopt;
  return sum;
}

void kernels::lowerInsertSum(Operation *root, const InsertSum &sum,
                             const ReadThrough &through, TargetAttr target,
                             unsigned &counter) {
  OpBuilder b(root);
  Location loc = root->getLoc();
  KernelBuilder kb(b, loc, target);
  SmallVector<unsigned> handles;
  for (auto [leaf, insert] : llvm::zip(sum.leaves, sum.inserts))
    handles.push_back(kb.addInput(
        insert ? through.source(tensor::InsertSliceOp(insert).getSource())
               : leaf->get()));
  auto resultType = cast<RankedTensorType>(root->getResult(0).getType());
  Type elem = resultType.getElementType();
  kb.begin(("k" + Twine(counter++) + "_insert_sum").str(), resultType,
           gridFor(resultType));
  kb.forEachOutputElement([&](ValueRange idx) -> Value {
    Addressing a{b, loc};
    Value total;
    for (auto [constInsert, handle] : llvm::zip(sum.inserts, handles)) {
      tensor::InsertSliceOp insert = constInsert;
      Value source = kb.inputHandle(handle);
      Value term = insert ? insertedElement(
                                b, loc, insert, idx,
                                [&](ValueRange i) {
                                  return through.load(
                                      b, loc, insert.getSource(), source, i);
                                },
                                [&] {
                                  return arith::ConstantOp::create(
                                             b, loc, b.getZeroAttr(elem))
                                      .getResult();
                                })
                          : a.load(source, idx);
      total =
          total ? arith::AddFOp::create(b, loc, total, term).getResult() : term;
    }
    return total;
  });
  DispatchOp dispatch = kb.end();
  root->getResult(0).replaceAllUsesWith(dispatch.getResult(0));
  root->erase();
}

/// Lowers a top-level tensor.insert of a scalar into a copy kernel that
/// replaces one element.
LogicalResult kernels::lowerInsert(tensor::InsertOp op, TargetAttr target,
                                   unsigned &counter) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  KernelBuilder kb(b, loc, target);
  unsigned dest = kb.addInput(op.getDest());
  llvm::DenseSet<Value> seen;
  collectScalarInputs(op.getScalar(), kb, seen);
  for (Value i : op.getIndices())
    collectScalarInputs(i, kb, seen);
  RankedTensorType type = op.getType();
  kb.begin(("k" + Twine(counter++) + "_insert").str(), type, gridFor(type));
  LogicalResult status = success();
  kb.forEachOutputElement([&](ValueRange idx) -> Value {
    Addressing a{b, loc};
    IRMapping mapping;
    FailureOr<Value> scalar = cloneScalar(op.getScalar(), kb, mapping);
    Value hit;
    for (auto [d, i] : llvm::enumerate(op.getIndices())) {
      FailureOr<Value> at = cloneScalar(i, kb, mapping);
      if (failed(at)) {
        status = failure();
        return a.load(kb.inputHandle(dest), idx);
      }
      hit = a.andi(hit, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              idx[d], *at));
    }
    if (failed(scalar)) {
      status = failure();
      return a.load(kb.inputHandle(dest), idx);
    }
    if (!hit)
      return *scalar;
    return arith::SelectOp::create(b, loc, hit, *scalar,
                                   a.load(kb.inputHandle(dest), idx));
  });
  DispatchOp dispatch = kb.end();
  if (failed(status))
    return op.emitOpError("fbl-lower-to-kernels: cannot compute the inserted "
                          "value inside a kernel");
  op.getResult().replaceAllUsesWith(dispatch.getResult(0));
  op.erase();
  return success();
}

/// Lowers a top-level constant tensor to a kernel that writes its values into
/// its layout: a splat as one scalar, other data from a row-major copy in
/// the kernel (which the emitter prints as a `__constant` array).
LogicalResult kernels::lowerConstant(arith::ConstantOp op, TargetAttr target,
                                     unsigned &counter) {
  auto type = cast<RankedTensorType>(op.getType());
  auto data = dyn_cast<DenseElementsAttr>(op.getValue());
  Type elem = type.getElementType();
  if (!data || !(elem.isF32() || elem.isInteger(32) || elem.isInteger(64)))
    return op.emitOpError("fbl-lower-to-kernels: constant tensors of ")
           << elem << " are not supported; f32, i32 and i64 are";
  // Every OpenCL device holds at least 64 KiB of __constant data.
  constexpr int64_t kMaxConstantBytes = 64 * 1024;
  int64_t bytes = type.getNumElements() * getElementBytes(elem);
  if (!data.isSplat() && bytes > kMaxConstantBytes)
    return op.emitOpError("fbl-lower-to-kernels: a constant tensor of ")
           << bytes << " bytes exceeds the " << kMaxConstantBytes
           << " bytes of kernel constant data every OpenCL device holds; "
              "pass it as an input";
  OpBuilder b(op);
  Location loc = op.getLoc();
  KernelBuilder kb(b, loc, target);
  kb.begin(("k" + Twine(counter++) + "_constant").str(), type, gridFor(type));
  Value table;
  if (!data.isSplat()) {
    auto flat = RankedTensorType::get({type.getNumElements()}, elem);
    table = arith::ConstantOp::create(b, loc, data.reshape(flat));
  }
  kb.forEachOutputElement([&](ValueRange idx) -> Value {
    if (!table)
      return arith::ConstantOp::create(b, loc, data.getSplatValue<TypedAttr>());
    Addressing a{b, loc};
    return tensor::ExtractOp::create(b, loc, table, a.linear(type, idx));
  });
  DispatchOp dispatch = kb.end();
  op.getResult().replaceAllUsesWith(dispatch.getResult(0));
  op.erase();
  return success();
}
