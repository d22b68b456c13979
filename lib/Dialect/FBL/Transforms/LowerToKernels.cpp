//===- LowerToKernels.cpp - The fbl-lower-to-kernels pass -----------------===//
//
// Turns each computing op of a laid-out function into an fbl.dispatch whose
// body is explicit: work-item ids, address arithmetic derived from the
// layout algebra's factor terms, texel and element accesses, and the op's
// scalar code. The emitters only print it.
//
//  - contractions (matmul, batch_matmul and their transposed forms, on
//    images, sizes multiples of 4): one work-item per 4x4 output block,
//    k walked 4 at a time, every operand read as whole texels (a 4x4 block
//    transposed in registers when packed along the other dim).
//  - other linalg ops: one work-item per output texel (per element for
//  buffers);
//    each of the texel's four channels maps back to a logical output index
//    (padding channels are written as zero), reduction loops run inside,
//    inputs are read through their layouts, the body is inlined.
//  - fbl.relayout: the same kernel with a load of the source as its body.
//  - scf.for scatter loops over buffers: run in place, one work-item per
//    iteration of a loop whose iterations touch disjoint elements (else one
//    work-item), each copying its slice of the initial buffer first.
//  - scalars the kernels use (constants, bias corrections computed from a
//    step count) are recomputed inside each kernel that needs them.
//  - cf.assert is a host-side input check: kernels do not evaluate it.
//
//===----------------------------------------------------------------------===//

#include "fbl/Dialect/FBL/IR/FBLOps.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir::fbl {
#define GEN_PASS_DEF_FBLLOWERTOKERNELSPASS
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"
} // namespace mlir::fbl

using namespace mlir;
using namespace mlir::fbl;
namespace fl = ::fbl::layout;

namespace {

/// Emits index arithmetic for layouts.
struct Addressing {
  OpBuilder &b;
  Location loc;

  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, int64_t k) {
    return k == 1 ? x : Value(arith::MulIOp::create(b, loc, x, c(k)));
  }
  Value div(Value x, int64_t k) {
    return k == 1 ? x : Value(arith::DivUIOp::create(b, loc, x, c(k)));
  }
  Value rem(Value x, int64_t k) {
    return arith::RemUIOp::create(b, loc, x, c(k));
  }
  Value lt(Value x, int64_t k) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, c(k));
  }
  Value andi(Value x, Value y) {
    return x ? Value(arith::AndIOp::create(b, loc, x, y)) : y;
  }

  /// (layer, y, x, channel) of logical index `idx` in `type`'s layout.
  std::array<Value, 4> texelOf(RankedTensorType type, ValueRange idx) {
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

  /// The logical index held by channel `channel` of texel (layer, y, x),
  /// and whether it is an element (not padding).
  std::pair<SmallVector<Value>, Value> logicalOf(RankedTensorType type,
                                                 Value layer, Value y, Value x,
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
        (t.factor.level == fl::Level::Tile ? tileIdx : elemIdx)[t.factor.dim] =
            v;
      }
    SmallVector<Value> idx;
    Value valid;
    for (unsigned d = 0; d < rank; ++d) {
      Value i = mul(tileIdx[d], layout.tile()[d]);
      if (static_cast<int>(d) == layout.packedDim())
        i = add(i, add(mul(elemIdx[d], fl::kTexelChannels), c(channel)));
      else
        i = add(i, elemIdx[d]);
      idx.push_back(i);
      valid = andi(valid, lt(i, shape[d]));
    }
    if (layout.packedDim() < 0 && channel != 0)
      valid = arith::ConstantIntOp::create(b, loc, 0, 1);
    if (!valid)
      valid = arith::ConstantIntOp::create(b, loc, 1, 1);
    return {idx, valid};
  }

  /// Row-major offset of `idx` in `type`.
  Value linear(RankedTensorType type, ValueRange idx) {
    Value off = c(0);
    for (unsigned d = 0; d < idx.size(); ++d)
      off = add(mul(off, type.getDimSize(d)), idx[d]);
    return off;
  }

  /// Loads the element at `idx` of the kernel argument `handle`.
  Value load(Value handle, ValueRange idx) {
    auto type = cast<RankedTensorType>(handle.getType());
    if (isa<BufferLayoutAttr>(type.getEncoding()))
      return LoadElementOp::create(b, loc, type.getElementType(), handle,
                                   linear(type, idx));
    std::array<Value, 4> t = texelOf(type, idx);
    Value texel = LoadTexelOp::create(
        b, loc, VectorType::get({4}, b.getF32Type()), handle, t[0], t[1], t[2]);
    return vector::ExtractOp::create(b, loc, texel, OpFoldResult(t[3]));
  }
};

