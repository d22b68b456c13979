//===- KernelPlan.cpp - The kernel fbl emits for an op --------------------===//
//
// GEMM matching and the kernel shape of every op fbl-lower-to-kernels
// lowers, for any layouts of its operands.
//
//===----------------------------------------------------------------------===//

#include "fbl/CostModel/KernelPlan.h"
#include "fbl/Dialect/FBL/IR/FBLOps.h"
#include "fbl/Dialect/FBL/IR/IndexTransforms.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::fbl;
namespace fc = ::fbl::cost;
namespace fl = ::fbl::layout;

fl::Layout mlir::fbl::layoutOf(RankedTensorType type, Attribute encoding) {
  return cast<LayoutEncodingAttrInterface>(encoding).getLayout(type.getRank());
}

SmallVector<Attribute> mlir::fbl::encodingsOf(ValueRange values) {
  SmallVector<Attribute> encodings;
  for (Value v : values) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    encodings.push_back(type ? type.getEncoding() : Attribute());
  }
  return encodings;
}

std::optional<GemmMatch> mlir::fbl::matchGemm(linalg::LinalgOp op) {
  return matchGemm(op, encodingsOf(op->getOperands()));
}

/// The loop a GEMM operand of `type` in `encoding`, indexed through `map`,
/// is packed along, if it is an image packed along a dim that one of the
/// blocked `loops` walks, with tiles aligned to the 4-blocks.
static std::optional<unsigned> blockPackedLoop(RankedTensorType type,
                                               Attribute encoding,
                                               AffineMap map,
                                               ArrayRef<unsigned> loops) {
  auto enc = dyn_cast_or_null<LayoutEncodingAttrInterface>(encoding);
  if (!enc || isa<BufferLayoutAttr>(enc))
    return std::nullopt;
  fl::Layout l = enc.getLayout(type.getRank());
  if (l.packedDim() < 0)
    return std::nullopt;
  auto loopOf = [&](unsigned d) {
    return cast<AffineDimExpr>(map.getResult(d)).getPosition();
  };
  for (unsigned d = 0; d < type.getRank(); ++d)
    if (l.tile()[d] % 4 && static_cast<int>(d) != l.packedDim() &&
        llvm::is_contained(loops, loopOf(d)) && l.tile()[d] != 1)
      return std::nullopt;
  unsigned loop = loopOf(l.packedDim());
  if (!llvm::is_contained(loops, loop))
    return std::nullopt;
  return loop;
}

std::optional<GemmMatch> mlir::fbl::matchGemm(linalg::LinalgOp op,
                                              OperandLayouts layouts) {
  if (op->getNumResults() != 1 || op.getNumDpsInputs() != 2 ||
      op.getNumReductionLoops() != 1 || !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  // The body must be acc + a * b.
  Block &body = *op.getBlock();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add || body.getOperations().size() != 3)
    return std::nullopt;
  Value acc = body.getArgument(2);
  Value prod = add.getLhs() == acc ? add.getRhs() : add.getLhs();
  auto mul = prod.getDefiningOp<arith::MulFOp>();
  if (!mul || (add.getLhs() != acc && add.getRhs() != acc))
    return std::nullopt;
  GemmMatch g;
  g.resultType = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t rank = g.resultType.getRank();
  if (rank < 2 || !g.resultType.getElementType().isF32())
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (llvm::any_of(maps,
                   [](AffineMap m) { return !m.isProjectedPermutation(); }))
    return std::nullopt;
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  g.ranges = op.getStaticLoopRanges();
  auto loopOf = [](AffineMap m, unsigned r) {
    return cast<AffineDimExpr>(m.getResult(r)).getPosition();
  };
  unsigned mLoop = loopOf(maps[2], rank - 2), nLoop = loopOf(maps[2], rank - 1);
  unsigned kLoop = 0;
  for (unsigned l = 0; l < iters.size(); ++l)
    if (iters[l] == utils::IteratorType::reduction)
      kLoop = l;
  auto packedLoop = [&](unsigned operand,
                        AffineMap map) -> std::optional<unsigned> {
    auto type = cast<RankedTensorType>(op->getOperand(operand).getType());
    Attribute encoding = operand < layouts.size() ? layouts[operand] : nullptr;
    return blockPackedLoop(type, encoding, map, {mLoop, nLoop, kLoop});
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
    return std::nullopt;
  OpOperand *init = op.getDpsInitOperand(0);
  auto aPacked =
      packedLoop(op.getDpsInputOperand(aPos)->getOperandNumber(), maps[aPos]);
  auto bPacked =
      packedLoop(op.getDpsInputOperand(bPos)->getOperandNumber(), maps[bPos]);
  auto cPacked = packedLoop(init->getOperandNumber(), maps[2]);
  if (!aPacked || !bPacked || !cPacked || *cPacked == kLoop)
    return std::nullopt;
  if (!isa<BlockArgument>(mul.getLhs()) || !isa<BlockArgument>(mul.getRhs()))
    return std::nullopt;

  g.mLoop = mLoop;
  g.nLoop = nLoop;
  g.kLoop = kLoop;
  g.batch = 1;
  for (unsigned l = 0; l < iters.size(); ++l)
    if (l != mLoop && l != nLoop && l != kLoop) {
      g.batchLoops.push_back(l);
      g.batch *= g.ranges[l];
    }
  g.a = {op.getDpsInputOperand(aPos)->get(),
         maps[aPos],
         *aPacked,
         mLoop,
         kLoop,
         op.getDpsInputOperand(aPos)->getOperandNumber()};
  g.b = {op.getDpsInputOperand(bPos)->get(),
         maps[bPos],
         *bPacked,
         kLoop,
         nLoop,
         op.getDpsInputOperand(bPos)->getOperandNumber()};
  g.c = {init->get(), maps[2], *cPacked,
         mLoop,       nLoop,   init->getOperandNumber()};
  g.aFirst = mul.getLhs() == body.getArgument(aPos);
  g.initValue = initConstant(op);
  g.readsInit = op.payloadUsesValueFromOperand(init) && !g.initValue;
  return g;
}

/// Whether scalar `v` can be computed again inside a kernel: a chain of
/// pure ops without regions (element reads of tensors included) that ends
/// in constants, not in arguments.
static bool recomputable(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getNumRegions() ||
      (!isPure(def) && !isa<tensor::ExtractOp>(def)))
    return false;
  return llvm::all_of(def->getOperands(), [](Value operand) {
    return isa<RankedTensorType>(operand.getType()) || recomputable(operand);
  });
}

