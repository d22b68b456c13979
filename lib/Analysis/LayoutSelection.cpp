//===- LayoutSelection.cpp - Global layout selection ----------------------===//
//
// Overview of the fblayout policy (the baselines share steps 1, 2 and 5):
//
//  1. Problem: every tensor value of the function's top-level block is a
//     variable, except integer tensors and scatter targets (buffers) and
//     the empty/filled inits of linalg ops, which are tied to the result
//     they initialize. Every use reads either the value's layout or, after
//     a relayout, another one.
//  2. Start: activations channel-packed along their last dim, arguments in
//     the layout their first reader prefers.
//  3. Anchors first: forward values the backward reads again, parameters,
//     and operands of class IV ops are visited before the rest, so the
//     tensors both passes share settle early.
//  4. Local search: for each value, try every candidate (channel-packed and
//     R-Tile layouts that fit the target, the composed layout of the view
//     that produces it, the source layout that makes its consumers views),
//     alone and propagated along chains of views in both directions; keep
//     the cheapest by the cost model; repeat until no move improves.
//  5. Reads: each use reads the value's layout, or its preferred layout
//     when that plus the (shared) relayout costs less.
//
// The cost of a plan is the cost model's time of every op's kernel under
// the layouts it reads and writes, plus relayouts, plus index transforms
// that cannot be views. Decisions are made by that number only: no
// tie-breaking heuristics. A move changes the layouts of a few values, so
// only the ops that read or write them are costed again: a round of the
// search is linear in the size of the function.
//
//===----------------------------------------------------------------------===//

#include "fbl/Analysis/LayoutSelection.h"
#include "fbl/Analysis/OpClassification.h"
#include "fbl/Dialect/FBL/IR/FBLOps.h"
#include "fbl/Dialect/FBL/IR/IndexTransforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/DebugLog.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "fbl-select-layouts"

using namespace mlir;
using namespace mlir::fbl;
namespace fl = ::fbl::layout;

std::optional<LayoutPolicy> mlir::fbl::parseLayoutPolicy(StringRef name) {
  return llvm::StringSwitch<std::optional<LayoutPolicy>>(name)
      .Case("fblayout", LayoutPolicy::FBLayout)
      .Case("reuse-forward", LayoutPolicy::ReuseForward)
      .Case("explicit-transpose", LayoutPolicy::ExplicitTranspose)
      .Default(std::nullopt);
}

StringRef mlir::fbl::stringifyLayoutPolicy(LayoutPolicy policy) {
  switch (policy) {
  case LayoutPolicy::FBLayout:
    return "fblayout";
  case LayoutPolicy::ReuseForward:
    return "reuse-forward";
  case LayoutPolicy::ExplicitTranspose:
    return "explicit-transpose";
  }
  return "";
}

/// The value an index transform reads.
static Value indexTransformSource(Operation *op) { return op->getOperand(0); }

//===----------------------------------------------------------------------===//
// The selection problem
//===----------------------------------------------------------------------===//

namespace {

class Selection {
public:
  Selection(func::FuncOp func, LayoutPolicy policy, OpCostModel &costs)
      : func(func), ctx(func.getContext()), policy(policy), costs(costs),
        limits(costs.getTarget().getLimits()) {}

