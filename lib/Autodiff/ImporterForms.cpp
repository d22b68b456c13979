//===- ImporterForms.cpp - Forms importers emit, made differentiable ------===//

#include "fbl/Autodiff/ImporterForms.h"
#include "fbl/Autodiff/IndexMaps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace {
/// arith.truncf of a float constant -> the constant rounded to the narrower
/// type (upstream folds only exact truncations; an f64 epsilon is not).
struct FoldTruncatedConstant : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    FloatAttr value;
    if (!matchPattern(op.getIn(), m_Constant(&value)))
      return failure();
    auto type = dyn_cast<FloatType>(op.getType());
    if (!type)
      return failure();
    bool lostInfo = false;
    APFloat rounded = value.getValue();
    rounded.convert(type.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                    &lostInfo);
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, type, rewriter.getFloatAttr(type, rounded));
    return success();
  }
};
} // namespace

void mlir::fbl::normalizeImporterForms(func::FuncOp func) {
  MLIRContext *ctx = func.getContext();
  RewritePatternSet patterns(ctx);
  tensor::populateDecomposeTensorConcatPatterns(patterns);
  math::populateExpansionPatterns(patterns, {"fpowi"});
  patterns.add<FoldTruncatedConstant>(ctx);
  // The greedy driver folds arith.truncf/extf of constants on its own.
  GreedyRewriteConfig config;
  config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  (void)applyPatternsGreedily(func, std::move(patterns), config);
  (void)normalizeUnitDimIndexMaps(func);
}
