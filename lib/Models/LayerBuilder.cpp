//===- LayerBuilder.cpp - Ops every model builder writes ------------------===//

#include "LayerBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace fbl::models;

std::string fbl::models::formatInit(llvm::StringRef kind, double value) {
  return llvm::formatv("{0}:{1}", kind, llvm::format("%.9g", value)).str();
}

Value LayerBuilder::f32Const(OpBuilder &ob, double v) {
  return arith::ConstantOp::create(ob, loc, ob.getF32FloatAttr(v));
}

Value LayerBuilder::empty(ArrayRef<int64_t> shape, Type element) {
  return tensor::EmptyOp::create(b, loc, shape, element ? element : f32);
}

Value LayerBuilder::filled(ArrayRef<int64_t> shape, double v) {
  return linalg::FillOp::create(b, loc, ValueRange{f32Const(b, v)},
                                ValueRange{empty(shape)})
      .getResult(0);
}

Value LayerBuilder::generic(Type result, ValueRange ins, Value init,
                            ArrayRef<AffineMap> maps,
                            ArrayRef<utils::IteratorType> iterators,
                            BodyFn body) {
  return linalg::GenericOp::create(
             b, loc, TypeRange{result}, ins, ValueRange{init}, maps, iterators,
             [&](OpBuilder &nb, Location, ValueRange args) {
               linalg::YieldOp::create(nb, loc, body(nb, args));
             })
      .getResult(0);
}

Value LayerBuilder::elementwise(ValueRange ins, BodyFn body) {
  auto type = cast<RankedTensorType>(ins[0].getType());
  unsigned rank = type.getRank();
  SmallVector<AffineMap> maps(ins.size() + 1, identity(rank));
  return generic(type, ins, empty(type.getShape()), maps, parallel(rank), body);
}

Value LayerBuilder::embedding(Value ids, Value table, double scale) {
  // ids [B, S] -> [N]; a gather generic reading the table row by id.
  Value flat = tensor::CollapseShapeOp::create(
      b, loc, ids, ArrayRef<ReassociationIndices>{{0, 1}});
  int64_t h = cast<RankedTensorType>(table.getType()).getDimSize(1);
  int64_t tokens = cast<RankedTensorType>(flat.getType()).getDimSize(0);
  AffineExpr n = b.getAffineDimExpr(0);
  return generic(tensor({tokens, h}), ValueRange{flat}, empty({tokens, h}),
                 {map(2, {n}), identity(2)}, parallel(2),
                 [&](OpBuilder &nb, ValueRange args) -> Value {
                   Value row = arith::IndexCastOp::create(
                       nb, loc, nb.getIndexType(), args[0]);
                   Value col = linalg::IndexOp::create(nb, loc, 1);
                   Value v = tensor::ExtractOp::create(nb, loc, table,
                                                       ValueRange{row, col});
                   if (scale != 1.0)
                     v = arith::MulFOp::create(nb, loc, v, f32Const(nb, scale));
                   return v;
                 });
}

Value LayerBuilder::linear(Value x, Value weight, Value bias) {
  // torch-mlir's aten.linear: transpose the [out, in] weight, matmul.
  auto wType = cast<RankedTensorType>(weight.getType());
  int64_t out = wType.getDimSize(0), in = wType.getDimSize(1);
  int64_t rows = cast<RankedTensorType>(x.getType()).getDimSize(0);
  Value wt = linalg::TransposeOp::create(b, loc, weight, empty({in, out}),
                                         ArrayRef<int64_t>{1, 0})
                 .getResult()[0];
  Value y = linalg::MatmulOp::create(b, loc, ValueRange{x, wt},
                                     ValueRange{filled({rows, out}, 0.0)})
                .getResult(0);
  if (!bias)
    return y;
  AffineExpr o = b.getAffineDimExpr(1);
  return generic(tensor({rows, out}), ValueRange{y, bias}, empty({rows, out}),
                 {identity(2), map(2, {o}), identity(2)}, parallel(2),
                 [&](OpBuilder &nb, ValueRange a) -> Value {
                   return arith::AddFOp::create(nb, loc, a[0], a[1]);
                 });
}

