//===- KernelBuilder.cpp - Building fbl.dispatch kernels ------------------===//
//
// Layout addressing, dispatch construction and the per-output-texel loop
// shared by the kernel families of fbl-lower-to-kernels, and the cloning of
// scalar chains into kernels.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "fbl/CostModel/CostModel.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace mlir::fbl;
using namespace mlir::fbl::kernels;
namespace fl = ::fbl::layout;

//===----------------------------------------------------------------------===//
// Addressing
//===----------------------------------------------------------------------===//

std::array<Value, 4> Addressing::texelOf(RankedTensorType type,
                                         ValueRange idx) {
  fl::Layout layout = getLayoutEncoding(type).getLayout(type.getRank());
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  Value axes[3] = {c(0), c(0), c(0)};
  for (unsigned a = 0; a < fl::kNumAxes; ++a)
    for (const fl::FactorTerm &t :
         layout.terms(shape, static_cast<fl::Axis>(a))) {
      Value v = div(idx[t.factor.dim], t.divisor);
      if (t.modulus)
        v = rem(v, t.modulus);
      axes[a] = add(axes[a], mul(v, t.stride));
    }
  Value channel = layout.packedDim() < 0
                      ? c(0)
                      : rem(idx[layout.packedDim()], fl::kTexelChannels);
  return {axes[2], axes[1], axes[0], channel};
}

std::pair<SmallVector<Value>, Value>
Addressing::logicalOf(RankedTensorType type, Value layer, Value y, Value x,
                      int64_t channel) {
  fl::Layout layout = getLayoutEncoding(type).getLayout(type.getRank());
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  unsigned rank = type.getRank();
  SmallVector<Value> tileIdx(rank, c(0)), elemIdx(rank, c(0));
  Value coords[3] = {x, y, layer};
  for (unsigned a = 0; a < fl::kNumAxes; ++a)
    for (const fl::FactorTerm &t :
         layout.terms(shape, static_cast<fl::Axis>(a))) {
      Value v = rem(div(coords[a], t.stride), t.extent);
      (t.factor.level == fl::Level::Tile ? tileIdx : elemIdx)[t.factor.dim] = v;
    }
  SmallVector<Value> idx;
  Value valid;
  for (unsigned d = 0; d < rank; ++d) {
    Value i = mul(tileIdx[d], layout.tile()[d]);
    if (static_cast<int>(d) == layout.packedDim()) {
      Value channelOffset = c(channel);
      i = add(i, add(mul(elemIdx[d], fl::kTexelChannels), channelOffset));
    } else {
      i = add(i, elemIdx[d]);
    }
    idx.push_back(i);
    valid = andi(valid, lt(i, shape[d]));
  }
  if (layout.packedDim() < 0 && channel != 0)
    valid = arith::ConstantIntOp::create(b, loc, 0, 1);
  if (!valid)
    valid = arith::ConstantIntOp::create(b, loc, 1, 1);
  return {idx, valid};
}

Value Addressing::zero(Type type) {
  auto vector = dyn_cast<VectorType>(type);
  if (!vector)
    return arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
  Value element = zero(vector.getElementType());
  return vector::FromElementsOp::create(
      b, loc, vector, SmallVector<Value>(vector.getNumElements(), element));
}

Value Addressing::linear(RankedTensorType type, ValueRange idx) {
  Value off = c(0);
  for (unsigned d = 0; d < idx.size(); ++d)
    off = add(mul(off, type.getDimSize(d)), idx[d]);
  return off;
}

Value Addressing::load(Value handle, ValueRange idx) {
  auto type = cast<RankedTensorType>(handle.getType());
  if (isa<BufferLayoutAttr>(type.getEncoding()))
    return LoadElementOp::create(b, loc, type.getElementType(), handle,
                                 linear(type, idx));
  std::array<Value, 4> t = texelOf(type, idx);
  Value texel = LoadTexelOp::create(
      b, loc, VectorType::get({4}, b.getF32Type()), handle, t[0], t[1], t[2]);
  return vector::ExtractOp::create(b, loc, texel, OpFoldResult(t[3]));
}

//===----------------------------------------------------------------------===//
// KernelBuilder
//===----------------------------------------------------------------------===//

