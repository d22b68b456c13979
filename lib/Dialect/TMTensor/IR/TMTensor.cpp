//===- TMTensor.cpp - torch-mlir's tm_tensor ops fbl reads ----------------===//

#include "fbl/Dialect/TMTensor/IR/TMTensor.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::fbl::tm_tensor;

#include "fbl/Dialect/TMTensor/IR/TMTensorDialect.cpp.inc"

void TMTensorDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "fbl/Dialect/TMTensor/IR/TMTensorOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "fbl/Dialect/TMTensor/IR/TMTensorOps.cpp.inc"

LogicalResult AttentionOp::verify() {
  if (getInputs().size() != 3 && getInputs().size() != 4)
    return emitOpError("takes query, key, value and an optional mask, got ")
           << getInputs().size() << " inputs";
  if (getOutputs().size() != 1)
    return emitOpError("has one output, got ") << getOutputs().size();
  if (getResult().size() > 1 ||
      (getResult().size() == 1 &&
       getResult()[0].getType() != getOutputs()[0].getType()))
    return emitOpError("result must have the output's type");
  auto q = cast<RankedTensorType>(getInputs()[0].getType());
  auto k = cast<RankedTensorType>(getInputs()[1].getType());
  auto v = cast<RankedTensorType>(getInputs()[2].getType());
  auto o = cast<RankedTensorType>(getOutputs()[0].getType());
  int64_t rank = q.getRank();
  if (rank < 2 || k.getRank() != rank || v.getRank() != rank ||
      o.getRank() != rank)
    return emitOpError("query, key, value and output need one rank of at "
                       "least 2");
  if (!q.hasStaticShape() || !k.hasStaticShape() || !v.hasStaticShape() ||
      !o.hasStaticShape())
    return emitOpError("needs static shapes");
  Type element = q.getElementType();
  if (k.getElementType() != element || v.getElementType() != element ||
      o.getElementType() != element || !isa<FloatType>(element))
    return emitOpError("query, key, value and output need one float type");
  ArrayRef<int64_t> qs = q.getShape(), ks = k.getShape(), vs = v.getShape(),
                    os = o.getShape();
  auto batch = [&](ArrayRef<int64_t> s) { return s.drop_back(2); };
  if (batch(ks) != batch(qs) || batch(vs) != batch(qs) ||
      batch(os) != batch(qs))
    return emitOpError("query, key, value and output need the same batch "
                       "dims");
  if (ks[rank - 1] != qs[rank - 1])
    return emitOpError("key's last dim ")
           << ks[rank - 1] << " differs from query's " << qs[rank - 1];
  if (vs[rank - 2] != ks[rank - 2])
    return emitOpError("value has ")
           << vs[rank - 2] << " rows, key " << ks[rank - 2];
  if (os[rank - 2] != qs[rank - 2] || os[rank - 1] != vs[rank - 1])
    return emitOpError("output must be [..., ")
           << qs[rank - 2] << ", " << vs[rank - 1] << "]";
  if (getInputs().size() == 4) {
    auto m = cast<RankedTensorType>(getInputs()[3].getType());
    SmallVector<int64_t> want(batch(qs));
    want.append({qs[rank - 2], ks[rank - 2]});
    if (m.getShape() != ArrayRef<int64_t>(want))
      return emitOpError("mask must have the scores' shape [..., ")
             << qs[rank - 2] << ", " << ks[rank - 2] << "]";
    if (m.getElementType() != element && !m.getElementType().isInteger(1))
      return emitOpError("mask must be i1 or the query's element type");
  }
  return success();
}
