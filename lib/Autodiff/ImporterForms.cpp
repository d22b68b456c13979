//===- ImporterForms.cpp - Forms importers emit, made differentiable ------===//

#include "fbl/Autodiff/ImporterForms.h"
#include "fbl/Autodiff/IndexMaps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

void mlir::fbl::normalizeImporterForms(func::FuncOp func) {
  MLIRContext *ctx = func.getContext();
  RewritePatternSet patterns(ctx);
  tensor::populateDecomposeTensorConcatPatterns(patterns);
  math::populateExpansionPatterns(patterns, {"fpowi"});
  // The greedy driver folds arith.truncf/extf of constants on its own.
  GreedyRewriteConfig config;
  config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  (void)applyPatternsGreedily(func, std::move(patterns), config);
  (void)normalizeUnitDimIndexMaps(func);
}
