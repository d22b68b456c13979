//===- DecoderModel.h - Forward training models of decoder LLMs -*- C++ -*-===//
//
// Builds the forward training model of a LLaMA-, Qwen2- or Gemma-style decoder
// from its ModelConfig: a func.func in linalg on tensors, written in the forms
// importers such as torch-mlir emit (linear layers as a transpose of the
// [out, in] weight and a matmul, head split as expand_shape + transpose,
// keepdim reductions, tensor.concat for rotate-half), returning the shifted
// token cross-entropy. Its arguments are
//
//   input_ids : tensor<B x S x i64>   token ids in [0, vocab_size)
//   labels    : tensor<B x S x i64>   next-token targets, -100 = ignored
//   parameters in Hugging Face state-dict order, each with `fbl.param`,
//   `fbl.name` (the Hugging Face tensor name) and `fbl.init`.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_MODELS_DECODERMODEL_H
#define FBL_MODELS_DECODERMODEL_H

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

/// The model's parameters in argument order.
std::vector<ParameterInfo> decoderParameters(const ModelConfig &config);

/// The dialects the built model uses.
void registerDecoderModelDialects(mlir::DialectRegistry &registry);

/// Adds `func.func @<name>` to `module`. Fails (with a diagnostic at the
/// module) when the shape does not fit the config.
mlir::FailureOr<mlir::func::FuncOp>
buildDecoderModel(mlir::ModuleOp module, const ModelConfig &config,
                  TrainingShape shape, llvm::StringRef name = "model");

} // namespace fbl::models

#endif // FBL_MODELS_DECODERMODEL_H
