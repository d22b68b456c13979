//===- SpeechModel.cpp - Forward training models of speech seq2seq --------===//
//
// Whisper as Hugging Face's WhisperForConditionalGeneration computes it in
// training mode without dropout. Encoder: log-mel features [B, M, 2P]
// through two Conv1d of kernel 3 (stride 1, then 2, zero padding 1) each
// followed by GELU, sinusoidal positions (computed in the graph, as the
// checkpoint's frozen table holds them), pre-norm layers of self-attention
// (q/v/out biases, none on k) and a GELU feed-forward, a final LayerNorm.
// Decoder: token and learned position embeddings, pre-norm layers of causal
// self-attention, cross-attention to the encoder's output and a
// feed-forward, a final LayerNorm, logits by the token table (tied). The
// loss is the token cross-entropy of the logits against `labels` (-100:
// ignored); the decoder's inputs are the labels shifted right, as the
// caller gives them.
//
// The convolutions are written as torch-mlir writes Conv1d
// (linalg.conv_1d_ncw_fcw after a tensor.pad); fbl-autodiff reads them as
// strided slices (Convolutions.md).
//
//===----------------------------------------------------------------------===//

#include "LayerBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace fbl::models;

namespace {

/// Emits Whisper's ops; one method per PyTorch module.
class SpeechBuilder : public LayerBuilder {
public:
  using LayerBuilder::LayerBuilder;

  void build(func::FuncOp func);

private:
  Value conv1d(Value x, int64_t stride);
  Value sinusoids(int64_t length);
  /// WhisperAttention: k_proj (no bias), v_proj, q_proj, out_proj.
  Value attention(Value x, Value memory, bool causal);
  Value feedForward(Value x);
  Value gelu(Value x) {
    return elementwise(ValueRange{x}, [&](OpBuilder &nb, ValueRange a) {
      return activation(nb, a[0]);
    });
  }
};

Value SpeechBuilder::conv1d(Value x, int64_t stride) {
  // x [B, C, L] -> pad 1 on both sides -> conv_1d_ncw_fcw (kernel 3) + bias.
  Value w = param(), bias = param();
  int64_t len = cast<RankedTensorType>(x.getType()).getDimSize(2);
  int64_t f = cast<RankedTensorType>(w.getType()).getDimSize(0);
  int64_t out = (len + 2 - 3) / stride + 1;
  Value in = padded(x, {0, 0, 1}, {0, 0, 1});
  auto strides = DenseIntElementsAttr::get(
      RankedTensorType::get({1}, b.getI64Type()), ArrayRef<int64_t>{stride});
  auto dilations = DenseIntElementsAttr::get(
      RankedTensorType::get({1}, b.getI64Type()), ArrayRef<int64_t>{1});
  Value y = linalg::Conv1DNcwFcwOp::create(
                b, loc, TypeRange{tensor({batch, f, out})}, ValueRange{in, w},
                ValueRange{filled({batch, f, out}, 0.0)}, strides, dilations)
                .getResult(0);
  AffineExpr fd = b.getAffineDimExpr(1);
  return generic(tensor({batch, f, out}), ValueRange{y, bias},
                 empty({batch, f, out}),
                 {identity(3), map(3, {fd}), identity(3)}, parallel(3),
                 [&](OpBuilder &nb, ValueRange a) -> Value {
                   Value v = arith::AddFOp::create(nb, loc, a[0], a[1]);
                   return activation(nb, v);
                 });
}

Value SpeechBuilder::sinusoids(int64_t length) {
  // [sin(t * inv), cos(t * inv)] with inv_j = exp(-j log(10000) / (h/2 - 1)),
  // computed in f32 as the reference's table.
  int64_t h = c.hiddenSize, half = h / 2;
  double increment = std::log(10000.0) / double(half - 1);
  return generic(
      tensor({length, h}), ValueRange{}, empty({length, h}), {identity(2)},
      parallel(2), [&](OpBuilder &nb, ValueRange) -> Value {
        auto toF32 = [&](Value index) -> Value {
          Value i = arith::IndexCastOp::create(nb, loc, nb.getI64Type(), index);
          return arith::SIToFPOp::create(nb, loc, nb.getF32Type(), i);
        };
        Value t = toF32(linalg::IndexOp::create(nb, loc, 0));
        Value d = linalg::IndexOp::create(nb, loc, 1);
        Value halfIndex = arith::ConstantIndexOp::create(nb, loc, half);
        Value j = arith::RemUIOp::create(nb, loc, d, halfIndex);
        Value inv = math::ExpOp::create(
            nb, loc,
            arith::MulFOp::create(nb, loc, toF32(j), f32Const(nb, -increment)));
        Value angle = arith::MulFOp::create(nb, loc, t, inv);
        Value isSin = arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ult,
                                            d, halfIndex);
        return arith::SelectOp::create(nb, loc, isSin,
                                       math::SinOp::create(nb, loc, angle),
                                       math::CosOp::create(nb, loc, angle));
      });
}

