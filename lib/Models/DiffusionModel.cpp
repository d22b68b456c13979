//===- DiffusionModel.cpp - Forward training models of diffusion UNets ----===//
//
// Stable Diffusion's UNet as diffusers' UNet2DConditionModel computes it in
// training mode without dropout, on NCHW latents as PyTorch holds them:
// conv_in, the timestep's sinusoids through a two-layer time embedding, down
// blocks (ResNet blocks, each followed by a spatial transformer in a
// cross-attention block, a stride-2 convolution between levels), the mid
// block (ResNet, transformer, ResNet), up blocks that concatenate the down
// path's outputs along the channels (nearest 2x upsampling and a
// convolution between levels), then GroupNorm, SiLU and conv_out. The loss is
// the mean squared error of the predicted noise against `noise`; the caller
// noises the latents and draws the timesteps, as diffusers' training
// scripts do.
//
// A ResNet block: GroupNorm, SiLU, 3x3 conv, plus the projected time
// embedding, GroupNorm, SiLU, 3x3 conv, plus the input (through a 1x1
// conv when the channels change). A spatial transformer (SD-1.x, 1x1
// projections): GroupNorm (eps 1e-6), proj_in, the pixels as tokens, one
// BasicTransformerBlock (LayerNorm + self-attention, LayerNorm +
// cross-attention to the text context, LayerNorm + GEGLU feed-forward, each
// residual), proj_out, plus the input.
//
// Convolutions are written as torch-mlir writes Conv2d (tensor.pad, then
// linalg.conv_2d_nchw_fchw, then the bias); fbl-autodiff reads them as
// strided slices (Convolutions.md). The topology lives once, in unetPlan(),
// which both the builder and the parameter list walk.
//
//===----------------------------------------------------------------------===//

#include "LayerBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace fbl::models;

namespace {

/// One module of the UNet in the order the forward pass runs them, with
/// its diffusers parameter prefix.
struct UNetStep {
  enum Kind {
    Conv,          ///< a 3x3 convolution (conv_in, conv_out)
    TimeEmbedding, ///< the timestep's sinusoids, linear_1, SiLU, linear_2
    Resnet,        ///< ResnetBlock2D, in -> out channels
    Transformer,   ///< Transformer2DModel over `out` channels, `heads` heads
    Downsample,    ///< a 3x3 stride-2 convolution
    Upsample,      ///< nearest 2x, then a 3x3 convolution
    PushSkip,      ///< the down path's output, kept for the up path
    ConcatSkip,    ///< the last kept output joined along the channels
    OutNorm,       ///< GroupNorm then SiLU (conv_norm_out, conv_act)
  } kind;
  std::string prefix;
  int64_t in = 0, out = 0, heads = 0;
};

std::vector<UNetStep> unetPlan(const ModelConfig &c) {
  std::vector<UNetStep> plan;
  const std::vector<int64_t> &channels = c.blockOutChannels;
  size_t levels = channels.size();
  auto step = [&](UNetStep::Kind kind, std::string prefix, int64_t in,
                  int64_t out, int64_t heads = 0) {
    plan.push_back({kind, std::move(prefix), in, out, heads});
  };
  step(UNetStep::Conv, "conv_in", c.inChannels, channels[0]);
  // diffusers registers the time embedding right after conv_in.
  step(UNetStep::TimeEmbedding, "time_embedding", channels[0], 4 * channels[0]);
  step(UNetStep::PushSkip, "", 0, channels[0]);
  int64_t ch = channels[0];
  for (size_t i = 0; i < levels; ++i) {
    std::string p = llvm::formatv("down_blocks.{0}.", i).str();
    for (int64_t j = 0; j < c.layersPerBlock; ++j) {
      step(UNetStep::Resnet, llvm::formatv("{0}resnets.{1}", p, j), ch,
           channels[i]);
      ch = channels[i];
      if (c.crossAttentionBlocks[i])
        step(UNetStep::Transformer, llvm::formatv("{0}attentions.{1}", p, j),
             ch, ch, c.unetHeads[i]);
      step(UNetStep::PushSkip, "", 0, ch);
    }
    if (i + 1 < levels) {
      step(UNetStep::Downsample, p + "downsamplers.0.conv", ch, ch);
      step(UNetStep::PushSkip, "", 0, ch);
    }
  }
  step(UNetStep::Resnet, "mid_block.resnets.0", ch, ch);
  step(UNetStep::Transformer, "mid_block.attentions.0", ch, ch,
       c.unetHeads.back());
  step(UNetStep::Resnet, "mid_block.resnets.1", ch, ch);
  // The up path pops the kept outputs in reverse; diffusers sizes each
  // ResNet for the skip it will read.
  std::vector<int64_t> skips;
  for (const UNetStep &s : plan)
    if (s.kind == UNetStep::PushSkip)
      skips.push_back(s.out);
  for (size_t i = 0; i < levels; ++i) {
    size_t level = levels - 1 - i;
    std::string p = llvm::formatv("up_blocks.{0}.", i).str();
    for (int64_t j = 0; j <= c.layersPerBlock; ++j) {
      int64_t skip = skips.back();
      skips.pop_back();
      step(UNetStep::ConcatSkip, "", ch, ch + skip);
      step(UNetStep::Resnet, llvm::formatv("{0}resnets.{1}", p, j), ch + skip,
           channels[level]);
      ch = channels[level];
      if (c.crossAttentionBlocks[level])
        step(UNetStep::Transformer, llvm::formatv("{0}attentions.{1}", p, j),
             ch, ch, c.unetHeads[level]);
    }
    if (level > 0)
      step(UNetStep::Upsample, p + "upsamplers.0.conv", ch, ch);
  }
  step(UNetStep::OutNorm, "conv_norm_out", ch, ch);
  step(UNetStep::Conv, "conv_out", ch, c.outChannels);
  return plan;
}

/// Emits the UNet's ops; one method per diffusers module.
class DiffusionBuilder : public LayerBuilder {
public:
  using LayerBuilder::LayerBuilder;