void KernelBuilder::setInsertionPointToTopLevel() {
  Block *top = &dispatch.getBody().front();
  if (b.getInsertionBlock() != top)
    if (Operation *at =
            top->findAncestorOpInBlock(*b.getInsertionBlock()->getParentOp()))
      b.setInsertionPoint(at);
}

unsigned KernelBuilder::addInput(Value v) {
  auto it = llvm::find(ins, v);
  if (it != ins.end())
    return it - ins.begin();
  ins.push_back(v);
  return ins.size() - 1;
}

void KernelBuilder::begin(StringRef name,
                          ArrayRef<RankedTensorType> resultTypes,
                          ArrayRef<int64_t> items,
                          ArrayRef<int64_t> workgroup) {
  SmallVector<Value> outs;
  for (RankedTensorType type : resultTypes)
    outs.push_back(tensor::EmptyOp::create(
        b, loc, type.getShape(), type.getElementType(), type.getEncoding()));
  // The work-group the cost model assumes (fbl/CostModel/CostModel.h).
  std::array<int64_t, 3> all = {1, 1, 1};
  for (unsigned d = 0; d < 3 && d < items.size(); ++d)
    all[d] = items[d];
  ArrayRef<int64_t> pref = target.getPreferredWorkgroup();
  std::array<int64_t, 3> preferred =
      ::fbl::cost::workgroupFor(all, {pref[0], pref[1]}, target.getExecution());
  SmallVector<int64_t> wg = {1, 1, 1}, grid = {1, 1, 1};
  for (unsigned d = 0; d < 3 && d < items.size(); ++d) {
    wg[d] = d < workgroup.size() ? workgroup[d] : preferred[d];
    grid[d] = llvm::alignTo(items[d], wg[d]);
  }
  dispatch =
      DispatchOp::create(b, loc, ValueRange(outs).getTypes(),
                         FlatSymbolRefAttr::get(b.getContext(), name), ins,
                         outs, b.getDenseI64ArrayAttr(grid),
                         b.getDenseI64ArrayAttr(wg), /*variantsCount=*/0);
  Block *body = new Block();
  dispatch.getBody().push_back(body);
  for (Value v : ins)
    body->addArgument(v.getType(), loc);
  for (Value v : outs)
    body->addArgument(v.getType(), loc);
  saved = b.saveInsertionPoint();
  b.setInsertionPointToStart(body);
  KernelReturnOp::create(b, loc);
  b.setInsertionPointToStart(body);
}

Value KernelBuilder::workItem(unsigned d) {
  return WorkItemIdOp::create(b, loc, b.getIndexType(), b.getI64IntegerAttr(d));
}

DispatchOp KernelBuilder::end() {
  b.restoreInsertionPoint(saved);
  return dispatch;
}

void KernelBuilder::forEachBufferElement(
    function_ref<void(ValueRange idx, Value offset)> body) {
  auto type = cast<RankedTensorType>(outputHandle().getType());
  Addressing a{b, loc};
  // One work-item per element, its index unravelled row-major.
  Value i = workItem(0);
  auto guard = scf::IfOp::create(b, loc, a.lt(i, type.getNumElements()),
                                 /*withElseRegion=*/false);
  b.setInsertionPointToStart(&guard.getThenRegion().front());
  SmallVector<Value> idx(type.getRank());
  Value rest = i;
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    idx[d] = a.rem(rest, type.getDimSize(d));
    rest = a.div(rest, type.getDimSize(d));
  }
  Value offset = a.linear(type, idx);
  body(idx, offset);
  b.setInsertionPointAfter(guard);
}

