//===- Model.h - Forward training models of real model families -*- C++ -*-===//
//
// Builds the forward training model of a model family from its ModelConfig:
// a func.func in linalg on tensors, written in the forms importers such as
// torch-mlir emit (linear layers as a transpose of the [out, in] weight and
// a matmul, head split as expand_shape + transpose, keepdim reductions,
// tensor.concat for rotate-half), returning the training loss.
//
//   decoders (LLaMA, Qwen2, Gemma): the shifted next-token cross-entropy;
//     inputs input_ids [B, S], labels [B, S] (-100: ignored).
//   BERT: masked-LM cross-entropy at the labelled positions, or the
//     cross-entropy of a sequence classifier over the first token; inputs
//     input_ids, token_type_ids, attention_mask (1: attend, 0: padding) —
//     each [B, S] — and labels ([B, S] for masked LM, [B] for
//     classification).
//   ViT: the cross-entropy of an image classifier over the class token;
//     inputs pixel_values [B, C, S, S] (f32) and labels [B]. The training
//     shape's seq is the number of patches plus one (the class token).
//
// The inputs (token ids and labels i64, pixels f32; attribute `fbl.name`)
// come first, then the parameters in
// Hugging Face state-dict order, each with `fbl.param`, `fbl.name` (the
// Hugging Face tensor name) and `fbl.init`.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_MODELS_MODEL_H
#define FBL_MODELS_MODEL_H

#include "fbl/Models/ModelConfig.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace fbl::models {

/// The token id labels use for positions that do not count in the loss.
constexpr int64_t kIgnoreIndex = -100;

struct TrainingShape {
  int64_t batch = 1;
  int64_t seq = 128;
};

/// One parameter of a model: its Hugging Face name, shape and default
/// initialization (the `fbl.init` syntax: zeros, ones, normal:STD,
/// uniform:BOUND).
struct ParameterInfo {
  std::string name;
  std::vector<int64_t> shape;
  std::string init;
};

/// One input of a model (token ids, types, masks, labels: i64; pixels:
/// f32).
struct InputInfo {
  std::string name;
  std::vector<int64_t> shape;
  bool isFloat = false;
};

/// The model's inputs in argument order.
std::vector<InputInfo> modelInputs(const ModelConfig &config,
                                   TrainingShape shape);
/// `shape` as the model sees it: a vision model's seq is its patches plus
/// the class token, whatever was asked.
TrainingShape modelShape(const ModelConfig &config, TrainingShape shape);
/// The model's parameters in argument order (after the inputs).
std::vector<ParameterInfo> modelParameters(const ModelConfig &config);

/// The dialects the built model uses.
void registerModelDialects(mlir::DialectRegistry &registry);

/// Adds `func.func @<name>` to `module`. Fails (with a diagnostic at the
/// module) when the shape or the task does not fit the config.
mlir::FailureOr<mlir::func::FuncOp> buildModel(mlir::ModuleOp module,
                                               const ModelConfig &config,
                                               TrainingShape shape,
                                               llvm::StringRef name = "model");

} // namespace fbl::models

#endif // FBL_MODELS_MODEL_H