Value SpeechBuilder::attention(Value x, Value memory, bool causal) {
  Value kw = param(), vw = param(), vb = param(), qw = param(), qb = param();
  int64_t heads = c.numHeads;
  Value source = memory ? memory : x;
  Value q = flattenHeads(splitHeads(linear(x, qw, qb), heads));
  Value k = flattenHeads(splitHeads(linear(source, kw, Value()), heads));
  Value v = flattenHeads(splitHeads(linear(source, vw, vb), heads));
  double scale = 1.0 / std::sqrt(double(c.headDim));
  double lowest = -std::numeric_limits<float>::max();
  Value scores = elementwise(
      ValueRange{attentionScores(q, k)},
      [&](OpBuilder &nb, ValueRange a) -> Value {
        Value scaled =
            arith::MulFOp::create(nb, loc, a[0], f32Const(nb, scale));
        if (!causal)
          return scaled;
        Value row = linalg::IndexOp::create(nb, loc, 1);
        Value col = linalg::IndexOp::create(nb, loc, 2);
        Value future =
            arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ugt, col, row);
        return arith::SelectOp::create(nb, loc, future, f32Const(nb, lowest),
                                       scaled);
      });
  Value merged = mergeHeads(attentionOutput(scores, v), heads);
  Value ow = param(), ob = param();
  return linear(merged, ow, ob);
}

Value SpeechBuilder::feedForward(Value x) {
  Value w1 = param(), b1 = param();
  Value h = gelu(linear(x, w1, b1));
  Value w2 = param(), b2 = param();
  return linear(h, w2, b2);
}