bool mlir::fbl::writesResultsTogether(linalg::LinalgOp op) {
  Operation *o = op;
  if (o->getNumResults() == 0 || op.getNumReductionLoops() != 0)
    return false;
  Type type = o->getResult(0).getType();
  AffineMap map = op.getIndexingMapMatchingResult(o->getResult(0));
  return llvm::all_of(o->getResultTypes(), [&](Type t) { return t == type; }) &&
         llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
           return !op.payloadUsesValueFromOperand(&init) &&
                  op.getMatchingIndexingMap(&init) == map;
         });
}

FailureOr<GemmEpilogueKinds>
GemmEpilogueKinds::fromOption(StringRef name, Operation *op, StringRef pass) {
  using Kinds = GemmEpilogueKinds;
  std::optional<Kinds> kinds =
      llvm::StringSwitch<std::optional<Kinds>>(name)
          .Case("all", Kinds{})
          .Case("none", Kinds{/*any=*/false})
          .Case("sole-reader", Kinds{true, /*besideOtherReaders=*/false})
          .Case("same-shape", Kinds{true, true, /*broadcastInputs=*/false})
          .Case("sole-same-shape", Kinds{true, false, false})
          .Default(std::nullopt);
  if (kinds)
    return *kinds;
  op->emitError(pass) << ": unknown gemm-epilogues '" << name
                      << "' (all, none, sole-reader, same-shape, "
                         "sole-same-shape)";
  return failure();
}

bool mlir::fbl::isGemmEpilogue(linalg::LinalgOp op, GemmEpilogueKinds kinds) {
  for (Value v : op.getDpsInputs())
    if (auto gemm = v.getDefiningOp<linalg::LinalgOp>())
      if (std::optional<GemmMatch> g = matchGemm(gemm))
        if (std::optional<GemmEpilogue> e = matchGemmEpilogue(gemm, *g, kinds);
            e && e->op == op)
          return true;
  return false;
}

/// `e` as the epilogue of GEMM `g` (`op`'s), if it can be one.
static std::optional<GemmEpilogue> matchEpilogueOp(linalg::LinalgOp op,
                                                   const GemmMatch &g,
                                                   linalg::GenericOp e,
                                                   GemmEpilogueKinds kinds) {
  Value result = op->getResult(0);
  if (!e || e->getNumResults() != 1 || e.getNumDpsInits() != 1 ||
      e.getNumParallelLoops() != e.getNumLoops() ||
      e.payloadUsesValueFromOperand(e.getDpsInitOperand(0)))
    return std::nullopt;
  auto eType = dyn_cast<RankedTensorType>(e->getResult(0).getType());
  if (!eType || eType.getShape() != g.resultType.getShape() ||
      !eType.getElementType().isF32())
    return std::nullopt;
  // The body is scalar code: no indices, no gathers, no regions.
  bool scalar = true;
  e.getBlock()->walk([&](Operation *inner) {
    if (isa<linalg::IndexOp, tensor::ExtractOp>(inner) ||
        inner->getNumRegions() || !isPure(inner))
      scalar = false;
  });
  if (!scalar)
    return std::nullopt;
  // The kernel runs where the GEMM is: what the epilogue reads from outside
  // must be there already.
  auto before = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return !def || def->getBlock() != op->getBlock() ||
           def->isBeforeInBlock(op);
  };
  for (OpOperand *in : e.getDpsInputOperands())
    if (in->get() != result && !before(in->get()))
      return std::nullopt;
  // Scalars from outside (operands, captured values) are computed again in
  // the kernel.
  bool captured = true;
  e.getBlock()->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (v.getParentRegion() != &e->getRegion(0) &&
          (!before(v) || !recomputable(v)))
        captured = false;
  });
  for (OpOperand *in : e.getDpsInputOperands())
    if (!isa<RankedTensorType>(in->get().getType()) && !recomputable(in->get()))
      captured = false;
  if (!captured)
    return std::nullopt;
  GemmEpilogue epilogue;
  epilogue.op = e;
  std::optional<unsigned> resultInput;
  SmallVector<unsigned> blockLoops = {g.mLoop, g.nLoop};
  // Every tensor is read (and the result written) element for element as
  // the GEMM's C: identity maps, images packed along m or n. An input may
  // also drop m or n (a bias over the columns), packed along the other: the
  // kernel reads one texel for a block's rows or columns.
  auto asOperand = [&](OpOperand &operand) -> std::optional<GemmOperand> {
    auto type = cast<RankedTensorType>(operand.get().getType());
    AffineMap map = e.getMatchingIndexingMap(&operand);
    if (!type.getElementType().isF32() || !map.isProjectedPermutation() ||
        (!map.isIdentity() && e.isDpsInit(&operand)))
      return std::nullopt;
    // Over the GEMM's loops: each of the epilogue's loops is a dim of C.
    AffineMap loops = map.isIdentity() ? g.c.map : map.compose(g.c.map);
    std::optional<unsigned> packed =
        blockPackedLoop(type, type.getEncoding(), loops, blockLoops);
    if (!packed)
      return std::nullopt;
    GemmOperand x{operand.get(), loops,   *packed,
                  g.mLoop,       g.nLoop, operand.getOperandNumber()};
    x.broadcast =
        !loops.isFunctionOfDim(g.mLoop) || !loops.isFunctionOfDim(g.nLoop);
    if (x.broadcast && !kinds.broadcastInputs)
      return std::nullopt;
    return x;
  };
  for (OpOperand *in : e.getDpsInputOperands()) {
    if (!isa<RankedTensorType>(in->get().getType()))
      continue;
    if (in->get() == result) {
      if (resultInput || !e.getMatchingIndexingMap(in).isIdentity())
        return std::nullopt;
      resultInput = in->getOperandNumber();
      continue;
    }
    std::optional<GemmOperand> x = asOperand(*in);
    if (!x)
      return std::nullopt;
    epilogue.inputs.push_back(*x);
  }
  std::optional<GemmOperand> out = asOperand(*e.getDpsInitOperand(0));
  if (!resultInput || !out)
    return std::nullopt;
  epilogue.resultInput = *resultInput;
  epilogue.output = *out;
  epilogue.output.value = e->getResult(0);
  return epilogue;
}

