//===- SelectLayouts.cpp - The fbl-select-layouts pass --------------------===//
//
// Runs layout selection (fbl/Analysis/LayoutSelection.h) on every training
// function and writes the plan into the IR: encodings on every tensor type,
// and one fbl.relayout per (value, layout) that some use reads differently.
// Empty and filled inits shared by several ops are split first, so each op's
// init can take the layout of its result.
//
//===----------------------------------------------------------------------===//

#include "fbl/Analysis/LayoutSelection.h"
#include "fbl/Analysis/OpClassification.h"
#include "fbl/Dialect/FBL/IR/FBLOps.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Threading.h"

namespace mlir::fbl {
#define GEN_PASS_DEF_FBLSELECTLAYOUTSPASS
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"
} // namespace mlir::fbl

using namespace mlir;
using namespace mlir::fbl;

/// True for functions with a backward pass.
static bool isTrainingFunction(func::FuncOp func) {
  FailureOr<OpClassification> classes = OpClassification::fromAttributes(func);
  if (failed(classes))
    return false;
  return llvm::any_of(classes->getOps(), [&](Operation *op) {
    return classes->lookup(op)->phase != Phase::Forward;
  });
}

/// Gives every op its own empty/filled init, so inits can follow results.
static void splitSharedInits(Block &block) {
  OpBuilder b(block.getParentOp()->getContext());
  for (Operation &op : block) {
    auto dps = dyn_cast<DestinationStyleOpInterface>(&op);
    if (!dps || isa<linalg::FillOp>(op))
      continue;
    for (OpOperand &init : dps.getDpsInitsMutable()) {
      Operation *def = init.get().getDefiningOp();
      auto fill = dyn_cast_or_null<linalg::FillOp>(def);
      Operation *empty =
          fill ? fill.getDpsInitOperand(0)->get().getDefiningOp() : def;
      if (!isa_and_nonnull<tensor::EmptyOp>(empty))
        continue;
      bool shared = !init.get().hasOneUse() ||
                    (fill && !fill.getDpsInitOperand(0)->get().hasOneUse());
      if (!shared)
        continue;
      b.setInsertionPoint(&op);
      Operation *newEmpty = b.clone(*empty);
      Value v = newEmpty->getResult(0);
      if (fill) {
        IRMapping map;
        map.map(fill.getDpsInitOperand(0)->get(), v);
        v = b.clone(*fill, map)->getResult(0);
      }
      init.set(v);
    }
  }
  // The shared originals may be dead now.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
    if (isa<tensor::EmptyOp, linalg::FillOp>(op) && op.use_empty())
      op.erase();
}

/// The scatter loops fbl-autodiff emits accumulate into buffers (selection
/// stores their inits and results there): so do their iteration arguments
/// and the tensors inside.
static void placeScatterLoopsInBuffers(Block &block) {
  Attribute buffer = BufferLayoutAttr::get(block.getParentOp()->getContext());
  for (Operation &op : block)
    if (auto loop = dyn_cast<scf::ForOp>(&op)) {
      loop.walk([&](Operation *inner) {
        for (Region &region : inner->getRegions())
          for (Block &b : region)
            for (BlockArgument arg : b.getArguments())
              if (isa<RankedTensorType>(arg.getType()))
                arg.setType(withEncoding(cast<RankedTensorType>(arg.getType()),
                                         buffer));
        if (inner != loop.getOperation())
          for (Value r : inner->getResults())
            if (auto t = dyn_cast<RankedTensorType>(r.getType()))
              if (isa<tensor::InsertOp, scf::ForOp>(inner))
                r.setType(withEncoding(t, buffer));
      });
    }
}

namespace {
struct SelectLayoutsPass
    : public mlir::fbl::impl::FBLSelectLayoutsPassBase<SelectLayoutsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<LayoutPolicy> parsed = parseLayoutPolicy(policy);
    if (!parsed) {
      mlir::emitError(module.getLoc(), "fbl-select-layouts: unknown policy '")
          << policy
          << "'; expected fblayout, reuse-forward or "
             "explicit-transpose";
      return signalPassFailure();
    }
    TargetAttr targetAttr = TargetAttr::lookupOrEmitError(module);
    if (!targetAttr)
      return signalPassFailure();
    OpCostModel costs(targetAttr);

    SmallVector<func::FuncOp> functions;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && isTrainingFunction(func))
        functions.push_back(func);
    // Functions are laid out independently (in parallel when the context
    // allows threads), sharing the cost model's answers; diagnostics come
    // out in function order.
    ParallelDiagnosticHandler diagnostics(&getContext());
    LogicalResult result = failableParallelForEachN(
        &getContext(), 0, functions.size(), [&](size_t i) {
          diagnostics.setOrderIDForThread(i);
          func::FuncOp func = functions[i];
          splitSharedInits(func.getBody().front());
          FailureOr<LayoutPlan> plan = selectLayouts(func, *parsed, costs);
          LogicalResult done =
              succeeded(plan) ? apply(func, *plan) : LogicalResult(failure());
          diagnostics.eraseOrderIDForThread();
          return done;
        });
    if (failed(result))
      signalPassFailure();
  }

  LogicalResult apply(func::FuncOp func, LayoutPlan &plan) {
    Block &block = func.getBody().front();
    placeScatterLoopsInBuffers(block);
    // Relayouts are created from the stored layouts, before types change.
    llvm::DenseMap<std::pair<Value, Attribute>, Value> relayouts;
    OpBuilder b(func.getContext());
    // Uses in IR order, not the map's (pointer) order: the relayouts and
    // everything after them come out the same on every run.
    SmallVector<std::pair<OpOperand *, Attribute>> reads;
    func.walk([&](Operation *op) {
      for (OpOperand &use : op->getOpOperands())
        if (Attribute read = plan.readLayout.lookup(&use))
          reads.emplace_back(&use, read);
    });
    for (auto &[use, read] : reads) {
      Value v = use->get();
      Attribute stored = plan.valueLayout.lookup(v);
      if (!read || read == stored)
        continue;
      Value &r = relayouts[{v, read}];
      if (!r) {
        if (auto arg = dyn_cast<BlockArgument>(v))
          b.setInsertionPointToStart(&block);
        else
          b.setInsertionPointAfter(v.getDefiningOp());
        auto type = cast<RankedTensorType>(v.getType());
        r = RelayoutOp::create(b, v.getLoc(), withEncoding(type, read), v);
      }
      use->set(r);
    }
    for (auto &[v, a] : plan.valueLayout)
      if (failed(setTensorEncoding(v, a)))
        return v.getDefiningOp()->emitOpError(
            "fbl-select-layouts: the data of this constant tensor is not in "
            "the module (an elided dense_resource); give its values or pass "
            "it as an input");
    auto ret = cast<func::ReturnOp>(block.getTerminator());
    func.setFunctionType(FunctionType::get(
        func.getContext(), block.getArgumentTypes(), ret.getOperandTypes()));
    return success();
  }
};
} // namespace