void KernelBuilder::forEachOutputElement(
    function_ref<Value(ValueRange idx)> compute) {
  auto type = cast<RankedTensorType>(outputHandle().getType());
  Addressing a{b, loc};
  Type elem = type.getElementType();
  if (isa<BufferLayoutAttr>(type.getEncoding())) {
    forEachBufferElement([&](ValueRange idx, Value offset) {
      StoreElementOp::create(b, loc, compute(idx), outputHandle(), offset);
    });
    return;
  }
  // One work-item per texel; padding channels are written as zero.
  fl::Extents e = getLayoutEncoding(type).getExtents(type.getShape());
  Value x = workItem(0), y = workItem(1), layer = workItem(2);
  Value inY = a.lt(y, e.height);
  Value inX = a.lt(x, e.width);
  auto guard = scf::IfOp::create(b, loc, a.andi(inX, inY), false);
  b.setInsertionPointToStart(&guard.getThenRegion().front());
  SmallVector<Value> channels;
  for (int64_t ch = 0; ch < 4; ++ch) {
    auto [idx, valid] = a.logicalOf(type, layer, y, x, ch);
    auto pick = scf::IfOp::create(b, loc, TypeRange{elem}, valid, true);
    b.setInsertionPointToStart(&pick.getThenRegion().front());
    scf::YieldOp::create(b, loc, compute(idx));
    b.setInsertionPointToStart(&pick.getElseRegion().front());
    scf::YieldOp::create(
        b, loc, Value(arith::ConstantOp::create(b, loc, b.getZeroAttr(elem))));
    b.setInsertionPointAfter(pick);
    Value v = pick.getResult(0);
    if (!elem.isF32())
      v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
    channels.push_back(v);
  }
  Value texel = vector::FromElementsOp::create(
      b, loc, VectorType::get({4}, b.getF32Type()), channels);
  StoreTexelOp::create(b, loc, texel, outputHandle(), layer, y, x);
  b.setInsertionPointAfter(guard);
}

void KernelBuilder::forEachOutputTexel(
    function_ref<SmallVector<Value>(ArrayRef<Lane> lanes)> compute) {
  auto type = cast<RankedTensorType>(outputHandle().getType());
  unsigned numOuts = numOutputs();
  Addressing a{b, loc};
  Type elem = type.getElementType();
  if (isa<BufferLayoutAttr>(type.getEncoding())) {
    forEachBufferElement([&](ValueRange idx, Value offset) {
      SmallVector<Value> values =
          compute({Lane{SmallVector<Value>(idx), Value()}});
      for (unsigned r = 0; r < numOuts; ++r)
        StoreElementOp::create(b, loc, values[r], outputHandle(r), offset);
    });
    return;
  }
  fl::Layout layout = getLayoutEncoding(type).getLayout(type.getRank());
  fl::Extents e = getLayoutEncoding(type).getExtents(type.getShape());
  Value x = workItem(0), y = workItem(1), layer = workItem(2);
  Value inY = a.lt(y, e.height);
  Value inX = a.lt(x, e.width);
  auto guard = scf::IfOp::create(b, loc, a.andi(inX, inY), false);
  b.setInsertionPointToStart(&guard.getThenRegion().front());
  auto texelType = VectorType::get({4}, b.getF32Type());
  int packed = layout.packedDim();
  SmallVector<Lane> lanes(1);
  std::tie(lanes[0].idx, lanes[0].valid) = a.logicalOf(type, layer, y, x, 0);
  // Texels of tile padding hold no element: lane 0 is one where any is.
  auto any = scf::IfOp::create(b, loc, SmallVector<Type>(numOuts, texelType),
                               lanes[0].valid, true);
  b.setInsertionPointToStart(&any.getThenRegion().front());
  lanes[0].valid = Value();
  // The other channels are elements too unless the packed dim ends inside
  // this texel.
  bool partial = packed >= 0 && type.getDimSize(packed) % 4 != 0;
  for (int64_t ch = 1; packed >= 0 && ch < 4; ++ch) {
    auto [idx, valid] = a.logicalOf(type, layer, y, x, ch);
    lanes.push_back({idx, partial ? valid : Value()});
  }
  SmallVector<Value> values = compute(lanes);
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  SmallVector<Value> texels;
  for (unsigned r = 0; r < numOuts; ++r) {
    SmallVector<Value> channels;
    for (auto [c, lane] : llvm::enumerate(lanes)) {
      Value v = values[c * numOuts + r];
      if (!elem.isF32())
        v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
      if (lane.valid)
        v = arith::SelectOp::create(b, loc, lane.valid, v, zero);
      channels.push_back(v);
    }
    channels.resize(4, zero);
    texels.push_back(
        vector::FromElementsOp::create(b, loc, texelType, channels));
  }
  scf::YieldOp::create(b, loc, texels);
  b.setInsertionPointToStart(&any.getElseRegion().front());
  scf::YieldOp::create(b, loc, SmallVector<Value>(numOuts, a.zero(texelType)));
  b.setInsertionPointAfter(any);
  for (unsigned r = 0; r < numOuts; ++r)
    StoreTexelOp::create(b, loc, any.getResult(r), outputHandle(r), layer, y,
                         x);
  b.setInsertionPointAfter(guard);
}

