//===- IndexTransforms.cpp - Reshapes and transposes on layouts -----------===//

#include "fbl/Dialect/FBL/IR/IndexTransforms.h"
#include "fbl/Dialect/FBL/IR/FBLAttrs.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"

using namespace mlir;
using namespace mlir::fbl;

/// The permutation (fl::Permutation's convention: result dim k is source
/// dim perm[k]) of a generic that only copies its input through permuted maps.
static std::optional<SmallVector<int64_t>> genericPermutation(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 || generic.getNumReductionLoops() != 0)
    return std::nullopt;
  Block &body = *generic.getBlock();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (body.getOperations().size() != 1 ||
      yield.getOperand(0) != body.getArgument(0))
    return std::nullopt;
  AffineMap in = generic.getMatchingIndexingMap(generic.getDpsInputOperand(0));
  AffineMap out = generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
  if (!in.isPermutation() || !out.isPermutation())
    return std::nullopt;
  // result[out(i)] = source[in(i)]: result dim k is loop dim out[k], which
  // source dim j is when in[j] == out[k]; that j is result k of
  // out.compose(in^-1). (in.compose(out^-1) is the inverse permutation and
  // only agrees for involutions.)
  AffineMap perm = out.compose(inversePermutation(in));
  SmallVector<int64_t> p;
  for (AffineExpr e : perm.getResults())
    p.push_back(cast<AffineDimExpr>(e).getPosition());
  return p;
}

std::optional<SmallVector<int64_t>>
mlir::fbl::getIndexPermutation(Operation *op) {
  if (auto t = dyn_cast<linalg::TransposeOp>(op))
    return SmallVector<int64_t>(t.getPermutation());
  return genericPermutation(op);
}

bool mlir::fbl::isIndexTransform(Operation *op) {
  return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op) ||
         getIndexPermutation(op).has_value();
}

static SmallVector<ReassociationIndices> reassociationOf(Operation *op) {
  if (auto e = dyn_cast<tensor::ExpandShapeOp>(op))
    return e.getReassociationIndices();
  return cast<tensor::CollapseShapeOp>(op).getReassociationIndices();
}

Attribute mlir::fbl::composedLayout(Operation *op, Attribute source) {
  auto src = dyn_cast_or_null<LayoutEncodingAttrInterface>(source);
  if (!src)
    return {};
  auto srcType = cast<RankedTensorType>(op->getOperand(0).getType());
  auto dstType = cast<RankedTensorType>(op->getResult(0).getType());
  FailureOr<Attribute> composed = failure();
  if (auto perm = getIndexPermutation(op))
    composed = src.getTransposedEncoding(*perm);
  else
    composed = src.getReshapedEncoding(srcType.getShape(), dstType.getShape(),
                                       reassociationOf(op));
  return succeeded(composed) ? *composed : Attribute();
}

Attribute mlir::fbl::inverseComposedLayout(Operation *op, Attribute result) {
  auto dst = dyn_cast_or_null<LayoutEncodingAttrInterface>(result);
  if (!dst)
    return {};
  auto srcType = cast<RankedTensorType>(op->getOperand(0).getType());
  auto dstType = cast<RankedTensorType>(op->getResult(0).getType());
  FailureOr<Attribute> inverse = failure();
  if (auto perm = getIndexPermutation(op))
    inverse = dst.getTransposedEncoding(invertPermutationVector(*perm));
  else
    inverse = dst.getReshapedEncoding(dstType.getShape(), srcType.getShape(),
                                      reassociationOf(op));
  return succeeded(inverse) ? *inverse : Attribute();
}