/// Builds one fbl.dispatch.
class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, TargetAttr target)
      : b(b), loc(loc), target(target) {}

  /// Adds a tensor input; returns its handle inside the body (valid after
  /// `begin`).
  unsigned addInput(Value v) {
    auto it = llvm::find(ins, v);
    if (it != ins.end())
      return it - ins.begin();
    ins.push_back(v);
    return ins.size() - 1;
  }

  /// Creates the dispatch writing a fresh `resultType` over `grid` work-items
  /// and positions the builder in its body.
  /// The work-group is the target's preferred one (clamped to the grid)
  /// unless `workgroup` is given.
  void begin(StringRef name, RankedTensorType resultType,
             ArrayRef<int64_t> items, ArrayRef<int64_t> workgroup = {}) {
    Value out = tensor::EmptyOp::create(b, loc, resultType.getShape(),
                                        resultType.getElementType(),
                                        resultType.getEncoding());
    SmallVector<int64_t> wg = {1, 1, 1}, grid = {1, 1, 1};
    ArrayRef<int64_t> pref = target.getPreferredWorkgroup();
    for (unsigned d = 0; d < 3 && d < items.size(); ++d) {
      int64_t want = d < 2 ? pref[d] : 1;
      wg[d] = d < workgroup.size()
                  ? workgroup[d]
                  : std::min<int64_t>(want, llvm::PowerOf2Ceil(items[d]));
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

  Value inputHandle(unsigned i) { return dispatch.getBody().getArgument(i); }
  Value outputHandle() { return dispatch.getBody().getArgument(ins.size()); }
  Value workItem(unsigned d) {
    return WorkItemIdOp::create(b, loc, b.getIndexType(),
                                b.getI64IntegerAttr(d));
  }

  DispatchOp end() {
    b.restoreInsertionPoint(saved);
    return dispatch;
  }

  /// Emits the per-texel (or per-element) loop body: `compute(idx)` gives
  /// the output element at logical index `idx`.
  void forEachOutputElement(function_ref<Value(ValueRange idx)> compute) {
    auto type = cast<RankedTensorType>(outputHandle().getType());
    Addressing a{b, loc};
    Type elem = type.getElementType();
    if (isa<BufferLayoutAttr>(type.getEncoding())) {
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
      StoreElementOp::create(b, loc, compute(idx), outputHandle(),
                             a.linear(type, idx));
      b.setInsertionPointAfter(guard);
      return;
    }
    fl::Extents e = getLayoutEncoding(type).getExtents(type.getShape());
    Value x = workItem(0), y = workItem(1), layer = workItem(2);
    auto guard = scf::IfOp::create(
        b, loc, a.andi(a.lt(x, e.width), a.lt(y, e.height)), false);
    b.setInsertionPointToStart(&guard.getThenRegion().front());
    SmallVector<Value> channels;
    for (int64_t ch = 0; ch < 4; ++ch) {
      auto [idx, valid] = a.logicalOf(type, layer, y, x, ch);
      auto pick = scf::IfOp::create(b, loc, TypeRange{elem}, valid, true);
      b.setInsertionPointToStart(&pick.getThenRegion().front());
      scf::YieldOp::create(b, loc, compute(idx));
      b.setInsertionPointToStart(&pick.getElseRegion().front());
      scf::YieldOp::create(
          b, loc,
          Value(arith::ConstantOp::create(b, loc, b.getZeroAttr(elem))));
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

  OpBuilder &b;
  Location loc;
  TargetAttr target;
  SmallVector<Value> ins;
  DispatchOp dispatch;
  OpBuilder::InsertPoint saved;
};

/// Items of the kernel grid for an output of `type`: texels or elements.
SmallVector<int64_t> gridFor(RankedTensorType type) {
  if (isa<BufferLayoutAttr>(type.getEncoding()))
    return {type.getNumElements(), 1, 1};
  fl::Extents e = getLayoutEncoding(type).getExtents(type.getShape());
  return {e.width, e.height, e.layers};
}

} // namespace

/// Collects the tensors a scalar chain reads (they become kernel inputs).
static void collectScalarInputs(Value v, KernelBuilder &kb,
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

/// Makes the tensors `region` reads from above, and those its captured
/// scalars read, kernel inputs; returns the captured values.
static llvm::SetVector<Value> addCapturedInputs(Region &region,
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

/// Clones the scalar chain of `v` into the kernel; element reads of
/// tensors become loads from the kernel's inputs.
static FailureOr<Value> cloneScalar(Value v, KernelBuilder &kb,
                                    IRMapping &mapping) {
  if (Value m = mapping.lookupOrNull(v))
    return m;
  Operation *def = v.getDefiningOp();
  if (!def)
    return failure();
  SmallVector<Value> operands;
  for (Value operand : def->getOperands()) {
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

/// Lowers a linalg op on encoded tensors.
static LogicalResult lowerLinalg(linalg::LinalgOp op, TargetAttr target,
                                 unsigned &counter) {
  if (op->getNumResults() != 1)
    return op.emitOpError("fbl-lower-to-kernels: ops with several results "
                          "are not supported");
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  for (Value v : op->getOperands())
    if (auto t = dyn_cast<RankedTensorType>(v.getType()); t && !t.getEncoding())
      return op.emitOpError("fbl-lower-to-kernels: operand without a layout; "
                            "run fbl-select-layouts first");
  OpBuilder b(op);
  Location loc = op.getLoc();
  KernelBuilder kb(b, loc, target);
  Block &body = *op.getBlock();
  OpOperand *init = op.getDpsInitOperand(0);
  bool readsInit = op.payloadUsesValueFromOperand(init);
  // Kernel inputs: tensor inputs, the init when read, captured tensors, and
  // tensors that captured or operand scalars read.
  SmallVector<int> inputIndex(op->getNumOperands(), -1);
  for (OpOperand *in : op.getDpsInputOperands())
    if (isa<RankedTensorType>(in->get().getType()))
      inputIndex[in->getOperandNumber()] = kb.addInput(in->get());
  if (readsInit)
    inputIndex[init->getOperandNumber()] = kb.addInput(init->get());
  llvm::DenseSet<Value> seen;
  llvm::SetVector<Value> captured =
      addCapturedInputs(op->getRegion(0), kb, seen);
  for (OpOperand *in : op.getDpsInputOperands())
    if (!isa<RankedTensorType>(in->get().getType()))
      collectScalarInputs(in->get(), kb, seen);

  std::string name = ("k" + Twine(counter++) + "_" +
                      op->getName().getStringRef().drop_front(7))
                         .str();
  kb.begin(name, resultType, gridFor(resultType));
  IRMapping scalars;
  for (Value v : captured)
    if (isa<RankedTensorType>(v.getType()))
      scalars.map(v, kb.inputHandle(kb.addInput(v)));
  LogicalResult status = success();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  AffineMap outMap = maps.back();

  kb.forEachOutputElement([&](ValueRange outIdx) -> Value {
    Addressing a{b, loc};
    SmallVector<Value> ivs(op.getNumLoops());
    for (auto [r, e] : llvm::enumerate(outMap.getResults()))
      ivs[cast<AffineDimExpr>(e).getPosition()] = outIdx[r];
    Type elem = resultType.getElementType();
    Value acc =
        readsInit
            ? a.load(kb.inputHandle(inputIndex[init->getOperandNumber()]),
                     outIdx)
            : Value(arith::ConstantOp::create(b, loc, b.getZeroAttr(elem)));
    // The loop nest over reduction dims, outermost first.
    std::function<Value(unsigned, Value)> nest = [&](unsigned d,
                                                     Value acc) -> Value {
      while (d < ivs.size() && iters[d] != utils::IteratorType::reduction)
        ++d;
      if (d < ivs.size()) {
        auto loop = scf::ForOp::create(b, loc, a.c(0), a.c(ranges[d]), a.c(1),
                                       ValueRange{acc});
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(loop.getBody());
        ivs[d] = loop.getInductionVar();
        Value next = nest(d + 1, loop.getRegionIterArg(0));
        scf::YieldOp::create(b, loc, next);
        return loop.getResult(0);
      }
      // Innermost: load the inputs and inline the body.
      IRMapping mapping = scalars;
      // Recomputes the values `user` reads from above the body.
      auto mapCaptured = [&](Operation &user, IRMapping &mapping) {
        for (Value operand : user.getOperands())
          if (!mapping.contains(operand) &&
              operand.getParentRegion() != &op->getRegion(0) &&
              failed(cloneScalar(operand, kb, mapping))) {
            status = user.emitOpError("fbl-lower-to-kernels: cannot compute a "
                                      "captured value inside the kernel");
            return failure();
          }
        return success();
      };
      for (OpOperand *in : op.getDpsInputOperands()) {
        BlockArgument arg = body.getArgument(in->getOperandNumber());
        if (!isa<RankedTensorType>(in->get().getType())) {
          FailureOr<Value> s = cloneScalar(in->get(), kb, mapping);
          if (failed(s)) {
            status = op.emitOpError("fbl-lower-to-kernels: cannot compute a "
                                    "scalar operand inside the kernel");
            return acc;
          }
          mapping.map(arg, *s);
          continue;
        }
        AffineMap m = op.getMatchingIndexingMap(in);
        SmallVector<Value> idx;
        for (AffineExpr e : m.getResults())
          idx.push_back(ivs[cast<AffineDimExpr>(e).getPosition()]);
        mapping.map(
            arg,
            a.load(kb.inputHandle(inputIndex[in->getOperandNumber()]), idx));
      }
      mapping.map(body.getArgument(init->getOperandNumber()), acc);
      for (Operation &inner : body.without_terminator()) {
        if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
          mapping.map(index.getResult(), ivs[index.getDim()]);
          continue;
        }
        if (auto extract = dyn_cast<tensor::ExtractOp>(inner);
            extract && scalars.contains(extract.getTensor())) {
          SmallVector<Value> idx;
          for (Value i : extract.getIndices())
            idx.push_back(mapping.lookupOrDefault(i));
          mapping.map(extract.getResult(),
                      a.load(scalars.lookup(extract.getTensor()), idx));
          continue;
        }
        if (failed(mapCaptured(inner, mapping)))
          return acc;
        b.clone(inner, mapping);
      }
      // The yield may return a value from above (a constant after fusion).
      Operation *yield = body.getTerminator();
      if (failed(mapCaptured(*yield, mapping)))
        return acc;
      return mapping.lookupOrDefault(yield->getOperand(0));
    };
    return nest(0, acc);
  });
  DispatchOp dispatch = kb.end();
  if (failed(status))
    return failure();
  op->getResult(0).replaceAllUsesWith(dispatch.getResult(0));
  op->erase();
  return success();
}

/// Local-memory tiling of GEMMs: work-groups of kGroupItems x kGroupItems
/// work-items, each computing kItemBlocks x kItemBlocks 4x4 blocks of C
/// (a kGroupTile^2 tile per group), stage kLocalK-deep slices of A and B
/// in local memory.
constexpr int64_t kGroupItems = 8;
constexpr int64_t kItemBlocks = 2;
constexpr int64_t kGroupTile = 4 * kGroupItems * kItemBlocks;
constexpr int64_t kLocalK = 16;

/// The register-tiled GEMM kernel: for contractions C[b, m, n] (+)= A * B
/// with one reduction loop k, each work-item computes a 4x4 block of C,
/// walks k 4 at a time, and reads A, B (and C's init) as whole texels: the
/// 4 elements along an operand's packed dim inside the block are the 4
/// channels of one texel. With the target's local_tiled_gemm and sizes that
/// divide into work-group tiles, A and B pass through local memory (each
/// texel read from its image once per work-group). Returns failure (without
/// a diagnostic) when the op is not such a contraction; the generic kernel
/// handles it then.
static FailureOr<DispatchOp>
lowerContraction(linalg::LinalgOp op, TargetAttr target, unsigned &counter) {
  if (op->getNumResults() != 1 || op.getNumDpsInputs() != 2 ||
      op.getNumReductionLoops() != 1 || !linalg::isaContractionOpInterface(op))
    return failure();
  // The body must be acc + a * b.
  Block &body = *op.getBlock();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add || body.getOperations().size() != 3)
    return failure();
  Value acc = body.getArgument(2);
  Value prod = add.getLhs() == acc ? add.getRhs() : add.getLhs();
  auto mul = prod.getDefiningOp<arith::MulFOp>();
  if (!mul || (add.getLhs() != acc && add.getRhs() != acc))
    return failure();
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t rank = resultType.getRank();
  if (rank < 2 || !resultType.getElementType().isF32())
    return failure();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  AffineMap outMap = maps[2];
  auto loopOf = [](AffineMap m, unsigned r) {
    return cast<AffineDimExpr>(m.getResult(r)).getPosition();
  };
  unsigned mLoop = loopOf(outMap, rank - 2), nLoop = loopOf(outMap, rank - 1);
  unsigned kLoop = 0;
  for (unsigned l = 0; l < iters.size(); ++l)
    if (iters[l] == utils::IteratorType::reduction)
      kLoop = l;
  if (ranges[mLoop] % 4 || ranges[nLoop] % 4 || ranges[kLoop] % 4)
    return failure();
  // Every operand: an image, packed along a dim that a blocked or unrolled
  // loop walks, tiles aligned to the 4-blocks.
  auto packedLoop = [&](Value v, AffineMap map) -> std::optional<unsigned> {
    auto type = cast<RankedTensorType>(v.getType());
    auto enc = getLayoutEncoding(type);
    if (!enc || isa<BufferLayoutAttr>(enc))
      return std::nullopt;
    fl::Layout l = enc.getLayout(type.getRank());
    if (l.packedDim() < 0)
      return std::nullopt;
    for (unsigned d = 0; d < type.getRank(); ++d)
      if (l.tile()[d] % 4 && static_cast<int>(d) != l.packedDim() &&
          (loopOf(map, d) == mLoop || loopOf(map, d) == nLoop ||
           loopOf(map, d) == kLoop) &&
          l.tile()[d] != 1)
        return std::nullopt;
    unsigned loop = loopOf(map, l.packedDim());
    if (loop != mLoop && loop != nLoop && loop != kLoop)
      return std::nullopt;
    return loop;
  };
  // A is the input indexed by m, B the one indexed by n (in either order).
  auto uses = [&](AffineMap map, unsigned loop) {
    return map.isFunctionOfDim(loop);
  };
  unsigned aPos = 0, bPos = 1;
  if (uses(maps[1], mLoop) && uses(maps[0], nLoop))
    std::swap(aPos, bPos);
  if (!uses(maps[aPos], mLoop) || !uses(maps[aPos], kLoop) ||
      uses(maps[aPos], nLoop) || !uses(maps[bPos], nLoop) ||
      !uses(maps[bPos], kLoop) || uses(maps[bPos], mLoop))
    return failure();
  OpOperand *a = op.getDpsInputOperand(aPos), *b = op.getDpsInputOperand(bPos);
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap aMap = maps[aPos], bMap = maps[bPos];
  auto aPacked = packedLoop(a->get(), aMap);
  auto bPacked = packedLoop(b->get(), bMap);
  auto cPacked = packedLoop(init->get(), maps[2]);
  if (!aPacked || !bPacked || !cPacked || *cPacked == kLoop)
    return failure();
  if (!isa<BlockArgument>(mul.getLhs()) || !isa<BlockArgument>(mul.getRhs()))
    return failure();

  OpBuilder builder(op);
  Location loc = op.getLoc();
  KernelBuilder kb(builder, loc, target);
  unsigned aIn = kb.addInput(a->get()), bIn = kb.addInput(b->get());
  unsigned cIn = kb.addInput(init->get());
  SmallVector<unsigned> batchLoops;
  int64_t batch = 1;
  for (unsigned l = 0; l < iters.size(); ++l)
    if (l != mLoop && l != nLoop && l != kLoop) {
      batchLoops.push_back(l);
      batch *= ranges[l];
    }
  // Local-memory tiling where the target asks for it and the sizes divide
  // into work-group tiles.
  bool local = target.getLocalTiledGemm() && ranges[mLoop] % kGroupTile == 0 &&
               ranges[nLoop] % kGroupTile == 0 &&
               ranges[kLoop] % kLocalK == 0 &&
               target.getMaxWorkgroupSize() >= kGroupItems * kGroupItems;
  std::string name =
      ("k" + Twine(counter++) + (local ? "_gemm_local" : "_gemm")).str();
  // Work-items over 4x4 blocks of (n, m) (kItemBlocks^2 of them each when
  // tiled in local memory) and over the batch loops.
  int64_t perItem = local ? kItemBlocks : 1;
  SmallVector<int64_t> workgroup;
  if (local)
    workgroup = {kGroupItems, kGroupItems, 1};
  kb.begin(
      name, resultType,
      {ranges[nLoop] / (4 * perItem), ranges[mLoop] / (4 * perItem), batch},
      workgroup);
  OpBuilder &bb = kb.b;
  Addressing ad{bb, loc};
  Type texelType = VectorType::get({4}, bb.getF32Type());
  // Local tiles [k block][texel][m or n block], allocated first so they sit
  // at the kernel's top level; consecutive work-items read consecutive
  // texels.
  constexpr int64_t kTileBlocks = kGroupItems * kItemBlocks;
  constexpr int64_t kKBlocks = kLocalK / 4;
  Value aTile, bTile;
  if (local) {
    auto tileType = MemRefType::get({kKBlocks, 4, kTileBlocks}, texelType,
                                    AffineMap(), bb.getI64IntegerAttr(3));
    aTile = memref::AllocaOp::create(bb, loc, tileType);
    bTile = memref::AllocaOp::create(bb, loc, tileType);
  }
  Value bx = kb.workItem(0), by = kb.workItem(1), bz = kb.workItem(2);
  // The grid is exact for local tiling (every work-item reaches the
  // barriers); otherwise guard the padded work-items.
  scf::IfOp guard;
  if (!local) {
    guard = scf::IfOp::create(
        bb, loc,
        ad.andi(ad.lt(bx, ranges[nLoop] / 4), ad.lt(by, ranges[mLoop] / 4)),
        false);
    bb.setInsertionPointToStart(&guard.getThenRegion().front());
  }
  SmallVector<Value> at(iters.size());
  Value rest = bz;
  for (unsigned l : llvm::reverse(batchLoops)) {
    at[l] = ad.rem(rest, ranges[l]);
    rest = ad.div(rest, ranges[l]);
  }
  at[kLoop] = ad.c(0);
  // The item's blocks: (m, n) origins. Locally tiled, block (i, j) of an
  // item is block (i * kGroupItems + ly, j * kGroupItems + lx) of its group.
  Value lx, ly, mTile, nTile;
  SmallVector<Value> mBlocks, nBlocks;
  if (local) {
    lx = LocalIdOp::create(bb, loc, bb.getIndexType(), bb.getI64IntegerAttr(0));
    ly = LocalIdOp::create(bb, loc, bb.getIndexType(), bb.getI64IntegerAttr(1));
    Value gx =
        GroupIdOp::create(bb, loc, bb.getIndexType(), bb.getI64IntegerAttr(0));
    Value gy =
        GroupIdOp::create(bb, loc, bb.getIndexType(), bb.getI64IntegerAttr(1));
    mTile = ad.mul(gy, 4 * kTileBlocks);
    nTile = ad.mul(gx, 4 * kTileBlocks);
    for (int64_t i = 0; i < kItemBlocks; ++i) {
      mBlocks.push_back(
          ad.add(mTile, ad.mul(ad.add(ly, ad.c(i * kGroupItems)), 4)));
      nBlocks.push_back(
          ad.add(nTile, ad.mul(ad.add(lx, ad.c(i * kGroupItems)), 4)));
    }
  } else {
    mBlocks.push_back(ad.mul(by, 4));
    nBlocks.push_back(ad.mul(bx, 4));
  }
  auto blockAt = [&](int64_t i, int64_t j, ArrayRef<Value> base) {
    SmallVector<Value> loops(base.begin(), base.end());
    loops[mLoop] = mBlocks[i];
    loops[nLoop] = nBlocks[j];
    return loops;
  };
  // Texel `o` of the 4x4 block of `handle` at loops `at` (rowLoop/colLoop at
  // their block starts): the one at offset o along the unpacked dim.
  auto readTexel = [&](Value handle, AffineMap map, unsigned packed,
                       unsigned rowLoop, unsigned colLoop, ArrayRef<Value> at,
                       Value o) -> Value {
    unsigned other = packed == rowLoop ? colLoop : rowLoop;
    SmallVector<Value> loops(at.begin(), at.end());
    loops[other] = ad.add(at[other], o);
    SmallVector<Value> idx;
    for (AffineExpr e : map.getResults())
      idx.push_back(loops[cast<AffineDimExpr>(e).getPosition()]);
    auto type = cast<RankedTensorType>(handle.getType());
    std::array<Value, 4> t = ad.texelOf(type, idx);
    return LoadTexelOp::create(bb, loc, texelType, handle, t[0], t[1], t[2]);
  };
  // The 4x4 block (block[i][j] for rowLoop + i, colLoop + j) of its 4
  // texels: the channels run along the packed dim.
  auto blockOf = [&](ArrayRef<Value> texels, unsigned packed,
                     unsigned rowLoop) {
    SmallVector<SmallVector<Value>> block(4, SmallVector<Value>(4));
    for (int o = 0; o < 4; ++o)
      for (int ch = 0; ch < 4; ++ch) {
        Value v = vector::ExtractOp::create(bb, loc, texels[o], ch);
        if (packed == rowLoop)
          block[ch][o] = v;
        else
          block[o][ch] = v;
      }
    return block;
  };
  auto readBlock = [&](Value handle, AffineMap map, unsigned packed,
                       unsigned rowLoop, unsigned colLoop, ArrayRef<Value> at) {
    SmallVector<Value> texels;
    for (int o = 0; o < 4; ++o)
      texels.push_back(
          readTexel(handle, map, packed, rowLoop, colLoop, at, ad.c(o)));
    return blockOf(texels, packed, rowLoop);
  };
  // Accumulators: 16 per block, blocks in (i, j) order.
  bool readsInit = op.payloadUsesValueFromOperand(init);
  SmallVector<Value> accInit;
  Value zero = arith::ConstantOp::create(bb, loc, bb.getF32FloatAttr(0));
  for (int64_t i = 0; i < perItem; ++i)
    for (int64_t j = 0; j < perItem; ++j) {
      if (!readsInit) {
        accInit.append(16, zero);
        continue;
      }
      auto c = readBlock(kb.inputHandle(cIn), maps[2], *cPacked, mLoop, nLoop,
                         blockAt(i, j, at));
      for (int r = 0; r < 4; ++r)
        for (int q = 0; q < 4; ++q)
          accInit.push_back(c[r][q]);
    }
  bool aFirst = mul.getLhs() == body.getArgument(aPos);
  // acc[i][j] += sum_k a[i][k] * b[k][j] over one 4-step of k.
  auto multiplyAdd = [&](ValueRange acc, ArrayRef<SmallVector<Value>> ablk,
                         ArrayRef<SmallVector<Value>> bblk) {
    SmallVector<Value> next;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        Value sum = acc[i * 4 + j];
        for (int k = 0; k < 4; ++k) {
          Value x = ablk[i][k], y = bblk[k][j];
          Value p = aFirst ? arith::MulFOp::create(bb, loc, x, y)
                           : arith::MulFOp::create(bb, loc, y, x);
          sum = arith::AddFOp::create(bb, loc, sum, p);
        }
        next.push_back(sum);
      }
    return next;
  };
  int64_t kStep = local ? kLocalK : 4;
  auto loop = scf::ForOp::create(bb, loc, ad.c(0), ad.c(ranges[kLoop]),
                                 ad.c(kStep), accInit);
  {
    OpBuilder::InsertionGuard g(bb);
    bb.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> atK = at;
    atK[kLoop] = loop.getInductionVar();
    if (!local) {
      SmallVector<Value> here = blockAt(0, 0, atK);
      auto ablk =
          readBlock(kb.inputHandle(aIn), aMap, *aPacked, mLoop, kLoop, here);
      auto bblk =
          readBlock(kb.inputHandle(bIn), bMap, *bPacked, kLoop, nLoop, here);
      scf::YieldOp::create(bb, loc,
                           multiplyAdd(loop.getRegionIterArgs(), ablk, bblk));
    } else {
      // The work-group stages the A tile (its rows x kLocalK) and the B tile
      // (kLocalK x its columns) in local memory, each texel read from its
      // image once, then every work-item multiplies its blocks out of local
      // memory.
      Value flat = ad.add(ad.mul(ly, kGroupItems), lx);
      constexpr int64_t perTile = kTileBlocks * kKBlocks * 4;
      constexpr int64_t items = kGroupItems * kGroupItems;
      static_assert(perTile % items == 0, "tiles split evenly");
      for (int64_t r = 0; r < perTile / items; ++r) {
        // Texel t of a tile: block t % kTileBlocks, then texel, then k block.
        Value t = ad.add(flat, ad.c(r * items));
        Value blk = ad.rem(t, kTileBlocks);
        Value o = ad.rem(ad.div(t, kTileBlocks), 4);
        Value kblk = ad.div(t, kTileBlocks * 4);
        Value kAt = ad.add(atK[kLoop], ad.mul(kblk, 4));
        // Operand `in` (blocks along `tileLoop` from `tileStart`) into `tile`.
        auto stage = [&](unsigned in, AffineMap map, unsigned packed,
                         unsigned tileLoop, Value tileStart, unsigned rowLoop,
                         unsigned colLoop, Value tile) {
          SmallVector<Value> loops = atK;
          loops[tileLoop] = ad.add(tileStart, ad.mul(blk, 4));
          loops[kLoop] = kAt;
          memref::StoreOp::create(bb, loc,
                                  readTexel(kb.inputHandle(in), map, packed,
                                            rowLoop, colLoop, loops, o),
                                  tile, ValueRange{kblk, o, blk});
        };
        stage(aIn, aMap, *aPacked, mLoop, mTile, mLoop, kLoop, aTile);
        stage(bIn, bMap, *bPacked, nLoop, nTile, kLoop, nLoop, bTile);
      }
      BarrierOp::create(bb, loc);
      SmallVector<Value> acc(loop.getRegionIterArgs());
      for (int64_t kblk = 0; kblk < kKBlocks; ++kblk) {
        SmallVector<SmallVector<SmallVector<Value>>> ablks, bblks;
        for (int64_t i = 0; i < kItemBlocks; ++i) {
          SmallVector<Value> aTexels, bTexels;
          Value am = ad.add(ly, ad.c(i * kGroupItems));
          Value bn = ad.add(lx, ad.c(i * kGroupItems));
          for (int64_t o = 0; o < 4; ++o) {
            aTexels.push_back(memref::LoadOp::create(
                bb, loc, aTile, ValueRange{ad.c(kblk), ad.c(o), am}));
            bTexels.push_back(memref::LoadOp::create(
                bb, loc, bTile, ValueRange{ad.c(kblk), ad.c(o), bn}));
          }
          ablks.push_back(blockOf(aTexels, *aPacked, mLoop));
          bblks.push_back(blockOf(bTexels, *bPacked, kLoop));
        }
        for (int64_t i = 0; i < kItemBlocks; ++i)
          for (int64_t j = 0; j < kItemBlocks; ++j) {
            int64_t first = (i * kItemBlocks + j) * 16;
            SmallVector<Value> next = multiplyAdd(
                ValueRange(acc).slice(first, 16), ablks[i], bblks[j]);
            llvm::copy(next, acc.begin() + first);
          }
      }
      // The tiles are overwritten by the next step only after everyone has
      // read them.
      BarrierOp::create(bb, loc);
      scf::YieldOp::create(bb, loc, acc);
    }
  }
  // Store each block as 4 whole texels of C.
  unsigned other = *cPacked == mLoop ? nLoop : mLoop;
  for (int64_t bi = 0; bi < perItem; ++bi)
    for (int64_t bj = 0; bj < perItem; ++bj) {
      SmallVector<Value> origin = blockAt(bi, bj, at);
      int64_t first = (bi * perItem + bj) * 16;
      for (int o = 0; o < 4; ++o) {
        SmallVector<Value> loops = origin;
        loops[other] = ad.add(origin[other], ad.c(o));
        SmallVector<Value> idx;
        for (AffineExpr e : maps[2].getResults())
          idx.push_back(loops[cast<AffineDimExpr>(e).getPosition()]);
        std::array<Value, 4> t = ad.texelOf(resultType, idx);
        SmallVector<Value> channels;
        for (int ch = 0; ch < 4; ++ch) {
          int i = *cPacked == mLoop ? ch : o, j = *cPacked == mLoop ? o : ch;
          channels.push_back(loop.getResult(first + i * 4 + j));
        }
        Value texel =
            vector::FromElementsOp::create(bb, loc, texelType, channels);
        StoreTexelOp::create(bb, loc, texel, kb.outputHandle(), t[0], t[1],
                             t[2]);
      }
    }
  if (guard)
    bb.setInsertionPointAfter(guard);
  return kb.end();
}

/// Lowers fbl.relayout to a copy kernel.
static void lowerRelayout(RelayoutOp op, TargetAttr target, unsigned &counter) {
  OpBuilder b(op);
  KernelBuilder kb(b, op.getLoc(), target);
  unsigned src = kb.addInput(op.getSource());
  RankedTensorType type = op.getType();
  kb.begin(("k" + Twine(counter++) + "_relayout").str(), type, gridFor(type));
  kb.forEachOutputElement([&](ValueRange idx) {
    Addressing a{b, op.getLoc()};
    return a.load(kb.inputHandle(src), idx);
  });
  DispatchOp dispatch = kb.end();
  op.getResult().replaceAllUsesWith(dispatch.getResult(0));
  op.erase();
}

/// Lowers tensor.extract_slice and tensor.insert_slice (static offsets,
/// sizes and strides) to copy kernels.
static LogicalResult lowerSlice(Operation *op, TargetAttr target,
                                unsigned &counter) {
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
  ArrayRef<int64_t> offsets = offsetsSizesStrides.getStaticOffsets();
  ArrayRef<int64_t> strides = offsetsSizesStrides.getStaticStrides();
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  std::string name = ("k" + Twine(counter++) + "_slice").str();
  if (auto extract = dyn_cast<tensor::ExtractSliceOp>(op)) {
    unsigned src = kb.addInput(extract.getSource());
    llvm::SmallBitVector dropped = extract.getDroppedDims();
    kb.begin(name, resultType, gridFor(resultType));
    kb.forEachOutputElement([&](ValueRange idx) {
      Addressing a{b, loc};
      SmallVector<Value> srcIdx;
      unsigned r = 0;
      for (unsigned d = 0; d < offsets.size(); ++d) {
        Value i = dropped.test(d) ? a.c(0) : idx[r++];
        srcIdx.push_back(a.add(a.mul(i, strides[d]), a.c(offsets[d])));
      }
      return a.load(kb.inputHandle(src), srcIdx);
    });
  } else {
    auto insert = cast<tensor::InsertSliceOp>(op);
    unsigned src = kb.addInput(insert.getSource());
    unsigned dest = kb.addInput(insert.getDest());
    ArrayRef<int64_t> sizes = insert.getStaticSizes();
    llvm::SmallBitVector dropped = insert.getDroppedDims();
    Type elem = resultType.getElementType();
    kb.begin(name, resultType, gridFor(resultType));
    kb.forEachOutputElement([&](ValueRange idx) -> Value {
      Addressing a{b, loc};
      // Inside the inserted region when offset <= i < offset + size*stride
      // and (i - offset) % stride == 0.
      Value inside;
      SmallVector<Value> srcIdx;
      for (unsigned d = 0; d < offsets.size(); ++d) {
        Value rel = arith::SubIOp::create(b, loc, idx[d], a.c(offsets[d]));
        Value ge = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                         idx[d], a.c(offsets[d]));
        Value lt =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, idx[d],
                                  a.c(offsets[d] + sizes[d] * strides[d]));
        Value onStride = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::eq,
            arith::RemSIOp::create(b, loc, rel, a.c(strides[d])), a.c(0));
        inside = a.andi(
            inside,
            arith::AndIOp::create(b, loc, ge,
                                  arith::AndIOp::create(b, loc, lt, onStride)));
        if (!dropped.test(d))
          srcIdx.push_back(
              arith::DivSIOp::create(b, loc, rel, a.c(strides[d])));
      }
      auto pick = scf::IfOp::create(b, loc, TypeRange{elem}, inside, true);
      b.setInsertionPointToStart(&pick.getThenRegion().front());
      scf::YieldOp::create(b, loc, a.load(kb.inputHandle(src), srcIdx));
      b.setInsertionPointToStart(&pick.getElseRegion().front());
      scf::YieldOp::create(b, loc, a.load(kb.inputHandle(dest), idx));
      b.setInsertionPointAfter(pick);
      return pick.getResult(0);
    });
  }
  DispatchOp dispatch = kb.end();
  op->getResult(0).replaceAllUsesWith(dispatch.getResult(0));
  op->erase();
  return success();
}

