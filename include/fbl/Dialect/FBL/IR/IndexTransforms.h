//===- IndexTransforms.h - Reshapes and transposes on layouts ---*- C++ -*-===//
//
// Index transforms are the ops fbl can turn into views: tensor reshapes,
// `linalg.transpose`, and generics that only copy their input through a
// permuted map. These helpers answer, for one such op, which permutation it
// performs and which layouts make it a view; layout selection, view folding
// and the kernels all ask here.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_DIALECT_FBL_IR_INDEXTRANSFORMS_H
#define FBL_DIALECT_FBL_IR_INDEXTRANSFORMS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Operation.h"

#include <optional>

namespace mlir::fbl {

/// The permutation a transpose performs (result dim k is source dim
/// perm[k], as in `linalg.transpose`), or std::nullopt for other ops.
std::optional<SmallVector<int64_t>> getIndexPermutation(Operation *op);

/// True for the ops fbl turns into views where layouts allow: tensor
/// reshapes, linalg.transpose, and generics that only permute their input.
bool isIndexTransform(Operation *op);

/// The layout of an index transform's result that addresses its source's
/// memory in `source` (a view), or null when the transform splits tiles.
Attribute composedLayout(Operation *indexTransform, Attribute source);

/// The source layout whose view is `result` under `indexTransform`, or null.
Attribute inverseComposedLayout(Operation *indexTransform, Attribute result);

} // namespace mlir::fbl

#endif // FBL_DIALECT_FBL_IR_INDEXTRANSFORMS_H
