//===- EncoderModel.cpp - Forward training models of BERT-style encoders --===//
//
// BERT as Hugging Face's BertForMaskedLM / BertForSequenceClassification
// compute it in training mode without dropout: word + position + token-type
// embeddings and a LayerNorm; post-norm layers of self-attention (biases, a
// padding mask) and a GELU feed-forward; then either the masked-LM head
// (dense, GELU, LayerNorm, the word embeddings as decoder, a vocabulary bias)
// or the pooler (tanh of a dense layer over the first token) and a
// classifier. Each op is written the way torch-mlir writes the PyTorch code.
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

std::string layerName(int64_t layer, llvm::StringRef rest) {
  return llvm::formatv("bert.encoder.layer.{0}.{1}", layer, rest).str();
}

/// Emits an encoder's ops; one method per PyTorch module.
class EncoderBuilder : public LayerBuilder {
public:
  using LayerBuilder::LayerBuilder;

  /// Emits the body of `func`, whose arguments follow modelInputs() and
  /// encoderParameters().
  void build(func::FuncOp func);

private:
  Value embeddings(Value ids, Value types);
  Value attention(Value x, Value mask);
  Value feedForward(Value x);
  Value maskedLMHead(Value x, Value wordTable);
  Value classifierHead(Value x);
};

