//===- LayerBuilder.h - Ops every model builder writes ----------*- C++ -*-===//
//
// The modules the model families share (linear layers, activations, norms,
// embedding lookups, the token cross-entropy), each written the way
// torch-mlir writes the PyTorch code, so that a built model and an imported
// one take the same path through fbl. Internal to lib/Models.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_LIB_MODELS_LAYERBUILDER_H
#define FBL_LIB_MODELS_LAYERBUILDER_H

#include "fbl/Models/Model.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

#include <string>

namespace fbl::models {

/// `kind:value` in the `fbl.init` syntax.
std::string formatInit(llvm::StringRef kind, double value);

class LayerBuilder {
public:
  LayerBuilder(mlir::OpBuilder &b, mlir::Location loc, const ModelConfig &c,
               TrainingShape shape)
      : b(b), loc(loc), c(c), batch(shape.batch), seq(shape.seq),
        tokens(shape.batch * shape.seq), f32(b.getF32Type()),
        i64(b.getI64Type()) {}

protected:
  // Types and constants.
  mlir::RankedTensorType tensor(llvm::ArrayRef<int64_t> shape,
                                mlir::Type element = {}) {
    return mlir::RankedTensorType::get(shape, element ? element : f32);
  }
  mlir::Value f32Const(mlir::OpBuilder &ob, double v);
  mlir::Value empty(llvm::ArrayRef<int64_t> shape, mlir::Type element = {});
  mlir::Value filled(llvm::ArrayRef<int64_t> shape, double v);
  mlir::AffineMap map(unsigned dims, llvm::ArrayRef<mlir::AffineExpr> results) {
    return mlir::AffineMap::get(dims, 0, results, b.getContext());
  }
  mlir::AffineMap identity(unsigned dims) {
    return b.getMultiDimIdentityMap(dims);
  }
  llvm::SmallVector<mlir::utils::IteratorType> parallel(unsigned n) {
    return llvm::SmallVector<mlir::utils::IteratorType>(
        n, mlir::utils::IteratorType::parallel);
  }

  using BodyFn =
      llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::ValueRange)>;
  /// A one-result linalg.generic whose body yields `body(args)`.
  mlir::Value generic(mlir::Type result, mlir::ValueRange ins, mlir::Value init,
                      llvm::ArrayRef<mlir::AffineMap> maps,
                      llvm::ArrayRef<mlir::utils::IteratorType> iterators,
                      BodyFn body);
  /// Elementwise op over same-shaped f32 tensors.
  mlir::Value elementwise(mlir::ValueRange ins, BodyFn body);