Value LayerBuilder::activation(OpBuilder &ob, Value g, Activation kind) {
  switch (kind) {
  case Activation::SiLU: {
    // g * sigmoid(g)
    Value e = math::ExpOp::create(ob, loc, arith::NegFOp::create(ob, loc, g));
    Value den = arith::AddFOp::create(ob, loc, f32Const(ob, 1.0), e);
    return arith::DivFOp::create(ob, loc, g, den);
  }
  case Activation::GeluTanh: {
    // 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3)))
    Value g3 =
        arith::MulFOp::create(ob, loc, g, arith::MulFOp::create(ob, loc, g, g));
    Value inner = arith::AddFOp::create(
        ob, loc, g, arith::MulFOp::create(ob, loc, g3, f32Const(ob, 0.044715)));
    Value t = math::TanhOp::create(
        ob, loc,
        arith::MulFOp::create(ob, loc, inner,
                              f32Const(ob, std::sqrt(2.0 / M_PI))));
    Value onePlus = arith::AddFOp::create(ob, loc, f32Const(ob, 1.0), t);
    Value half = arith::MulFOp::create(ob, loc, g, f32Const(ob, 0.5));
    return arith::MulFOp::create(ob, loc, half, onePlus);
  }
  case Activation::GeluErf: {
    // 0.5 g (1 + erf(g / sqrt(2)))
    Value e = math::ErfOp::create(
        ob, loc, arith::MulFOp::create(ob, loc, g, f32Const(ob, M_SQRT1_2)));
    Value onePlus = arith::AddFOp::create(ob, loc, f32Const(ob, 1.0), e);
    Value half = arith::MulFOp::create(ob, loc, g, f32Const(ob, 0.5));
    return arith::MulFOp::create(ob, loc, half, onePlus);
  }
  }
  llvm_unreachable("activation");
}

Value LayerBuilder::padded(Value x, ArrayRef<int64_t> low,
                           ArrayRef<int64_t> high) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape;
  for (auto [d, l, h] : llvm::zip_equal(type.getShape(), low, high))
    shape.push_back(d + l + h);
  auto pad = tensor::PadOp::create(b, loc, tensor(shape), x, low, high,
                                   ValueRange{}, ValueRange{});
  OpBuilder::InsertionGuard guard(b);
  Region &region = pad.getRegion();
  Block *block = b.createBlock(
      &region, region.end(), SmallVector<Type>(shape.size(), b.getIndexType()),
      SmallVector<Location>(shape.size(), loc));
  b.setInsertionPointToStart(block);
  tensor::YieldOp::create(b, loc, f32Const(b, 0.0));
  return pad.getResult();
}

Value LayerBuilder::layerNorm(Value x, Value weight, Value bias, double eps) {
  // mean = x.mean(-1, keepdim=True); var = ((x - mean)^2).mean(-1,
  // keepdim=True); (x - mean) * rsqrt(var + eps) * w + b, as
  // torch.nn.functional.layer_norm decomposes.
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rows = type.getDimSize(0), h = type.getDimSize(1);
  AffineExpr n = b.getAffineDimExpr(0), d = b.getAffineDimExpr(1);
  AffineExpr zero = b.getAffineConstantExpr(0);
  AffineMap rowKeep = map(2, {n, zero});
  SmallVector<utils::IteratorType> rowReduce = {utils::IteratorType::parallel,
                                                utils::IteratorType::reduction};
  double invH = 1.0 / double(h);
  Value sum = generic(tensor({rows, 1}), ValueRange{x}, filled({rows, 1}, 0.0),
                      {identity(2), rowKeep}, rowReduce,
                      [&](OpBuilder &nb, ValueRange a) -> Value {
                        return arith::AddFOp::create(nb, loc, a[1], a[0]);
                      });
  Value mean =
      generic(tensor({rows, 1}), ValueRange{sum}, empty({rows, 1}),
              {identity(2), identity(2)}, parallel(2),
              [&](OpBuilder &nb, ValueRange a) -> Value {
                return arith::MulFOp::create(nb, loc, a[0], f32Const(nb, invH));
              });
  Value centered =
      generic(tensor({rows, h}), ValueRange{x, mean}, empty({rows, h}),
              {identity(2), rowKeep, identity(2)}, parallel(2),
              [&](OpBuilder &nb, ValueRange a) -> Value {
                return arith::SubFOp::create(nb, loc, a[0], a[1]);
              });
  Value sumsq = generic(tensor({rows, 1}), ValueRange{centered},
                        filled({rows, 1}, 0.0), {identity(2), rowKeep},
                        rowReduce, [&](OpBuilder &nb, ValueRange a) -> Value {
                          Value sq = arith::MulFOp::create(nb, loc, a[0], a[0]);
                          return arith::AddFOp::create(nb, loc, a[1], sq);
                        });
  return generic(
      tensor({rows, h}), ValueRange{centered, sumsq, weight, bias},
      empty({rows, h}),
      {identity(2), rowKeep, map(2, {d}), map(2, {d}), identity(2)},
      parallel(2), [&](OpBuilder &nb, ValueRange a) -> Value {
        Value var = arith::MulFOp::create(nb, loc, a[1], f32Const(nb, invH));
        Value r = math::RsqrtOp::create(
            nb, loc, arith::AddFOp::create(nb, loc, var, f32Const(nb, eps)));
        Value normed = arith::MulFOp::create(nb, loc, a[0], r);
        return arith::AddFOp::create(
            nb, loc, arith::MulFOp::create(nb, loc, normed, a[2]), a[3]);
      });
}

