//===- InsertLora.cpp - The fbl-insert-lora pass --------------------------===//
//
// LoRA as a rewrite of a forward model: every contraction reading a target
// weight W as its right operand, y = x·W (or x·Wᵀ), becomes
//   y + (alpha/rank)·(x·Aᵀ)·Bᵀ
// with new fbl.param arguments A [rank, IN] and B [OUT, rank] named after W
// as PEFT names them. W and every other argument lose fbl.param (unless
// trainable= keeps them), so fbl-autodiff's activity analysis builds no
// gradient for the frozen weights.
//
// 1. The options are checked.
// 2. Analysis, per model function (one returning a scalar loss): the weights
//    whose fbl.name matches a target, and for each the contractions reading
//    it (directly or through a [1, 0] linalg.transpose) with the roles of
//    its two dims. Whatever the rewrite would not understand is an error
//    before anything changes.
// 3. Rewrite: A and B appended per weight in argument order, an adapter
//    after each contraction (copies of the contraction on A and B, then a
//    scaled-add linalg.generic replacing its uses), fbl.param moved.
//
//===----------------------------------------------------------------------===//

#include "fbl/Autodiff/Autodiff.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace mlir::fbl {
#define GEN_PASS_DEF_FBLINSERTLORAPASS
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"
} // namespace mlir::fbl

using namespace mlir;
using namespace mlir::fbl;

namespace {
/// A contraction reading a target weight as its right operand.
struct AdaptedUse {
  linalg::LinalgOp contraction;
  /// The position of OUT among the result's dims (the first adapter
  /// product has rank there).
  unsigned outResultPos;
  /// The right operand lists the weight's dims as [IN, OUT] (x·W, or x·Wᵀ
  /// of a weight stored [OUT, IN]); otherwise as [OUT, IN] (a transposed-B
  /// map). The adapters are fed the same way.
  bool rhsIsInByOut;
};

/// A weight argument to adapt and the contractions reading it.
struct LoraTarget {
  unsigned argIndex;
  StringRef name;
  /// The module path: the fbl.name without ".weight".
  StringRef module;
  StringRef target;
  RankedTensorType type;
  /// The weight's dim that the matmuls reduce, and the sizes of both.
  unsigned weightInDim = 0;
  int64_t in = 0, out = 0;
  SmallVector<AdaptedUse> uses;
};

/// What fbl-insert-lora does to one model function.
struct FunctionPlan {
  func::FuncOp func;
  SmallVector<LoraTarget> targets;
  /// fbl.param arguments that stay trainable.
  llvm::SmallDenseSet<unsigned> keptTrainable;
};
} // namespace

/// The argument's fbl.name, or "".
static StringRef getArgName(func::FuncOp func, unsigned i) {
  auto name =
      func.getArgAttrOfType<StringAttr>(i, FBLDialect::getNameAttrName());
  return name ? name.getValue() : StringRef();
}

/// The module path of a weight name ("a.b.q_proj.weight" -> "a.b.q_proj"),
/// or "" when the name does not end in ".weight".
static StringRef getModulePath(StringRef name) {
  return name.consume_back(".weight") ? name : StringRef();
}

/// PEFT's target_modules rule: the module path is the target or ends in
/// ".<target>".
static bool matchesTarget(StringRef module, StringRef target) {
  return module == target || (module.ends_with(target) &&
                              module.drop_back(target.size()).ends_with("."));
}

/// Emits "fbl-insert-lora: cannot adapt 'NAME' (target 'T'): ..." at `loc`.
static InFlightDiagnostic emitTargetError(Location loc,
                                          const LoraTarget &target) {
  return mlir::emitError(loc, "fbl-insert-lora: cannot adapt '")
         << target.name << "' (target '" << target.target << "'): ";
}