std::optional<GemmEpilogue>
mlir::fbl::matchGemmEpilogue(linalg::LinalgOp op, const GemmMatch &g,
                             GemmEpilogueKinds kinds) {
  Value result = op->getResult(0);
  if (!kinds.any)
    return std::nullopt;
  if (result.hasOneUse())
    return matchEpilogueOp(
        op, g, dyn_cast<linalg::GenericOp>(*result.getUsers().begin()), kinds);
  if (!kinds.besideOtherReaders || result.use_empty())
    return std::nullopt;
  // The first reader in the block that can be one: the kernel runs where
  // the GEMM is, before every reader.
  SmallVector<linalg::GenericOp> readers;
  for (Operation *user : result.getUsers())
    if (auto generic = dyn_cast<linalg::GenericOp>(user);
        generic && generic->getBlock() == op->getBlock() &&
        !llvm::is_contained(readers, generic))
      readers.push_back(generic);
  llvm::sort(readers, [](linalg::GenericOp x, linalg::GenericOp y) {
    return x->isBeforeInBlock(y);
  });
  for (linalg::GenericOp reader : readers)
    if (std::optional<GemmEpilogue> e = matchEpilogueOp(op, g, reader, kinds)) {
      e->keepsResult = true;
      return e;
    }
  return std::nullopt;
}

bool mlir::fbl::movesElementsOnly(Operation *op) {
  return isa<RelayoutOp, ReshapeViewOp, TransposeViewOp,
             tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op);
}

TypedAttr mlir::fbl::initConstant(linalg::LinalgOp op) {
  if (isa<linalg::FillOp>(op) || op.getNumDpsInits() != 1)
    return {};
  Value init = op.getDpsInitOperand(0)->get();
  while (Operation *def = init.getDefiningOp()) {
    if (!movesElementsOnly(def))
      break;
    init = def->getOperand(0);
  }
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return {};
  auto constant = fill.value().getDefiningOp<arith::ConstantOp>();
  if (!constant)
    return {};
  return dyn_cast<TypedAttr>(constant.getValue());
}

bool mlir::fbl::isAbsorbedFill(Operation *op) {
  auto fill = dyn_cast<linalg::FillOp>(op);
  if (!fill || fill->use_empty())
    return false;
  return llvm::all_of(fill->getUses(), [](OpOperand &use) {
    auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
    return user && user.isDpsInit(&use) && initConstant(user);
  });
}

/// How much slower the cost model must time a class's tile than the
/// smaller class's to keep the smaller one. Measured on the H100 (the
/// preset's square tiles at seven shapes, three forms, two layouts;
/// `tune_gemm.py model`, docs/benchmarks.md): pairs the model separates by
/// more than 5% it ordered as the device did in 70 of 70 where neither tile
/// pads C, pairs within 2-5% in 30 of 36, within 2% in 29 of 50. Below the
/// margin the tuned classes decide.
static constexpr double kTileVetoMargin = 1.05;

std::optional<LocalGemmTile>
mlir::fbl::localGemmTile(const GemmMatch &g, const fc::KernelShape &gemm,
                         TargetAttr target) {
  if (!target.getLocalTiledGemm())
    return std::nullopt;
  int64_t m = g.ranges[g.mLoop], n = g.ranges[g.nLoop];
  auto fits = [&](const ::fbl::target::GemmTile &t) {
    return !t.invalidReason() && t.covers(m, n, g.ranges[g.kLoop]) &&
           target.getMaxWorkgroupSize() >= t.items();
  };
  // A larger class's tile replaces the smaller class's unless the cost
  // model times it clearly slower at this GEMM's shape and layouts (where
  // either does not fit, the sizes decide as before).
  std::optional<fc::DeviceModel> device;
  auto timeNs = [&](const ::fbl::target::GemmTile &t) {
    if (!device)
      device = fc::DeviceModel::of(target.getDescription());
    fc::KernelShape k = gemm;
    k.kind = fc::KernelKind::LocalTiledGemm;
    k.gemmTile = t;
    return fc::kernelCost(k, *device).timeNs;
  };
  auto noSlower = [&](const ::fbl::target::GemmTile &larger,
                      const ::fbl::target::GemmTile &chosen) {
    return !fits(larger) || !fits(chosen) || larger == chosen ||
           timeNs(larger) <= kTileVetoMargin * timeNs(chosen);
  };
  // The tile of `g`'s shape class, the target's tile, then the default;
  // each also with one block per work-item (a tile half as wide, for sizes
  // that a wide tile covers with too much waste), before the register-tiled
  // kernel.
  auto narrow = [](::fbl::target::GemmTile t) {
    t.itemBlocks = 1;
    t.itemBlocksN = 0;
    return t;
  };
  ::fbl::target::GemmTileClass shapeClass = ::fbl::target::gemmTileClassFor(
      target.getGemmTile(), target.getGemmTileClasses(), g.batch, m, n,
      noSlower);
  const ::fbl::target::GemmTile &preset = shapeClass.tile;
  ::fbl::target::GemmTile base = target.getGemmTile();
  for (const ::fbl::target::GemmTile &t :
       {preset, base, ::fbl::target::kDefaultGemmTile, narrow(preset),
        narrow(base), narrow(::fbl::target::kDefaultGemmTile)})
    if (fits(t))
      return LocalGemmTile{t, shapeClass.ownLaunch && t == preset};
  return std::nullopt;
}

/// For each result of `map`, the loop it is (-1 where it is not a loop:
/// constants and other affine expressions are costed as index 0).
static std::vector<int> loopsOf(AffineMap map) {
  std::vector<int> loops;
  for (AffineExpr e : map.getResults()) {
    auto d = dyn_cast<AffineDimExpr>(e);
    loops.push_back(d ? static_cast<int>(d.getPosition()) : -1);
  }
  return loops;
}

static std::vector<int64_t> shapeOf(Type type) {
  auto t = cast<RankedTensorType>(type);
  return std::vector<int64_t>(t.getShape().begin(), t.getShape().end());
}

static std::vector<int> identityLoops(size_t rank) {
  std::vector<int> loops(rank);
  for (size_t d = 0; d < rank; ++d)
    loops[d] = static_cast<int>(d);
  return loops;
}