Value LayerBuilder::crossEntropy(Value lg, Value lb) {
  int64_t m = cast<RankedTensorType>(lg.getType()).getDimSize(0);
  AffineExpr r = b.getAffineDimExpr(0), zeroE = b.getAffineConstantExpr(0);
  AffineMap rowKeep = map(2, {r, zeroE}), row = map(2, {r});
  SmallVector<utils::IteratorType> rowReduce = {utils::IteratorType::parallel,
                                                utils::IteratorType::reduction};
  double lowest = -std::numeric_limits<float>::max();
  // max over the vocabulary (keepdim), then sum of exp(l - max) (keepdim).
  Value maxInit = filled({m, 1}, lowest);
  Value mx =
      generic(tensor({m, 1}), ValueRange{lg}, maxInit, {identity(2), rowKeep},
              rowReduce, [&](OpBuilder &nb, ValueRange a) -> Value {
                return arith::MaximumFOp::create(nb, loc, a[1], a[0]);
              });
  Value sumExp =
      generic(tensor({m, 1}), ValueRange{lg, mx}, filled({m, 1}, 0.0),
              {identity(2), rowKeep, rowKeep}, rowReduce,
              [&](OpBuilder &nb, ValueRange a) -> Value {
                Value e = math::ExpOp::create(
                    nb, loc, arith::SubFOp::create(nb, loc, a[0], a[1]));
                return arith::AddFOp::create(nb, loc, a[2], e);
              });
  // The target's logit, picked by comparing the column with the label.
  Value picked = generic(
      tensor({m, 1}), ValueRange{lg, lb}, filled({m, 1}, 0.0),
      {identity(2), row, rowKeep}, rowReduce,
      [&](OpBuilder &nb, ValueRange a) -> Value {
        Value col = arith::IndexCastOp::create(
            nb, loc, nb.getI64Type(), linalg::IndexOp::create(nb, loc, 1));
        Value hit =
            arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::eq, col, a[1]);
        Value v =
            arith::SelectOp::create(nb, loc, hit, a[0], f32Const(nb, 0.0));
        return arith::AddFOp::create(nb, loc, a[2], v);
      });
  auto isCounted = [&](OpBuilder &nb, Value label) -> Value {
    Value ignore =
        arith::ConstantOp::create(nb, loc, nb.getI64IntegerAttr(kIgnoreIndex));
    return arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ne, label,
                                 ignore);
  };
  // Number of counted labels, then the mean of their token losses.
  AffineMap toScalar1 = map(1, {});
  Value count = generic(
      tensor({}), ValueRange{lb}, filled({}, 0.0), {map(1, {r}), toScalar1},
      {utils::IteratorType::reduction},
      [&](OpBuilder &nb, ValueRange a) -> Value {
        Value w = arith::SelectOp::create(nb, loc, isCounted(nb, a[0]),
                                          f32Const(nb, 1.0), f32Const(nb, 0.0));
        return arith::AddFOp::create(nb, loc, a[1], w);
      });
  AffineMap keep1 = map(1, {r, zeroE});
  return generic(
      tensor({}), ValueRange{mx, sumExp, picked, lb, count}, filled({}, 0.0),
      {keep1, keep1, keep1, map(1, {r}), toScalar1, toScalar1},
      {utils::IteratorType::reduction},
      [&](OpBuilder &nb, ValueRange a) -> Value {
        Value lse = arith::AddFOp::create(nb, loc, a[0],
                                          math::LogOp::create(nb, loc, a[1]));
        Value nll = arith::SubFOp::create(nb, loc, lse, a[2]);
        Value mean = arith::DivFOp::create(nb, loc, nll, a[4]);
        Value v = arith::SelectOp::create(nb, loc, isCounted(nb, a[3]), mean,
                                          f32Const(nb, 0.0));
        return arith::AddFOp::create(nb, loc, a[5], v);
      });
}

Value LayerBuilder::splitHeads(Value x, int64_t heads) {
  // [B * S, heads * D] -> [B, S, heads, D] -> [B, heads, S, D]
  auto type = cast<RankedTensorType>(x.getType());
  int64_t len = type.getDimSize(0) / batch, hd = type.getDimSize(1) / heads;
  Value x4 = tensor::ExpandShapeOp::create(
      b, loc, tensor({batch, len, heads, hd}), x,
      ArrayRef<ReassociationIndices>{{0, 1}, {2, 3}});
  return linalg::TransposeOp::create(b, loc, x4, empty({batch, heads, len, hd}),
                                     ArrayRef<int64_t>{0, 2, 1, 3})
      .getResult()[0];
}