/// Analyzes `use` of a target weight (or of its transpose, `transposed`):
/// a contraction on it as right operand with a lone reduced dim (IN) and a
/// lone kept dim (OUT), whose left operand is indexed like its result with
/// IN for OUT (so the adapter's second product can read the first one's
/// result). Sets the weight's IN and OUT sizes, checking them against
/// earlier uses.
static FailureOr<AdaptedUse> analyzeUse(OpOperand &use, bool transposed,
                                        LoraTarget &target) {
  Operation *user = use.getOwner();
  auto op = dyn_cast<linalg::LinalgOp>(user);
  if (!op ||
      !isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::GenericOp>(user) ||
      !linalg::isaContractionOpInterface(op) || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !op.hasPureTensorSemantics()) {
    emitTargetError(user->getLoc(), target)
        << "'" << user->getName()
        << "' reads it; only matmuls on the weight (x·W, x·Wᵀ) can be adapted";
    return failure();
  }
  if (use.getOperandNumber() != 1) {
    emitTargetError(user->getLoc(), target)
        << "'" << user->getName()
        << "' reads it as its left operand; LoRA adapts x·W";
    return failure();
  }
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap lhsMap = maps[0], rhsMap = maps[1], outMap = maps[2];
  SmallVector<unsigned, 2> rhsDims;
  for (AffineExpr e : rhsMap.getResults())
    if (auto d = dyn_cast<AffineDimExpr>(e))
      rhsDims.push_back(d.getPosition());
  bool twoDims = rhsMap.getNumResults() == 2 && rhsDims.size() == 2;
  bool kept0 = twoDims && outMap.isFunctionOfDim(rhsDims[0]);
  bool kept1 = twoDims && outMap.isFunctionOfDim(rhsDims[1]);
  if (!twoDims || kept0 == kept1) {
    emitTargetError(user->getLoc(), target)
        << "'" << user->getName()
        << "' does not read it as one reduced (IN) and one kept (OUT) dim";
    return failure();
  }
  unsigned inDim = kept0 ? rhsDims[1] : rhsDims[0];
  unsigned outDim = kept0 ? rhsDims[0] : rhsDims[1];
  MLIRContext *ctx = op.getContext();
  if (lhsMap.replace(getAffineDimExpr(inDim, ctx),
                     getAffineDimExpr(outDim, ctx), lhsMap.getNumDims(),
                     0) != outMap ||
      lhsMap.isFunctionOfDim(outDim)) {
    emitTargetError(user->getLoc(), target)
        << "'" << user->getName()
        << "' indexes its left operand in another order than its result";
    return failure();
  }
  if (!isa<FloatType>(getElementTypeOrSelf(op.getDpsInits()[0].getType()))) {
    emitTargetError(user->getLoc(), target)
        << "'" << user->getName() << "' computes no float result";
    return failure();
  }

  // Which of the weight's own dims is IN: the operand's, swapped by a
  // transpose. Every matmul must agree, or A and B would mean two things.
  bool rhsIsInByOut = !kept0;
  unsigned weightInDim = rhsIsInByOut != transposed ? 0 : 1;
  if (!target.uses.empty() && target.weightInDim != weightInDim) {
    emitTargetError(user->getLoc(), target)
        << "'" << user->getName() << "' reads its dim " << weightInDim
        << " as the input dim where another matmul reads dim "
        << target.weightInDim;
    return failure();
  }
  target.weightInDim = weightInDim;
  target.in = target.type.getDimSize(weightInDim);
  target.out = target.type.getDimSize(1 - weightInDim);
  unsigned outPos = *outMap.getResultPosition(getAffineDimExpr(outDim, ctx));
  return AdaptedUse{op, outPos, rhsIsInByOut};
}