  LogicalResult build();
  LogicalResult initialize();
  void search();
  LayoutPlan finish();

private:
  // Problem structure.
  SmallVector<Attribute> candidates(Value v);
  Attribute fit(RankedTensorType type, Attribute encoding) const;
  Attribute channelPacked(RankedTensorType type, int64_t packed) const;
  Attribute preferredRead(OpOperand &use);
  Attribute computePreferredRead(OpOperand &use);
  double transformCost(Operation *op, Attribute src, Attribute dst);
  double computeTransformCost(Operation *op, Attribute src, Attribute dst);
  llvm::DenseMap<std::tuple<uintptr_t, Attribute, Attribute>, double>
      transformMemo;
  // The questions every move asks again, memoized: index transforms of one
  // structure compose layouts alike, and a type fits an encoding or not.
  bool isIndexTransform(Operation *op);
  Attribute composedLayout(Operation *op, Attribute source);
  Attribute inverseComposedLayout(Operation *op, Attribute result);
  Attribute composed(Operation *op, Attribute layout, bool inverse);
  llvm::DenseMap<Operation *, bool> indexTransformMemo;
  llvm::DenseMap<std::tuple<uintptr_t, Attribute, unsigned>, Attribute>
      composeMemo;
  mutable llvm::DenseMap<std::pair<Type, Attribute>, Attribute> fitMemo;
  llvm::DenseMap<OpOperand *, Attribute> preferredMemo;
  struct Undo;
  void setLayout(Value v, Attribute layout, Undo *undo = nullptr);
  void propagate(Value v, llvm::DenseSet<Value> &seen, Undo &undo);
  /// Moves `v` to `c`, alone or with the chain of views it reaches; returns
  /// the change of the total, with what `revert` needs in `undo`.
  double move(Value v, Attribute c, bool chain, Undo &undo);
  /// Adds to `near` the variables whose moves `changed`'s new layouts can
  /// price differently.
  void markNear(ArrayRef<Value> changed, llvm::DenseSet<Value> &near);

  // Costs. Every op that runs a kernel (or is an index transform) has a
  // cost under the current layouts and reads; every value a relayout term.
  bool isCosted(Operation *op) const;
  double kernelTime(Operation *op, ArrayRef<Attribute> reads);
  void decideReads(Operation *op);
  double costOp(Operation *op);
  double relayoutTerm(Value v);
  double evaluateAll();
  /// What a move overwrote.
  struct Undo {
    SmallVector<Value> changed; ///< values whose layout changed, in order
    llvm::DenseMap<Value, Attribute> layout;
    llvm::DenseMap<OpOperand *, Attribute> read;
    llvm::DenseMap<Operation *, double> opCost;
    llvm::DenseMap<Value, double> term;
  };
  /// Re-costs what the layout changes in `undo` touch; returns the change
  /// of the total and records what it overwrote in `undo`.
  double update(Undo &undo);
  void revert(Undo &undo);

  func::FuncOp func;
  MLIRContext *ctx;
  LayoutPolicy policy;
  OpCostModel &costs;
  fl::DeviceLimits limits;
  Block *block = nullptr;

  SmallVector<Value> variables; ///< in visiting order (anchors first)
  llvm::DenseSet<Value> isVariable;
  llvm::DenseSet<Value> anchors;
  llvm::DenseMap<Value, Attribute> layout;
  llvm::DenseMap<Value, OpResult> tiedResult;          ///< init -> result
  llvm::DenseMap<Value, SmallVector<Value>> tiedInits; ///< result -> inits
  llvm::DenseMap<OpOperand *, Attribute> read;
  llvm::DenseMap<Operation *, double> opCost;
  llvm::DenseMap<Value, double> term;
  double total = 0.0;
};

} // namespace
Attribute Selection::channelPacked(RankedTensorType type,
                                   int64_t packed) const {
  return fit(type,
             ChannelPackedLayoutAttr::get(ctx, std::max<int64_t>(packed, 0),
                                          mlir::fbl::BatchFold::Y));
}

/// Fits `encoding` to the target (fitEncodingToLimits); null if nothing
/// fits.
Attribute Selection::fit(RankedTensorType type, Attribute encoding) const {
  auto [it, inserted] = fitMemo.try_emplace({type, encoding});
  if (inserted)
    it->second = fitEncodingToLimits(type, encoding, limits);
  return it->second;
}

bool Selection::isIndexTransform(Operation *op) {
  auto [it, inserted] = indexTransformMemo.try_emplace(op);
  if (inserted)
    it->second = mlir::fbl::isIndexTransform(op);
  return it->second;
}

Attribute Selection::composedLayout(Operation *op, Attribute source) {
  return composed(op, source, /*inverse=*/false);
}

Attribute Selection::inverseComposedLayout(Operation *op, Attribute result) {
  return composed(op, result, /*inverse=*/true);
}

