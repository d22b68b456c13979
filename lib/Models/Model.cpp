//===- Model.cpp - The model function of each family ----------------------===//
//
// What every family shares: the function's signature (inputs, then the
// parameters with their names and initializations) and the checks of the
// training shape against the config; the bodies live with their families.
//
//===----------------------------------------------------------------------===//

#include "LayerBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace fbl::models;

TrainingShape fbl::models::modelShape(const ModelConfig &c,
                                      TrainingShape shape) {
  if (c.isVision())
    shape.seq = c.numPatches() + 1;
  return shape;
}

std::vector<InputInfo> fbl::models::modelInputs(const ModelConfig &c,
                                                TrainingShape shape) {
  if (c.isDiffusion()) {
    std::vector<int64_t> latents = {shape.batch, c.inChannels, c.sampleSize,
                                    c.sampleSize};
    std::vector<int64_t> noise = latents;
    noise[1] = c.outChannels;
    return {{"sample", latents, /*isFloat=*/true},
            {"timestep", {shape.batch}},
            {"encoder_hidden_states",
             {shape.batch, shape.seq, c.crossAttentionDim},
             /*isFloat=*/true},
            {"noise", noise, /*isFloat=*/true}};
  }
  if (c.isSpeech())
    return {{"input_features",
             {shape.batch, c.numMelBins, 2 * c.maxSourcePositions},
             /*isFloat=*/true},
            {"decoder_input_ids", {shape.batch, shape.seq}},
            {"labels", {shape.batch, shape.seq}}};
  if (c.isVision())
    return {{"pixel_values",
             {shape.batch, c.numChannels, c.imageSize, c.imageSize},
             /*isFloat=*/true},
            {"labels", {shape.batch}}};
  std::vector<int64_t> tokens = {shape.batch, shape.seq};
  if (!c.isEncoder())
    return {{"input_ids", tokens}, {"labels", tokens}};
  std::vector<int64_t> labels = c.task == Task::SequenceClassification
                                    ? std::vector<int64_t>{shape.batch}
                                    : tokens;
  return {{"input_ids", tokens},
          {"token_type_ids", tokens},
          {"attention_mask", tokens},
          {"labels", labels}};
}

std::vector<ParameterInfo>
fbl::models::modelParameters(const ModelConfig &config) {
  if (config.isDiffusion())
    return diffusionParameters(config);
  if (config.isSpeech())
    return speechParameters(config);
  if (config.isVision())
    return visionParameters(config);
  return config.isEncoder() ? encoderParameters(config)
                            : decoderParameters(config);
}

void fbl::models::registerModelDialects(DialectRegistry &registry) {
  registry.insert<arith::ArithDialect, func::FuncDialect, linalg::LinalgDialect,
                  math::MathDialect, tensor::TensorDialect>();
}

FailureOr<func::FuncOp> fbl::models::buildModel(ModuleOp module,
                                                const ModelConfig &config,
                                                TrainingShape shape,
                                                llvm::StringRef name) {
  shape = modelShape(config, shape);
  int64_t minSeq = config.task == Task::CausalLM ? 2 : 1;
  if (shape.batch < 1 || shape.seq < minSeq)
    return module.emitError("model builder: need batch >= 1 and seq >= ")
           << minSeq
           << (minSeq == 2 ? " (the loss predicts each next token)" : "")
           << ", got batch " << shape.batch << " and seq " << shape.seq;
  if (!config.isVision() && shape.seq > config.maxPositions)
    return module.emitError("model builder: seq ")
           << shape.seq << " exceeds max_position_embeddings "
           << config.maxPositions;
  bool fits = config.isDiffusion() ? config.task == Task::NoisePrediction
              : config.isSpeech()  ? config.task == Task::SpeechToText
              : config.isVision()  ? config.task == Task::ImageClassification
              : config.isEncoder()
                  ? config.task == Task::MaskedLM ||
                        config.task == Task::SequenceClassification
                  : config.task == Task::CausalLM;
  if (!fits)
    return module.emitError("model builder: a ")
           << config.familyName() << " model cannot be trained as "
           << config.taskName()
           << (config.isDiffusion() ? " (noise-prediction)"
               : config.isSpeech()  ? " (speech-to-text)"
               : config.isVision()  ? " (image-classification)"
               : config.isEncoder() ? " (masked-lm or classification)"
                                    : " (causal-lm)");
  MLIRContext *ctx = module.getContext();
  DialectRegistry registry;
  registerModelDialects(registry);
  ctx->appendDialectRegistry(registry);
  ctx->loadAllAvailableDialects();

  OpBuilder b(ctx);
  Location loc = NameLoc::get(b.getStringAttr(
      llvm::formatv("{0}({1})", config.familyName(), config.modelType).str()));
  std::vector<InputInfo> inputs = modelInputs(config, shape);
  std::vector<ParameterInfo> params = modelParameters(config);
  SmallVector<Type> argTypes;
  for (const InputInfo &in : inputs)
    argTypes.push_back(RankedTensorType::get(
        in.shape, in.isFloat ? Type(b.getF32Type()) : b.getI64Type()));
  for (const ParameterInfo &p : params)
    argTypes.push_back(RankedTensorType::get(p.shape, b.getF32Type()));
  auto type =
      b.getFunctionType(argTypes, RankedTensorType::get({}, b.getF32Type()));

  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(b, loc, name, type);
  for (auto [i, in] : llvm::enumerate(inputs))
    func.setArgAttr(i, "fbl.name", b.getStringAttr(in.name));
  for (auto [i, p] : llvm::enumerate(params)) {
    unsigned a = inputs.size() + i;
    func.setArgAttr(a, "fbl.param", b.getUnitAttr());
    func.setArgAttr(a, "fbl.name", b.getStringAttr(p.name));
    func.setArgAttr(a, "fbl.init", b.getStringAttr(p.init));
  }
  if (config.isDiffusion())
    buildDiffusionBody(b, loc, config, shape, func);
  else if (config.isSpeech())
    buildSpeechBody(b, loc, config, shape, func);
  else if (config.isVision())
    buildVisionBody(b, loc, config, shape, func);
  else if (config.isEncoder())
    buildEncoderBody(b, loc, config, shape, func);
  else
    buildDecoderBody(b, loc, config, shape, func);
  return func;
}
