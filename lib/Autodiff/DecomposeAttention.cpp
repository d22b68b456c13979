//===- DecomposeAttention.cpp - tm_tensor.attention into linalg -----------===//
//
// torch-mlir lowers aten.scaled_dot_product_attention to tm_tensor.attention.
// This rewrites it into the linalg ops fbl differentiates and lays out:
// batch dims collapsed into one, scores = Q·Kᵀ as a batch matmul reading K
// transposed, divided by sqrt(D), the mask added (an i1 mask as 0 / -inf),
// a row softmax as generics (max, exp, sum, divide; a row masked out whole
// gives zeros, as torch-mlir defines it), then P·V. The op is matched by
// name, so torch-mlir's own dialect works as well as fbl's.
//
//===----------------------------------------------------------------------===//

#include "fbl/Autodiff/ImporterForms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace {

struct DecomposeAttention : RewritePattern {
  DecomposeAttention(MLIRContext *ctx)
      : RewritePattern("tm_tensor.attention", /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    // ins(q, k, v[, mask]) outs(init): the output is the last operand.
    if (op->getNumResults() != 1 || op->getNumOperands() < 4 ||
        op->getNumOperands() > 5)
      return rewriter.notifyMatchFailure(op, "not ins(q, k, v[, m]) outs(o)");
    Value q = op->getOperand(0), k = op->getOperand(1), v = op->getOperand(2);
    Value mask = op->getNumOperands() == 5 ? op->getOperand(3) : Value();
    auto qt = dyn_cast<RankedTensorType>(q.getType());
    auto kt = dyn_cast<RankedTensorType>(k.getType());
    auto vt = dyn_cast<RankedTensorType>(v.getType());
    auto ot = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!qt || !kt || !vt || !ot || !qt.hasStaticShape() ||
        !kt.hasStaticShape() || !vt.hasStaticShape() || !ot.hasStaticShape() ||
        qt.getRank() < 2 || !qt.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "needs static f32 tensors");