  void build(func::FuncOp func);

private:
  int64_t dim(Value v, unsigned d) {
    return cast<RankedTensorType>(v.getType()).getDimSize(d);
  }
  /// Conv2d with the next weight and bias; `kernel` / 2 zero padding.
  Value conv2d(Value x, int64_t stride = 1);
  /// GroupNorm with the next weight and bias over the config's groups.
  Value groupNorm(Value x, double eps);
  Value silu(Value x) {
    return elementwise(ValueRange{x}, [&](OpBuilder &nb, ValueRange a) {
      return activation(nb, a[0], Activation::SiLU);
    });
  }
  Value timeEmbedding(Value timesteps);
  Value resnet(Value x, Value timeActivation, const UNetStep &step);
  Value transformer(Value x, Value context, const UNetStep &step);
  /// Attention of x [B * Lq, C] to itself or to `context` [B * Lk, Cx].
  Value attention(Value x, Value context, int64_t heads);
  Value upsample(Value x);
  Value meanSquaredError(Value prediction, Value target);
};

Value DiffusionBuilder::conv2d(Value x, int64_t stride) {
  Value w = param(), bias = param();
  int64_t n = dim(x, 0), h = dim(x, 2), wd = dim(x, 3);
  int64_t f = dim(w, 0), k = dim(w, 2), pad = k / 2;
  int64_t oh = (h + 2 * pad - k) / stride + 1,
          ow = (wd + 2 * pad - k) / stride + 1;
  Value in = pad ? padded(x, {0, 0, pad, pad}, {0, 0, pad, pad}) : x;
  auto attr = [&](int64_t v) {
    return DenseIntElementsAttr::get(RankedTensorType::get({2}, i64),
                                     ArrayRef<int64_t>{v, v});
  };
  Value y = linalg::Conv2DNchwFchwOp::create(
                b, loc, TypeRange{tensor({n, f, oh, ow})}, ValueRange{in, w},
                ValueRange{filled({n, f, oh, ow}, 0.0)}, attr(stride), attr(1))
                .getResult(0);
  AffineExpr fd = b.getAffineDimExpr(1);
  return generic(tensor({n, f, oh, ow}), ValueRange{y, bias},
                 empty({n, f, oh, ow}),
                 {identity(4), map(4, {fd}), identity(4)}, parallel(4),
                 [&](OpBuilder &nb, ValueRange a) -> Value {
                   return arith::AddFOp::create(nb, loc, a[0], a[1]);
                 });
}

Value DiffusionBuilder::groupNorm(Value x, double eps) {
  // torch-mlir's group_norm: [N, C, H, W] -> [N, G, C/G, H, W]; mean and
  // (biased) variance as keepdim reductions over the last three dims; the
  // per-channel scale and shift after collapsing back.
  Value weight = param(), bias = param();
  int64_t n = dim(x, 0), ch = dim(x, 1), h = dim(x, 2), w = dim(x, 3);
  int64_t g = c.normGroups, k = ch / g;
  double inv = 1.0 / double(k * h * w);
  Value xg = tensor::ExpandShapeOp::create(
      b, loc, tensor({n, g, k, h, w}), x,
      ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
  AffineExpr zero = b.getAffineConstantExpr(0);
  AffineMap stat =
      map(5, {b.getAffineDimExpr(0), b.getAffineDimExpr(1), zero, zero, zero});
  SmallVector<utils::IteratorType> reduce = parallel(5);
  reduce[2] = reduce[3] = reduce[4] = utils::IteratorType::reduction;
  auto sumOf = [&](Value v, bool square) {
    return generic(
        tensor({n, g, 1, 1, 1}), ValueRange{v}, filled({n, g, 1, 1, 1}, 0.0),
        {identity(5), stat}, reduce, [&](OpBuilder &nb, ValueRange a) -> Value {
          Value t = square ? arith::MulFOp::create(nb, loc, a[0], a[0]) : a[0];
          return arith::AddFOp::create(nb, loc, a[1], t);
        });
  };
  Value sum = sumOf(xg, false);
  Value centered =
      generic(tensor({n, g, k, h, w}), ValueRange{xg, sum},
              empty({n, g, k, h, w}), {identity(5), stat, identity(5)},
              parallel(5), [&](OpBuilder &nb, ValueRange a) -> Value {
                Value mean =
                    arith::MulFOp::create(nb, loc, a[1], f32Const(nb, inv));
                return arith::SubFOp::create(nb, loc, a[0], mean);
              });
  Value sumsq = sumOf(centered, true);
  Value normed = generic(
      tensor({n, g, k, h, w}), ValueRange{centered, sumsq},
      empty({n, g, k, h, w}), {identity(5), stat, identity(5)}, parallel(5),
      [&](OpBuilder &nb, ValueRange a) -> Value {
        Value var = arith::MulFOp::create(nb, loc, a[1], f32Const(nb, inv));
        Value r = math::RsqrtOp::create(
            nb, loc, arith::AddFOp::create(nb, loc, var, f32Const(nb, eps)));
        return arith::MulFOp::create(nb, loc, a[0], r);
      });
  Value flat = tensor::CollapseShapeOp::create(
      b, loc, normed, ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
  AffineMap channel = map(4, {b.getAffineDimExpr(1)});
  return generic(tensor({n, ch, h, w}), ValueRange{flat, weight, bias},
                 empty({n, ch, h, w}),
                 {identity(4), channel, channel, identity(4)}, parallel(4),
                 [&](OpBuilder &nb, ValueRange a) -> Value {
                   Value s = arith::MulFOp::create(nb, loc, a[0], a[1]);
                   return arith::AddFOp::create(nb, loc, s, a[2]);
                 });
}

Value DiffusionBuilder::timeEmbedding(Value timesteps) {
  // diffusers' Timesteps: t * exp(-ln(10000) j / (half - freq_shift)) for
  // j < half, sines then cosines (cosines first with flip_sin_to_cos), then
  // TimestepEmbedding: linear_1, SiLU, linear_2.
  int64_t half = c.hiddenSize / 2;
  double step = -std::log(10000.0) / (double(half) - c.freqShift);
  Value sinusoids = generic(
      tensor({batch, c.hiddenSize}), ValueRange{timesteps},
      empty({batch, c.hiddenSize}),
      {map(2, {b.getAffineDimExpr(0)}), identity(2)}, parallel(2),
      [&](OpBuilder &nb, ValueRange a) -> Value {
        Value t = arith::SIToFPOp::create(nb, loc, nb.getF32Type(), a[0]);
        Value d = linalg::IndexOp::create(nb, loc, 1);
        Value halfIndex = arith::ConstantIndexOp::create(nb, loc, half);
        Value j = arith::RemUIOp::create(nb, loc, d, halfIndex);
        Value jf = arith::SIToFPOp::create(
            nb, loc, nb.getF32Type(),
            arith::IndexCastOp::create(nb, loc, nb.getI64Type(), j));
        Value freq = math::ExpOp::create(
            nb, loc, arith::MulFOp::create(nb, loc, jf, f32Const(nb, step)));
        Value angle = arith::MulFOp::create(nb, loc, t, freq);
        Value first = arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ult,
                                            d, halfIndex);
        Value sin = math::SinOp::create(nb, loc, angle);
        Value cos = math::CosOp::create(nb, loc, angle);
        return c.flipSinToCos
                   ? arith::SelectOp::create(nb, loc, first, cos, sin)
                   : arith::SelectOp::create(nb, loc, first, sin, cos);
      });
  Value w1 = param(), b1 = param();
  Value hidden = silu(linear(sinusoids, w1, b1));
  Value w2 = param(), b2 = param();
  return linear(hidden, w2, b2);
}

Value DiffusionBuilder::resnet(Value x, Value timeActivation,
                               const UNetStep &step) {
  Value h = conv2d(silu(groupNorm(x, c.normEps)));
  Value tw = param(), tb = param();
  Value t = linear(timeActivation, tw, tb); // [B, out]
  AffineExpr n = b.getAffineDimExpr(0), ch = b.getAffineDimExpr(1);
  auto type = cast<RankedTensorType>(h.getType());
  h = generic(type, ValueRange{h, t}, empty(type.getShape()),
              {identity(4), map(4, {n, ch}), identity(4)}, parallel(4),
              [&](OpBuilder &nb, ValueRange a) -> Value {
                return arith::AddFOp::create(nb, loc, a[0], a[1]);
              });
  h = conv2d(silu(groupNorm(h, c.normEps)));
  Value shortcut = step.in != step.out ? conv2d(x) : x;
  return add(shortcut, h);
}

Value DiffusionBuilder::attention(Value x, Value context, int64_t heads) {
  Value qw = param(), kw = param(), vw = param();
  Value source = context ? context : x;
  Value q = flattenHeads(splitHeads(linear(x, qw, Value()), heads));
  Value k = flattenHeads(splitHeads(linear(source, kw, Value()), heads));
  Value v = flattenHeads(splitHeads(linear(source, vw, Value()), heads));
  double scale = 1.0 / std::sqrt(double(dim(qw, 0) / heads));
  Value scores = elementwise(ValueRange{attentionScores(q, k)},
                             [&](OpBuilder &nb, ValueRange a) -> Value {
                               return arith::MulFOp::create(
                                   nb, loc, a[0], f32Const(nb, scale));
                             });
  Value merged = mergeHeads(attentionOutput(scores, v), heads);
  Value ow = param(), ob = param();
  return linear(merged, ow, ob);
}

Value DiffusionBuilder::transformer(Value x, Value context,
                                    const UNetStep &step) {
  int64_t n = dim(x, 0), ch = dim(x, 1), h = dim(x, 2), w = dim(x, 3);
  Value inner = conv2d(groupNorm(x, 1e-6));
  // [B, C, H, W] -> [B, H, W, C] -> [B * H * W, C]: the pixels as tokens.
  Value nhwc = linalg::TransposeOp::create(b, loc, inner, empty({n, h, w, ch}),
                                           ArrayRef<int64_t>{0, 2, 3, 1})
                   .getResult()[0];
  Value tokens = tensor::CollapseShapeOp::create(
      b, loc, nhwc, ArrayRef<ReassociationIndices>{{0, 1, 2}, {3}});
  tokens = add(tokens, attention(nextLayerNorm(tokens), Value(), step.heads));
  tokens = add(tokens, attention(nextLayerNorm(tokens), context, step.heads));
  // GEGLU: the projection's first half times GELU (erf) of its second.
  Value normed = nextLayerNorm(tokens);
  Value pw = param(), pb = param();
  Value projected = linear(normed, pw, pb);
  int64_t rows = n * h * w, width = dim(projected, 1) / 2;
  auto half = [&](int64_t offset) -> Value {
    auto one = b.getIndexAttr(1);
    return tensor::ExtractSliceOp::create(
        b, loc, tensor({rows, width}), projected,
        ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(offset)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(rows), b.getIndexAttr(width)},
        ArrayRef<OpFoldResult>{one, one});
  };
  Value gated = elementwise(ValueRange{half(0), half(width)},
                            [&](OpBuilder &nb, ValueRange a) -> Value {
                              return arith::MulFOp::create(
                                  nb, loc, a[0],
                                  activation(nb, a[1], Activation::GeluErf));
                            });
  Value ow = param(), ob = param();
  tokens = add(tokens, linear(gated, ow, ob));
  Value back = tensor::ExpandShapeOp::create(
      b, loc, tensor({n, h, w, ch}), tokens,
      ArrayRef<ReassociationIndices>{{0, 1, 2}, {3}});
  Value nchw = linalg::TransposeOp::create(b, loc, back, empty({n, ch, h, w}),
                                           ArrayRef<int64_t>{0, 3, 1, 2})
                   .getResult()[0];
  return add(conv2d(nchw), x);
}

Value DiffusionBuilder::upsample(Value x) {
  // F.interpolate(scale_factor=2, mode="nearest") as a broadcast of each
  // pixel over a 2x2 block, then the convolution.
  int64_t n = dim(x, 0), ch = dim(x, 1), h = dim(x, 2), w = dim(x, 3);
  AffineExpr d[6];
  for (unsigned i = 0; i < 6; ++i)
    d[i] = b.getAffineDimExpr(i);
  Value blocks = generic(
      tensor({n, ch, h, 2, w, 2}), ValueRange{x}, empty({n, ch, h, 2, w, 2}),
      {map(6, {d[0], d[1], d[2], d[4]}), identity(6)}, parallel(6),
      [&](OpBuilder &, ValueRange a) -> Value { return a[0]; });
  Value doubled = tensor::CollapseShapeOp::create(
      b, loc, blocks, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}, {4, 5}});
  return conv2d(doubled);
}

