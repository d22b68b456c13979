//===- OpClassification.cpp - Phases and classes of training ops ----------===//
//
// 1. Forward: the ops the loss (result 0) depends on.
// 2. Optimizer: non-forward ops that read optimizer state (arguments the
//    forward never reads) or an optimizer value, and non-forward elementwise
//    ops that combine a parameter, read whole, with a gradient into a
//    returned value of the parameter's type (the update p - lr * g).
// 3. Backward: every other op. Its class comes from two questions: does it
//    read forward data (an argument or a forward result computed from data,
//    not a constant or an empty/filled init), and does any access conflict:
//    a forward tensor read along another innermost dim than any forward read
//    of it, or reduced over other dims (an elementwise read agrees with any
//    reduction), or an index transform (transpose, reshape) that re-indexes
//    its input.
//
//===----------------------------------------------------------------------===//

#include "fbl/Analysis/OpClassification.h"
#include "fbl/Analysis/ActivityAnalysis.h"
#include "fbl/Dialect/FBL/IR/FBLDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::fbl;

StringRef mlir::fbl::stringifyPhase(Phase phase) {
  switch (phase) {
  case Phase::Forward:
    return "forward";
  case Phase::Backward:
    return "backward";
  case Phase::Optimizer:
    return "optimizer";
  }
  return "";
}

StringRef mlir::fbl::stringifyOpClass(OpClass cls) {
  static const char *names[] = {"-", "I", "II", "III", "IV"};
  return names[static_cast<int>(cls)];
}

/// Ops that make values without reading data: they hold no activation.
static bool makesNoData(Operation *op) {
  return isa<tensor::EmptyOp, linalg::FillOp, arith::ConstantOp>(op) ||
         op->hasTrait<OpTrait::ConstantLike>();
}

/// True when `op` re-indexes an input: a transpose, a reshape, or an
/// all-parallel structured op that reads a tensor through another
/// permutation than it writes (a transpose written as a generic, or fused
/// into an elementwise op). Broader than fbl::isIndexTransform, which is
/// about ops that can become views.
static bool reindexesAnInput(Operation *op) {
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, linalg::TransposeOp>(
          op))
    return true;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || linalgOp.getNumReductionLoops() != 0 ||
      linalgOp.getNumDpsInits() != 1)
    return false;
  AffineMap out =
      linalgOp.getMatchingIndexingMap(linalgOp.getDpsInitOperand(0));
  for (OpOperand *in : linalgOp.getDpsInputOperands()) {
    AffineMap map = linalgOp.getMatchingIndexingMap(in);
    if (map.isPermutation() && out.isPermutation() && map != out)
      return true;
  }
  return false;
}

/// All-parallel structured op whose tensor operands are all read and
/// written through the identity (scalars broadcast).
static bool isElementwise(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp)
    return op->getNumRegions() == 0 && op->getNumResults() == 1 &&
           op->getResult(0).getType().isIntOrIndexOrFloat();
  if (linalgOp.getNumReductionLoops() != 0)
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
    if (map.getNumResults() && !map.isIdentity())
      return false;
  }
  return true;
}

std::optional<AccessPattern>
OpClassification::getAccessPattern(OpOperand &operand) {
  Operation *op = operand.getOwner();
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !isa<ShapedType>(operand.get().getType()))
    return std::nullopt;
  AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
  SmallVector<utils::IteratorType> iters = linalgOp.getIteratorTypesArray();
  AccessPattern access;
  int64_t innermostLoop = -1;
  for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
    auto d = dyn_cast<AffineDimExpr>(expr);
    if (!d)
      continue;
    unsigned loop = d.getPosition();
    if (iters[loop] == utils::IteratorType::reduction)
      access.reducedDims.push_back(dim);
    if (static_cast<int64_t>(loop) > innermostLoop) {
      innermostLoop = loop;
      access.innermostDim = dim;
    }
  }
  return access;
}

/// How the forward pass accessed `value`: every structured forward read,
/// else the way its producer wrote it, else row-major without reduction.
static SmallVector<AccessPattern>
forwardAccessesOf(Value value, const llvm::DenseSet<Operation *> &forward) {
  SmallVector<AccessPattern> accesses;
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (!forward.contains(user))
      continue;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user))
      if (linalgOp.isDpsInit(&use) &&
          !linalgOp.payloadUsesValueFromOperand(&use))
        continue;
    if (auto access = OpClassification::getAccessPattern(use))
      if (!llvm::is_contained(accesses, *access))
        accesses.push_back(*access);
  }
  if (!accesses.empty())
    return accesses;
  if (auto result = dyn_cast<OpResult>(value))
    if (auto producer = dyn_cast<linalg::LinalgOp>(result.getOwner()))
      if (auto access = OpClassification::getAccessPattern(
              *producer.getDpsInitOperand(result.getResultNumber())))
        return {*access};
  if (auto shaped = dyn_cast<ShapedType>(value.getType()))
    if (shaped.getRank() > 0) {
      AccessPattern rowMajor;
      rowMajor.innermostDim = shaped.getRank() - 1;
      return {rowMajor};
    }
  return accesses;
}