namespace {
/// What one fetch of a planned read loaded: a texel (with the channel of its
/// element, where all reads it serves find theirs there) or an element.
struct Fetched {
  Value value;
  Value channel;
};

/// Emits the loads of a planned kernel's reads.
class PlannedReads {
public:
  PlannedReads(KernelBuilder &kb, const ::fbl::cost::KernelShape &plan)
      : kb(kb), plan(plan), a{kb.b, kb.loc} {}

  /// Loads `handle`, indexed through `access`, at loop values `loops`; under
  /// `guard` (null: always), zero elsewhere.
  Fetched fetch(Value handle, const ::fbl::cost::TensorAccess &access,
                ArrayRef<Value> loops, Value guard) {
    OpBuilder &b = kb.b;
    auto type = cast<RankedTensorType>(handle.getType());
    bool buffer = isa<BufferLayoutAttr>(type.getEncoding());
    Type loaded = buffer ? type.getElementType()
                         : Type(VectorType::get({4}, b.getF32Type()));
    scf::IfOp branch;
    if (guard) {
      branch = scf::IfOp::create(b, kb.loc, TypeRange{loaded, b.getIndexType()},
                                 guard, true);
      b.setInsertionPointToStart(&branch.getThenRegion().front());
    }
    SmallVector<Value> idx;
    for (int l : access.loopOfDim)
      idx.push_back(l >= 0 ? loops[l] : a.c(0));
    Fetched f;
    if (buffer) {
      f.value =
          LoadElementOp::create(b, kb.loc, loaded, handle, a.linear(type, idx));
      f.channel = a.c(0);
    } else {
      std::array<Value, 4> t = a.texelOf(type, idx);
      f.value =
          LoadTexelOp::create(b, kb.loc, loaded, handle, t[0], t[1], t[2]);
      f.channel = t[3];
    }
    if (!guard)
      return f;
    scf::YieldOp::create(b, kb.loc, ValueRange{f.value, f.channel});
    b.setInsertionPointToStart(&branch.getElseRegion().front());
    Value zero = a.zero(loaded);
    scf::YieldOp::create(b, kb.loc, ValueRange{zero, a.c(0)});
    b.setInsertionPointAfter(branch);
    return {branch.getResult(0), branch.getResult(1)};
  }

  /// The element that lane `lane`'s read at iteration `j` of a step finds in
  /// `f`: channel `lane` of a texel packed along the channel loop, channel
  /// `j` of one packed along the walked loop, else where the fetch found it.
  Value element(const Fetched &f, const ::fbl::cost::TensorAccess &access,
                unsigned lane, unsigned j) {
    if (!isa<VectorType>(f.value.getType()))
      return f.value;
    if (access.packedAlong(plan.channelLoop))
      return vector::ExtractOp::create(kb.b, kb.loc, f.value, lane);
    if (access.packedAlong(plan.walkLoop))
      return vector::ExtractOp::create(kb.b, kb.loc, f.value, j);
    return vector::ExtractOp::create(kb.b, kb.loc, f.value,
                                     OpFoldResult(f.channel));
  }

  KernelBuilder &kb;
  const ::fbl::cost::KernelShape &plan;
  Addressing a;
};
} // namespace

