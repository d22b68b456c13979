//===- ImporterForms.cpp - Forms importers emit, made differentiable ------===//

#include "fbl/Autodiff/ImporterForms.h"
#include "fbl/Autodiff/IndexMaps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
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

/// affine.apply (an index computed in a body, such as `n floordiv 2` to read
/// ids) -> the arith ops it stands for (upstream's expansion), which the
/// gradient rules copy and the kernels print.
struct ExpandAffineApply : OpRewritePattern<affine::AffineApplyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(affine::AffineApplyOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<SmallVector<Value, 8>> expanded = affine::expandAffineMap(
        rewriter, op.getLoc(), op.getAffineMap(), op.getOperands());
    if (!expanded)
      return failure();
    rewriter.replaceOp(op, *expanded);
    return success();
  }
};
} // namespace

void mlir::fbl::normalizeImporterForms(func::FuncOp func) {
  MLIRContext *ctx = func.getContext();
  RewritePatternSet patterns(ctx);
  tensor::populateDecomposeTensorConcatPatterns(patterns);
  linalg::populateDecomposePadPatterns(patterns);
  math::populateExpansionPatterns(patterns, {"fpowi"});
  patterns.add<FoldTruncatedConstant, ExpandAffineApply>(ctx);
  populateDecomposeAttentionPatterns(patterns);
  populateDecomposeConvolutionPatterns(patterns);
  arith::populateCeilFloorDivExpandOpsPatterns(patterns);
  // The greedy driver folds arith.truncf/extf of constants on its own.
  GreedyRewriteConfig config;
  config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  (void)applyPatternsGreedily(func, std::move(patterns), config);
  (void)normalizeUnitDimIndexMaps(func);
}