Attribute Selection::composed(Operation *op, Attribute layout, bool inverse) {
  auto [it, inserted] =
      composeMemo.try_emplace({costs.structureOf(op), layout, inverse});
  if (inserted)
    it->second = inverse ? mlir::fbl::inverseComposedLayout(op, layout)
                         : mlir::fbl::composedLayout(op, layout);
  return it->second;
}

LogicalResult Selection::build() {
  block = &func.getBody().front();
  // Inits produced by tensor.empty (or a fill of one) for one op are tied to
  // that op's result.
  for (Operation &op : *block) {
    auto dps = dyn_cast<DestinationStyleOpInterface>(&op);
    if (!dps)
      continue;
    for (OpOperand &init : dps.getDpsInitsMutable()) {
      Operation *def = init.get().getDefiningOp();
      if (!def || !init.get().hasOneUse())
        continue;
      if (isa<tensor::EmptyOp>(def) ||
          (isa<linalg::FillOp>(def) &&
           isa_and_nonnull<tensor::EmptyOp>(cast<linalg::FillOp>(def)
                                                .getDpsInitOperand(0)
                                                ->get()
                                                .getDefiningOp()) &&
           cast<linalg::FillOp>(def).getDpsInitOperand(0)->get().hasOneUse())) {
        tiedResult[init.get()] = dps.getTiedOpResult(&init);
        tiedInits[dps.getTiedOpResult(&init)].push_back(init.get());
        if (auto fill = dyn_cast<linalg::FillOp>(def)) {
          tiedResult[fill.getDpsInitOperand(0)->get()] = fill->getResult(0);
          tiedInits[fill->getResult(0)].push_back(
              fill.getDpsInitOperand(0)->get());
        }
      }
    }
  }
  // Fixed layouts: integer tensors and scatter loops live in buffers.
  auto buffer = BufferLayoutAttr::get(ctx);
  auto consider = [&](Value v) -> LogicalResult {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      return success();
    if (!type.hasStaticShape())
      return func.emitError("fbl-select-layouts: tensor of type ")
             << type << " has a dynamic shape";
    // Kernels index with 32-bit coordinates and divide by extents: empty
    // and astronomically large tensors are refused here, before any layout.
    int64_t elements = 1;
    for (int64_t size : type.getShape()) {
      if (size == 0)
        return mlir::emitError(v.getLoc(),
                               "fbl-select-layouts: tensor of type ")
               << type << " is empty; device memory holds no empty tensors";
      if (size > std::numeric_limits<int32_t>::max() ||
          llvm::MulOverflow(elements, size, elements) ||
          elements > (int64_t(1) << 40))
        return mlir::emitError(v.getLoc(),
                               "fbl-select-layouts: tensor of type ")
               << type << " has more elements than any device holds";
    }
    bool scatter = isa_and_nonnull<scf::ForOp>(v.getDefiningOp()) ||
                   llvm::any_of(v.getUsers(), [](Operation *user) {
                     return isa<scf::ForOp>(user);
                   });
    if (livesInBuffers(type.getElementType()) || scatter) {
      if (!fitEncodingToLimits(type, buffer, limits))
        return mlir::emitError(v.getLoc(),
                               "fbl-select-layouts: a tensor of type ")
               << type << " must live in a buffer"
               << (scatter ? " (it is updated by a scatter loop)" : "")
               << ", but its " << getDeviceBytes(type)
               << " bytes exceed the largest buffer of target '"
               << costs.getTarget().getName() << "' (" << limits.maxBufferBytes
               << " bytes)";
      setLayout(v, buffer);
      return success();
    }
    if (tiedResult.count(v))
      return success();
    variables.push_back(v);
    isVariable.insert(v);
    return success();
  };
  for (BlockArgument arg : block->getArguments())
    if (failed(consider(arg)))
      return failure();
  for (Operation &op : *block)
    for (Value r : op.getResults())
      if (failed(consider(r)))
        return failure();

  // Anchors: forward values the backward reads, parameters, class IV operands.
  if (FailureOr<OpClassification> classes =
          OpClassification::fromAttributes(func);
      succeeded(classes))
    for (Operation *op : classes->getOps()) {
      const OpInfo *info = classes->lookup(op);
      for (const ReuseEdge &edge : info->reuse)
        anchors.insert(edge.value);
      if (info->opClass == OpClass::IV)
        for (Value v : op->getOperands())
          anchors.insert(v);
    }
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (func.getArgAttr(i, "fbl.param"))
      anchors.insert(block->getArgument(i));
  std::stable_partition(variables.begin(), variables.end(),
                        [&](Value v) { return anchors.contains(v); });
  return success();
}

