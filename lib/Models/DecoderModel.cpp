//===- DecoderModel.cpp - Forward training models of decoder LLMs ---------===//
//
// LLaMA, Qwen2 and Gemma share one skeleton; the config's fields select the
// differences (q/k/v biases, (1 + w) norms, GeGLU, scaled and tied
// embeddings, LLaMA-3 RoPE scaling). Every op is written the way torch-mlir
// writes the corresponding PyTorch code, so a built model and an imported
// one take the same path through fbl.
//
//===----------------------------------------------------------------------===//

#include "LayerBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace fbl::models;

namespace {

/// Hugging Face names of one decoder layer's tensors.
std::string layerName(int64_t layer, llvm::StringRef rest) {
  return llvm::formatv("model.layers.{0}.{1}", layer, rest).str();
}

/// Emits a decoder's ops; one method per PyTorch module.
class DecoderBuilder : public LayerBuilder {
public:
  using LayerBuilder::LayerBuilder;

  /// Emits the body of `func`, whose arguments follow modelInputs() and
  /// decoderParameters().
  void build(func::FuncOp func);

private:
  Value rmsNorm(Value x, Value weight);
  std::pair<Value, Value> rotaryTables();
  Value applyRotary(Value x, Value cos, Value sin);
  Value repeatKeyValue(Value x);
  Value attention(Value x, ArrayRef<Value> p, Value cos, Value sin);
  Value mlp(Value x, ArrayRef<Value> p);
  Value shiftedCrossEntropy(Value logits, Value labels);
};

Value DecoderBuilder::rmsNorm(Value x, Value weight) {
  // variance = x.pow(2).mean(-1, keepdim=True); x * rsqrt(variance + eps) * w
  // (Gemma: * (1 + w)), the keepdim reduction written as importers do.
  int64_t h = c.hiddenSize;
  AffineExpr n = b.getAffineDimExpr(0), d = b.getAffineDimExpr(1);
  AffineExpr zero = b.getAffineConstantExpr(0);
  Value sumsq =
      generic(tensor({tokens, 1}), ValueRange{x}, filled({tokens, 1}, 0.0),
              {identity(2), map(2, {n, zero})},
              {utils::IteratorType::parallel, utils::IteratorType::reduction},
              [&](OpBuilder &nb, ValueRange a) -> Value {
                Value sq = arith::MulFOp::create(nb, loc, a[0], a[0]);
                return arith::AddFOp::create(nb, loc, a[1], sq);
              });
  bool onePlus = c.family == Family::Gemma;
  double invH = 1.0 / double(h), eps = c.rmsNormEps;
  return generic(
      tensor({tokens, h}), ValueRange{x, sumsq, weight}, empty({tokens, h}),
      {identity(2), map(2, {n, zero}), map(2, {d}), identity(2)}, parallel(2),
      [&](OpBuilder &nb, ValueRange a) -> Value {
        Value mean = arith::MulFOp::create(nb, loc, a[1], f32Const(nb, invH));
        Value var = arith::AddFOp::create(nb, loc, mean, f32Const(nb, eps));
        Value r = math::RsqrtOp::create(nb, loc, var);
        Value normed = arith::MulFOp::create(nb, loc, a[0], r);
        Value w = a[2];
        if (onePlus)
          w = arith::AddFOp::create(nb, loc, f32Const(nb, 1.0), w);
        return arith::MulFOp::create(nb, loc, normed, w);
      });
}

std::pair<Value, Value> DecoderBuilder::rotaryTables() {
  // cos/sin [S, head_dim] of position * inv_freq[d mod head_dim/2], computed
  // in f32 as the reference does (inv_freq = 1 / theta^(2j / head_dim)).
  int64_t hd = c.headDim;
  auto table = [&](bool isCos) {
    return generic(
        tensor({seq, hd}), ValueRange{}, empty({seq, hd}), {identity(2)},
        parallel(2), [&](OpBuilder &nb, ValueRange) -> Value {
          auto toF32 = [&](Value index) -> Value {
            Value i =
                arith::IndexCastOp::create(nb, loc, nb.getI64Type(), index);
            return arith::SIToFPOp::create(nb, loc, nb.getF32Type(), i);
          };
          Value pos = toF32(linalg::IndexOp::create(nb, loc, 0));
          Value d = linalg::IndexOp::create(nb, loc, 1);
          Value half = arith::ConstantIndexOp::create(nb, loc, hd / 2);
          Value j = arith::RemUIOp::create(nb, loc, d, half);
          Value twoJ =
              arith::MulFOp::create(nb, loc, toF32(j), f32Const(nb, 2.0));
          Value exponent =
              arith::DivFOp::create(nb, loc, twoJ, f32Const(nb, double(hd)));
          Value base = math::PowFOp::create(nb, loc, f32Const(nb, c.ropeTheta),
                                            exponent);
          Value inv = arith::DivFOp::create(nb, loc, f32Const(nb, 1.0), base);
          if (c.llama3Rope) {
            // LLaMA-3: long wavelengths slowed by `factor`, short ones kept,
            // a smooth blend between.
            const Llama3RopeScaling &s = *c.llama3Rope;
            double lowWave = s.originalMaxPositions / s.lowFreqFactor;
            double highWave = s.originalMaxPositions / s.highFreqFactor;
            Value wave =
                arith::DivFOp::create(nb, loc, f32Const(nb, 2 * M_PI), inv);
            Value slowed =
                arith::DivFOp::create(nb, loc, inv, f32Const(nb, s.factor));
            Value ratio = arith::DivFOp::create(
                nb, loc, f32Const(nb, double(s.originalMaxPositions)), wave);
            Value smooth = arith::DivFOp::create(
                nb, loc,
                arith::SubFOp::create(nb, loc, ratio,
                                      f32Const(nb, s.lowFreqFactor)),
                f32Const(nb, s.highFreqFactor - s.lowFreqFactor));
            Value blended = arith::AddFOp::create(
                nb, loc,
                arith::MulFOp::create(
                    nb, loc,
                    arith::SubFOp::create(nb, loc, f32Const(nb, 1.0), smooth),
                    slowed),
                arith::MulFOp::create(nb, loc, smooth, inv));
            Value isLong =
                arith::CmpFOp::create(nb, loc, arith::CmpFPredicate::OGT, wave,
                                      f32Const(nb, lowWave));
            Value isShort =
                arith::CmpFOp::create(nb, loc, arith::CmpFPredicate::OLT, wave,
                                      f32Const(nb, highWave));
            Value mid =
                arith::SelectOp::create(nb, loc, isLong, slowed, blended);
            inv = arith::SelectOp::create(nb, loc, isShort, inv, mid);
          }
          Value angle = arith::MulFOp::create(nb, loc, pos, inv);
          if (isCos)
            return math::CosOp::create(nb, loc, angle);
          return math::SinOp::create(nb, loc, angle);
        });
  };
  return {table(true), table(false)};
}

Value DecoderBuilder::applyRotary(Value x, Value cos, Value sin) {
  // x * cos + rotate_half(x) * sin, rotate_half = cat(-x2, x1) on the last
  // dim, as the reference writes it (slices and a concat).
  auto type = cast<RankedTensorType>(x.getType()); // [B, H, S, D]
  SmallVector<int64_t> halfShape(type.getShape());
  int64_t hd = halfShape.back(), half = hd / 2;
  halfShape.back() = half;
  auto slice = [&](int64_t offset) {
    SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0));
    offsets.back() = b.getIndexAttr(offset);
    SmallVector<OpFoldResult> sizes, strides(4, b.getIndexAttr(1));
    for (int64_t s : halfShape)
      sizes.push_back(b.getIndexAttr(s));
    return tensor::ExtractSliceOp::create(b, loc, tensor(halfShape), x, offsets,
                                          sizes, strides)
        .getResult();
  };
  Value x1 = slice(0), x2 = slice(half);
  Value negX2 =
      elementwise(ValueRange{x2}, [&](OpBuilder &nb, ValueRange a) -> Value {
        return arith::NegFOp::create(nb, loc, a[0]);
      });
  Value rotated =
      tensor::ConcatOp::create(b, loc, /*dim=*/3, ValueRange{negX2, x1});
  AffineExpr s = b.getAffineDimExpr(2), d = b.getAffineDimExpr(3);
  AffineMap table = map(4, {s, d});
  return generic(type, ValueRange{x, rotated, cos, sin}, empty(type.getShape()),
                 {identity(4), identity(4), table, table, identity(4)},
                 parallel(4), [&](OpBuilder &nb, ValueRange a) -> Value {
                   Value p = arith::MulFOp::create(nb, loc, a[0], a[2]);
                   Value q = arith::MulFOp::create(nb, loc, a[1], a[3]);
                   return arith::AddFOp::create(nb, loc, p, q);
                 });
}

