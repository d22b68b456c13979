//===- ScalarDerivatives.cpp - Derivatives of scalar arith/math ops -------===//
//
// Tangent rules for the scalar ops that appear in linalg bodies and at
// function level. A null Value stands for an exactly-zero tangent, so code
// for derivatives that vanish is never emitted.
//
//===----------------------------------------------------------------------===//

#include "fbl/Autodiff/ScalarDerivatives.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fbl;

namespace {
/// Null-aware scalar arithmetic at one location. C++ leaves the order of a
/// call's arguments unspecified: where two arguments both create ops, they
/// are created in statements of their own, so the IR does not depend on the
/// compiler fbl is built with.
struct ScalarEmitter {
  OpBuilder &b;
  Location loc;
  Type type;

  Value constant(double v) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, v));
  }
  Value add(Value x, Value y) {
    if (!x)
      return y;
    if (!y)
      return x;
    return arith::AddFOp::create(b, loc, x, y);
  }
  Value sub(Value x, Value y) {
    if (!y)
      return x;
    if (!x)
      return arith::NegFOp::create(b, loc, y);
    return arith::SubFOp::create(b, loc, x, y);
  }
  /// Product where a null factor means zero.
  Value mul(Value x, Value y) {
    if (!x || !y)
      return {};
    return arith::MulFOp::create(b, loc, x, y);
  }
  Value div(Value x, Value y) {
    if (!x)
      return {};
    return arith::DivFOp::create(b, loc, x, y);
  }
  Value neg(Value x) { return x ? arith::NegFOp::create(b, loc, x) : x; }
  Value select(Value cond, Value x, Value y) {
    if (!x && !y)
      return {};
    if (!x)
      x = constant(0.0);
    if (!y)
      y = constant(0.0);
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  Value cmp(arith::CmpFPredicate pred, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, pred, x, y);
  }
};
} // namespace

