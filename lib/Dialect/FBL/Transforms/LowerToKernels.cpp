//===- LowerToKernels.cpp - The fbl-lower-to-kernels pass -----------------===//
//
// Turns each computing op of a laid-out function into an fbl.dispatch whose
// body is explicit: work-item ids, address arithmetic derived from the
// layout algebra's factor terms, texel and element accesses, and the op's
// scalar code. The emitters only print it.
//
// This file is the pass driver: it resolves the target, walks the top-level
// ops of each laid-out function and hands each to its family's lowering
// (LowerToKernels/):
//  - contractions: the register- or local-tiled GEMM kernels
//    (ContractionKernels.cpp), else the generic kernel;
//  - with `rows`, row groups (a softmax, a norm, their backward passes:
//    matchRowGroups) first, one kernel each (RowKernels.cpp);
//  - other linalg ops: the generic per-texel kernel (ElementwiseKernels.cpp);
//  - fbl.relayout, slices, tensor.insert and constant tensors: copy kernels
//    (CopyKernels.cpp); a chain of inserts each read only by the next (a
//    concat, im2col) is one kernel, and so is a sum of inserts into zeros
//    (col2im: the gradient of a convolution's window reads);
//  - scf.for scatter loops over buffers: in-place kernels
//    (ScatterKernels.cpp).
// Scalars the kernels use (constants, bias corrections computed from a step
// count) are recomputed inside each kernel that needs them. cf.assert is a
// host-side input check: kernels do not evaluate it; before lowering, the
// valid range of each integer input is recorded (InputRanges.cpp) for the
// runtime's check before upload.
//
// Repeated layers lower the same ops again and again: an op equivalent to
// one lowered before (same op, attributes, body, operand types and layouts,
// the same captured values) gets a copy of that one's kernels instead
// (RepeatedKernels below).
//
//===----------------------------------------------------------------------===//

#include "LowerToKernels/KernelLowerings.h"

#include "fbl/Autodiff/IndexMaps.h"
#include "fbl/CostModel/KernelPlan.h"
#include "fbl/CostModel/OpCost.h"
#include "fbl/Dialect/FBL/IR/FBLOps.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::fbl {
#define GEN_PASS_DEF_FBLLOWERTOKERNELSPASS
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"
} // namespace mlir::fbl

using namespace mlir;
using namespace mlir::fbl;
using namespace mlir::fbl::kernels;

/// Lowers `op`, a top-level op of a laid-out function, with its family's
/// lowering.
static LogicalResult lowerOp(Operation *op, const ReadThrough &through,
                             TargetAttr target, unsigned &counter,
                             const InsertSum *sum,
                             GemmEpilogueKinds epilogues) {
  if (sum) {
    lowerInsertSum(op, *sum, through, target, counter);
    return success();
  }
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    FailureOr<DispatchOp> gemm =
        lowerContraction(linalgOp, target, counter, epilogues);
    if (failed(gemm))
      return lowerLinalg(linalgOp, target, counter);
    linalgOp->getResult(0).replaceAllUsesWith(gemm->getResult(0));
    linalgOp->erase();
    return success();
  }
  if (auto relayout = dyn_cast<RelayoutOp>(op)) {
    lowerRelayout(relayout, target, counter);
    return success();
  }
  if (isa<tensor::ExtractSliceOp, tensor::InsertSliceOp>(op))
    return lowerSlice(op, through, target, counter);
  if (auto insert = dyn_cast<tensor::InsertOp>(op))
    return lowerInsert(insert, target, counter);
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return lowerConstant(constant, target, counter);
  return lowerScatterLoop(cast<scf::ForOp>(op), target, counter);
}