/// Lowers a top-level tensor.insert of a scalar into a copy kernel that
/// replaces one element.
static LogicalResult lowerInsert(tensor::InsertOp op, TargetAttr target,
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

/// A loop of a scatter nest whose iterations touch disjoint elements of the
/// scattered tensor: every access to it takes the loop's induction variable
/// as the index of dimension `dim`.
struct ParallelScatterLoop {
  scf::ForOp loop;
  unsigned dim;
  int64_t tripCount;
};

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
static LogicalResult lowerScatterLoop(scf::ForOp loop, TargetAttr target,
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
  auto copy = scf::ForOp::create(b, loc, a.c(0), a.c(copied), a.c(1));
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
    StoreElementOp::create(b, loc, a.load(kb.inputHandle(initIndex), idx), out,
                           a.linear(type, idx));
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

namespace {
struct LowerToKernelsPass
    : public mlir::fbl::impl::FBLLowerToKernelsPassBase<LowerToKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TargetAttr targetAttr = TargetAttr::lookupOrEmitError(module);
    if (!targetAttr)
      return signalPassFailure();
    unsigned counter = 0;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      // Only laid-out functions are lowered.
      bool encoded = llvm::any_of(func.getArgumentTypes(), [](Type t) {
        return getLayoutEncoding(t) != nullptr;
      });
      if (!encoded)
        continue;
      SmallVector<Operation *> work;
      for (Operation &op : func.getBody().front())
        if (isa<linalg::LinalgOp, RelayoutOp, scf::ForOp,
                tensor::ExtractSliceOp, tensor::InsertSliceOp,
                tensor::InsertOp>(op))
          work.push_back(&op);
      for (Operation *op : work) {
        LogicalResult r = success();
        if (auto l = dyn_cast<linalg::LinalgOp>(op)) {
          FailureOr<DispatchOp> gemm = lowerContraction(l, targetAttr, counter);
          if (succeeded(gemm)) {
            l->getResult(0).replaceAllUsesWith(gemm->getResult(0));
            l->erase();
          } else {
            r = lowerLinalg(l, targetAttr, counter);
          }
        } else if (auto relayout = dyn_cast<RelayoutOp>(op))
          lowerRelayout(relayout, targetAttr, counter);
        else if (isa<tensor::ExtractSliceOp, tensor::InsertSliceOp>(op))
          r = lowerSlice(op, targetAttr, counter);
        else if (auto insert = dyn_cast<tensor::InsertOp>(op))
          r = lowerInsert(insert, targetAttr, counter);
        else
          r = lowerScatterLoop(cast<scf::ForOp>(op), targetAttr, counter);
        if (failed(r))
          return signalPassFailure();
      }
      // Assertions check inputs on the host side of a framework; kernels do
      // not evaluate them (DESIGN: results for valid inputs are unchanged).
      Block &block = func.getBody().front();
      for (Operation &op : llvm::make_early_inc_range(block))
        if (isa<cf::AssertOp>(op))
          op.erase();
      // Scalar code and tensors only kernels used are dead now.
      for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
        if (!isa<DispatchOp>(op) && isOpTriviallyDead(&op))
          op.erase();
    }
  }
};
} // namespace