LogicalResult kernels::emitPlannedKernel(KernelBuilder &kb,
                                         const ::fbl::cost::KernelShape &plan,
                                         ArrayRef<unsigned> inputs,
                                         std::optional<unsigned> init,
                                         TypedAttr initValue, LaneBody body) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Type elem =
      cast<RankedTensorType>(kb.outputHandle().getType()).getElementType();
  // One value per lane and output (acc[lane * numOuts + output]); only
  // elementwise kernels (no reduction, no initial value) have several.
  unsigned numOuts = kb.numOutputs();
  if (numOuts > 1 &&
      (plan.readsInit || llvm::is_contained(plan.reduction, true)))
    return failure();
  LogicalResult status = success();
  kb.forEachOutputTexel([&](ArrayRef<KernelBuilder::Lane> lanes) {
    PlannedReads reads(kb, plan);
    Addressing &a = reads.a;
    unsigned numLanes = lanes.size();
    // Each lane's loop values, from its output index.
    SmallVector<SmallVector<Value>> ivs(numLanes,
                                        SmallVector<Value>(plan.ranges.size()));
    for (unsigned c = 0; c < numLanes; ++c)
      for (auto [d, l] : llvm::enumerate(plan.output.loopOfDim))
        if (l >= 0)
          ivs[c][l] = lanes[c].idx[d];
    // Lane c's read of `access` in `handle`, unless lane 0's fetch serves it.
    auto fetchLanes = [&](Value handle, const ::fbl::cost::TensorAccess &access,
                          ArrayRef<SmallVector<Value>> at) {
      SmallVector<Fetched> fetched;
      for (unsigned c = 0; c < numLanes; ++c)
        fetched.push_back(
            c > 0 && access.channelsShareFetch
                ? fetched.front()
                : reads.fetch(handle, access, at[c], lanes[c].valid));
      return fetched;
    };
    SmallVector<Value> acc;
    if (plan.readsInit) {
      SmallVector<Fetched> f =
          fetchLanes(kb.inputHandle(*init), plan.output, ivs);
      for (unsigned c = 0; c < numLanes; ++c)
        acc.push_back(reads.element(f[c], plan.output, c, 0));
    } else {
      acc.assign(
          numLanes * numOuts,
          arith::ConstantOp::create(
              b, loc, initValue ? initValue : TypedAttr(b.getZeroAttr(elem))));
    }
    // Inputs that no reduction loop indexes: once, before the nest.
    SmallVector<SmallVector<Fetched>> hoisted(plan.inputs.size());
    for (auto [i, access] : llvm::enumerate(plan.inputs))
      if (access.hoisted)
        hoisted[i] = fetchLanes(kb.inputHandle(inputs[i]), access, ivs);

    // One step of the nest: `count` iterations of the walked loop from
    // `base` (one iteration of the innermost loop when none is walked).
    auto step = [&](Value base, unsigned count,
                    SmallVector<Value> acc) -> SmallVector<Value> {
      // Lane c's loop values at iteration j.
      auto at = [&](unsigned c, unsigned j) {
        SmallVector<Value> loops = ivs[c];
        if (plan.walkLoop >= 0)
          loops[plan.walkLoop] = j == 0 ? base : a.add(base, a.c(j));
        return loops;
      };
      // Every read's fetches, in (iteration, lane) order.
      SmallVector<SmallVector<SmallVector<Fetched>>> fetched(
          plan.inputs.size());
      for (auto [i, access] : llvm::enumerate(plan.inputs)) {
        if (access.hoisted)
          continue;
        fetched[i].assign(count, SmallVector<Fetched>(numLanes));
        for (unsigned j = 0; j < count; ++j)
          for (unsigned c = 0; c < numLanes; ++c) {
            unsigned fromLane = access.channelsShareFetch ? 0 : c;
            unsigned fromIter = access.stepsShareFetch ? 0 : j;
            fetched[i][j][c] =
                fromLane == c && fromIter == j
                    ? reads.fetch(kb.inputHandle(inputs[i]), access, at(c, j),
                                  access.channelsShareFetch ? Value()
                                                            : lanes[c].valid)
                    : fetched[i][fromIter][fromLane];
          }
      }
      IRMapping shared;
      for (unsigned j = 0; j < count; ++j)
        for (unsigned c = 0; c < numLanes; ++c) {
          SmallVector<Value> values;
          for (auto [i, access] : llvm::enumerate(plan.inputs))
            values.push_back(
                reads.element(access.hoisted ? hoisted[i][c] : fetched[i][j][c],
                              access, c, j));
          SmallVector<Value> loops = at(c, j);
          // A lane that may hold no element computes nothing there (its
          // indices may lie outside the tensors).
          MutableArrayRef<Value> laneAcc =
              MutableArrayRef<Value>(acc).slice(c * numOuts, numOuts);
          scf::IfOp branch;
          if (lanes[c].valid) {
            branch = scf::IfOp::create(b, loc, SmallVector<Type>(numOuts, elem),
                                       lanes[c].valid, true);
            b.setInsertionPointToStart(&branch.getThenRegion().front());
          }
          FailureOr<SmallVector<Value>> next =
              body(loops, values, laneAcc, shared);
          if (failed(next) || next->size() != numOuts) {
            status = failure();
            next = SmallVector<Value>(laneAcc);
          }
          if (!branch) {
            llvm::copy(*next, laneAcc.begin());
            continue;
          }
          scf::YieldOp::create(b, loc, *next);
          b.setInsertionPointToStart(&branch.getElseRegion().front());
          scf::YieldOp::create(b, loc, ValueRange(laneAcc));
          b.setInsertionPointAfter(branch);
          llvm::copy(branch.getResults(), laneAcc.begin());
        }
      return acc;
    };
    // The reduction loops, outermost first; the walked one (innermost) in
    // steps of 4 and a tail.
    SmallVector<unsigned> reductionLoops;
    for (unsigned l = 0; l < plan.ranges.size(); ++l)
      if (plan.reduction[l])
        reductionLoops.push_back(l);
    auto loop =
        [&](int64_t begin, int64_t end, int64_t stride, SmallVector<Value> acc,
            function_ref<SmallVector<Value>(Value, SmallVector<Value>)> inner)
        -> SmallVector<Value> {
      Value lb = a.c(begin), ub = a.c(end), st = a.c(stride);
      auto forOp = scf::ForOp::create(b, loc, lb, ub, st, acc);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(forOp.getBody());
      SmallVector<Value> next =
          inner(forOp.getInductionVar(),
                SmallVector<Value>(forOp.getRegionIterArgs()));
      scf::YieldOp::create(b, loc, next);
      return SmallVector<Value>(forOp.getResults());
    };
    std::function<SmallVector<Value>(unsigned, SmallVector<Value>)> nest =
        [&](unsigned pos, SmallVector<Value> acc) -> SmallVector<Value> {
      if (pos == reductionLoops.size())
        return step(Value(), 1, acc);
      unsigned l = reductionLoops[pos];
      int64_t range = plan.ranges[l];
      if (static_cast<int>(l) != plan.walkLoop)
        return loop(0, range, 1, acc, [&](Value iv, SmallVector<Value> acc) {
          for (SmallVector<Value> &laneIvs : ivs)
            laneIvs[l] = iv;
          return nest(pos + 1, acc);
        });
      int64_t full = range / 4 * 4;
      if (full > 0)
        acc = loop(0, full, 4, acc, [&](Value iv, SmallVector<Value> acc) {
          return step(iv, 4, acc);
        });
      if (range > full)
        acc = step(a.c(full), range - full, acc);
      return acc;
    };
    return nest(0, acc);
  });
  return status;
}