FailureOr<Value> mlir::fbl::emitScalarTangent(OpBuilder &b, Operation *op,
                                              ArrayRef<Value> t) {
  if (llvm::all_of(t, [](Value v) { return !v; }))
    return Value();
  if (op->getNumResults() != 1)
    return failure();
  Value r = op->getResult(0);
  ScalarEmitter e{b, op->getLoc(), r.getType()};
  auto operand = [&](unsigned i) { return op->getOperand(i); };

  return llvm::TypeSwitch<Operation *, FailureOr<Value>>(op)
      .Case<arith::AddFOp>([&](auto) { return e.add(t[0], t[1]); })
      .Case<arith::SubFOp>([&](auto) { return e.sub(t[0], t[1]); })
      .Case<arith::MulFOp>([&](auto) {
        Value viaY = e.mul(operand(0), t[1]);
        Value viaX = e.mul(t[0], operand(1));
        return e.add(viaX, viaY);
      })
      .Case<arith::DivFOp>([&](auto) {
        // d(x / y) = dx / y - r * dy / y
        Value viaY = e.div(e.mul(r, t[1]), operand(1));
        Value viaX = e.div(t[0], operand(1));
        return e.sub(viaX, viaY);
      })
      .Case<arith::NegFOp>([&](auto) { return e.neg(t[0]); })
      .Case<arith::MaximumFOp, arith::MaxNumFOp>([&](auto) {
        Value pick = e.cmp(arith::CmpFPredicate::OGE, operand(0), operand(1));
        return e.select(pick, t[0], t[1]);
      })
      .Case<arith::MinimumFOp, arith::MinNumFOp>([&](auto) {
        Value pick = e.cmp(arith::CmpFPredicate::OLE, operand(0), operand(1));
        return e.select(pick, t[0], t[1]);
      })
      .Case<arith::SelectOp>([&](auto) -> FailureOr<Value> {
        if (t[0])
          return failure(); // the condition is not differentiable
        return e.select(operand(0), t[1], t[2]);
      })
      .Case<arith::ExtFOp, arith::TruncFOp>([&](auto) -> Value {
        if (!t[0])
          return {};
        return b
            .create(op->getLoc(), op->getName().getIdentifier(), {t[0]},
                    {r.getType()})
            ->getResult(0);
      })
      .Case<math::ExpOp>([&](auto) { return e.mul(t[0], r); })
      .Case<math::Exp2Op>(
          [&](auto) { return e.mul(t[0], e.mul(r, e.constant(M_LN2))); })
      .Case<math::ExpM1Op>(
          [&](auto) { return e.mul(t[0], e.add(r, e.constant(1.0))); })
      .Case<math::LogOp>([&](auto) { return e.div(t[0], operand(0)); })
      .Case<math::Log2Op>([&](auto) {
        return e.div(t[0], e.mul(operand(0), e.constant(M_LN2)));
      })
      .Case<math::Log10Op>([&](auto) {
        return e.div(t[0], e.mul(operand(0), e.constant(M_LN10)));
      })
      .Case<math::Log1pOp>(
          [&](auto) { return e.div(t[0], e.add(operand(0), e.constant(1.0))); })
      .Case<math::TanhOp>([&](auto) {
        // d tanh(x) = (1 - r^2) dx
        Value r2 = e.mul(r, r);
        Value one = e.constant(1.0);
        return e.mul(t[0], e.sub(one, r2));
      })
      .Case<math::SqrtOp>(
          [&](auto) { return e.div(t[0], e.mul(e.constant(2.0), r)); })
      .Case<math::RsqrtOp>([&](auto) {
        // d x^-1/2 = -1/2 x^-3/2 dx = -1/2 r^3 dx
        Value r3 = e.mul(r, e.mul(r, r));
        Value minusHalf = e.constant(-0.5);
        return e.mul(t[0], e.mul(minusHalf, r3));
      })
      .Case<math::PowFOp>([&](auto) {
        // d x^y = y x^(y-1) dx + r ln(x) dy
        Value dx;
        if (t[0]) {
          Value ym1 = e.sub(operand(1), e.constant(1.0));
          Value pow = math::PowFOp::create(b, op->getLoc(), operand(0), ym1);
          dx = e.mul(t[0], e.mul(operand(1), pow));
        }
        Value dy;
        if (t[1])
          dy = e.mul(
              t[1], e.mul(r, math::LogOp::create(b, op->getLoc(), operand(0))));
        return e.add(dx, dy);
      })
      .Case<math::ErfOp>([&](auto) {
        // d erf(x) = 2 / sqrt(pi) exp(-x^2) dx
        Value x = operand(0);
        Value g = math::ExpOp::create(b, op->getLoc(), e.neg(e.mul(x, x)));
        return e.mul(t[0], e.mul(e.constant(M_2_SQRTPI), g));
      })
      .Case<math::AbsFOp>([&](auto) {
        Value nonNeg =
            e.cmp(arith::CmpFPredicate::OGE, operand(0), e.constant(0.0));
        return e.select(nonNeg, t[0], e.neg(t[0]));
      })
      .Case<math::SinOp>([&](auto) {
        return e.mul(t[0], math::CosOp::create(b, op->getLoc(), operand(0)));
      })
      .Case<math::CosOp>([&](auto) {
        return e.neg(
            e.mul(t[0], math::SinOp::create(b, op->getLoc(), operand(0))));
      })
      .Case<math::FmaOp>([&](auto) {
        Value viaY = e.mul(operand(0), t[1]);
        Value viaX = e.mul(t[0], operand(1));
        return e.add(e.add(viaX, viaY), t[2]);
      })
      .Default([](Operation *) -> FailureOr<Value> { return failure(); });
}

FailureOr<Value>
mlir::fbl::differentiateBody(OpBuilder &b, Block &body, IRMapping &mapping,
                             llvm::DenseMap<Value, Value> &tangents,
                             Value target) {
  for (Operation &op : body.without_terminator()) {
    bool cloned = llvm::all_of(op.getResults(),
                               [&](Value v) { return mapping.contains(v); });
    Operation *primal = cloned && op.getNumResults()
                            ? mapping.lookup(op.getResult(0)).getDefiningOp()
                            : nullptr;
    if (!cloned)
      primal = b.clone(op, mapping);
    SmallVector<Value> operandTangents;
    for (Value v : op.getOperands())
      operandTangents.push_back(tangents.lookup(v));
    bool anyTangent =
        llvm::any_of(operandTangents, [](Value v) { return bool(v); });
    if (!anyTangent || op.getNumResults() == 0)
      continue;
    // Integer and predicate results carry no derivative.
    if (llvm::none_of(op.getResultTypes(),
                      [](Type t) { return isa<FloatType>(t); }))
      continue;
    FailureOr<Value> tangent =
        primal ? emitScalarTangent(b, primal, operandTangents)
               : FailureOr<Value>(failure());
    if (failed(tangent))
      return op.emitError("fbl-autodiff: cannot differentiate '")
             << op.getName() << "'";
    if (*tangent)
      tangents[op.getResult(0)] = *tangent;
  }
  return tangents.lookup(target);
}