std::optional<fc::KernelShape>
mlir::fbl::planLinalgKernel(linalg::LinalgOp linalgOp,
                            OperandLayouts operandLayouts,
                            Attribute resultLayout, TargetAttr target,
                            std::optional<LocalGemmTile> *localTile) {
  Operation *op = linalgOp;
  auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!resultType || !resultLayout)
    return std::nullopt;
  if (op->getNumResults() > 1 && !writesResultsTogether(linalgOp))
    return std::nullopt;
  fl::Layout out = layoutOf(resultType, resultLayout);
  fc::KernelShape k;
  k.kind =
      out.isBuffer() ? fc::KernelKind::PerElement : fc::KernelKind::PerTexel;
  k.outputs = op->getNumResults();
  SmallVector<int64_t> ranges = linalgOp.getStaticLoopRanges();
  k.ranges.assign(ranges.begin(), ranges.end());
  for (utils::IteratorType t : linalgOp.getIteratorTypesArray())
    k.reduction.push_back(t == utils::IteratorType::reduction);
  OpOperand *init = linalgOp.getDpsInitOperand(0);
  k.output = {shapeOf(resultType),
              loopsOf(linalgOp.getMatchingIndexingMap(init)), out};
  if (std::optional<GemmMatch> g = matchGemm(linalgOp, operandLayouts)) {
    k.kind = fc::KernelKind::RegisterTiledGemm;
    k.mLoop = static_cast<int>(g->mLoop);
    k.nLoop = static_cast<int>(g->nLoop);
    k.kLoop = static_cast<int>(g->kLoop);
    for (const GemmOperand *x : {&g->a, &g->b}) {
      auto type = cast<RankedTensorType>(x->value.getType());
      k.inputs.push_back({shapeOf(type), loopsOf(x->map),
                          layoutOf(type, operandLayouts[x->operandNumber])});
      k.inputOperands.push_back(x->operandNumber);
    }
    k.readsInit = g->readsInit;
    k.multipliesPerApplication = 1;
    std::optional<LocalGemmTile> local = localGemmTile(*g, k, target);
    if (local) {
      k.kind = fc::KernelKind::LocalTiledGemm;
      k.gemmTile = local->tile;
    }
    if (localTile)
      *localTile = local;
    return k;
  }
  linalgOp.getBlock()->walk([&](Operation *inner) {
    if (isa<arith::MulFOp, math::FmaOp>(inner))
      ++k.multipliesPerApplication;
  });
  for (OpOperand *in : linalgOp.getDpsInputOperands()) {
    auto type = dyn_cast<RankedTensorType>(in->get().getType());
    if (!type || !operandLayouts[in->getOperandNumber()])
      continue;
    k.inputs.push_back(
        {shapeOf(type), loopsOf(linalgOp.getMatchingIndexingMap(in)),
         layoutOf(type, operandLayouts[in->getOperandNumber()])});
    k.inputOperands.push_back(in->getOperandNumber());
  }
  k.readsInit =
      linalgOp.payloadUsesValueFromOperand(init) && !initConstant(linalgOp);
  // Elements of tensors from above, read at computed places (gathers).
  linalgOp.getBlock()->walk([&](tensor::ExtractOp extract) {
    if (extract.getTensor().getParentRegion() != &op->getRegion(0))
      ++k.gathersPerIteration;
  });
  fc::planReads(k);
  return k;
}

std::optional<fc::KernelShape>
mlir::fbl::planKernel(Operation *op, OperandLayouts operandLayouts,
                      ArrayRef<Attribute> resultLayouts, TargetAttr target) {
  if (op->getNumResults() == 0 || !resultLayouts.front() ||
      isIndexTransform(op) ||
      isa<tensor::EmptyOp, arith::ConstantOp, TransposeViewOp, ReshapeViewOp>(
          op) ||
      isAbsorbedFill(op))
    return std::nullopt;
  auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!resultType)
    return std::nullopt;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return planLinalgKernel(linalgOp, operandLayouts, resultLayouts.front(),
                            target);
  fl::Layout out = layoutOf(resultType, resultLayouts.front());
  fc::KernelShape k;
  k.kind =
      out.isBuffer() ? fc::KernelKind::PerElement : fc::KernelKind::PerTexel;
  if (auto relayout = dyn_cast<RelayoutOp>(op)) {
    RankedTensorType type = relayout.getSource().getType();
    if (operandLayouts.empty() || !operandLayouts.front())
      return std::nullopt;
    k = fc::relayoutKernel(shapeOf(type), layoutOf(type, operandLayouts[0]),
                           out);
    k.inputOperands.push_back(0);
    return k;
  }
  // Copies: slices, inserts and scatter loops write their result a texel
  // (or element) at a time from one source read per element.
  std::vector<int64_t> shape = shapeOf(resultType);
  k.ranges = shape;
  k.reduction.assign(shape.size(), false);
  k.output = {shape, identityLoops(shape.size()), out};
  Value source = op->getNumOperands() ? op->getOperand(0) : Value();
  if (isa<scf::ForOp>(op)) {
    // A scatter: one data-dependent read-modify-write per element.
    k.gathersPerIteration = 1;
    return k;
  }
  auto operandNumber = [&](Value v) {
    for (OpOperand &o : op->getOpOperands())
      if (o.get() == v)
        return o.getOperandNumber();
    return 0u;
  };
  auto addInput = [&](Value v, std::vector<int> loops) -> fc::TensorAccess * {
    unsigned n = operandNumber(v);
    if (n >= operandLayouts.size() || !operandLayouts[n])
      return nullptr;
    auto type = cast<RankedTensorType>(v.getType());
    k.inputs.push_back(
        {shapeOf(type), std::move(loops), layoutOf(type, operandLayouts[n])});
    k.inputOperands.push_back(n);
    return &k.inputs.back();
  };
  if (auto extract = dyn_cast<tensor::ExtractSliceOp>(op)) {
    // Source index d: offset + stride * (the result dim it keeps), or the
    // offset where the slice drops d.
    llvm::SmallBitVector dropped = extract.getDroppedDims();
    std::vector<int> loops;
    int next = 0;
    for (unsigned d = 0; d < dropped.size(); ++d)
      loops.push_back(dropped.test(d) ? -1 : next++);
    if (fc::TensorAccess *in = addInput(extract.getSource(), loops)) {
      in->mul.assign(extract.getStaticStrides().begin(),
                     extract.getStaticStrides().end());
      in->add.assign(extract.getStaticOffsets().begin(),
                     extract.getStaticOffsets().end());
      in->div.assign(loops.size(), 1);
    }
    return k;
  }
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    // Source index: (i - offset) / stride of the destination dim it fills,
    // read inside the slice only; the destination is read around it.
    // Strides below 1 have no kernel (fbl-lower-to-kernels refuses them).
    if (llvm::any_of(insert.getStaticStrides(),
                     [](int64_t s) { return s < 1; }))
      return std::nullopt;
    llvm::SmallBitVector dropped = insert.getDroppedDims();
    std::vector<int> loops;
    std::vector<int64_t> mul, add, div;
    for (unsigned d = 0; d < dropped.size(); ++d)
      if (!dropped.test(d)) {
        loops.push_back(static_cast<int>(d));
        mul.push_back(1);
        add.push_back(-insert.getStaticOffsets()[d]);
        div.push_back(insert.getStaticStrides()[d]);
      }
    int64_t inside = insert.getSourceType().getNumElements();
    if (fc::TensorAccess *in = addInput(insert.getSource(), loops)) {
      in->mul = mul;
      in->add = add;
      in->div = div;
      in->issued = inside;
    }
    int source = static_cast<int>(k.inputs.size()) - 1;
    if (!insert.getDest().getDefiningOp<tensor::EmptyOp>() && source >= 0)
      if (fc::TensorAccess *dest =
              addInput(insert.getDest(), identityLoops(shape.size()))) {
        dest->outsideOf = source;
        dest->issued = fl::Layout::product(shape) - inside;
      }
    return k;
  }
  if (source && isa<RankedTensorType>(source.getType())) {
    auto type = cast<RankedTensorType>(source.getType());
    std::vector<int> loops = identityLoops(shape.size());
    loops.resize(type.getRank(), -1);
    addInput(source, loops);
  }
  return k;
}