/// The cost model's estimate as `fbl.estimate`.
static DictionaryAttr estimateAttr(MLIRContext *ctx,
                                   const ::fbl::cost::KernelCost &c) {
  Builder b(ctx);
  return b.getDictionaryAttr(
      {b.getNamedAttr("fetches", b.getI64IntegerAttr(c.fetches)),
       b.getNamedAttr("misses", b.getI64IntegerAttr(c.misses)),
       b.getNamedAttr("writes", b.getI64IntegerAttr(c.writes)),
       b.getNamedAttr("multiplies", b.getI64IntegerAttr(c.multiplies)),
       b.getNamedAttr("item_accesses", b.getF64FloatAttr(c.itemAccesses)),
       b.getNamedAttr("time_ns", b.getF64FloatAttr(c.timeNs))});
}

namespace {
/// What one lowering replaces: an op, or a GEMM and the epilogue its kernel
/// computes too (matchGemmEpilogue).
struct LoweredUnit {
  Operation *op;
  Operation *epilogue = nullptr;

  /// The values the unit reads: the op's operands, then the epilogue's but
  /// the op's result.
  SmallVector<Value> operands() const {
    SmallVector<Value> values(op->getOperands());
    if (epilogue)
      for (Value v : epilogue->getOperands())
        if (v.getDefiningOp() != op)
          values.push_back(v);
    return values;
  }
  /// The values that replace the unit's results replace these: the op's
  /// (read by others than the epilogue where its kernel stores them too),
  /// then the epilogue's.
  SmallVector<Value> results() const {
    SmallVector<Value> values(op->getResults());
    if (epilogue)
      llvm::append_range(values, epilogue->getResults());
    return values;
  }

  /// A use of `result` (one of results()) outside the unit, or null: what
  /// lowering the unit leaves to be replaced.
  OpOperand *outsideUse(Value result) const {
    for (OpOperand &use : result.getUses())
      if (use.getOwner() != epilogue)
        return &use;
    return nullptr;
  }
};

/// Ops that lower to the same kernels: each op of a function is matched,
/// before anything is lowered, with the first equivalent op before it; what
/// that one's lowering created is cloned for the others.
class RepeatedKernels {
public:
  /// Groups `ops` (top-level ops of one block, in order; `epilogues` maps a
  /// GEMM to the epilogue its kernel computes).
  RepeatedKernels(ArrayRef<Operation *> ops,
                  const llvm::DenseMap<Operation *, Operation *> &epilogues);

  /// The earlier op `op` repeats, or null.
  Operation *original(Operation *op) const { return originals.lookup(op); }

  /// Records what lowering `op` created between `before` and `after` (its
  /// old neighbours; null at the block's ends). `operands` are its operands
  /// and `uses` one use of each of its results (null for unused ones), both
  /// taken before lowering.
  void record(Operation *op, ValueRange operands, ArrayRef<OpOperand *> uses,
              Block *block, Operation *before, Operation *after);

  /// Lowers `unit` as a copy of `original`'s kernels; false when what
  /// `original` created cannot be copied (lower `unit` itself then).
  bool copy(const LoweredUnit &unit, Operation *original, unsigned &counter);

private:
  struct Lowered {
    SmallVector<Value> operands;  ///< the original's, when it was lowered
    SmallVector<Operation *> ops; ///< what its lowering created, in order
    SmallVector<Value> results;   ///< what replaced each result (or null)
  };
  llvm::DenseMap<Operation *, Operation *> originals;
  llvm::DenseMap<Operation *, Lowered> lowered;
};
} // namespace

/// The ops a lowering created: those between `before` and `after`, the
/// lowered op's old neighbours in `block` (null at the block's ends).
static llvm::iterator_range<Block::iterator>
createdBetween(Block &block, Operation *before, Operation *after) {
  return {before ? std::next(before->getIterator()) : block.begin(),
          after ? after->getIterator() : block.end()};
}

