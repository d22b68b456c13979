//===- VisionModel.cpp - Forward training models of vision transformers ---===//
//
// ViT as Hugging Face's ViTForImageClassification computes it in training
// mode without dropout: 16x16 (patch_size) patches embedded by a linear map
// of their pixels, a class token joined in front (tensor.concat), learned
// position embeddings, pre-norm layers of self-attention and a GELU
// feed-forward, a final LayerNorm and a classifier over the class token.
//
// The patch embedding is a stride-P convolution in PyTorch. Its patches do
// not overlap, so the builder writes it as what it is cheapest to run: the
// image reshaped into rows of patches ([B, C, G, P, G, P] -> [B, G, G, C, P,
// P] -> [B * G * G, C * P * P]) and one matmul with the [H, C * P * P]
// filter — a GEMM kernel, where the convolution form would be a contraction
// over three loops (fbl-autodiff turns an imported convolution into the
// same reshape; see lib/Autodiff/DecomposeConvolution.cpp).
//
//===----------------------------------------------------------------------===//

#include "LayerBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace fbl::models;

namespace {

std::string layerName(int64_t layer, llvm::StringRef rest) {
  return llvm::formatv("vit.encoder.layer.{0}.{1}", layer, rest).str();
}

/// Emits a vision transformer's ops; one method per PyTorch module.
class VisionBuilder : public LayerBuilder {
public:
  using LayerBuilder::LayerBuilder;