std::optional<fc::KernelShape>
mlir::fbl::planGemmWithEpilogue(linalg::LinalgOp op, const GemmMatch &g,
                                const GemmEpilogue &epilogue,
                                TargetAttr target) {
  std::optional<fc::KernelShape> k = planLinalgKernel(
      op, encodingsOf(op->getOperands()), g.resultType.getEncoding(), target);
  if (!k)
    return std::nullopt;
  auto accessOf = [&](const GemmOperand &x) {
    auto type = cast<RankedTensorType>(x.value.getType());
    return fc::TensorAccess{shapeOf(type), loopsOf(x.map),
                            layoutOf(type, type.getEncoding())};
  };
  k->output = accessOf(epilogue.output);
  // C too, for its other readers (as many texels: the same shape).
  if (epilogue.keepsResult)
    k->outputs = 2;
  for (const GemmOperand &x : epilogue.inputs) {
    k->inputs.push_back(accessOf(x));
    k->inputOperands.push_back(x.operandNumber);
  }
  return k;
}

//===----------------------------------------------------------------------===//
// Reductions and row kernels
//===----------------------------------------------------------------------===//

std::optional<ReductionCombiner>
mlir::fbl::matchReductionCombiner(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op->getNumRegions() != 1)
    return std::nullopt;
  BlockArgument acc = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  SmallVector<Operation *> combiners;
  if (!matchReduction({acc}, 0, combiners) || combiners.size() != 1)
    return std::nullopt;
  Operation *combiner = combiners.front();
  std::optional<TypedAttr> neutral = arith::getNeutralElement(combiner);
  if (!neutral || combiner->getNumOperands() != 2 || !acc.hasOneUse())
    return std::nullopt;
  return ReductionCombiner{combiner, *neutral,
                           combiner->getOperand(0) == acc ? 0u : 1u};
}

Value ReductionCombiner::build(OpBuilder &b, Location loc, Value acc,
                               Value x) const {
  SmallVector<Value> operands(2);
  operands[accPos] = acc;
  operands[1 - accPos] = x;
  return b
      .create(loc, op->getName().getIdentifier(), operands,
              TypeRange{acc.getType()}, op->getAttrs())
      ->getResult(0);
}

int64_t RowGroup::numRows() const {
  int64_t n = 1;
  for (int64_t r : rows)
    n *= r;
  return n;
}

int64_t RowGroup::numGroups() const {
  int grouped = groupedRow();
  if (grouped < 0)
    return numRows();
  return numRows() / rows[grouped] *
         llvm::divideCeil(rows[grouped], rowsPerGroup());
}

int64_t RowGroup::groupSize() const {
  uint64_t texels = llvm::divideCeil(length, fl::kTexelChannels);
  return std::min<int64_t>(llvm::PowerOf2Ceil(texels), kRowKernelMaxGroupSize);
}

int64_t RowGroup::turns() const {
  return llvm::divideCeil(llvm::divideCeil(length, fl::kTexelChannels),
                          groupSize());
}

bool RowGroup::holdsRows() const {
  // A turn reads a texel of each row, or 4 texels of packed rows.
  return turns() * rowsPerGroup() <= kRowKernelHeldTexels;
}

SmallVector<linalg::LinalgOp> RowGroup::storedMembers() const {
  SmallVector<linalg::LinalgOp> stored;
  for (linalg::LinalgOp op : members)
    if (op.getNumLoops() > rows.size() && op.getNumReductionLoops() == 0)
      stored.push_back(op);
  llvm::append_range(stored, storedRowValues);
  return stored;
}

namespace {
/// An op's part in a row group.
enum class RowRole { Reduction, Scalar, Elementwise };

/// What a row value (a reduction's or a per-row scalar op's result) is
/// indexed by: the row loops.
struct RowValue {
  /// Its index as a function of the row loops.
  AffineMap rowMap;
  SmallVector<int64_t> rows;
  /// The length of the rows it is computed over.
  int64_t length;
};
} // namespace

/// Whether a row kernel can inline `op`'s body: scalar code without
/// effects, regions or element reads, reading no tensor from above.
static bool inlinableBody(linalg::LinalgOp op) {
  for (Operation &inner : op->getRegion(0).front().without_terminator())
    if (inner.getNumRegions() || isa<tensor::ExtractOp>(inner) ||
        !isPure(&inner))
      return false;
  llvm::SetVector<Value> above;
  getUsedValuesDefinedAbove(op->getRegion(0), above);
  return llvm::none_of(above,
                       [](Value v) { return isa<ShapedType>(v.getType()); });
}