/// Finds the contractions reading `target`'s weight, directly or through a
/// [1, 0] linalg.transpose, in IR order; fails with a diagnostic on
/// anything else.
static LogicalResult analyzeUses(func::FuncOp func, LoraTarget &target) {
  Value weight = func.getArgument(target.argIndex);
  llvm::SmallDenseSet<Value> transposes;
  WalkResult walk = func.walk([&](Operation *op) {
    for (OpOperand &operand : op->getOpOperands()) {
      bool transposed = transposes.contains(operand.get());
      if (operand.get() != weight && !transposed)
        continue;
      auto transpose = dyn_cast<linalg::TransposeOp>(op);
      if (!transposed && transpose &&
          transpose.getPermutation() == ArrayRef<int64_t>{1, 0}) {
        transposes.insert(transpose.getResult()[0]);
        continue;
      }
      FailureOr<AdaptedUse> adapted = analyzeUse(operand, transposed, target);
      if (failed(adapted))
        return WalkResult::interrupt();
      target.uses.push_back(*adapted);
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (target.uses.empty())
    return emitTargetError(weight.getLoc(), target) << "no matmul reads it";
  return success();
}

/// Plans the rewrite of `func`: its target weights and their uses, and the
/// parameters trainable= keeps. Records the targets and trainable= entries
/// that matched something.
static FailureOr<FunctionPlan>
analyzeFunction(func::FuncOp func, ArrayRef<std::string> targets,
                ArrayRef<std::string> trainable, int64_t rank,
                llvm::StringSet<> &matchedTargets,
                llvm::StringSet<> &usedTrainable) {
  FunctionPlan plan{func, {}, {}};
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    StringRef name = getArgName(func, i);
    if (name.empty())
      continue;
    StringRef keptBy;
    if (func.getArgAttr(i, FBLDialect::getParamAttrName()))
      for (StringRef entry : trainable)
        if (name.contains(entry)) {
          usedTrainable.insert(entry);
          keptBy = entry;
          break;
        }
    StringRef module = getModulePath(name);
    auto target = llvm::find_if(targets, [&](StringRef t) {
      return !module.empty() && matchesTarget(module, t);
    });
    if (target == targets.end()) {
      if (!keptBy.empty())
        plan.keptTrainable.insert(i);
      continue;
    }
    matchedTargets.insert(*target);

    LoraTarget lora;
    lora.argIndex = i;
    lora.name = name;
    lora.module = module;
    lora.target = *target;
    Location loc = func.getArgument(i).getLoc();
    if (!keptBy.empty())
      return emitTargetError(loc, lora)
             << "trainable='" << keptBy
             << "' keeps it trainable, and LoRA freezes the weights it adapts";
    lora.type = dyn_cast<RankedTensorType>(func.getArgumentTypes()[i]);
    if (!lora.type || lora.type.getRank() != 2 || !lora.type.hasStaticShape())
      return emitTargetError(loc, lora)
             << "it is " << func.getArgumentTypes()[i]
             << "; LoRA adapts static 2-D weight matrices";
    if (failed(analyzeUses(func, lora)))
      return failure();
    if (rank > std::min(lora.in, lora.out))
      return emitTargetError(loc, lora)
             << "rank=" << rank
             << " exceeds min(IN, OUT) = " << std::min(lora.in, lora.out)
             << " (IN = " << lora.in << ", OUT = " << lora.out << ")";
    plan.targets.push_back(std::move(lora));
  }
  return plan;
}

/// `value`ᵀ of a 2-D tensor, as a linalg.transpose the way importers write
/// it.
static Value buildTranspose(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  Value init = tensor::EmptyOp::create(
      b, loc, {type.getDimSize(1), type.getDimSize(0)}, type.getElementType());
  return linalg::TransposeOp::create(b, loc, value, init,
                                     ArrayRef<int64_t>{1, 0})
      .getResult()[0];
}

/// A copy of `contraction` on `lhs` and `rhs` into zeros of `type`.
static Value buildProduct(OpBuilder &b, linalg::LinalgOp contraction, Value lhs,
                          Value rhs, RankedTensorType type) {
  Location loc = contraction.getLoc();
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  Value zero =
      arith::ConstantOp::create(b, loc, b.getZeroAttr(type.getElementType()));
  Value zeros = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  auto copy = cast<linalg::LinalgOp>(b.clone(*contraction));
  copy.getDpsInputOperand(0)->set(lhs);
  copy.getDpsInputOperand(1)->set(rhs);
  copy.getDpsInitOperand(0)->set(zeros);
  copy->getResult(0).setType(type);
  return copy->getResult(0);
}

/// Adds `scale`·(x·Aᵀ)·Bᵀ to the result of `use`'s contraction, for every
/// user of that result.
static void buildAdapter(const AdaptedUse &use, Value loraA, Value loraB,
                         int64_t rank, double scale) {
  linalg::LinalgOp contraction = use.contraction;
  OpBuilder b(contraction);
  b.setInsertionPointAfter(contraction);
  Location loc = contraction.getLoc();
  Value base = contraction->getResult(0);
  auto type = cast<RankedTensorType>(base.getType());
  Type elementType = type.getElementType();

  SmallVector<int64_t> downShape(type.getShape());
  downShape[use.outResultPos] = rank;
  Value down =
      buildProduct(b, contraction, contraction.getDpsInputOperand(0)->get(),
                   use.rhsIsInByOut ? buildTranspose(b, loc, loraA) : loraA,
                   RankedTensorType::get(downShape, elementType));
  Value up = buildProduct(
      b, contraction, down,
      use.rhsIsInByOut ? buildTranspose(b, loc, loraB) : loraB, type);

  Value scaleValue =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(elementType, scale));
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), elementType);
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  auto sum = linalg::GenericOp::create(
      b, loc, type, ValueRange{base, up}, ValueRange{empty},
      ArrayRef<AffineMap>{id, id, id},
      SmallVector<utils::IteratorType>(type.getRank(),
                                       utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value scaled = arith::MulFOp::create(nb, nloc, args[1], scaleValue);
        Value result = arith::AddFOp::create(nb, nloc, args[0], scaled);
        linalg::YieldOp::create(nb, nloc, result);
      });
  base.replaceAllUsesExcept(sum.getResult(0), sum);
}