/// Whether `a` and `b` lower to the same kernels up to their tensor
/// operands: equal ops, bodies, types (with layouts) and captured values,
/// the same operands repeated, the same operands fresh tensors.
static bool lowersAlike(Operation *a, Operation *b) {
  if (a->getNumOperands() != b->getNumOperands())
    return false;
  // Kernels start from an init's fill constant instead of reading it.
  auto la = dyn_cast<linalg::LinalgOp>(a), lb = dyn_cast<linalg::LinalgOp>(b);
  if (la && lb && initConstant(la) != initConstant(lb))
    return false;
  for (unsigned i = 0, e = a->getNumOperands(); i < e; ++i) {
    Value x = a->getOperand(i), y = b->getOperand(i);
    if (!isa<RankedTensorType>(x.getType()) && x != y)
      return false;
    if (static_cast<bool>(x.getDefiningOp<tensor::EmptyOp>()) !=
        static_cast<bool>(y.getDefiningOp<tensor::EmptyOp>()))
      return false;
    for (unsigned j = 0; j < i; ++j)
      if ((a->getOperand(j) == x) != (b->getOperand(j) == y))
        return false;
  }
  // Values of the two bodies found to correspond (block arguments, results).
  llvm::DenseMap<Value, Value> inner;
  auto equivalent = [&](Value x, Value y) {
    if (x == y || inner.lookup(x) == y)
      return success();
    for (unsigned i = 0, e = a->getNumOperands(); i < e; ++i)
      if (a->getOperand(i) == x && b->getOperand(i) == y)
        return success(x.getType() == y.getType());
    return failure(); // captured values must be the same
  };
  return OperationEquivalence::isEquivalentTo(
      a, b, equivalent, [&](Value x, Value y) { inner[x] = y; },
      OperationEquivalence::IgnoreLocations);
}

RepeatedKernels::RepeatedKernels(
    ArrayRef<Operation *> ops,
    const llvm::DenseMap<Operation *, Operation *> &epilogues) {
  // A GEMM and its epilogue repeat another pair when both do.
  auto alike = [&](Operation *a, Operation *b) {
    Operation *ea = epilogues.lookup(a), *eb = epilogues.lookup(b);
    return lowersAlike(a, b) && !ea == !eb && (!ea || lowersAlike(ea, eb));
  };
  auto typeHash = [](Value v) { return hash_value(v.getType()); };
  llvm::DenseMap<llvm::hash_code, SmallVector<Operation *, 1>> seen;
  for (Operation *op : ops) {
    SmallVector<Operation *, 1> &bucket =
        seen[OperationEquivalence::computeHash(
            op, typeHash, typeHash, OperationEquivalence::IgnoreLocations)];
    auto it = llvm::find_if(bucket,
                            [&](Operation *first) { return alike(first, op); });
    if (it != bucket.end())
      originals[op] = *it;
    else
      bucket.push_back(op);
  }
}

void RepeatedKernels::record(Operation *op, ValueRange operands,
                             ArrayRef<OpOperand *> uses, Block *block,
                             Operation *before, Operation *after) {
  Lowered l;
  l.operands = operands;
  llvm::DenseSet<Value> created;
  for (Operation &made : createdBetween(*block, before, after)) {
    // Copies may use the original's operands, values it created and
    // values that come before it (captured, the same for its repeats).
    for (Value v : made.getOperands())
      if (Operation *def = v.getDefiningOp();
          def && def->getBlock() == block && !created.contains(v) &&
          !llvm::is_contained(l.operands, v) &&
          (!before || !def->isBeforeInBlock(before)) && def != before)
        return;
    l.ops.push_back(&made);
    for (Value r : made.getResults())
      created.insert(r);
  }
  for (OpOperand *use : uses) {
    Value r = use ? use->get() : Value();
    if (r && !created.contains(r))
      return;
    l.results.push_back(r);
  }
  lowered[op] = std::move(l);
}