/// A backward access agrees with a forward one when it walks the same
/// innermost dim and either reduces nothing (an elementwise read suits any
/// reduction order) or reduces the same dims.
static bool agrees(const AccessPattern &backward,
                   const AccessPattern &forward) {
  return backward.innermostDim == forward.innermostDim &&
         (backward.reducedDims.empty() ||
          backward.reducedDims == forward.reducedDims);
}

FailureOr<OpClassification> OpClassification::analyze(func::FuncOp func) {
  if (!func.getBody().hasOneBlock())
    return failure();
  Block &block = func.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(block.getTerminator());
  if (!ret || ret.getNumOperands() == 0)
    return failure();
  auto lossType = dyn_cast<RankedTensorType>(ret.getOperand(0).getType());
  if (!lossType || lossType.getRank() != 0)
    return failure();

  OpClassification result;
  for (Operation &op : block.without_terminator())
    result.ops.push_back(&op);

  // 1. Forward: the backward slice of the loss.
  llvm::DenseSet<Operation *> forward;
  llvm::DenseSet<Value> lossDeps = {ret.getOperand(0)};
  for (Operation *op : llvm::reverse(result.ops)) {
    if (llvm::none_of(op->getResults(),
                      [&](Value v) { return lossDeps.contains(v); }))
      continue;
    forward.insert(op);
    for (Value in : getOperandsAndCapturedValues(op))
      lossDeps.insert(in);
  }
  llvm::DenseSet<Value> forwardArgs;
  for (BlockArgument arg : block.getArguments())
    if (lossDeps.contains(arg))
      forwardArgs.insert(arg);

  // Forward data: arguments the forward reads and forward results computed
  // from data.
  llvm::DenseSet<Value> forwardData(forwardArgs.begin(), forwardArgs.end());
  for (Operation *op : result.ops)
    if (forward.contains(op) && !makesNoData(op))
      for (Value r : op->getResults())
        forwardData.insert(r);

  // 2. Optimizer.
  llvm::DenseSet<Value> optimizerValues;
  llvm::DenseSet<Operation *> optimizer;
  for (BlockArgument arg : block.getArguments())
    if (!forwardArgs.contains(arg))
      optimizerValues.insert(arg); // optimizer state
  for (Operation *op : result.ops) {
    if (forward.contains(op))
      continue;
    bool readsState =
        llvm::any_of(getOperandsAndCapturedValues(op),
                     [&](Value v) { return optimizerValues.contains(v); });
    // An update writes the new parameter, which the function returns.
    bool updatesParam = false;
    bool returnedOnly =
        op->getNumResults() == 1 && !op->getResult(0).use_empty() &&
        llvm::all_of(op->getResult(0).getUsers(),
                     [](Operation *u) { return isa<func::ReturnOp>(u); });
    if (returnedOnly && isElementwise(op))
      for (Value in : op->getOperands()) {
        auto arg = dyn_cast<BlockArgument>(in);
        if (arg && func.getArgAttr(arg.getArgNumber(), "fbl.param") &&
            arg.getType() == op->getResult(0).getType() &&
            llvm::any_of(op->getOperands(), [&](Value other) {
              return other != in && !forwardData.contains(other) &&
                     isa<RankedTensorType>(other.getType());
            }))
          updatesParam = true;
      }
    if (readsState || updatesParam) {
      optimizer.insert(op);
      for (Value r : op->getResults())
        optimizerValues.insert(r);
    }
  }

  // Constants, empty tensors and fills belong to the phase that uses them.
  for (Operation *op : llvm::reverse(result.ops))
    if (!forward.contains(op) && makesNoData(op) && !op->use_empty() &&
        llvm::all_of(op->getUsers(), [&](Operation *user) {
          return optimizer.contains(user) ||
                 (user->getParentOp() != func &&
                  optimizer.contains(
                      func.getBody().front().findAncestorOpInBlock(*user)));
        }))
      optimizer.insert(op);

  // 3. Backward ops and their classes.
  for (Operation *op : result.ops) {
    OpInfo info;
    if (forward.contains(op)) {
      info.phase = Phase::Forward;
    } else if (optimizer.contains(op)) {
      info.phase = Phase::Optimizer;
    } else {
      info.phase = Phase::Backward;
      info.conflicting = reindexesAnInput(op);
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      for (OpOperand &operand : op->getOpOperands()) {
        Value v = operand.get();
        if (!forwardData.contains(v) || !isa<ShapedType>(v.getType()))
          continue;
        // An init the body never reads is only written.
        if (linalgOp && linalgOp.isDpsInit(&operand) &&
            !linalgOp.payloadUsesValueFromOperand(&operand))
          continue;
        info.readsForward = true;
        ReuseEdge edge;
        edge.operandNumber = operand.getOperandNumber();
        edge.value = v;
        std::optional<AccessPattern> access = getAccessPattern(operand);
        SmallVector<AccessPattern> fwd = forwardAccessesOf(v, forward);
        if (access)
          edge.access = *access;
        // Report the forward access this one agrees with, else the first
        // forward reduction it contradicts.
        const AccessPattern *match = nullptr;
        for (const AccessPattern &f : fwd)
          if (access && agrees(*access, f))
            match = &f;
        if (!match)
          for (const AccessPattern &f : fwd)
            if (!match ||
                (match->reducedDims.empty() && !f.reducedDims.empty()))
              match = &f;
        if (match)
          edge.forwardAccess = *match;
        edge.conflicting = (access && match && !agrees(*access, *match)) ||
                           reindexesAnInput(op);
        info.conflicting |= edge.conflicting;
        info.reuse.push_back(edge);
      }
      // Values captured by regions (gathers, scatter loops) count as reads.
      if (op->getNumRegions()) {
        llvm::SetVector<Value> captured;
        getUsedValuesDefinedAbove(op->getRegions(), captured);
        for (Value v : captured)
          if (forwardData.contains(v) && isa<ShapedType>(v.getType()))
            info.readsForward = true;
      }
      info.opClass = info.readsForward
                         ? (info.conflicting ? OpClass::IV : OpClass::II)
                         : (info.conflicting ? OpClass::III : OpClass::I);
    }
    result.infos[op] = std::move(info);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// The classification as attributes
//===----------------------------------------------------------------------===//

static Attribute accessAttr(Builder &b, const AccessPattern &access) {
  return b.getDictionaryAttr(
      {b.getNamedAttr("reduced", b.getDenseI64ArrayAttr(access.reducedDims)),
       b.getNamedAttr("innermost", b.getI64IntegerAttr(access.innermostDim))});
}

static AccessPattern accessFromAttr(DictionaryAttr dict) {
  AccessPattern access;
  if (!dict)
    return access;
  if (auto reduced = dict.getAs<DenseI64ArrayAttr>("reduced"))
    access.reducedDims.assign(reduced.asArrayRef().begin(),
                              reduced.asArrayRef().end());
  if (auto innermost = dict.getAs<IntegerAttr>("innermost"))
    access.innermostDim = innermost.getInt();
  return access;
}

void OpClassification::annotate() const {
  for (Operation *op : ops) {
    Builder b(op->getContext());
    const OpInfo &info = infos.find(op)->second;
    op->setAttr(FBLDialect::getPhaseAttrName(),
                b.getStringAttr(stringifyPhase(info.phase)));
    if (info.phase != Phase::Backward)
      continue;
    op->setAttr(FBLDialect::getClassAttrName(),
                b.getI64IntegerAttr(static_cast<int>(info.opClass)));
    if (info.reuse.empty())
      continue;
    SmallVector<Attribute> edges;
    for (const ReuseEdge &edge : info.reuse)
      edges.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("operand", b.getI64IntegerAttr(edge.operandNumber)),
           b.getNamedAttr("access", accessAttr(b, edge.access)),
           b.getNamedAttr("forward", accessAttr(b, edge.forwardAccess)),
           b.getNamedAttr("conflict", b.getBoolAttr(edge.conflicting))}));
    op->setAttr(FBLDialect::getReuseAttrName(), b.getArrayAttr(edges));
  }
}

