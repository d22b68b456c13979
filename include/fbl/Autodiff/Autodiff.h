//===- Autodiff.h - Reverse-mode differentiation of linalg ------*- C++ -*-===//
//
// Builds gradient and optimizer-step functions from a forward model on
// tensors. The pass fbl-autodiff is a thin driver over these entry points.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_AUTODIFF_AUTODIFF_H
#define FBL_AUTODIFF_AUTODIFF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::fbl {

/// Indices of the arguments of `func` marked `fbl.param`.
SmallVector<unsigned> getParamArgs(func::FuncOp func);

/// True when `func` returns exactly one `tensor<f32>` (a scalar loss).
bool returnsScalarLoss(func::FuncOp func);

/// Names of what differentiation adds, after the `fbl.name` of the parameter
/// they belong to: `<name>.grad` for a gradient result of `_grad`, PyTorch's
/// AdamW state keys `<name>.exp_avg` and `<name>.exp_avg_sq` for the moment
/// arguments of `_step`. In a model that names anything (usesNames), the
/// loss result is `loss` unless the forward names it, and the step count
/// argument is `step`.
inline constexpr llvm::StringLiteral kGradSuffix = ".grad";
inline constexpr llvm::StringLiteral kFirstMomentSuffix = ".exp_avg";
inline constexpr llvm::StringLiteral kSecondMomentSuffix = ".exp_avg_sq";
inline constexpr llvm::StringLiteral kLossName = "loss";
inline constexpr llvm::StringLiteral kStepCountName = "step";

/// Whether an argument or result of `func` carries `fbl.name`.
bool usesNames(func::FuncOp func);

/// Adds `@<name>_grad` next to `forward`: the same arguments (with their
/// attributes), returning the loss followed by the gradient of each argument
/// in `wrt` (ascending), named as above when the argument is. Emits an error
/// on the offending op and fails when an active op has no rule.
FailureOr<func::FuncOp> buildGradientFunction(func::FuncOp forward,
                                              ArrayRef<unsigned> wrt);

/// Removes what generated derivative code does not need: dead primal ops,
/// dead clones in linalg bodies, operands bodies do not read, duplicates.
void cleanUpDifferentiatedFunction(func::FuncOp func);

/// Hyper-parameters of the optimizer step.
struct OptimizerOptions {
  enum class Kind { SGD, AdamW } kind = Kind::SGD;
  double learningRate = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double weightDecay = 0.0;
};

/// Adds `@<name>_step` from `grad` (built for `wrt`): the forward's arguments
/// then, for AdamW, the first moments, the second moments (one per `wrt`
/// argument, same types, named after their parameter as above, `fbl.init`
/// "zeros") and the 1-based step count as `tensor<f32>`; returning the loss,
/// the updated parameters, and for AdamW the updated moments, each update
/// named like the argument it replaces.
FailureOr<func::FuncOp> buildStepFunction(func::FuncOp grad,
                                          StringRef forwardName,
                                          ArrayRef<unsigned> wrt,
                                          const OptimizerOptions &options);

} // namespace mlir::fbl

#endif // FBL_AUTODIFF_AUTODIFF_H