Value DecoderBuilder::repeatKeyValue(Value x) {
  // repeat_kv: [B, KV, S, D] -> [B, KV, rep, S, D] -> [B, KV * rep, S, D].
  int64_t kv = c.numKeyValueHeads, rep = c.numHeads / kv, hd = c.headDim;
  if (rep == 1)
    return x;
  AffineExpr bb = b.getAffineDimExpr(0), g = b.getAffineDimExpr(1),
             s = b.getAffineDimExpr(3), d = b.getAffineDimExpr(4);
  Value expanded = generic(tensor({batch, kv, rep, seq, hd}), ValueRange{x},
                           empty({batch, kv, rep, seq, hd}),
                           {map(5, {bb, g, s, d}), identity(5)}, parallel(5),
                           [&](OpBuilder &, ValueRange a) { return a[0]; });
  return tensor::CollapseShapeOp::create(
      b, loc, expanded, ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
}

Value DecoderBuilder::attention(Value x, ArrayRef<Value> p, Value cos,
                                Value sin) {
  // p: q_w, [q_b], k_w, [k_b], v_w, [v_b], o_w, [o_b]
  unsigned i = 0;
  auto next = [&](bool present) { return present ? p[i++] : Value(); };
  Value qw = next(true), qb = next(c.attentionBias);
  Value kw = next(true), kb = next(c.attentionBias);
  Value vw = next(true), vb = next(c.attentionBias);
  Value ow = next(true), ob = next(c.outputProjectionBias);

  int64_t heads = c.numHeads, hd = c.headDim;
  Value q = applyRotary(splitHeads(linear(x, qw, qb), heads), cos, sin);
  Value k = repeatKeyValue(
      applyRotary(splitHeads(linear(x, kw, kb), c.numKeyValueHeads), cos, sin));
  Value v = repeatKeyValue(splitHeads(linear(x, vw, vb), c.numKeyValueHeads));
  Value q3 = flattenHeads(q), k3 = flattenHeads(k), v3 = flattenHeads(v);

  // scores = Q·Kᵀ, scaled, causal.
  Value scores = attentionScores(q3, k3);
  double scale = 1.0 / std::sqrt(double(hd));
  double lowest = -std::numeric_limits<float>::max();
  Value masked = elementwise(
      ValueRange{scores}, [&](OpBuilder &nb, ValueRange a) -> Value {
        Value scaled =
            arith::MulFOp::create(nb, loc, a[0], f32Const(nb, scale));
        Value row = linalg::IndexOp::create(nb, loc, 1);
        Value col = linalg::IndexOp::create(nb, loc, 2);
        Value future =
            arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ugt, col, row);
        return arith::SelectOp::create(nb, loc, future, f32Const(nb, lowest),
                                       scaled);
      });
  return linear(mergeHeads(attentionOutput(masked, v3), heads), ow, ob);
}