bool RepeatedKernels::copy(const LoweredUnit &unit, Operation *original,
                           unsigned &counter) {
  auto it = lowered.find(original);
  if (it == lowered.end())
    return false;
  const Lowered &l = it->second;
  for (auto [result, replacement] : llvm::zip(unit.results(), l.results))
    if (!replacement && unit.outsideUse(result))
      return false;
  IRMapping mapping;
  SmallVector<Value> operands = unit.operands();
  if (operands.size() != l.operands.size())
    return false;
  mapping.map(l.operands, operands);
  Operation *op = unit.op;
  OpBuilder b(op);
  for (Operation *created : l.ops) {
    Operation *clone = b.clone(*created, mapping);
    if (auto dispatch = dyn_cast<DispatchOp>(clone)) {
      // A kernel of its own name: k<n>_<family>.
      StringRef family = dispatch.getKernel().split('_').second;
      dispatch.setKernelAttr(FlatSymbolRefAttr::get(
          b.getContext(), ("k" + Twine(counter++) + "_" + family).str()));
    }
  }
  for (auto [result, replacement] : llvm::zip(unit.results(), l.results))
    if (replacement)
      result.replaceAllUsesWith(mapping.lookup(replacement));
  if (unit.epilogue)
    unit.epilogue->erase();
  op->erase();
  return true;
}

/// The cost model's estimate of the kernel that lowering `unit` emits.
static ::fbl::cost::KernelCost estimateOf(const LoweredUnit &unit,
                                          OpCostModel &costs,
                                          GemmEpilogueKinds epilogues) {
  if (auto relayout = dyn_cast<RelayoutOp>(unit.op))
    return costs.relayoutCost(relayout.getType(),
                              relayout.getSource().getType().getEncoding(),
                              relayout.getType().getEncoding());
  if (!unit.epilogue)
    return costs.opCost(unit.op);
  auto gemm = cast<linalg::LinalgOp>(unit.op);
  std::optional<GemmMatch> g = matchGemm(gemm);
  std::optional<GemmEpilogue> e = matchGemmEpilogue(gemm, *g, epilogues);
  std::optional<::fbl::cost::KernelShape> plan =
      planGemmWithEpilogue(gemm, *g, *e, costs.getTarget());
  return ::fbl::cost::kernelCost(*plan, costs.getDevice());
}

/// Gives the uses of a constant fill that kernels absorb as their initial
/// value (initConstant) a fill of their own, which runs no kernel, when the
/// fill has other uses too: lowering the fill for those must not turn the
/// absorbed inits into reads of its result.
static void splitAbsorbedFillUses(Block &block) {
  for (auto fill : llvm::make_early_inc_range(block.getOps<linalg::FillOp>())) {
    if (isAbsorbedFill(fill))
      continue;
    SmallVector<OpOperand *> absorbed;
    for (OpOperand &use : fill->getUses())
      if (auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
          user && user.isDpsInit(&use) && initConstant(user))
        absorbed.push_back(&use);
    if (absorbed.empty())
      continue;
    OpBuilder b(fill);
    Operation *copy = b.clone(*fill);
    for (OpOperand *use : absorbed)
      use->set(copy->getResult(0));
  }
}