/// The role `op` may take in a row group: a reduction over its last loop
/// only, or an op over parallel loops (elementwise over rows, or a per-row
/// scalar op, as the values it reads say). None for anything else.
static std::optional<RowRole> rowRoleOf(linalg::LinalgOp op) {
  if (!isa<linalg::GenericOp>(op) || op->getNumResults() != 1 ||
      op.getNumDpsInits() != 1 || op.hasDynamicShape() || !inlinableBody(op))
    return std::nullopt;
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (!type.getEncoding() || !type.getElementType().isF32())
    return std::nullopt;
  for (OpOperand &operand : op->getOpOperands()) {
    auto t = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!t)
      continue;
    if (!t.getEncoding() || (!isa<BufferLayoutAttr>(t.getEncoding()) &&
                             !t.getElementType().isF32()))
      return std::nullopt;
    for (AffineExpr e : op.getMatchingIndexingMap(&operand).getResults())
      if (!isa<AffineDimExpr, AffineConstantExpr>(e))
        return std::nullopt;
  }
  unsigned n = op.getNumLoops();
  // No loops: a per-row scalar op of a single row (whose unit dims folded
  // away), if it reads row values.
  if (n == 0)
    return op.payloadUsesValueFromOperand(op.getDpsInitOperand(0))
               ? std::nullopt
               : std::optional<RowRole>(RowRole::Elementwise);
  // A work-group per row: as many as a grid holds.
  int64_t rows = 1;
  for (int64_t r : op.getStaticLoopRanges())
    rows *= r;
  if (rows >= (int64_t(1) << 32))
    return std::nullopt;
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  for (unsigned i = 0; i + 1 < n; ++i)
    if (iters[i] != utils::IteratorType::parallel)
      return std::nullopt;
  AffineMap out = op.getIndexingMapMatchingResult(op->getResult(0));
  llvm::SmallBitVector used(n);
  for (AffineExpr e : out.getResults())
    if (auto d = dyn_cast<AffineDimExpr>(e))
      used.set(d.getPosition());
  if (iters[n - 1] == utils::IteratorType::reduction) {
    // The output indexes every row loop: each row is reduced on its own (a
    // single row's reduction has none).
    if (used.test(n - 1) || used.count() != n - 1 || !initConstant(op) ||
        !matchReductionCombiner(op))
      return std::nullopt;
    return RowRole::Reduction;
  }
  if (used.count() != n ||
      op.payloadUsesValueFromOperand(op.getDpsInitOperand(0)))
    return std::nullopt;
  return RowRole::Elementwise;
}

/// How a row kernel can store a tensor of `type` written through `map` (the
/// op's loops, or a row value's row loops): nullopt where it cannot, -1
/// where a work-group of one row can (whole texels along the row, loop
/// `rowLoop`, a buffer, or a single row's scalar), else the row loop along
/// which its texels pack 4 rows (a work-group of 4 rows along it can).
static std::optional<int> rowStorage(RankedTensorType type, AffineMap map,
                                     int rowLoop) {
  if (isa<BufferLayoutAttr>(type.getEncoding()))
    return -1;
  if (type.getRank() == 0)
    return map.getNumDims() == 0 ? std::optional<int>(-1) : std::nullopt;
  int packed = layoutOf(type, type.getEncoding()).packedDim();
  if (packed < 0)
    return std::nullopt;
  auto d = dyn_cast<AffineDimExpr>(map.getResult(packed));
  if (!d)
    return std::nullopt;
  if (static_cast<int>(d.getPosition()) == rowLoop)
    return -1;
  return d.getPosition();
}