    Location loc = op->getLoc();
    int64_t rank = qt.getRank();
    Type f32 = rewriter.getF32Type();
    // [B..., N, D] -> [prod(B), N, D].
    auto toBatched = [&](Value t) -> Value {
      auto type = cast<RankedTensorType>(t.getType());
      if (rank == 3)
        return t;
      if (rank == 2)
        return tensor::ExpandShapeOp::create(
            rewriter, loc,
            RankedTensorType::get({1, type.getDimSize(0), type.getDimSize(1)},
                                  type.getElementType()),
            t, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
      ReassociationIndices lead;
      for (int64_t d = 0; d < rank - 2; ++d)
        lead.push_back(d);
      return tensor::CollapseShapeOp::create(
          rewriter, loc, t,
          ArrayRef<ReassociationIndices>{lead, {rank - 2}, {rank - 1}});
    };
    Value q3 = toBatched(q), k3 = toBatched(k), v3 = toBatched(v);
    auto shape3 = [](Value t) {
      return cast<RankedTensorType>(t.getType()).getShape();
    };
    int64_t batch = shape3(q3)[0], nq = shape3(q3)[1], d = shape3(q3)[2];
    int64_t nk = shape3(k3)[1], dv = shape3(v3)[2];

    auto constant = [&](OpBuilder &b, double x) -> Value {
      return arith::ConstantOp::create(b, loc, f32, b.getF32FloatAttr(x));
    };
    auto filled = [&](ArrayRef<int64_t> shape, double x) -> Value {
      Value e = tensor::EmptyOp::create(rewriter, loc, shape, f32);
      return linalg::FillOp::create(rewriter, loc, constant(rewriter, x), e)
          .getResult(0);
    };
    auto map = [&](unsigned dims, ArrayRef<unsigned> results) {
      SmallVector<AffineExpr> exprs;
      for (unsigned r : results)
        exprs.push_back(rewriter.getAffineDimExpr(r));
      return AffineMap::get(dims, 0, exprs, rewriter.getContext());
    };
    using Body = function_ref<Value(OpBuilder &, ValueRange)>;
    // A generic over [batch, nq, nk] (or its rows) with the given maps.
    auto generic = [&](ValueRange ins, ArrayRef<AffineMap> maps, Value init,
                       bool reduceLast, Body body) -> Value {
      SmallVector<utils::IteratorType> iters(3, utils::IteratorType::parallel);
      if (reduceLast)
        iters[2] = utils::IteratorType::reduction;
      return linalg::GenericOp::create(
                 rewriter, loc, init.getType(), ins, init, maps, iters,
                 [&](OpBuilder &b, Location, ValueRange args) {
                   linalg::YieldOp::create(b, loc, body(b, args));
                 })
          .getResult(0);
    };
    AffineMap all = map(3, {0, 1, 2}), rows = map(3, {0, 1});

    // scores = Q·Kᵀ / sqrt(D) (+ mask).
    ArrayAttr transposedB = rewriter.getAffineMapArrayAttr(
        {map(4, {0, 1, 3}), map(4, {0, 2, 3}), map(4, {0, 1, 2})});
    Value qk = linalg::BatchMatmulOp::create(
                   rewriter, loc, ValueRange{q3, k3},
                   ValueRange{filled({batch, nq, nk}, 0.0)},
                   {rewriter.getNamedAttr("indexing_maps", transposedB)})
                   .getResult(0);
    SmallVector<Value> scoreIns = {qk};
    SmallVector<AffineMap> scoreMaps = {all};
    if (mask) {
      scoreIns.push_back(toBatched(mask));
      scoreMaps.push_back(all);
    }
    scoreMaps.push_back(all);
    double sqrtD = std::sqrt(double(d));
    double inf = std::numeric_limits<double>::infinity();
    Value scores =
        generic(scoreIns, scoreMaps,
                tensor::EmptyOp::create(rewriter, loc, {batch, nq, nk}, f32),
                false, [&](OpBuilder &b, ValueRange a) -> Value {
                  Value s =
                      arith::DivFOp::create(b, loc, a[0], constant(b, sqrtD));
                  if (!mask)
                    return s;
                  Value m = a[1];
                  if (m.getType().isInteger(1))
                    m = arith::SelectOp::create(b, loc, m, constant(b, 0.0),
                                                constant(b, -inf));
                  return arith::AddFOp::create(b, loc, s, m);
                });

    // softmax over the last dim; a row with no finite score gives zeros.
    Value rowMax =
        generic(scores, {all, rows}, filled({batch, nq}, -inf), true,
                [&](OpBuilder &b, ValueRange a) -> Value {
                  return arith::MaximumFOp::create(b, loc, a[0], a[1]);
                });
    Value exps = generic(
        ValueRange{scores, rowMax}, {all, rows, all},
        tensor::EmptyOp::create(rewriter, loc, {batch, nq, nk}, f32), false,
        [&](OpBuilder &b, ValueRange a) -> Value {
          Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                             a[1], constant(b, -inf));
          Value shift =
              arith::SelectOp::create(b, loc, none, constant(b, 0.0), a[1]);
          return math::ExpOp::create(
              b, loc, arith::SubFOp::create(b, loc, a[0], shift));
        });
    Value sums = generic(exps, {all, rows}, filled({batch, nq}, 0.0), true,
                         [&](OpBuilder &b, ValueRange a) -> Value {
                           return arith::AddFOp::create(b, loc, a[0], a[1]);
                         });
    Value probs = generic(
        ValueRange{exps, sums}, {all, rows, all},
        tensor::EmptyOp::create(rewriter, loc, {batch, nq, nk}, f32), false,
        [&](OpBuilder &b, ValueRange a) -> Value {
          // A zero sum has zero terms: dividing them by 1 gives the zeros
          // without a 0/0 whose gradient would be nan.
          Value zero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                             a[1], constant(b, 0.0));
          Value divisor =
              arith::SelectOp::create(b, loc, zero, constant(b, 1.0), a[1]);
          return arith::DivFOp::create(b, loc, a[0], divisor);
        });

    // out = P·V, back to the batch dims.
    Value out =
        linalg::BatchMatmulOp::create(rewriter, loc, ValueRange{probs, v3},
                                      ValueRange{filled({batch, nq, dv}, 0.0)})
            .getResult(0);
    if (rank == 2)
      out = tensor::CollapseShapeOp::create(
          rewriter, loc, ot, out, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
    else if (rank > 3) {
      ReassociationIndices lead;
      for (int64_t i = 0; i < rank - 2; ++i)
        lead.push_back(i);
      out = tensor::ExpandShapeOp::create(
          rewriter, loc, ot, out,
          ArrayRef<ReassociationIndices>{lead, {rank - 2}, {rank - 1}});
    }
    rewriter.replaceOp(op, out);
    return success();
  }
};

} // namespace

void mlir::fbl::populateDecomposeAttentionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<DecomposeAttention>(patterns.getContext());
}