Attribute Selection::preferredRead(OpOperand &use) {
  auto [it, inserted] = preferredMemo.try_emplace(&use);
  if (!inserted)
    return it->second;
  return it->second = computePreferredRead(use);
}

Attribute Selection::computePreferredRead(OpOperand &use) {
  auto type = cast<RankedTensorType>(use.get().getType());
  if (type.getRank() == 0)
    return channelPacked(type, 0);
  auto linalgOp = dyn_cast<linalg::LinalgOp>(use.getOwner());
  if (!linalgOp || isIndexTransform(use.getOwner()))
    return channelPacked(type, type.getRank() - 1);
  // Packed along the dim the innermost reduction walks, else the dim the
  // innermost loop walks.
  AffineMap map = linalgOp.getMatchingIndexingMap(&use);
  SmallVector<utils::IteratorType> iters = linalgOp.getIteratorTypesArray();
  int64_t bestDim = type.getRank() - 1, bestLoop = -1;
  bool bestReduced = false;
  for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
    auto d = dyn_cast<AffineDimExpr>(expr);
    if (!d)
      continue;
    int64_t loop = d.getPosition();
    bool reduced = iters[loop] == utils::IteratorType::reduction;
    if ((reduced && !bestReduced) ||
        (reduced == bestReduced && loop > bestLoop)) {
      bestDim = dim;
      bestLoop = loop;
      bestReduced = reduced;
    }
  }
  Attribute a = channelPacked(type, bestDim);
  return a ? a : channelPacked(type, type.getRank() - 1);
}

SmallVector<Attribute> Selection::candidates(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  llvm::SetVector<Attribute> out;
  auto add = [&](Attribute a) {
    if (a)
      if (Attribute f = fit(type, a))
        out.insert(f);
  };
  int64_t rank = type.getRank();
  add(ChannelPackedLayoutAttr::get(ctx, std::max<int64_t>(rank - 1, 0),
                                   mlir::fbl::BatchFold::Y));
  if (rank >= 2)
    add(ChannelPackedLayoutAttr::get(ctx, rank - 2, mlir::fbl::BatchFold::Y));
  if (policy == LayoutPolicy::FBLayout && rank >= 2) {
    for (int64_t packed : {rank - 1, rank - 2})
      for (IntraTileOrder intra :
           {IntraTileOrder::RowsOnX, IntraTileOrder::RowsOnY,
            IntraTileOrder::Linear})
        add(RTileLayoutAttr::get(ctx, {4, 4}, packed, intra,
                                 InterTileOrder::RowMajor,
                                 mlir::fbl::BatchFold::Y));
    // Layouts that make neighbouring index transforms views.
    if (Operation *def = v.getDefiningOp())
      if (isIndexTransform(def))
        add(composedLayout(def, layout.lookup(indexTransformSource(def))));
    for (Operation *user : v.getUsers())
      if (isIndexTransform(user) && user->getOperand(0) == v)
        add(inverseComposedLayout(user, layout.lookup(user->getResult(0))));
  }
  if (out.empty()) {
    // No image fits: a buffer, when the target's buffers can hold it.
    std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
    if (fl::Layout::buffer(rank)
            .checkLimits(shape, limits, getElementBytes(type.getElementType()))
            .empty())
      out.insert(BufferLayoutAttr::get(ctx));
  }
  return out.takeVector();
}

void Selection::setLayout(Value v, Attribute a, Undo *undo) {
  Attribute old = layout.lookup(v);
  if (undo && old != a && undo->layout.try_emplace(v, old).second)
    undo->changed.push_back(v);
  layout[v] = a;
  // Tied inits (and the empty tensors their fills initialize) follow the
  // result they initialize.
  if (auto it = tiedInits.find(v); it != tiedInits.end())
    for (Value init : it->second)
      if (layout.lookup(init) != a)
        setLayout(init, a, undo);
}