Value EncoderBuilder::embeddings(Value ids, Value types) {
  Value wordTable = param(), positionTable = param(), typeTable = param();
  int64_t h = c.hiddenSize;
  Value words = embedding(ids, wordTable), kinds = embedding(types, typeTable);
  // position_ids = arange(S): the first S rows of the table, broadcast over
  // the batch.
  Value positions = leadingRows(positionTable, seq);
  auto rows3 = [&](Value x) {
    return tensor::ExpandShapeOp::create(
        b, loc, tensor({batch, seq, h}), x,
        ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  };
  AffineExpr s = b.getAffineDimExpr(1), d = b.getAffineDimExpr(2);
  Value sum = generic(tensor({batch, seq, h}),
                      ValueRange{rows3(words), rows3(kinds), positions},
                      empty({batch, seq, h}),
                      {identity(3), identity(3), map(3, {s, d}), identity(3)},
                      parallel(3), [&](OpBuilder &nb, ValueRange a) -> Value {
                        Value wt = arith::AddFOp::create(nb, loc, a[0], a[1]);
                        return arith::AddFOp::create(nb, loc, wt, a[2]);
                      });
  Value flat = tensor::CollapseShapeOp::create(
      b, loc, sum, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  return nextLayerNorm(flat);
}

Value EncoderBuilder::attention(Value x, Value mask) {
  Value qw = param(), qb = param(), kw = param(), kb = param(), vw = param(),
        vb = param();
  int64_t heads = c.numHeads, hd = c.headDim;
  Value q = flattenHeads(splitHeads(linear(x, qw, qb), heads));
  Value k = flattenHeads(splitHeads(linear(x, kw, kb), heads));
  Value v = flattenHeads(splitHeads(linear(x, vw, vb), heads));
  // scores / sqrt(D) with padded keys masked out: the extended mask
  // [B, 1, 1, S] broadcast over heads and queries.
  Value scores = tensor::ExpandShapeOp::create(
      b, loc, tensor({batch, heads, seq, seq}), attentionScores(q, k),
      ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
  double scale = 1.0 / std::sqrt(double(hd));
  double lowest = -std::numeric_limits<float>::max();
  AffineExpr bd = b.getAffineDimExpr(0), key = b.getAffineDimExpr(3);
  Value masked =
      generic(tensor({batch, heads, seq, seq}), ValueRange{scores, mask},
              empty({batch, heads, seq, seq}),
              {identity(4), map(4, {bd, key}), identity(4)}, parallel(4),
              [&](OpBuilder &nb, ValueRange a) -> Value {
                Value scaled =
                    arith::MulFOp::create(nb, loc, a[0], f32Const(nb, scale));
                Value zero =
                    arith::ConstantOp::create(nb, loc, nb.getI64IntegerAttr(0));
                Value padded = arith::CmpIOp::create(
                    nb, loc, arith::CmpIPredicate::eq, a[1], zero);
                return arith::SelectOp::create(nb, loc, padded,
                                               f32Const(nb, lowest), scaled);
              });
  Value masked3 = tensor::CollapseShapeOp::create(
      b, loc, masked, ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
  Value merged = mergeHeads(attentionOutput(masked3, v), heads);
  Value ow = param(), ob = param();
  return nextLayerNorm(add(linear(merged, ow, ob), x));
}

Value EncoderBuilder::feedForward(Value x) {
  Value iw = param(), ib = param();
  Value h = elementwise(ValueRange{linear(x, iw, ib)},
                        [&](OpBuilder &nb, ValueRange a) -> Value {
                          return activation(nb, a[0]);
                        });
  Value ow = param(), ob = param();
  return nextLayerNorm(add(linear(h, ow, ob), x));
}

Value EncoderBuilder::maskedLMHead(Value x, Value wordTable) {
  Value vocabBias = param();
  Value tw = param(), tb = param();
  Value t = elementwise(ValueRange{linear(x, tw, tb)},
                        [&](OpBuilder &nb, ValueRange a) -> Value {
                          return activation(nb, a[0]);
                        });
  // The decoder is the word embedding matrix (tied), its bias the vocabulary
  // bias.
  return linear(nextLayerNorm(t), wordTable, vocabBias);
}

Value EncoderBuilder::classifierHead(Value x) {
  // pooled = tanh(dense(hidden[:, 0])), aten.select as a rank-reducing
  // slice.
  Value first = firstToken(x);
  Value pw = param(), pb = param();
  Value pooled = elementwise(ValueRange{linear(first, pw, pb)},
                             [&](OpBuilder &nb, ValueRange a) -> Value {
                               return math::TanhOp::create(nb, loc, a[0]);
                             });
  Value cw = param(), cb = param();
  return linear(pooled, cw, cb);
}

void EncoderBuilder::build(func::FuncOp func) {
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Value ids = entry->getArgument(0), types = entry->getArgument(1),
        mask = entry->getArgument(2), labels = entry->getArgument(3);
  for (unsigned i = 4; i < entry->getNumArguments(); ++i)
    params.push_back(entry->getArgument(i));

  Value wordTable = params[0];
  Value x = embeddings(ids, types);
  for (int64_t layer = 0; layer < c.numLayers; ++layer)
    x = feedForward(attention(x, mask));
  Value loss;
  if (c.task == Task::SequenceClassification) {
    loss = crossEntropy(classifierHead(x), labels);
  } else {
    Value flatLabels = tensor::CollapseShapeOp::create(
        b, loc, labels, ArrayRef<ReassociationIndices>{{0, 1}});
    loss = crossEntropy(maskedLMHead(x, wordTable), flatLabels);
  }
  assert(nextParam == params.size() && "parameters left unused");
  func::ReturnOp::create(b, loc, loss);
}

} // namespace

void fbl::models::buildEncoderBody(OpBuilder &b, Location loc,
                                   const ModelConfig &c, TrainingShape shape,
                                   func::FuncOp func) {
  EncoderBuilder(b, loc, c, shape).build(func);
}

std::vector<ParameterInfo>
fbl::models::encoderParameters(const ModelConfig &c) {
  std::vector<ParameterInfo> params;
  std::string normal = formatInit("normal", c.initializerRange);
  int64_t h = c.hiddenSize, in = c.intermediateSize;
  auto linear = [&](const std::string &name, int64_t out, int64_t inDim) {
    params.push_back({name + ".weight", {out, inDim}, normal});
    params.push_back({name + ".bias", {out}, "zeros"});
  };
  auto norm = [&](const std::string &name) {
    params.push_back({name + ".weight", {h}, "ones"});
    params.push_back({name + ".bias", {h}, "zeros"});
  };
  params.push_back(
      {"bert.embeddings.word_embeddings.weight", {c.vocabSize, h}, normal});
  params.push_back({"bert.embeddings.position_embeddings.weight",
                    {c.maxPositions, h},
                    normal});
  params.push_back({"bert.embeddings.token_type_embeddings.weight",
                    {c.typeVocabSize, h},
                    normal});
  norm("bert.embeddings.LayerNorm");
  for (int64_t l = 0; l < c.numLayers; ++l) {
    linear(layerName(l, "attention.self.query"), h, h);
    linear(layerName(l, "attention.self.key"), h, h);
    linear(layerName(l, "attention.self.value"), h, h);
    linear(layerName(l, "attention.output.dense"), h, h);
    norm(layerName(l, "attention.output.LayerNorm"));
    linear(layerName(l, "intermediate.dense"), in, h);
    linear(layerName(l, "output.dense"), h, in);
    norm(layerName(l, "output.LayerNorm"));
  }
  if (c.task == Task::SequenceClassification) {
    linear("bert.pooler.dense", h, h);
    linear("classifier", c.numLabels, h);
  } else {
    params.push_back({"cls.predictions.bias", {c.vocabSize}, "zeros"});
    linear("cls.predictions.transform.dense", h, h);
    norm("cls.predictions.transform.LayerNorm");
  }
  return params;
}