Value LayerBuilder::flattenHeads(Value x) {
  return tensor::CollapseShapeOp::create(
      b, loc, x, ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
}

Value LayerBuilder::attentionScores(Value q, Value k) {
  auto type = cast<RankedTensorType>(q.getType());
  int64_t bh = type.getDimSize(0), lq = type.getDimSize(1);
  int64_t lk = cast<RankedTensorType>(k.getType()).getDimSize(1);
  AffineExpr bd = b.getAffineDimExpr(0), m = b.getAffineDimExpr(1),
             n = b.getAffineDimExpr(2), kk = b.getAffineDimExpr(3);
  ArrayAttr maps = b.getAffineMapArrayAttr(
      {map(4, {bd, m, kk}), map(4, {bd, n, kk}), map(4, {bd, m, n})});
  return linalg::BatchMatmulOp::create(b, loc, ValueRange{q, k},
                                       ValueRange{filled({bh, lq, lk}, 0.0)},
                                       {b.getNamedAttr("indexing_maps", maps)})
      .getResult(0);
}

Value LayerBuilder::attentionOutput(Value scores, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  auto scoresType = cast<RankedTensorType>(scores.getType());
  int64_t bh = type.getDimSize(0), hd = type.getDimSize(2),
          lq = scoresType.getDimSize(1), lk = scoresType.getDimSize(2);
  Value probs = linalg::SoftmaxOp::create(b, loc, TypeRange{scoresType}, scores,
                                          empty({bh, lq, lk}), 2)
                    .getResult()[0];
  return linalg::BatchMatmulOp::create(b, loc, ValueRange{probs, v},
                                       ValueRange{filled({bh, lq, hd}, 0.0)})
      .getResult(0);
}

Value LayerBuilder::mergeHeads(Value o, int64_t heads) {
  // [B*H, S, D] -> [B, H, S, D] -> [B, S, H, D] -> [N, H*D].
  auto type = cast<RankedTensorType>(o.getType());
  int64_t len = type.getDimSize(1), hd = type.getDimSize(2);
  Value o4 = tensor::ExpandShapeOp::create(
      b, loc, tensor({batch, heads, len, hd}), o,
      ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
  Value ot =
      linalg::TransposeOp::create(b, loc, o4, empty({batch, len, heads, hd}),
                                  ArrayRef<int64_t>{0, 2, 1, 3})
          .getResult()[0];
  return tensor::CollapseShapeOp::create(
      b, loc, ot, ArrayRef<ReassociationIndices>{{0, 1}, {2, 3}});
}

Value LayerBuilder::add(Value x, Value y) {
  return elementwise(ValueRange{x, y},
                     [&](OpBuilder &nb, ValueRange a) -> Value {
                       return arith::AddFOp::create(nb, loc, a[0], a[1]);
                     });
}

Value LayerBuilder::leadingRows(Value table, int64_t n) {
  int64_t h = cast<RankedTensorType>(table.getType()).getDimSize(1);
  auto one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
  return tensor::ExtractSliceOp::create(
      b, loc, tensor({n, h}), table, ArrayRef<OpFoldResult>{zero, zero},
      ArrayRef<OpFoldResult>{b.getIndexAttr(n), b.getIndexAttr(h)},
      ArrayRef<OpFoldResult>{one, one});
}

Value LayerBuilder::addToEachSequence(Value x, Value rows) {
  auto type = cast<RankedTensorType>(x.getType());
  AffineExpr s = b.getAffineDimExpr(1), d = b.getAffineDimExpr(2);
  return generic(type, ValueRange{x, rows}, empty(type.getShape()),
                 {identity(3), map(3, {s, d}), identity(3)}, parallel(3),
                 [&](OpBuilder &nb, ValueRange a) -> Value {
                   return arith::AddFOp::create(nb, loc, a[0], a[1]);
                 });
}

Value LayerBuilder::firstToken(Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t len = type.getDimSize(0) / batch, h = type.getDimSize(1);
  Value x3 = tensor::ExpandShapeOp::create(
      b, loc, tensor({batch, len, h}), x,
      ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  auto one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
  return tensor::ExtractSliceOp::create(
      b, loc, tensor({batch, h}), x3, ArrayRef<OpFoldResult>{zero, zero, zero},
      ArrayRef<OpFoldResult>{b.getIndexAttr(batch), one, b.getIndexAttr(h)},
      ArrayRef<OpFoldResult>{one, one, one});
}