LogicalResult Selection::initialize() {
  for (Value v : variables) {
    auto type = cast<RankedTensorType>(v.getType());
    Attribute a;
    // Arguments: the layout their first reader prefers (weights are laid out
    // once, at load time, for the forward kernel).
    if (isa<BlockArgument>(v)) {
      OpOperand *first = nullptr;
      for (OpOperand &use : v.getUses())
        if (isa<linalg::LinalgOp>(use.getOwner()) &&
            !isIndexTransform(use.getOwner()) &&
            (!first || use.getOwner()->isBeforeInBlock(first->getOwner())))
          first = &use;
      if (first)
        a = preferredRead(*first);
    }
    if (!a)
      a = channelPacked(type, type.getRank() - 1);
    if (!a) {
      SmallVector<Attribute> c = candidates(v);
      a = c.empty() ? Attribute() : c.front();
    }
    if (!a)
      return mlir::emitError(v.getLoc(),
                             "fbl-select-layouts: a tensor of type ")
             << type << " fits no image or buffer of target '"
             << costs.getTarget().getName() << "' (" << getDeviceBytes(type)
             << " bytes; buffers hold at most " << limits.maxBufferBytes << ")";
    setLayout(v, a);
  }
  // The chunks fbl-split-reductions cuts a reduction's rows into shape its
  // kernel, not the model: under every policy a view of the rows.
  for (Operation &op : *block)
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op);
        expand && expand->hasAttr(FBLDialect::getReductionChunksAttrName()) &&
        isVariable.contains(expand.getResult()))
      if (Attribute c = composedLayout(expand, layout.lookup(expand.getSrc())))
        if (Attribute f = fit(expand.getResultType(), c))
          setLayout(expand.getResult(), f);
  return success();
}

double Selection::transformCost(Operation *op, Attribute src, Attribute dst) {
  // Index transforms of the same structure cost the same.
  auto key = std::make_tuple(costs.structureOf(op), src, dst);
  if (auto it = transformMemo.find(key); it != transformMemo.end())
    return it->second;
  return transformMemo[key] = computeTransformCost(op, src, dst);
}

double Selection::computeTransformCost(Operation *op, Attribute src,
                                       Attribute dst) {
  auto srcType = cast<RankedTensorType>(op->getOperand(0).getType());
  auto dstType = cast<RankedTensorType>(op->getResult(0).getType());
  auto dstL = cast<LayoutEncodingAttrInterface>(dst);
  if (Attribute composed = composedLayout(op, src)) {
    fl::Layout c = cast<LayoutEncodingAttrInterface>(composed).getLayout(
        dstType.getRank());
    std::vector<int64_t> shape(dstType.getShape().begin(),
                               dstType.getShape().end());
    if (c.sameAddressing(dstL.getLayout(dstType.getRank()), shape))
      return 0.0; // a view
  }
  if (Attribute inverse = inverseComposedLayout(op, dst))
    return costs.relayoutCost(srcType, src, inverse).timeNs;
  // Through a buffer: row-major reshapes are views of buffers.
  Attribute buffer = BufferLayoutAttr::get(ctx);
  return costs.relayoutCost(srcType, src, buffer).timeNs +
         costs.relayoutCost(dstType, buffer, dst).timeNs;
}

bool Selection::isCosted(Operation *op) const {
  return !isa<func::ReturnOp, tensor::EmptyOp, arith::ConstantOp>(op) &&
         op->getBlock() == block;
}

double Selection::kernelTime(Operation *op, ArrayRef<Attribute> reads) {
  SmallVector<Attribute> results;
  for (Value r : op->getResults())
    results.push_back(layout.lookup(r));
  return costs.opCost(op, reads, results).timeNs;
}