SmallVector<int64_t> kernels::gridFor(RankedTensorType type) {
  if (isa<BufferLayoutAttr>(type.getEncoding()))
    return {type.getNumElements(), 1, 1};
  fl::Extents e = getLayoutEncoding(type).getExtents(type.getShape());
  return {e.width, e.height, e.layers};
}

//===----------------------------------------------------------------------===//
// Scalar chains
//===----------------------------------------------------------------------===//

void kernels::collectScalarInputs(Value v, KernelBuilder &kb,
                                  llvm::DenseSet<Value> &seen) {
  if (!seen.insert(v).second)
    return;
  Operation *def = v.getDefiningOp();
  if (!def || isa<RankedTensorType>(v.getType()))
    return;
  if (auto extract = dyn_cast<tensor::ExtractOp>(def))
    kb.addInput(extract.getTensor());
  for (Value operand : def->getOperands())
    collectScalarInputs(operand, kb, seen);
}

llvm::SetVector<Value> kernels::addCapturedInputs(Region &region,
                                                  KernelBuilder &kb,
                                                  llvm::DenseSet<Value> &seen) {
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(region, captured);
  for (Value v : captured) {
    if (isa<RankedTensorType>(v.getType()))
      kb.addInput(v);
    else
      collectScalarInputs(v, kb, seen);
  }
  return captured;
}