namespace {
struct LowerToKernelsPass
    : public mlir::fbl::impl::FBLLowerToKernelsPassBase<LowerToKernelsPass> {
  using Base::Base;

  /// The canonicalization patterns of the ops kernel bodies hold.
  FrozenRewritePatternSet kernelPatterns;

  LogicalResult initialize(MLIRContext *context) override {
    if (!fold)
      return success();
    // The dialects of the code kernel bodies hold besides fbl's own ops.
    static constexpr StringLiteral kBodyDialects[] = {"arith", "math", "memref",
                                                      "scf", "vector"};
    RewritePatternSet patterns(context);
    for (StringRef ns : kBodyDialects)
      if (Dialect *dialect = context->getLoadedDialect(ns))
        dialect->getCanonicalizationPatterns(patterns);
    for (RegisteredOperationName op : context->getRegisteredOperations())
      if (llvm::is_contained(kBodyDialects, op.getDialectNamespace()))
        op.getCanonicalizationPatterns(patterns, context);
    kernelPatterns = FrozenRewritePatternSet(std::move(patterns));
    return success();
  }

  /// Canonicalizes and CSEs the kernel bodies built between `before` and
  /// `next`, as the options say.
  void clean(Block &body, Operation *before, Operation *next) {
    if (!fold && !cse)
      return;
    // Bodies are one block whose ops hold one-block regions.
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    IRRewriter rewriter(&getContext());
    DominanceInfo dominance;
    for (Operation &created : createdBetween(body, before, next)) {
      auto dispatch = dyn_cast<DispatchOp>(created);
      if (!dispatch)
        continue;
      if (fold)
        for (Region &region : dispatch->getRegions())
          (void)applyPatternsGreedily(region, kernelPatterns, config);
      if (cse)
        eliminateCommonSubExpressions(rewriter, dominance, dispatch);
    }
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TargetAttr targetAttr = TargetAttr::lookupOrEmitError(module);
    if (!targetAttr)
      return signalPassFailure();
    // Only laid-out functions are lowered. The kernels index each operand by
    // loop ids: refuse any other map before lowering anything.
    SmallVector<func::FuncOp> funcs;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() &&
          llvm::any_of(func.getArgumentTypes(),
                       [](Type t) { return getLayoutEncoding(t) != nullptr; }))
        funcs.push_back(func);
    for (func::FuncOp func : funcs)
      if (failed(verifyProjectedPermutationMaps(func, "fbl-lower-to-kernels",
                                                "lower")))
        return signalPassFailure();
    FailureOr<GemmEpilogueKinds> epilogueKinds = GemmEpilogueKinds::fromOption(
        gemmEpilogues, module, "fbl-lower-to-kernels");
    if (failed(epilogueKinds))
      return signalPassFailure();
    unsigned counter = 0;
    OpCostModel costs(targetAttr);
    for (func::FuncOp func : funcs) {
      recordInputRanges(func);
      splitAbsorbedFillUses(func.getBody().front());
      SmallVector<Operation *> work;
      // GEMMs whose kernels compute their consumer too; the ops kernels of
      // others compute (those consumers, the members of sums of inserts).
      llvm::DenseMap<Operation *, Operation *> epilogues;
      llvm::DenseSet<Operation *> fused;
      // Sums of inserts, matched before lowering changes their zero fills;
      // their kernels compute their inner adds, their inserts and the zero
      // fills only those inserts read.
      llvm::DenseMap<Operation *, InsertSum> sums;
      for (Operation &op : func.getBody().front())
        if (std::optional<InsertSum> sum =
                matchInsertSum(&op, *epilogueKinds)) {
          fused.insert(sum->members.begin(), sum->members.end());
          sums[&op] = std::move(*sum);
        }
      // Copies the kernels of their readers read through (im2col's padding
      // and window slices): no kernel of their own.
      ReadThrough through(func.getBody().front());
      // Zeros only such inserts read (as their destination) are never
      // written.
      for (Operation &zeros : func.getBody().front())
        if (isa<linalg::FillOp, arith::ConstantOp>(zeros) &&
            !zeros.use_empty() &&
            llvm::all_of(zeros.getUses(), [&](OpOperand &use) {
              auto insert = dyn_cast<tensor::InsertSliceOp>(use.getOwner());
              return insert &&
                     (fused.contains(insert) || through.contains(insert)) &&
                     &use == &insert.getDestMutable();
            }))
          fused.insert(&zeros);
      for (Operation &op : func.getBody().front()) {
        if (isAbsorbedFill(&op) || fused.contains(&op) ||
            isChainedInsert(&op) || through.contains(&op))
          continue; // Kernels of other ops compute them.
        if (isa<linalg::LinalgOp, RelayoutOp, scf::ForOp,
                tensor::ExtractSliceOp, tensor::InsertSliceOp,
                tensor::InsertOp>(op) ||
            (isa<arith::ConstantOp>(op) &&
             getLayoutEncoding(op.getResult(0).getType())))
          work.push_back(&op);
        if (auto linalgOp = dyn_cast<linalg::LinalgOp>(&op))
          if (std::optional<GemmMatch> g = matchGemm(linalgOp))
            if (std::optional<GemmEpilogue> e =
                    matchGemmEpilogue(linalgOp, *g, *epilogueKinds)) {
              epilogues[&op] = e->op;
              fused.insert(e->op);
            }
      }
      Block &body = func.getBody().front();
      if (rows) {
        // Row groups (a softmax, its backward) run as one kernel each; their
        // members are not lowered on their own.
        auto unavailable = [&](Operation *op) {
          auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
          return fused.contains(op) || through.contains(op) || sums.count(op) ||
                 (linalgOp && matchGemm(linalgOp));
        };
        auto unreadable = [&](Value v) {
          return through.contains(v.getDefiningOp());
        };
        SmallVector<RowGroup> groups =
            matchRowGroups(body, unavailable, unreadable, rowPairs);
        llvm::DenseSet<Operation *> grouped;
        for (const RowGroup &group : groups)
          for (linalg::LinalgOp member : group.members)
            grouped.insert(member);
        llvm::erase_if(work,
                       [&](Operation *op) { return grouped.contains(op); });
        for (const RowGroup &group : groups) {
          ::fbl::cost::KernelCost estimate = costs.rowKernelCost(group);
          FailureOr<DispatchOp> dispatch =
              lowerRowGroup(group, targetAttr, counter);
          if (failed(dispatch))
            return signalPassFailure();
          (*dispatch)->setAttr(FBLDialect::getEstimateAttrName(),
                               estimateAttr(dispatch->getContext(), estimate));
          clean(body, (*dispatch)->getPrevNode(), (*dispatch)->getNextNode());
        }
        // The members, once every group that computes them is a kernel.
        for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
          if (grouped.contains(&op) && op.use_empty())
            op.erase();
        // What only the members read may be dead now: a zero fill that
        // reaches their reductions' inits through a relayout (a row kernel
        // starts from the fill's constant, initConstant) needs no kernel of
        // its own, nor does the relayout.
        llvm::DenseSet<Operation *> dead;
        for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
          if ((isa<linalg::FillOp>(op) || movesElementsOnly(&op)) &&
              !fused.contains(&op) && !through.contains(&op) &&
              !sums.count(&op) && !epilogues.count(&op) &&
              isOpTriviallyDead(&op)) {
            dead.insert(&op);
            op.erase();
          }
        llvm::erase_if(work, [&](Operation *op) { return dead.contains(op); });
      }
      RepeatedKernels repeated(work, epilogues);
      for (Operation *op : work) {
        LoweredUnit unit{op, epilogues.lookup(op)};
        // The kernels of an insert chain, of a sum of inserts and of copies
        // reading through others read the sources of the whole chain, sum or
        // copies, not only the op's operands: they are lowered, never
        // copied.
        auto insert = dyn_cast<tensor::InsertSliceOp>(op);
        auto sum = sums.find(op);
        bool chain = (insert && insertChainOf(insert).size() > 1) ||
                     sum != sums.end() ||
                     llvm::any_of(op->getOperands(), [&](Value v) {
                       return through.contains(v.getDefiningOp());
                     });
        if (Operation *original = repeated.original(op); original && !chain)
          if (repeated.copy(unit, original, counter))
            continue;
        SmallVector<Value> operands = unit.operands();
        SmallVector<OpOperand *> uses;
        for (Value r : unit.results())
          uses.push_back(unit.outsideUse(r));
        Operation *before = op->getPrevNode();
        // The cost model's estimate of the kernel, asked before the op is
        // gone, goes on the dispatch that replaces it.
        ::fbl::cost::KernelCost estimate =
            estimateOf(unit, costs, *epilogueKinds);
        Operation *next = op->getNextNode();
        if (next == unit.epilogue)
          next = next->getNextNode();
        if (failed(lowerOp(op, through, targetAttr, counter,
                           sum != sums.end() ? &sum->second : nullptr,
                           *epilogueKinds)))
          return signalPassFailure();
        if (auto dispatch = dyn_cast_or_null<DispatchOp>(next->getPrevNode()))
          dispatch->setAttr(FBLDialect::getEstimateAttrName(),
                            estimateAttr(dispatch.getContext(), estimate));
        clean(body, before, next);
        if (!chain)
          repeated.record(op, operands, uses, &body, before, next);
      }
      // Assertions became input ranges the runtime checks on the host
      // (recordInputRanges); kernels do not evaluate them.
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