/// Chooses the layout each tensor operand of `op` is read in.
void Selection::decideReads(Operation *op) {
  SmallVector<Attribute> reads;
  for (OpOperand &use : op->getOpOperands())
    reads.push_back(isa<RankedTensorType>(use.get().getType())
                        ? layout.lookup(use.get())
                        : Attribute());
  auto dps = dyn_cast<DestinationStyleOpInterface>(op);
  bool choose = isa<linalg::LinalgOp>(op) && !isIndexTransform(op) &&
                policy != LayoutPolicy::ReuseForward;
  for (OpOperand &use : op->getOpOperands()) {
    Attribute stored = reads[use.getOperandNumber()];
    if (!stored)
      continue;
    // Initial values of accumulating ops are read in the result's layout.
    if (dps && dps.isDpsInit(&use)) {
      reads[use.getOperandNumber()] = layout.lookup(dps.getTiedOpResult(&use));
      continue;
    }
    if (!choose || isa<BufferLayoutAttr>(stored))
      continue;
    // A reduction's chunks (fbl-split-reductions) are read as the rows they
    // view: the kernel's shape is fbl's, no policy copies for it.
    if (auto expand = use.get().getDefiningOp<tensor::ExpandShapeOp>();
        expand && expand->hasAttr(FBLDialect::getReductionChunksAttrName()))
      continue;
    Attribute preferred = preferredRead(use);
    if (!preferred || preferred == stored)
      continue;
    if (policy == LayoutPolicy::ExplicitTranspose) {
      reads[use.getOperandNumber()] = preferred;
      continue;
    }
    // fblayout: a relayout only when it pays for itself; it is free when
    // another use already reads that layout.
    double direct = kernelTime(op, reads);
    reads[use.getOperandNumber()] = preferred;
    double via = kernelTime(op, reads);
    bool paid = llvm::any_of(use.get().getUses(), [&](OpOperand &other) {
      return other.getOwner() != op && read.lookup(&other) == preferred;
    });
    if (!paid)
      via += costs
                 .relayoutCost(cast<RankedTensorType>(use.get().getType()),
                               stored, preferred)
                 .timeNs;
    if (!(via < direct))
      reads[use.getOperandNumber()] = stored;
  }
  for (OpOperand &use : op->getOpOperands())
    if (reads[use.getOperandNumber()])
      read[&use] = reads[use.getOperandNumber()];
}

double Selection::costOp(Operation *op) {
  if (isIndexTransform(op))
    return transformCost(op, layout.lookup(op->getOperand(0)),
                         layout.lookup(op->getResult(0)));
  SmallVector<Attribute> reads;
  for (OpOperand &use : op->getOpOperands())
    reads.push_back(read.lookup(&use));
  return kernelTime(op, reads);
}

double Selection::relayoutTerm(Value v) {
  Attribute stored = layout.lookup(v);
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!stored || !type)
    return 0.0;
  SmallVector<Attribute, 4> targets;
  for (OpOperand &use : v.getUses()) {
    Attribute r = read.lookup(&use);
    if (r && r != stored && !llvm::is_contained(targets, r))
      targets.push_back(r);
  }
  double t = 0.0;
  for (Attribute r : targets)
    t += costs.relayoutCost(type, stored, r).timeNs;
  return t;
}

double Selection::evaluateAll() {
  read.clear();
  opCost.clear();
  term.clear();
  total = 0.0;
  for (Operation &op : *block)
    if (isCosted(&op)) {
      if (!isIndexTransform(&op))
        decideReads(&op);
      else
        read[&op.getOpOperand(0)] = layout.lookup(op.getOperand(0));
    }
  for (Operation &op : *block)
    if (isCosted(&op))
      total += opCost[&op] = costOp(&op);
  for (Value v : block->getArguments())
    total += term[v] = relayoutTerm(v);
  for (Operation &op : *block)
    for (Value v : op.getResults())
      total += term[v] = relayoutTerm(v);
  return total;
}