FailureOr<OpClassification>
OpClassification::fromAttributes(func::FuncOp func) {
  if (!func.getBody().hasOneBlock())
    return failure();
  OpClassification result;
  for (Operation &op : func.getBody().front().without_terminator()) {
    auto phase = op.getAttrOfType<StringAttr>(FBLDialect::getPhaseAttrName());
    if (!phase)
      continue;
    OpInfo info;
    info.phase = llvm::StringSwitch<Phase>(phase.getValue())
                     .Case("backward", Phase::Backward)
                     .Case("optimizer", Phase::Optimizer)
                     .Default(Phase::Forward);
    if (auto cls =
            op.getAttrOfType<IntegerAttr>(FBLDialect::getClassAttrName());
        cls && cls.getInt() >= 1 && cls.getInt() <= 4)
      info.opClass = static_cast<OpClass>(cls.getInt());
    info.readsForward =
        info.opClass == OpClass::II || info.opClass == OpClass::IV;
    info.conflicting =
        info.opClass == OpClass::III || info.opClass == OpClass::IV;
    if (auto reuse =
            op.getAttrOfType<ArrayAttr>(FBLDialect::getReuseAttrName()))
      for (auto dict : reuse.getAsRange<DictionaryAttr>()) {
        auto operand = dict.getAs<IntegerAttr>("operand");
        if (!operand || operand.getInt() < 0 ||
            operand.getInt() >= op.getNumOperands())
          continue;
        ReuseEdge edge;
        edge.operandNumber = operand.getInt();
        edge.value = op.getOperand(edge.operandNumber);
        edge.access = accessFromAttr(dict.getAs<DictionaryAttr>("access"));
        edge.forwardAccess =
            accessFromAttr(dict.getAs<DictionaryAttr>("forward"));
        if (auto conflict = dict.getAs<BoolAttr>("conflict"))
          edge.conflicting = conflict.getValue();
        info.reuse.push_back(edge);
      }
    result.ops.push_back(&op);
    result.infos[&op] = std::move(info);
  }
  if (result.ops.empty())
    return failure();
  return result;
}
