//===- Autodiff.cpp - The fbl-autodiff pass -------------------------------===//
//
// Adds @<name>_grad (and @<name>_step with an optimizer) for every forward
// model of the module: a function returning a scalar tensor<f32> loss with
// fbl.param arguments. Functions that already have their _grad are skipped,
// so the pass can run on modules that hold the backward.
//
// Preparation: constant-0 indices into size-1 dims (keepdim reductions,
// broadcast reads) are folded into reshapes around projected-permutation
// generics in every function, so later passes never see them; forward models
// with any other non-projected-permutation map are refused before anything
// is built.
//
//===----------------------------------------------------------------------===//

#include "fbl/Autodiff/Autodiff.h"
#include "fbl/Autodiff/IndexMaps.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/IR/SymbolTable.h"

#include <cmath>
#include <cstdio>

namespace mlir::fbl {
#define GEN_PASS_DEF_FBLAUTODIFFPASS
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"
} // namespace mlir::fbl

using namespace mlir;
using namespace mlir::fbl;

namespace {
struct AutodiffPass
    : public mlir::fbl::impl::FBLAutodiffPassBase<AutodiffPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // A nan, infinite or negative hyperparameter compiles into a step that
    // silently destroys the parameters: refuse it here.
    auto badOption = [&](StringRef name, double v, bool ok) {
      if (std::isfinite(v) && ok)
        return false;
      char value[32];
      std::snprintf(value, sizeof(value), "%g", v);
      // Not module.emitError: that adds the whole module as a note.
      mlir::emitError(module.getLoc(), "fbl-autodiff: ")
          << name << "=" << value << " is not a valid value; " << name
          << " must be a finite number "
          << (name == "eps"              ? "> 0"
              : name.starts_with("beta") ? "in [0, 1)"
                                         : ">= 0");
      return true;
    };
    if (badOption("lr", learningRate, learningRate >= 0) ||
        badOption("beta1", beta1, beta1 >= 0 && beta1 < 1) ||
        badOption("beta2", beta2, beta2 >= 0 && beta2 < 1) ||
        badOption("eps", epsilon, epsilon > 0) ||
        badOption("weight-decay", weightDecay, weightDecay >= 0))
      return signalPassFailure();
    std::optional<OptimizerOptions> optimizerOptions;
    if (optimizer == "sgd" || optimizer == "adamw") {
      OptimizerOptions o;
      o.kind = optimizer == "sgd" ? OptimizerOptions::Kind::SGD
                                  : OptimizerOptions::Kind::AdamW;
      o.learningRate = learningRate;
      o.beta1 = beta1;
      o.beta2 = beta2;
      o.epsilon = epsilon;
      o.weightDecay = weightDecay;
      optimizerOptions = o;
    } else if (optimizer != "none") {
      module.emitError("fbl-autodiff: unknown optimizer '")
          << optimizer << "'; expected none, sgd or adamw";
      return signalPassFailure();
    }

    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        (void)normalizeUnitDimIndexMaps(func);

    SmallVector<func::FuncOp> forwards;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && returnsScalarLoss(func) &&
          !getParamArgs(func).empty() &&
          !SymbolTable::lookupSymbolIn(module,
                                       (func.getSymName() + "_grad").str()))
        forwards.push_back(func);
    for (func::FuncOp forward : forwards)
      if (failed(verifyProjectedPermutationMaps(forward, "fbl-autodiff",
                                                "differentiate")))
        return signalPassFailure();

    for (func::FuncOp forward : forwards) {
      SmallVector<unsigned> params = getParamArgs(forward);
      SmallVector<unsigned> selected;
      if (wrt.empty()) {
        selected = params;
      } else {
        for (unsigned i : wrt) {
          if (!llvm::is_contained(params, i)) {
            forward.emitError("fbl-autodiff: wrt names argument #")
                << i << ", which is not an fbl.param argument";
            return signalPassFailure();
          }
          selected.push_back(i);
        }
        llvm::sort(selected);
        selected.erase(llvm::unique(selected), selected.end());
      }
      FailureOr<func::FuncOp> grad = buildGradientFunction(forward, selected);
      if (failed(grad))
        return signalPassFailure();
      if (optimizerOptions &&
          failed(buildStepFunction(*grad, forward.getSymName(), selected,
                                   *optimizerOptions)))
        return signalPassFailure();
    }
  }
};
} // namespace