Value DiffusionBuilder::meanSquaredError(Value prediction, Value target) {
  auto type = cast<RankedTensorType>(prediction.getType());
  double inv = 1.0 / double(type.getNumElements());
  SmallVector<utils::IteratorType> reduce(4, utils::IteratorType::reduction);
  return generic(tensor({}), ValueRange{prediction, target}, filled({}, 0.0),
                 {identity(4), identity(4), map(4, {})}, reduce,
                 [&](OpBuilder &nb, ValueRange a) -> Value {
                   Value e = arith::SubFOp::create(nb, loc, a[0], a[1]);
                   Value sq = arith::MulFOp::create(nb, loc, e, e);
                   Value scaled =
                       arith::MulFOp::create(nb, loc, sq, f32Const(nb, inv));
                   return arith::AddFOp::create(nb, loc, a[2], scaled);
                 });
}

void DiffusionBuilder::build(func::FuncOp func) {
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Value sample = entry->getArgument(0), timesteps = entry->getArgument(1),
        context3 = entry->getArgument(2), noise = entry->getArgument(3);
  for (unsigned i = 4; i < entry->getNumArguments(); ++i)
    params.push_back(entry->getArgument(i));
  Value context = tensor::CollapseShapeOp::create(
      b, loc, context3, ArrayRef<ReassociationIndices>{{0, 1}, {2}});

  Value x = sample;
  // SiLU of the time embedding, which every ResNet block reads.
  Value timeActivation;
  SmallVector<Value> skips;
  for (const UNetStep &step : unetPlan(c)) {
    switch (step.kind) {
    case UNetStep::Conv:
      x = conv2d(x);
      break;
    case UNetStep::TimeEmbedding:
      timeActivation = silu(timeEmbedding(timesteps));
      break;
    case UNetStep::Resnet:
      x = resnet(x, timeActivation, step);
      break;
    case UNetStep::Transformer:
      x = transformer(x, context, step);
      break;
    case UNetStep::Downsample:
      x = conv2d(x, /*stride=*/2);
      break;
    case UNetStep::Upsample:
      x = upsample(x);
      break;
    case UNetStep::PushSkip:
      skips.push_back(x);
      break;
    case UNetStep::ConcatSkip:
      x = tensor::ConcatOp::create(b, loc, /*dim=*/1,
                                   ValueRange{x, skips.pop_back_val()});
      break;
    case UNetStep::OutNorm:
      x = silu(groupNorm(x, c.normEps));
      break;
    }
  }
  assert(skips.empty() && "skips left unread");
  Value loss = meanSquaredError(x, noise);
  assert(nextParam == params.size() && "parameters left unused");
  func::ReturnOp::create(b, loc, loss);
}

} // namespace

