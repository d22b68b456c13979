//===- IndexMaps.h - Index maps autodiff and kernels accept -----*- C++ -*-===//
//
// The autodiff rules and the kernel lowering index operands by loop ivs: each
// result of an indexing map must be a loop dim (a projected permutation).
// Constant-0 results on size-1 dims (keepdim reductions, broadcast reads of
// tensor<Nx1xf32>) are normalized away with upstream's unit-dim folding;
// anything else is refused with one diagnostic before any rewriting.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_AUTODIFF_INDEXMAPS_H
#define FBL_AUTODIFF_INDEXMAPS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::fbl {

/// Rewrites every linalg.generic of `func` that indexes a size-1 dim with the
/// constant 0 into a generic with projected-permutation maps between
/// tensor.collapse_shape / tensor.expand_shape. Returns true when it changed
/// something.
bool normalizeUnitDimIndexMaps(func::FuncOp func);

/// Emits one error ("<passName>: cannot <action> '<op>': operand #N is
/// accessed through <map>, ...") on the first linalg op under `root` with an
/// indexing map that is not a projected permutation, or whose iterator types
/// contradict its maps (a reduction dim in an output map, a parallel dim in
/// none), and fails.
LogicalResult verifyProjectedPermutationMaps(Operation *root,
                                             StringRef passName,
                                             StringRef action);

} // namespace mlir::fbl

#endif // FBL_AUTODIFF_INDEXMAPS_H