double Selection::update(Undo &undo) {
  ArrayRef<Value> changed = undo.changed;
  // The ops that read or write a changed value, in block order.
  llvm::SetVector<Operation *> touched;
  for (Value v : changed) {
    if (Operation *def = v.getDefiningOp(); def && isCosted(def))
      touched.insert(def);
    for (Operation *user : v.getUsers())
      if (isCosted(user))
        touched.insert(user);
  }
  SmallVector<Operation *> ops = touched.takeVector();
  llvm::sort(ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  double delta = 0.0;
  llvm::SetVector<Value> values(changed.begin(), changed.end());
  for (Operation *op : ops) {
    for (OpOperand &use : op->getOpOperands()) {
      undo.read.try_emplace(&use, read.lookup(&use));
      if (isa<RankedTensorType>(use.get().getType()))
        values.insert(use.get());
    }
    if (isIndexTransform(op))
      read[&op->getOpOperand(0)] = layout.lookup(op->getOperand(0));
    else
      decideReads(op);
  }
  for (Operation *op : ops) {
    double old = opCost.lookup(op);
    undo.opCost.try_emplace(op, old);
    double now = costOp(op);
    opCost[op] = now;
    delta += now - old;
  }
  for (Value v : values) {
    double old = term.lookup(v);
    undo.term.try_emplace(v, old);
    double now = relayoutTerm(v);
    term[v] = now;
    delta += now - old;
  }
  total += delta;
  return delta;
}

void Selection::revert(Undo &undo) {
  for (auto &[v, a] : undo.layout)
    layout[v] = a;
  for (auto &[use, a] : undo.read) {
    if (a)
      read[use] = a;
    else
      read.erase(use);
  }
  double delta = 0.0;
  for (auto &[op, c] : undo.opCost) {
    delta += c - opCost.lookup(op);
    opCost[op] = c;
  }
  for (auto &[v, c] : undo.term) {
    delta += c - term.lookup(v);
    term[v] = c;
  }
  total += delta;
}

void Selection::propagate(Value v, llvm::DenseSet<Value> &seen, Undo &undo) {
  if (!seen.insert(v).second)
    return;
  // Forward: results of index transforms reading v become views of it.
  for (Operation *user : v.getUsers())
    if (isIndexTransform(user) && user->getOperand(0) == v) {
      Value r = user->getResult(0);
      if (isVariable.contains(r))
        if (Attribute c = composedLayout(user, layout.lookup(v)))
          if (Attribute f = fit(cast<RankedTensorType>(r.getType()), c)) {
            setLayout(r, f, &undo);
            propagate(r, seen, undo);
          }
    }
  // Backward: the source of the index transform producing v.
  if (Operation *def = v.getDefiningOp())
    if (isIndexTransform(def)) {
      Value s = def->getOperand(0);
      if (isVariable.contains(s))
        if (Attribute inv = inverseComposedLayout(def, layout.lookup(v)))
          if (Attribute f = fit(cast<RankedTensorType>(s.getType()), inv)) {
            setLayout(s, f, &undo);
            propagate(s, seen, undo);
          }
    }
}

double Selection::move(Value v, Attribute c, bool chain, Undo &undo) {
  setLayout(v, c, &undo);
  if (chain) {
    llvm::DenseSet<Value> seen;
    propagate(v, seen, undo);
  }
  return undo.changed.empty() ? 0.0 : update(undo);
}

void Selection::markNear(ArrayRef<Value> changed, llvm::DenseSet<Value> &near) {
  // A move re-decides the reads of the ops next to the values it changes;
  // whether a read pays for its relayout looks at the other readers of the
  // same tensor. So a changed layout reaches the values of its ops (one
  // hop) and of their tensors' other ops (two), and through chains of views
  // every value a chained move from there reaches.
  auto opsOf = [&](Value v, auto fn) {
    if (Operation *def = v.getDefiningOp())
      fn(def);
    for (Operation *user : v.getUsers())
      fn(user);
  };
  auto valuesOf = [](Operation *op, auto fn) {
    for (Value operand : op->getOperands())
      if (isa<RankedTensorType>(operand.getType()))
        fn(operand);
    for (Value result : op->getResults())
      fn(result);
  };
  llvm::DenseSet<Value> oneHop;
  for (Value v : changed)
    opsOf(v, [&](Operation *op) {
      valuesOf(op, [&](Value u) { oneHop.insert(u); });
    });
  SmallVector<Value> work;
  for (Value u : oneHop)
    opsOf(u, [&](Operation *op) {
      valuesOf(op, [&](Value x) {
        if (near.insert(x).second)
          work.push_back(x);
      });
    });
  while (!work.empty()) {
    Value x = work.pop_back_val();
    auto reach = [&](Value y) {
      if (near.insert(y).second)
        work.push_back(y);
    };
    if (Operation *def = x.getDefiningOp(); def && isIndexTransform(def))
      reach(def->getOperand(0));
    for (Operation *user : x.getUsers())
      if (isIndexTransform(user) && user->getOperand(0) == x)
        reach(user->getResult(0));
  }
}

void Selection::search() {
  evaluateAll();
  if (policy != LayoutPolicy::FBLayout)
    return;
  // After the first round, only variables near a move made since they were
  // last tried can find a better one (the rest would price every
  // candidate as before).
  llvm::DenseSet<Value> near;
  for (int round = 0; round < 8; ++round) {
    bool improved = false;
    for (Value v : variables) {
      if (round > 0 && !near.contains(v))
        continue;
      near.erase(v);
      Attribute original = layout.lookup(v);
      double bestDelta = 0.0;
      Attribute bestLayout;
      bool bestChain = false;
      // A chain differs from the value alone only next to index transforms.
      bool nearView =
          (v.getDefiningOp() && isIndexTransform(v.getDefiningOp())) ||
          llvm::any_of(v.getUsers(),
                       [&](Operation *u) { return isIndexTransform(u); });
      for (Attribute c : candidates(v))
        for (bool chain : {false, true}) {
          if (chain && !nearView)
            continue;
          Undo undo;
          double delta = move(v, c, chain, undo);
          if (delta < bestDelta - 1e-9 * std::abs(total)) {
            bestDelta = delta;
            bestLayout = c;
            bestChain = chain;
          }
          revert(undo);
        }
      if (!bestLayout)
        continue;
      Undo undo;
      move(v, bestLayout, bestChain, undo);
      markNear(undo.changed, near);
      LDBG() << "round " << round << ": " << v << " " << original << " -> "
             << layout.lookup(v) << " (" << bestDelta << ")";
      improved = true;
    }
    if (!improved)
      break;
  }
}

LayoutPlan Selection::finish() {
  LayoutPlan plan;
  plan.cost = evaluateAll();
  for (auto &[use, a] : read)
    plan.readLayout[use] = a;
  for (auto &[v, a] : layout)
    plan.valueLayout[v] = a;
  return plan;
}

FailureOr<LayoutPlan> mlir::fbl::selectLayouts(func::FuncOp func,
                                               LayoutPolicy policy,
                                               OpCostModel &costs) {
  if (!func.getBody().hasOneBlock())
    return func.emitError("fbl-select-layouts: expected a single-block "
                          "function");
  Selection selection(func, policy, costs);
  if (failed(selection.build()))
    return failure();
  if (failed(selection.initialize()))
    return failure();
  selection.search();
  LayoutPlan plan = selection.finish();
  for (auto &[v, a] : plan.valueLayout)
    if (!a)
      return func.emitError("fbl-select-layouts: a tensor of type ")
             << v.getType() << " fits no image or buffer of target '"
             << costs.getTarget().getName() << "'";
  return plan;
}

//===----------------------------------------------------------------------===//
// Cost of the IR as it is
//===----------------------------------------------------------------------===//

double mlir::fbl::estimateCost(func::FuncOp func, OpCostModel &costs) {
  double total = 0.0;
  for (Operation &op : func.getBody().front()) {
    if (auto relayout = dyn_cast<RelayoutOp>(op)) {
      Attribute from = relayout.getSource().getType().getEncoding();
      Attribute to = relayout.getType().getEncoding();
      if (from && to)
        total += costs.relayoutCost(relayout.getType(), from, to).timeNs;
      continue;
    }
    if (isa<func::ReturnOp>(op))
      continue;
    total += costs.opCost(&op).timeNs;
  }
  return total;
}
