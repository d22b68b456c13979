//===- KernelBuilder.cpp - Building fbl.dispatch kernels ------------------===//
//
// Layout addressing, dispatch construction and the per-output-texel loop
// shared by the kernel families of fbl-lower-to-kernels, and the cloning of
// scalar chains into kernels.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "fbl/CostModel/CostModel.h"

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

unsigned KernelBuilder::addInput(Value v) {
  auto it = llvm::find(ins, v);
  if (it != ins.end())
    return it - ins.begin();
  ins.push_back(v);
  return ins.size() - 1;
}

void KernelBuilder::begin(StringRef name, RankedTensorType resultType,
                          ArrayRef<int64_t> items,
                          ArrayRef<int64_t> workgroup) {
  Value out = tensor::EmptyOp::create(b, loc, resultType.getShape(),
                                      resultType.getElementType(),
                                      resultType.getEncoding());
  // The work-group the cost model assumes (fbl/CostModel/CostModel.h).
  std::array<int64_t, 3> all = {1, 1, 1};
  for (unsigned d = 0; d < 3 && d < items.size(); ++d)
    all[d] = items[d];
  ArrayRef<int64_t> pref = target.getPreferredWorkgroup();
  std::array<int64_t, 3> preferred =
      ::fbl::cost::workgroupFor(all, {pref[0], pref[1]});
  SmallVector<int64_t> wg = {1, 1, 1}, grid = {1, 1, 1};
  for (unsigned d = 0; d < 3 && d < items.size(); ++d) {
    wg[d] = d < workgroup.size() ? workgroup[d] : preferred[d];
    grid[d] = llvm::alignTo(items[d], wg[d]);
  }
  dispatch = DispatchOp::create(
      b, loc, TypeRange{resultType},
      FlatSymbolRefAttr::get(b.getContext(), name), ins, ValueRange{out},
      b.getDenseI64ArrayAttr(grid), b.getDenseI64ArrayAttr(wg));
  Block *body = new Block();
  dispatch.getBody().push_back(body);
  for (Value v : ins)
    body->addArgument(v.getType(), loc);
  body->addArgument(resultType, loc);
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

void KernelBuilder::forEachOutputElement(
    function_ref<Value(ValueRange idx)> compute) {
  auto type = cast<RankedTensorType>(outputHandle().getType());
  Addressing a{b, loc};
  Type elem = type.getElementType();
  if (isa<BufferLayoutAttr>(type.getEncoding())) {
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
    StoreElementOp::create(b, loc, compute(idx), outputHandle(), offset);
    b.setInsertionPointAfter(guard);
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
