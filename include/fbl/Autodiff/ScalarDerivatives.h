//===- ScalarDerivatives.h - Derivatives of scalar arith/math ops -*- C++
//-*-===//
//
// The one table of derivative rules for scalar ops. Forward mode: given the
// tangents of an op's operands, emit the tangent of its result. Because a
// tangent is linear in the operand tangents, the same rule gives reverse-mode
// contributions: seed operand k's tangent with the result's adjoint.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_AUTODIFF_SCALARDERIVATIVES_H
#define FBL_AUTODIFF_SCALARDERIVATIVES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::fbl {

/// Emits the tangent of `op`'s single result at the builder's position, from
/// `operandTangents` (one per operand; a null Value is a zero tangent).
/// `op` is the primal op in the code being built (its operands and result
/// are the primal values the rule may use). Returns a null Value for a zero
/// tangent and failure when `op` has no rule.
FailureOr<Value> emitScalarTangent(OpBuilder &b, Operation *op,
                                   ArrayRef<Value> operandTangents);

/// Clones the scalar ops of `body` (all but the terminator) at the builder's
/// position through `mapping`, skipping ops already mapped, and propagates
/// `tangents` (keyed by values of `body`; seed them before calling) to every
/// op. Returns the tangent of `target` (null when it is zero). Fails, with an
/// error on the op, when a value with a non-zero tangent flows into an op
/// without a rule.
FailureOr<Value> differentiateBody(OpBuilder &b, Block &body,
                                   IRMapping &mapping,
                                   llvm::DenseMap<Value, Value> &tangents,
                                   Value target);

} // namespace mlir::fbl

#endif // FBL_AUTODIFF_SCALARDERIVATIVES_H