  void build(func::FuncOp func);

private:
  Value patchEmbeddings(Value pixels);
  Value attention(Value x);
  Value feedForward(Value x);
};

Value VisionBuilder::patchEmbeddings(Value pixels) {
  Value cls = param(), positions = param(), filter = param(),
        filterBias = param();
  int64_t ch = c.numChannels, p = c.patchSize, g = c.imageSize / p, n = g * g,
          h = c.hiddenSize;
  // [B, C, G*P, G*P] -> [B, C, G, P, G, P] -> [B, G, G, C, P, P] -> rows.
  Value split = tensor::ExpandShapeOp::create(
      b, loc, tensor({batch, ch, g, p, g, p}), pixels,
      ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}, {4, 5}});
  Value grouped =
      linalg::TransposeOp::create(b, loc, split, empty({batch, g, g, ch, p, p}),
                                  ArrayRef<int64_t>{0, 2, 4, 1, 3, 5})
          .getResult()[0];
  Value rows = tensor::CollapseShapeOp::create(
      b, loc, grouped, ArrayRef<ReassociationIndices>{{0, 1, 2}, {3, 4, 5}});
  Value flatFilter = tensor::CollapseShapeOp::create(
      b, loc, filter, ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}});
  Value patches = tensor::ExpandShapeOp::create(
      b, loc, tensor({batch, n, h}), linear(rows, flatFilter, filterBias),
      ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  // The class token broadcast over the batch, joined in front.
  AffineExpr d = b.getAffineDimExpr(2);
  Value cls2 = tensor::CollapseShapeOp::create(
      b, loc, cls, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  Value clsRows =
      generic(tensor({batch, 1, h}), ValueRange{cls2}, empty({batch, 1, h}),
              {map(3, {b.getAffineDimExpr(1), d}), identity(3)}, parallel(3),
              [&](OpBuilder &, ValueRange a) { return a[0]; });
  Value joined =
      tensor::ConcatOp::create(b, loc, /*dim=*/1, ValueRange{clsRows, patches});
  // + position embeddings [1, N + 1, H], broadcast over the batch.
  Value pos2 = tensor::CollapseShapeOp::create(
      b, loc, positions, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  Value embedded = addToEachSequence(joined, pos2);
  return tensor::CollapseShapeOp::create(
      b, loc, embedded, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
}

Value VisionBuilder::attention(Value x) {
  auto next = [&](bool present) { return present ? param() : Value(); };
  Value qw = param(), qb = next(c.qkvBias), kw = param(), kb = next(c.qkvBias),
        vw = param(), vb = next(c.qkvBias);
  int64_t heads = c.numHeads;
  Value q = flattenHeads(splitHeads(linear(x, qw, qb), heads));
  Value k = flattenHeads(splitHeads(linear(x, kw, kb), heads));
  Value v = flattenHeads(splitHeads(linear(x, vw, vb), heads));
  double scale = 1.0 / std::sqrt(double(c.headDim));
  Value scores = elementwise(ValueRange{attentionScores(q, k)},
                             [&](OpBuilder &nb, ValueRange a) -> Value {
                               return arith::MulFOp::create(
                                   nb, loc, a[0], f32Const(nb, scale));
                             });
  Value merged = mergeHeads(attentionOutput(scores, v), heads);
  Value ow = param(), ob = param();
  return linear(merged, ow, ob);
}

Value VisionBuilder::feedForward(Value x) {
  Value iw = param(), ib = param();
  Value h = elementwise(ValueRange{linear(x, iw, ib)},
                        [&](OpBuilder &nb, ValueRange a) -> Value {
                          return activation(nb, a[0]);
                        });
  Value ow = param(), ob = param();
  return linear(h, ow, ob);
}

void VisionBuilder::build(func::FuncOp func) {
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Value pixels = entry->getArgument(0), labels = entry->getArgument(1);
  for (unsigned i = 2; i < entry->getNumArguments(); ++i)
    params.push_back(entry->getArgument(i));

  Value x = patchEmbeddings(pixels);
  int64_t attentionCount = c.qkvBias ? 8 : 5;
  for (int64_t layer = 0; layer < c.numLayers; ++layer) {
    // Pre-norm: the layer's norms (before, after) come after its attention
    // and feed-forward weights in the parameter list.
    unsigned norms = nextParam + attentionCount + 4;
    Value h = add(x, attention(layerNormAt(x, norms)));
    x = add(h, feedForward(layerNormAt(h, norms + 2)));
    nextParam = norms + 4;
  }
  x = nextLayerNorm(x);
  // logits of the class token: hidden[:, 0] (a rank-reducing slice).
  Value first = firstToken(x);
  Value cw = param(), cb = param();
  Value loss = crossEntropy(linear(first, cw, cb), labels);
  assert(nextParam == params.size() && "parameters left unused");
  func::ReturnOp::create(b, loc, loss);
}

} // namespace

void fbl::models::buildVisionBody(OpBuilder &b, Location loc,
                                  const ModelConfig &c, TrainingShape shape,
                                  func::FuncOp func) {
  VisionBuilder(b, loc, c, shape).build(func);
}

std::vector<ParameterInfo> fbl::models::visionParameters(const ModelConfig &c) {
  std::vector<ParameterInfo> params;
  std::string normal = formatInit("normal", c.initializerRange);
  int64_t h = c.hiddenSize, in = c.intermediateSize, p = c.patchSize;
  auto linear = [&](const std::string &name, int64_t out, int64_t inDim,
                    bool bias = true) {
    params.push_back({name + ".weight", {out, inDim}, normal});
    if (bias)
      params.push_back({name + ".bias", {out}, "zeros"});
  };
  auto norm = [&](const std::string &name) {
    params.push_back({name + ".weight", {h}, "ones"});
    params.push_back({name + ".bias", {h}, "zeros"});
  };
  params.push_back({"vit.embeddings.cls_token", {1, 1, h}, normal});
  params.push_back({"vit.embeddings.position_embeddings",
                    {1, c.numPatches() + 1, h},
                    normal});
  params.push_back({"vit.embeddings.patch_embeddings.projection.weight",
                    {h, c.numChannels, p, p},
                    normal});
  params.push_back(
      {"vit.embeddings.patch_embeddings.projection.bias", {h}, "zeros"});
  for (int64_t l = 0; l < c.numLayers; ++l) {
    linear(layerName(l, "attention.attention.query"), h, h, c.qkvBias);
    linear(layerName(l, "attention.attention.key"), h, h, c.qkvBias);
    linear(layerName(l, "attention.attention.value"), h, h, c.qkvBias);
    linear(layerName(l, "attention.output.dense"), h, h);
    linear(layerName(l, "intermediate.dense"), in, h);
    linear(layerName(l, "output.dense"), h, in);
    norm(layerName(l, "layernorm_before"));
    norm(layerName(l, "layernorm_after"));
  }
  norm("vit.layernorm");
  linear("classifier", c.numLabels, h);
  return params;
}