void SpeechBuilder::build(func::FuncOp func) {
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Value features = entry->getArgument(0), ids = entry->getArgument(1),
        labels = entry->getArgument(2);
  for (unsigned i = 3; i < entry->getNumArguments(); ++i)
    params.push_back(entry->getArgument(i));
  int64_t h = c.hiddenSize, frames = c.maxSourcePositions;

  // Encoder: two convolutions, [B, H, P] -> [B, P, H] + positions.
  Value conv = conv1d(conv1d(features, 1), 2);
  Value enc3 =
      linalg::TransposeOp::create(b, loc, conv, empty({batch, frames, h}),
                                  ArrayRef<int64_t>{0, 2, 1})
          .getResult()[0];
  Value placed = addToEachSequence(enc3, sinusoids(frames));
  Value x = tensor::CollapseShapeOp::create(
      b, loc, placed, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  // Each layer: self_attn, self_attn_layer_norm, fc1, fc2,
  // final_layer_norm in the parameter list (a decoder layer has
  // encoder_attn and its norm after its self_attn's); pre-norm in the graph:
  // each block's norm comes after the block's weights.
  unsigned attentionParams = 7, ffnParams = 4;
  auto preNormLayer = [&](Value in, ArrayRef<bool> blocks, Value memory) {
    // blocks: one entry per attention block (true: causal), then the
    // feed-forward.
    Value out = in;
    for (auto [i, causal] : llvm::enumerate(blocks)) {
      Value normed = layerNormAt(out, nextParam + attentionParams);
      out = add(out, attention(normed, i == 1 ? memory : Value(), causal));
      nextParam += 2;
    }
    Value normed = layerNormAt(out, nextParam + ffnParams);
    out = add(out, feedForward(normed));
    nextParam += 2;
    return out;
  };
  for (int64_t l = 0; l < c.numEncoderLayers; ++l)
    x = preNormLayer(x, {false}, Value());
  Value memory = nextLayerNorm(x);

  // Decoder.
  Value table = param(), learned = param();
  Value tokens3 = tensor::ExpandShapeOp::create(
      b, loc, tensor({batch, seq, h}), embedding(ids, table),
      ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  Value embedded = addToEachSequence(tokens3, leadingRows(learned, seq));
  Value y = tensor::CollapseShapeOp::create(
      b, loc, embedded, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  for (int64_t l = 0; l < c.numLayers; ++l)
    y = preNormLayer(y, {true, false}, memory);
  y = nextLayerNorm(y);
  Value logits = linear(y, table, Value());
  Value flatLabels = tensor::CollapseShapeOp::create(
      b, loc, labels, ArrayRef<ReassociationIndices>{{0, 1}});
  Value loss = crossEntropy(logits, flatLabels);
  assert(nextParam == params.size() && "parameters left unused");
  func::ReturnOp::create(b, loc, loss);
}

} // namespace

void fbl::models::buildSpeechBody(OpBuilder &b, Location loc,
                                  const ModelConfig &c, TrainingShape shape,
                                  func::FuncOp func) {
  SpeechBuilder(b, loc, c, shape).build(func);
}

std::vector<ParameterInfo> fbl::models::speechParameters(const ModelConfig &c) {
  std::vector<ParameterInfo> params;
  std::string normal = formatInit("normal", c.initializerRange);
  int64_t h = c.hiddenSize, in = c.intermediateSize;
  auto tensorParam = [&](const std::string &name, std::vector<int64_t> shape,
                         const std::string &init) {
    params.push_back({name, std::move(shape), init});
  };
  auto linear = [&](const std::string &name, int64_t out, int64_t inDim,
                    bool bias = true) {
    tensorParam(name + ".weight", {out, inDim}, normal);
    if (bias)
      tensorParam(name + ".bias", {out}, "zeros");
  };
  auto norm = [&](const std::string &name) {
    tensorParam(name + ".weight", {h}, "ones");
    tensorParam(name + ".bias", {h}, "zeros");
  };
  auto attention = [&](const std::string &name) {
    linear(name + ".k_proj", h, h, /*bias=*/false);
    linear(name + ".v_proj", h, h);
    linear(name + ".q_proj", h, h);
    linear(name + ".out_proj", h, h);
  };
  tensorParam("model.encoder.conv1.weight", {h, c.numMelBins, 3}, normal);
  tensorParam("model.encoder.conv1.bias", {h}, "zeros");
  tensorParam("model.encoder.conv2.weight", {h, h, 3}, normal);
  tensorParam("model.encoder.conv2.bias", {h}, "zeros");
  for (int64_t l = 0; l < c.numEncoderLayers; ++l) {
    std::string p = llvm::formatv("model.encoder.layers.{0}.", l).str();
    attention(p + "self_attn");
    norm(p + "self_attn_layer_norm");
    linear(p + "fc1", in, h);
    linear(p + "fc2", h, in);
    norm(p + "final_layer_norm");
  }
  norm("model.encoder.layer_norm");
  tensorParam("model.decoder.embed_tokens.weight", {c.vocabSize, h}, normal);
  tensorParam("model.decoder.embed_positions.weight", {c.maxPositions, h},
              normal);
  for (int64_t l = 0; l < c.numLayers; ++l) {
    std::string p = llvm::formatv("model.decoder.layers.{0}.", l).str();
    attention(p + "self_attn");
    norm(p + "self_attn_layer_norm");
    attention(p + "encoder_attn");
    norm(p + "encoder_attn_layer_norm");
    linear(p + "fc1", in, h);
    linear(p + "fc2", h, in);
    norm(p + "final_layer_norm");
  }
  norm("model.decoder.layer_norm");
  return params;
}