/// Appends the adapters' arguments, builds the adapters and moves fbl.param
/// to the adapters and the parameters trainable= keeps.
static void rewriteFunction(const FunctionPlan &plan, int64_t rank,
                            double scale) {
  func::FuncOp func = plan.func;
  MLIRContext *ctx = func.getContext();
  Builder b(ctx);
  unsigned numOriginalArgs = func.getNumArguments();
  for (const LoraTarget &target : plan.targets) {
    Type elementType = target.type.getElementType();
    Location loc = func.getArgument(target.argIndex).getLoc();
    auto adapterAttrs = [&](StringRef matrix, StringRef init) {
      return b.getDictionaryAttr(
          {b.getNamedAttr(
               FBLDialect::getNameAttrName(),
               b.getStringAttr(target.module + "." + matrix + ".weight")),
           b.getNamedAttr(FBLDialect::getInitAttrName(), b.getStringAttr(init)),
           b.getNamedAttr(FBLDialect::getParamAttrName(), b.getUnitAttr())});
    };
    // PEFT's kaiming_uniform_(a=sqrt(5)) on A: bound 1/sqrt(fan_in).
    std::string uniform;
    llvm::raw_string_ostream(uniform)
        << "uniform:" << llvm::format("%.9g", 1.0 / std::sqrt(target.in));
    unsigned end = func.getNumArguments();
    (void)func.insertArguments(
        {end, end},
        {RankedTensorType::get({rank, target.in}, elementType),
         RankedTensorType::get({target.out, rank}, elementType)},
        {adapterAttrs("lora_A", uniform), adapterAttrs("lora_B", "zeros")},
        {loc, loc});
  }

  unsigned next = numOriginalArgs;
  for (const LoraTarget &target : plan.targets) {
    Value loraA = func.getArgument(next++), loraB = func.getArgument(next++);
    for (const AdaptedUse &use : target.uses)
      buildAdapter(use, loraA, loraB, rank, scale);
  }
  for (unsigned i = 0; i < numOriginalArgs; ++i)
    if (!plan.keptTrainable.contains(i))
      func.removeArgAttr(i, FBLDialect::getParamAttrName());
}

namespace {
struct InsertLoraPass
    : public mlir::fbl::impl::FBLInsertLoraPassBase<InsertLoraPass> {
  using Base::Base;

  /// Refuses options that would build nothing or something meaningless.
  LogicalResult checkOptions() {
    Location loc = getOperation().getLoc();
    if (rank <= 0)
      return mlir::emitError(loc, "fbl-insert-lora: rank=")
             << static_cast<int64_t>(rank) << " is not valid; rank must be > 0";
    if (!std::isfinite(alpha) || alpha <= 0) {
      std::string value;
      llvm::raw_string_ostream(value) << llvm::format("%g", double(alpha));
      return mlir::emitError(loc, "fbl-insert-lora: alpha=")
             << value << " is not valid; alpha must be a finite number > 0";
    }
    if (targets.empty())
      return mlir::emitError(loc, "fbl-insert-lora: targets= is empty; name "
                                  "the modules to adapt, e.g. "
                                  "targets=q_proj,v_proj");
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkOptions()))
      return signalPassFailure();

    SmallVector<FunctionPlan> plans;
    llvm::StringSet<> matchedTargets, usedTrainable;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || !returnsScalarLoss(func))
        continue;
      FailureOr<FunctionPlan> plan = analyzeFunction(
          func, targets, trainable, rank, matchedTargets, usedTrainable);
      if (failed(plan))
        return signalPassFailure();
      // Neither adapted nor trainable: not a model.
      if (plan->targets.empty() && getParamArgs(func).empty())
        continue;
      plans.push_back(std::move(*plan));
    }
    for (StringRef target : targets)
      if (!matchedTargets.contains(target)) {
        mlir::emitError(module.getLoc(), "fbl-insert-lora: no weight named '")
            << target << ".weight' or '*." << target
            << ".weight' matches target '" << target << "'";
        return signalPassFailure();
      }
    for (StringRef entry : trainable)
      if (!usedTrainable.contains(entry)) {
        mlir::emitError(module.getLoc(), "fbl-insert-lora: trainable='")
            << entry << "' keeps nothing: no fbl.param argument's fbl.name "
            << "contains it";
        return signalPassFailure();
      }
    for (const FunctionPlan &plan : plans) {
      func::FuncOp func = plan.func;
      if (plan.targets.empty() && plan.keptTrainable.empty()) {
        func.emitError("fbl-insert-lora: @")
            << func.getSymName()
            << " would have no fbl.param argument left: none of its weights "
               "matches targets= and trainable= keeps none of its parameters";
        return signalPassFailure();
      }
      StringRef name = func.getSymName();
      for (StringRef suffix : {"_grad", "_step"})
        if (SymbolTable::lookupSymbolIn(module, (name + suffix).str())) {
          func.emitError("fbl-insert-lora: @")
              << name << " already has @" << name << suffix
              << "; run fbl-insert-lora before fbl-autodiff";
          return signalPassFailure();
        }
      if (!SymbolTable::symbolKnownUseEmpty(func, module)) {
        func.emitError("fbl-insert-lora: @")
            << name << " is called in the module; its callers would not "
            << "pass the adapters";
        return signalPassFailure();
      }
    }

    for (const FunctionPlan &plan : plans)
      rewriteFunction(plan, rank, alpha / rank);
  }
};
} // namespace