void fbl::models::buildDiffusionBody(OpBuilder &b, Location loc,
                                     const ModelConfig &c, TrainingShape shape,
                                     func::FuncOp func) {
  DiffusionBuilder(b, loc, c, shape).build(func);
}

std::vector<ParameterInfo>
fbl::models::diffusionParameters(const ModelConfig &c) {
  // PyTorch's default initialization of Conv2d and Linear weights:
  // uniform(±1/sqrt(fan_in)); biases start at zero, norms at identity.
  std::vector<ParameterInfo> params;
  auto weight = [&](const std::string &name, std::vector<int64_t> shape) {
    int64_t fanIn = 1;
    for (int64_t d : llvm::drop_begin(shape))
      fanIn *= d;
    std::string init = formatInit("uniform", 1.0 / std::sqrt(double(fanIn)));
    params.push_back({name + ".weight", std::move(shape), init});
  };
  auto bias = [&](const std::string &name, int64_t n) {
    params.push_back({name + ".bias", {n}, "zeros"});
  };
  auto conv = [&](const std::string &name, int64_t in, int64_t out, int64_t k) {
    weight(name, {out, in, k, k});
    bias(name, out);
  };
  auto linear = [&](const std::string &name, int64_t in, int64_t out,
                    bool withBias = true) {
    weight(name, {out, in});
    if (withBias)
      bias(name, out);
  };
  auto norm = [&](const std::string &name, int64_t n) {
    params.push_back({name + ".weight", {n}, "ones"});
    bias(name, n);
  };
  int64_t time = 4 * c.hiddenSize;
  for (const UNetStep &s : unetPlan(c)) {
    const std::string &p = s.prefix;
    switch (s.kind) {
    case UNetStep::Conv:
    case UNetStep::Downsample:
    case UNetStep::Upsample:
      conv(p, s.in, s.out, 3);
      break;
    case UNetStep::TimeEmbedding:
      linear(p + ".linear_1", s.in, s.out);
      linear(p + ".linear_2", s.out, s.out);
      break;
    case UNetStep::Resnet:
      norm(p + ".norm1", s.in);
      conv(p + ".conv1", s.in, s.out, 3);
      linear(p + ".time_emb_proj", time, s.out);
      norm(p + ".norm2", s.out);
      conv(p + ".conv2", s.out, s.out, 3);
      if (s.in != s.out)
        conv(p + ".conv_shortcut", s.in, s.out, 1);
      break;
    case UNetStep::Transformer: {
      std::string t = p + ".transformer_blocks.0.";
      norm(p + ".norm", s.out);
      conv(p + ".proj_in", s.out, s.out, 1);
      for (bool cross : {false, true}) {
        // attn2 reads its keys and values from the text context.
        std::string a = t + (cross ? "attn2" : "attn1");
        int64_t source = cross ? c.crossAttentionDim : s.out;
        norm(t + (cross ? "norm2" : "norm1"), s.out);
        linear(a + ".to_q", s.out, s.out, false);
        linear(a + ".to_k", source, s.out, false);
        linear(a + ".to_v", source, s.out, false);
        linear(a + ".to_out.0", s.out, s.out);
      }
      norm(t + "norm3", s.out);
      linear(t + "ff.net.0.proj", s.out, 8 * s.out);
      linear(t + "ff.net.2", 4 * s.out, s.out);
      conv(p + ".proj_out", s.out, s.out, 1);
      break;
    }
    case UNetStep::OutNorm:
      norm(p, s.in);
      break;
    case UNetStep::PushSkip:
    case UNetStep::ConcatSkip:
      break;
    }
  }
  return params;
}