Value DecoderBuilder::mlp(Value x, ArrayRef<Value> p) {
  // down(act(gate(x)) * up(x)); p: gate_w, [gate_b], up_w, [up_b], down_w,
  // [down_b]
  unsigned i = 0;
  auto next = [&](bool present) { return present ? p[i++] : Value(); };
  Value gw = next(true), gb = next(c.mlpBias);
  Value uw = next(true), ub = next(c.mlpBias);
  Value dw = next(true), db = next(c.mlpBias);
  Value gate = linear(x, gw, gb), up = linear(x, uw, ub);
  Value h = elementwise(
      ValueRange{gate, up}, [&](OpBuilder &nb, ValueRange a) -> Value {
        return arith::MulFOp::create(nb, loc, activation(nb, a[0]), a[1]);
      });
  return linear(h, dw, db);
}

Value DecoderBuilder::shiftedCrossEntropy(Value logits, Value labels) {
  // Shifted next-token cross-entropy, mean over labels != -100:
  // logits[:, :-1] against labels[:, 1:], as the reference writes it.
  int64_t v = c.vocabSize;
  Value l3 = tensor::ExpandShapeOp::create(
      b, loc, tensor({batch, seq, v}), logits,
      ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  auto one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
  Value shiftedLogits = tensor::ExtractSliceOp::create(
      b, loc, tensor({batch, seq - 1, v}), l3,
      ArrayRef<OpFoldResult>{zero, zero, zero},
      ArrayRef<OpFoldResult>{b.getIndexAttr(batch), b.getIndexAttr(seq - 1),
                             b.getIndexAttr(v)},
      ArrayRef<OpFoldResult>{one, one, one});
  Value shiftedLabels = tensor::ExtractSliceOp::create(
      b, loc, tensor({batch, seq - 1}, i64), labels,
      ArrayRef<OpFoldResult>{zero, one},
      ArrayRef<OpFoldResult>{b.getIndexAttr(batch), b.getIndexAttr(seq - 1)},
      ArrayRef<OpFoldResult>{one, one});
  Value lg = tensor::CollapseShapeOp::create(
      b, loc, shiftedLogits, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  Value lb = tensor::CollapseShapeOp::create(
      b, loc, shiftedLabels, ArrayRef<ReassociationIndices>{{0, 1}});

  return crossEntropy(lg, lb);
}

void DecoderBuilder::build(func::FuncOp func) {
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  unsigned arg = 0;
  auto next = [&]() { return entry->getArgument(arg++); };
  Value ids = next(), labels = next();
  Value table = next();
  std::vector<Value> params;
  for (unsigned i = arg; i < entry->getNumArguments(); ++i)
    params.push_back(entry->getArgument(i));

  unsigned attentionCount =
      4 + (c.attentionBias ? 3 : 0) + (c.outputProjectionBias ? 1 : 0);
  unsigned mlpCount = 3 + (c.mlpBias ? 3 : 0);
  unsigned perLayer = attentionCount + mlpCount + 2;

  auto [cos, sin] = rotaryTables();
  // Gemma scales embeddings by sqrt(hidden_size) in the model dtype.
  Value x = embedding(
      ids, table,
      c.family == Family::Gemma ? std::sqrt(double(c.hiddenSize)) : 1.0);
  ArrayRef<Value> all(params);
  for (int64_t layer = 0; layer < c.numLayers; ++layer) {
    ArrayRef<Value> lp = all.slice(layer * perLayer, perLayer);
    ArrayRef<Value> attn = lp.take_front(attentionCount);
    ArrayRef<Value> ff = lp.slice(attentionCount, mlpCount);
    Value inputNorm = lp[attentionCount + mlpCount];
    Value postNorm = lp[attentionCount + mlpCount + 1];
    Value h = attention(rmsNorm(x, inputNorm), attn, cos, sin);
    x = linalg::AddOp::create(b, loc, ValueRange{x, h},
                              ValueRange{empty({tokens, c.hiddenSize})})
            .getResult(0);
    Value f = mlp(rmsNorm(x, postNorm), ff);
    x = linalg::AddOp::create(b, loc, ValueRange{x, f},
                              ValueRange{empty({tokens, c.hiddenSize})})
            .getResult(0);
  }
  ArrayRef<Value> tail = all.drop_front(c.numLayers * perLayer);
  Value finalNorm = tail[0];
  Value head = c.tieWordEmbeddings ? table : tail[1];
  Value logits = linear(rmsNorm(x, finalNorm), head, Value());
  Value loss = shiftedCrossEntropy(logits, labels);
  func::ReturnOp::create(b, loc, loss);
}

} // namespace

void fbl::models::buildDecoderBody(OpBuilder &b, Location loc,
                                   const ModelConfig &c, TrainingShape shape,
                                   func::FuncOp func) {
  DecoderBuilder(b, loc, c, shape).build(func);
}

std::vector<ParameterInfo>
fbl::models::decoderParameters(const ModelConfig &c) {
  std::vector<ParameterInfo> params;
  std::string normal = formatInit("normal", c.initializerRange);
  // Gemma's norms scale by (1 + w): w = 0 is the identity.
  std::string normInit = c.family == Family::Gemma ? "zeros" : "ones";
  int64_t h = c.hiddenSize, q = c.numHeads * c.headDim,
          kv = c.numKeyValueHeads * c.headDim, in = c.intermediateSize;
  params.push_back({"model.embed_tokens.weight", {c.vocabSize, h}, normal});
  auto projection = [&](int64_t layer, llvm::StringRef name, int64_t out,
                        int64_t inDim, bool bias) {
    params.push_back(
        {layerName(layer, (name + ".weight").str()), {out, inDim}, normal});
    if (bias)
      params.push_back(
          {layerName(layer, (name + ".bias").str()), {out}, "zeros"});
  };
  for (int64_t l = 0; l < c.numLayers; ++l) {
    projection(l, "self_attn.q_proj", q, h, c.attentionBias);
    projection(l, "self_attn.k_proj", kv, h, c.attentionBias);
    projection(l, "self_attn.v_proj", kv, h, c.attentionBias);
    projection(l, "self_attn.o_proj", h, q, c.outputProjectionBias);
    projection(l, "mlp.gate_proj", in, h, c.mlpBias);
    projection(l, "mlp.up_proj", in, h, c.mlpBias);
    projection(l, "mlp.down_proj", h, in, c.mlpBias);
    params.push_back({layerName(l, "input_layernorm.weight"), {h}, normInit});
    params.push_back(
        {layerName(l, "post_attention_layernorm.weight"), {h}, normInit});
  }
  params.push_back({"model.norm.weight", {h}, normInit});
  if (!c.tieWordEmbeddings)
    params.push_back({"lm_head.weight", {c.vocabSize, h}, normal});
  return params;
}