SmallVector<RowGroup>
mlir::fbl::matchRowGroups(Block &block,
                          function_ref<bool(Operation *)> unavailable,
                          function_ref<bool(Value)> unreadable, bool pairRows) {
  MLIRContext *ctx = block.getParentOp()->getContext();
  llvm::DenseMap<Operation *, RowRole> roles;
  llvm::DenseMap<Value, RowValue> values;
  SmallVector<Value> order;
  for (Operation &op : block) {
    auto l = dyn_cast<linalg::LinalgOp>(op);
    if (!l || unavailable(&op))
      continue;
    std::optional<RowRole> role = rowRoleOf(l);
    if (!role)
      continue;
    SmallVector<int64_t> ranges = l.getStaticLoopRanges();
    AffineMap out = l.getIndexingMapMatchingResult(op.getResult(0));
    unsigned n = ranges.size();
    if (*role == RowRole::Reduction) {
      int64_t length = ranges.pop_back_val();
      values[op.getResult(0)] = {
          AffineMap::get(n - 1, 0, out.getResults(), ctx), ranges, length};
      order.push_back(op.getResult(0));
    } else {
      // Over the row loops alone, reading row values of one row length: a
      // per-row scalar op; but an op that reads some row value along its
      // row is that value's elementwise reader. A LayerNorm's normalization
      // reads its statistics so, and also the sum of a split-K product's
      // two chunks (a "row" of 2 over its 1024 x 768 outputs): as a per-row
      // scalar op of that sum it was no LayerNorm's reader.
      bool alongRow = llvm::any_of(l.getDpsInputs(), [&](Value v) {
        auto it = values.find(v);
        return it != values.end() &&
               it->second.rows.size() + 1 == ranges.size() &&
               ArrayRef(ranges).drop_back() == ArrayRef(it->second.rows) &&
               ranges.back() == it->second.length;
      });
      std::optional<int64_t> length;
      bool scalar = false;
      for (Value v : l.getDpsInputs()) {
        if (alongRow)
          break;
        auto it = values.find(v);
        if (it == values.end() || it->second.rows != ranges)
          continue;
        scalar = !length || *length == it->second.length;
        length = it->second.length;
        if (!scalar)
          break;
      }
      if (scalar) {
        role = RowRole::Scalar;
        values[op.getResult(0)] = {out, ranges, *length};
        order.push_back(op.getResult(0));
      } else if (n == 0) {
        continue;
      }
    }
    roles[&op] = *role;
  }

  // How a sink's result is stored (rowStorage).
  auto sinkStorage = [&](Operation *op) -> std::optional<int> {
    auto l = cast<linalg::LinalgOp>(op);
    OpResult r = op->getResult(0);
    AffineMap out = l.getIndexingMapMatchingResult(r);
    if (!out.isPermutation())
      return std::nullopt;
    return rowStorage(cast<RankedTensorType>(r.getType()), out,
                      l.getNumLoops() - 1);
  };
  // How a row value is stored where something outside reads it.
  auto valueStorage = [&](Value v) {
    return rowStorage(cast<RankedTensorType>(v.getType()),
                      values.lookup(v).rowMap, -1);
  };
  // Whether `use` reads row value `rv` at the row it computes: the reader
  // runs over the same rows (and, unless it is a per-row scalar op, a row
  // of the same length last) and indexes the value by its row loops as the
  // producer wrote it; a reduction or scalar op whose result is a row value,
  // or an elementwise op the kernel can store. Any other use reads the
  // value from memory: the kernel stores it.
  auto readsRow = [&](OpOperand &use, const RowValue &rv) {
    auto q = dyn_cast<linalg::LinalgOp>(use.getOwner());
    auto role = roles.find(use.getOwner());
    if (!q || role == roles.end() || !q.isDpsInput(&use))
      return false;
    if (role->second == RowRole::Elementwise ? !sinkStorage(q)
                                             : !values.count(q->getResult(0)))
      return false;
    SmallVector<int64_t> ranges = q.getStaticLoopRanges();
    unsigned p = rv.rows.size();
    AffineMap m = q.getMatchingIndexingMap(&use);
    if (role->second == RowRole::Scalar)
      return ranges == rv.rows && m == rv.rowMap &&
             values.lookup(q->getResult(0)).length == rv.length;
    if (ranges.size() != p + 1 ||
        ArrayRef(ranges).drop_back() != ArrayRef(rv.rows) ||
        ranges.back() != rv.length || m.isFunctionOfDim(p))
      return false;
    return AffineMap::get(p, 0, m.getResults(), ctx) == rv.rowMap;
  };
  // Users of `v` that read it from memory, and whether every other op that
  // reads it is a member (of some kernel).
  auto outsideUsers = [&](Value v) {
    SmallVector<Operation *> users;
    const RowValue &rv = values.find(v)->second;
    for (OpOperand &use : v.getUses())
      if (!readsRow(use, rv))
        users.push_back(use.getOwner());
    return users;
  };
  // A row value read outside that the kernel cannot store is stored by a
  // kernel of its own; then so are those only its kernel would have kept.
  auto keepRowValues = [&] {
    for (bool changed = true; changed;) {
      changed = false;
      for (Value v : order) {
        if (!values.count(v))
          continue;
        SmallVector<Operation *> users = outsideUsers(v);
        if (users.empty() || valueStorage(v))
          continue;
        values.erase(v);
        changed = true;
      }
    }
  };

  // The row values an op needs: those it reads at its row, and theirs.
  auto coneOf = [&](linalg::LinalgOp op,
                    llvm::SmallPtrSetImpl<Operation *> &cone) {
    SmallVector<Operation *> work = {op};
    while (!work.empty()) {
      auto x = cast<linalg::LinalgOp>(work.pop_back_val());
      for (OpOperand *in : x.getDpsInputOperands()) {
        auto it = values.find(in->get());
        if (it != values.end() && readsRow(*in, it->second) &&
            cone.insert(in->get().getDefiningOp()).second)
          work.push_back(in->get().getDefiningOp());
      }
    }
  };
  struct Kernel {
    llvm::SmallPtrSet<Operation *, 8> members;
    /// Its first sink, where it goes.
    Operation *place;
    int packedRow = -1;
    /// The row values it stores (those read outside that no kernel before
    /// it stores).
    SmallVector<Value> stores;
  };
  // Whether `k` can go at its place, given the row values kernels before it
  // store: what its members read from outside is there, what reads the row
  // values it stores comes after, and its stores agree on the rows a
  // work-group takes. Sets its packedRow and stores.
  auto placeable = [&](Kernel &k, const llvm::DenseSet<Value> &earlier) {
    std::optional<int> packedRow;
    auto agree = [&](std::optional<int> storage) {
      if (!storage)
        return false;
      if (*storage < 0)
        return true;
      if (packedRow && *packedRow != *storage)
        return false;
      packedRow = *storage;
      return true;
    };
    k.stores.clear();
    for (Operation &op : block) {
      if (!k.members.contains(&op))
        continue;
      if (roles.lookup(&op) == RowRole::Elementwise && !agree(sinkStorage(&op)))
        return false;
      Value r = op.getResult(0);
      if (values.count(r) && !earlier.contains(r)) {
        SmallVector<Operation *> users = outsideUsers(r);
        if (!users.empty()) {
          if (!agree(valueStorage(r)) || llvm::any_of(users, [&](Operation *u) {
                return u->getBlock() != &block || !k.place->isBeforeInBlock(u);
              }))
            return false;
          k.stores.push_back(r);
        }
      }
      for (Value v : cast<linalg::LinalgOp>(op).getDpsInputs()) {
        if (!isa<ShapedType>(v.getType()) ||
            (values.count(v) && k.members.contains(v.getDefiningOp())))
          continue;
        Operation *def = v.getDefiningOp();
        if (unreadable(v) || (def && def->getBlock() == &block &&
                              !def->isBeforeInBlock(k.place)))
          return false;
      }
    }
    k.packedRow = packedRow.value_or(-1);
    return true;
  };
  // The row values the kernels store, but the last `skip`.
  SmallVector<Kernel> kernels;
  auto storedBy = [&](size_t skip) {
    llvm::DenseSet<Value> earlier;
    for (size_t i = 0; i + skip < kernels.size(); ++i)
      earlier.insert(kernels[i].stores.begin(), kernels[i].stores.end());
    return earlier;
  };
  // One kernel per sink (an elementwise op reading row values at its row),
  // with the ops computing them; a sink whose kernel would compute a row
  // value in common with the previous kernel joins it where the joint
  // kernel can go at that one's place. A row value two kernels need is
  // computed in both (and stored by the first). A sink that fits no kernel
  // (what it reads comes after it, its stores disagree) stores the row
  // values it reads: the kernels are formed again without them.
  for (bool formed = false; !formed;) {
    keepRowValues();
    kernels.clear();
    formed = true;
    for (Operation &op : block) {
      auto role = roles.find(&op);
      if (role == roles.end() || role->second != RowRole::Elementwise)
        continue;
      auto sink = cast<linalg::LinalgOp>(op);
      Kernel k;
      k.place = &op;
      k.members.insert(&op);
      coneOf(sink, k.members);
      if (k.members.size() == 1)
        continue;
      if (!kernels.empty() && llvm::any_of(k.members, [&](Operation *m) {
            return m != &op && kernels.back().members.contains(m);
          })) {
        Kernel joint = kernels.back();
        joint.members.insert(k.members.begin(), k.members.end());
        if (placeable(joint, storedBy(1))) {
          kernels.back() = std::move(joint);
          continue;
        }
      }
      if (placeable(k, storedBy(0))) {
        kernels.push_back(std::move(k));
        continue;
      }
      for (Value v : sink.getDpsInputs())
        values.erase(v);
      formed = false;
      break;
    }
    if (!formed)
      continue;
    // Members run at their kernel's place. An op that reads a row value a
    // kernel computes, where the kernel it runs in does not compute it too
    // (a LayerNorm's weight gradient reading the forward statistics; a loss
    // reading the token count at its row outside the count's kernel),
    // reads memory: a kernel before every kernel it runs in, or before the
    // op itself where it runs in none, must have stored the value. Where
    // none did, the value is stored by a kernel of its own and the kernels
    // are formed again.
    llvm::DenseMap<Operation *, SmallVector<size_t, 2>> kernelsOf;
    llvm::DenseMap<Value, size_t> storedBy;
    for (auto [i, k] : llvm::enumerate(kernels)) {
      for (Operation *m : k.members)
        kernelsOf[m].push_back(i);
      for (Value v : k.stores)
        storedBy.try_emplace(v, i);
    }
    for (Operation *def : llvm::make_first_range(kernelsOf)) {
      Value r = def->getResult(0);
      if (!values.count(r))
        continue;
      auto store = storedBy.find(r);
      bool read = llvm::all_of(r.getUsers(), [&](Operation *u) {
        auto runs = kernelsOf.find(u);
        if (runs == kernelsOf.end())
          return store != storedBy.end() && u->getBlock() == &block &&
                 kernels[store->second].place->isBeforeInBlock(u);
        return llvm::all_of(runs->second, [&](size_t i) {
          return kernels[i].members.contains(def) ||
                 (store != storedBy.end() && store->second < i);
        });
      });
      if (!read) {
        values.erase(r);
        formed = false;
      }
    }
  }

  SmallVector<RowGroup> result;
  for (Kernel &k : kernels) {
    RowGroup g;
    for (Operation &op : block)
      if (k.members.contains(&op))
        g.members.push_back(cast<linalg::LinalgOp>(op));
    for (Value v : k.stores)
      g.storedRowValues.push_back(cast<linalg::LinalgOp>(v.getDefiningOp()));
    g.place = k.place;
    g.packedRow = k.packedRow;
    SmallVector<int64_t> ranges =
        cast<linalg::LinalgOp>(k.place).getStaticLoopRanges();
    g.length = ranges.pop_back_val();
    g.rows = ranges;
    // Two rows a work-group where it can hold both: neighbours along the
    // last row loop share the device's image tiles (on NVIDIA's block-linear
    // images a 32-byte sector spans two texel rows).
    if (pairRows && g.packedRow < 0 && !g.rows.empty() && g.rows.back() > 1) {
      g.pairedRow = static_cast<int>(g.rows.size()) - 1;
      if (!g.holdsRows())
        g.pairedRow = -1;
    }
    result.push_back(std::move(g));
  }
  return result;
}