  // Modules.
  /// Rows of `table` [V, H] picked by the ids of `ids` [B, S] (i64): [N, H].
  /// `scale` multiplies the rows (Gemma's sqrt(hidden_size)); 1 writes none.
  mlir::Value embedding(mlir::Value ids, mlir::Value table, double scale = 1.0);
  /// aten.linear: x [R, in] times the transposed [out, in] weight, plus an
  /// optional bias [out].
  mlir::Value linear(mlir::Value x, mlir::Value weight, mlir::Value bias);
  /// The config's activation of one scalar.
  mlir::Value activation(mlir::OpBuilder &ob, mlir::Value g) {
    return activation(ob, g, c.activation);
  }
  mlir::Value activation(mlir::OpBuilder &ob, mlir::Value g, Activation kind);
  /// x zero-padded by `low` and `high` elements per dim (tensor.pad).
  mlir::Value padded(mlir::Value x, llvm::ArrayRef<int64_t> low,
                     llvm::ArrayRef<int64_t> high);
  /// LayerNorm over the last dim of x [R, H]: (x - mean) / sqrt(var + eps)
  /// * weight + bias, mean and (biased) variance as keepdim reductions.
  mlir::Value layerNorm(mlir::Value x, mlir::Value weight, mlir::Value bias,
                        double eps);
  /// Mean cross-entropy of logits [M, V] against labels [M] (i64) over the
  /// labels that are not kIgnoreIndex.
  mlir::Value crossEntropy(mlir::Value logits, mlir::Value labels);
  /// Head split of x [B * L, heads * D]: [B, heads, L, D].
  mlir::Value splitHeads(mlir::Value x, int64_t heads);
  /// Head merge of o [B * heads, L, D]: [B * L, heads * D].
  mlir::Value mergeHeads(mlir::Value o, int64_t heads);
  /// Q·Kᵀ of q [B * heads, Lq, D] and k [B * heads, Lk, D] (a batch matmul
  /// reading K transposed): [B * heads, Lq, Lk].
  mlir::Value attentionScores(mlir::Value q, mlir::Value k);
  /// softmax(scores) · v along the last dim of scores [B * heads, Lq, Lk].
  mlir::Value attentionOutput(mlir::Value scores, mlir::Value v);
  /// [B, H, S, D] -> [B * H, S, D].
  mlir::Value flattenHeads(mlir::Value x);
  /// x + y, elementwise.
  mlir::Value add(mlir::Value x, mlir::Value y);
  /// Rows 0..n-1 of table [R, H] (the positions arange(n) of a learned
  /// position table).
  mlir::Value leadingRows(mlir::Value table, int64_t n);
  /// x [B, L, H] + rows [L, H], the rows broadcast over the batch.
  mlir::Value addToEachSequence(mlir::Value x, mlir::Value rows);
  /// hidden[:, 0] of x [B * L, H]: [B, H] (aten.select, a rank-reducing
  /// slice).
  mlir::Value firstToken(mlir::Value x);

  // The function's parameters, which the family builders take in order.
  mlir::Value param() { return params[nextParam++]; }
  /// LayerNorm of x with the parameters at `index` (weight, bias) and the
  /// config's epsilon; pre-norm layers list a norm after the weights it
  /// feeds.
  mlir::Value layerNormAt(mlir::Value x, unsigned index) {
    return layerNorm(x, params[index], params[index + 1], c.layerNormEps);
  }
  /// LayerNorm of x with the next two parameters.
  mlir::Value nextLayerNorm(mlir::Value x) {
    nextParam += 2;
    return layerNormAt(x, nextParam - 2);
  }
  llvm::SmallVector<mlir::Value> params;
  unsigned nextParam = 0;

  mlir::OpBuilder &b;
  mlir::Location loc;
  const ModelConfig &c;
  int64_t batch, seq, tokens;
  mlir::Type f32, i64;
};

/// The bodies of the families' model functions, whose arguments follow
/// modelInputs() then modelParameters().
void buildDecoderBody(mlir::OpBuilder &b, mlir::Location loc,
                      const ModelConfig &c, TrainingShape shape,
                      mlir::func::FuncOp func);
void buildEncoderBody(mlir::OpBuilder &b, mlir::Location loc,
                      const ModelConfig &c, TrainingShape shape,
                      mlir::func::FuncOp func);
void buildVisionBody(mlir::OpBuilder &b, mlir::Location loc,
                     const ModelConfig &c, TrainingShape shape,
                     mlir::func::FuncOp func);
std::vector<ParameterInfo> decoderParameters(const ModelConfig &c);
std::vector<ParameterInfo> encoderParameters(const ModelConfig &c);
std::vector<ParameterInfo> visionParameters(const ModelConfig &c);
void buildSpeechBody(mlir::OpBuilder &b, mlir::Location loc,
                     const ModelConfig &c, TrainingShape shape,
                     mlir::func::FuncOp func);
std::vector<ParameterInfo> speechParameters(const ModelConfig &c);
void buildDiffusionBody(mlir::OpBuilder &b, mlir::Location loc,
                        const ModelConfig &c, TrainingShape shape,
                        mlir::func::FuncOp func);
std::vector<ParameterInfo> diffusionParameters(const ModelConfig &c);

} // namespace fbl::models

#endif // FBL_LIB_MODELS_LAYERBUILDER_H
