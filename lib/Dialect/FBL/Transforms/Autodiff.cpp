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
#include "fbl/Autodiff/ImporterForms.h"
#include "fbl/Autodiff/IndexMaps.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>

namespace mlir::fbl {
#define GEN_PASS_DEF_FBLAUTODIFFPASS
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"
} // namespace mlir::fbl

using namespace mlir;
using namespace mlir::fbl;

/// Why `func` is not a trainable model, or "" when it is one.
static std::string whyNotTrainable(func::FuncOp func) {
  std::string why;
  llvm::raw_string_ostream os(why);
  ArrayRef<Type> results = func.getFunctionType().getResults();
  if (getParamArgs(func).empty())
    os << "it has no fbl.param argument";
  else if (results.size() != 1)
    os << "it returns " << results.size()
       << " results; a model returns one scalar tensor<f32> loss";
  else if (!returnsScalarLoss(func))
    os << "its result '" << results[0] << "' is not a scalar tensor<f32> loss";
  return why;
}

/// Refuses dynamic shapes: the backward allocates its adjoints with static
/// tensor.empty and would be invalid IR.
static LogicalResult verifyStaticShapes(func::FuncOp func) {
  auto isDynamic = [](Type t) {
    auto shaped = dyn_cast<ShapedType>(t);
    return shaped && (!shaped.hasRank() || !shaped.hasStaticShape());
  };
  for (auto [i, t] : llvm::enumerate(func.getArgumentTypes()))
    if (isDynamic(t))
      return func.emitError("fbl-autodiff: cannot differentiate @")
             << func.getSymName() << ": argument #" << i << " has type " << t
             << "; only static shapes are supported";
  WalkResult walk = func.walk([&](Operation *op) {
    for (Type t : op->getResultTypes())
      if (isDynamic(t)) {
        op->emitError("fbl-autodiff: cannot differentiate '")
            << op->getName() << "': its result has type " << t
            << "; only static shapes are supported";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// Refuses slices with a stride below 1: a zero stride reads one element
/// several times (its gradient would be their sum, where the gradient rule
/// inserts) or writes several into one place, and the slice kernels and
/// the cost model divide by the stride.
static LogicalResult verifySliceStrides(func::FuncOp func) {
  WalkResult walk = func.walk([&](OffsetSizeAndStrideOpInterface slice) {
    if (!isa<tensor::ExtractSliceOp, tensor::InsertSliceOp>(slice))
      return WalkResult::advance();
    for (auto [d, stride] : llvm::enumerate(slice.getStaticStrides()))
      if (!ShapedType::isDynamic(stride) && stride < 1) {
        slice->emitError("fbl-autodiff: cannot differentiate '")
            << slice->getName() << "': its stride along dim " << d << " is "
            << stride << "; only positive strides are supported";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

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
        normalizeImporterForms(func);

    // Every function that is not trained says why: a silent skip leaves the
    // user with fbl-translate asking for the pipeline they already ran.
    SmallVector<func::FuncOp> forwards;
    unsigned trainable = 0;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      // The backward of a model differentiated earlier.
      StringRef base = func.getSymName();
      if ((base.consume_back("_grad") || base.consume_back("_step")) &&
          SymbolTable::lookupSymbolIn(module, base))
        continue;
      std::string why = whyNotTrainable(func);
      if (!why.empty()) {
        func.emitWarning("fbl-autodiff: not compiling @")
            << func.getSymName() << ": " << why;
        continue;
      }
      ++trainable;
      if (!SymbolTable::lookupSymbolIn(module,
                                       (func.getSymName() + "_grad").str()))
        forwards.push_back(func);
    }
    // Alone, the pass leaves model-free modules as they are; the pipeline
    // has nothing to compile in them.
    if (trainable == 0 && requireModel) {
      mlir::emitError(module.getLoc(),
                      "fbl-autodiff: no function of the module can be "
                      "trained; a model takes fbl.param arguments and "
                      "returns one scalar tensor<f32> loss");
      return signalPassFailure();
    }
    for (func::FuncOp forward : forwards)
      if (failed(verifyStaticShapes(forward)) ||
          failed(verifySliceStrides(forward)) ||
          failed(verifyProjectedPermutationMaps(forward, "fbl-autodiff",
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