bool mlir::fbl::takenByRowKernel(linalg::GenericOp op, int64_t rows,
                                 TargetAttr target, int64_t rowsPerUnit) {
  unsigned n = op.getNumLoops();
  if (!target || n < 2 || op.getNumReductionLoops() != 1 ||
      op.getIteratorTypesArray()[n - 1] != utils::IteratorType::reduction ||
      rows < rowsPerUnit * target.getExecution().computeUnits ||
      op->getNumResults() != 1)
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  // A work-item of a row kernel walks its row kernel-wide, a texel a turn,
  // once per pass. Over BERT-base's 30522-word vocabulary (60 turns, 256
  // work-groups of 4 rows for 1024 tokens) the softmax's backward took
  // 0.31 ms on the H100, where split it took 0.18.
  if (ranges.back() >
      kRowKernelMaxGroupSize * fl::kTexelChannels * kRowKernelMaxTurns)
    return false;
  SmallVector<int64_t> rowRanges(ranges.begin(), ranges.end() - 1);
  AffineMap out = op.getIndexingMapMatchingResult(op->getResult(0));
  AffineMap rowMap =
      AffineMap::get(n - 1, 0, out.getResults(), op.getContext());
  auto readsAtRow = [&](OpOperand &use, unsigned loops, ArrayRef<int64_t> r,
                        AffineMap map, bool reduces) {
    auto reader = dyn_cast<linalg::GenericOp>(use.getOwner());
    return reader && reader.isDpsInput(&use) && reader.getNumLoops() == loops &&
           reader->getNumResults() == 1 &&
           reader.getNumReductionLoops() == (reduces ? 1 : 0) &&
           (!reduces || reader.getIteratorTypesArray().back() ==
                            utils::IteratorType::reduction) &&
           reader.getStaticLoopRanges() == r &&
           reader.getMatchingIndexingMap(&use) == map;
  };
  // The sinks: elementwise ops over the same loops reading it along the row.
  auto isSink = [&](OpOperand &use) {
    return readsAtRow(use, n, ranges, out, false);
  };
  Operation *firstSink = nullptr;
  for (OpOperand &use : op->getResult(0).getUses())
    if (isSink(use) &&
        (!firstSink || use.getOwner()->isBeforeInBlock(firstSink)))
      firstSink = use.getOwner();
  if (!firstSink)
    return false;
  // The kernel goes at its first sink and stores there the row values
  // others read: the value and what row reductions and per-row scalar ops
  // make of it at its row must be read nowhere before that sink. A
  // cross-entropy's row maximum over a vocabulary feeds the loss in the
  // forward pass and its only sink is the backward's softmax: no row
  // kernel forms, and whole it was one work-item per 4 rows walking 30522
  // logits (4.3 ms on the H200 for BERT-base at 2048 tokens).
  SmallVector<Value> work = {op->getResult(0)};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *reader = use.getOwner();
      if (isSink(use))
        continue;
      if (readsAtRow(use, n, ranges, out, true) ||
          readsAtRow(use, n - 1, rowRanges, rowMap, false)) {
        if (seen.insert(reader).second)
          work.push_back(reader->getResult(0));
        continue;
      }
      if (reader->getBlock() != firstSink->getBlock() ||
          !firstSink->isBeforeInBlock(reader))
        return false;
    }
  }
  return true;
}