FailureOr<Value> kernels::cloneScalar(Value v, KernelBuilder &kb,
                                      IRMapping &mapping) {
  if (Value m = mapping.lookupOrNull(v))
    return m;
  Operation *def = v.getDefiningOp();
  if (!def)
    return failure();
  SmallVector<Value> operands;
  for (Value operand : def->getOperands()) {
    // The tensor of an element read is a kernel input, not a scalar.
    if (isa<RankedTensorType>(operand.getType()) &&
        isa<tensor::ExtractOp>(def)) {
      operands.push_back(operand);
      continue;
    }
    FailureOr<Value> m = cloneScalar(operand, kb, mapping);
    if (failed(m))
      return failure();
    operands.push_back(*m);
  }
  Value result;
  if (auto extract = dyn_cast<tensor::ExtractOp>(def)) {
    unsigned n = kb.addInput(extract.getTensor());
    Addressing a{kb.b, kb.loc};
    result = a.load(kb.inputHandle(n), ValueRange(operands).drop_front());
  } else {
    if (def->getNumRegions() || !isPure(def))
      return failure();
    Operation *clone = kb.b.clone(*def, mapping);
    result = clone->getResult(cast<OpResult>(v).getResultNumber());
  }
  mapping.map(v, result);
  return result;
}

FailureOr<SmallVector<Value>>
kernels::inlineBody(linalg::LinalgOp op, KernelBuilder &kb, ValueRange ivs,
                    function_ref<Value(OpOperand &)> tensorInput,
                    ValueRange acc, const IRMapping &gathers,
                    IRMapping &shared) {
  Block &body = op->getRegion(0).front();
  IRMapping mapping = gathers;
  // Values from above the body are computed once, into `shared`, at the
  // kernel's top level: later bodies (a row kernel's other passes) may sit
  // in other loops and branches.
  auto fromAbove = [&](Value v) -> LogicalResult {
    if (mapping.contains(v))
      return success();
    OpBuilder::InsertionGuard guard(kb.b);
    kb.setInsertionPointToTopLevel();
    FailureOr<Value> m = cloneScalar(v, kb, shared);
    if (failed(m))
      return failure();
    mapping.map(v, *m);
    return success();
  };
  for (OpOperand *in : op.getDpsInputOperands()) {
    BlockArgument arg = body.getArgument(in->getOperandNumber());
    if (isa<RankedTensorType>(in->get().getType())) {
      mapping.map(arg, tensorInput(*in));
      continue;
    }
    if (failed(fromAbove(in->get())))
      return op.emitOpError("fbl-lower-to-kernels: cannot compute a "
                            "scalar operand inside the kernel");
    mapping.map(arg, mapping.lookup(in->get()));
  }
  for (auto [r, out] : llvm::enumerate(op.getDpsInitsMutable()))
    if (r < acc.size())
      mapping.map(body.getArgument(out.getOperandNumber()), acc[r]);
  auto mapCaptured = [&](Operation &user) -> LogicalResult {
    for (Value operand : user.getOperands())
      if (operand.getParentRegion() != &op->getRegion(0) &&
          failed(fromAbove(operand)))
        return user.emitOpError("fbl-lower-to-kernels: cannot compute a "
                                "captured value inside the kernel");
    return success();
  };
  Addressing a{kb.b, kb.loc};
  for (Operation &inner : body.without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    if (auto extract = dyn_cast<tensor::ExtractOp>(inner);
        extract && gathers.contains(extract.getTensor())) {
      // A gather: a load at a computed place.
      SmallVector<Value> idx;
      for (Value i : extract.getIndices())
        idx.push_back(mapping.lookupOrDefault(i));
      mapping.map(extract.getResult(),
                  a.load(gathers.lookup(extract.getTensor()), idx));
      continue;
    }
    if (failed(mapCaptured(inner)))
      return failure();
    kb.b.clone(inner, mapping);
  }
  // The yield may return a value from above (a constant after fusion).
  Operation *yield = body.getTerminator();
  if (failed(mapCaptured(*yield)))
    return failure();
  SmallVector<Value> results;
  for (Value v : yield->getOperands())
    results.push_back(mapping.lookupOrDefault(v));
  return results;
}
