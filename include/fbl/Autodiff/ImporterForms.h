//===- ImporterForms.h - Importer forms, made differentiable ----*- C++ -*-===//
//
// Importers such as torch-mlir write some computations in forms the gradient
// rules and kernels do not take directly. Before differentiating, each is
// rewritten with upstream's own transformations into an equivalent form fbl
// handles:
//   - tensor.concat (RoPE's rotate-half, a CLS token) -> tensor.insert_slice
//     into tensor.empty (upstream's decomposition);
//   - tensor.pad (a convolution's or a sequence's padding) -> the padding
//     value filled into tensor.empty, the source inserted as a slice
//     (upstream's decomposition);
//   - math.fpowi with a constant exponent (`x.pow(2)`) -> multiplications
//     (upstream's math expansion);
//   - f64 constants truncated or extended in a body (a norm's epsilon) ->
//     f32 constants (folding);
//   - index arithmetic in bodies (affine.apply, arith.floordivsi and
//     arith.ceildivsi, e.g. ids read at `n floordiv 2`) -> the plain arith
//     ops they expand to (upstream's expansions);
//   - constant-0 results of index maps on size-1 dims (keepdim reductions
//     and their broadcasts) -> projected permutations between reshapes;
//   - tm_tensor.attention (torch-mlir's scaled dot-product attention) ->
//     batch matmuls and a row softmax in linalg (DecomposeAttention.cpp);
//   - convolutions (named or generic: index maps such as 2 * oh + kh) -> a
//     chain of generics over strided slices, one per window position
//     (DecomposeConvolution.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef FBL_AUTODIFF_IMPORTERFORMS_H
#define FBL_AUTODIFF_IMPORTERFORMS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::fbl {

/// Applies the rewrites above to `func`.
void normalizeImporterForms(func::FuncOp func);

/// The tm_tensor.attention decomposition alone (static f32 shapes).
void populateDecomposeAttentionPatterns(RewritePatternSet &patterns);

/// The convolution decomposition alone (static shapes).
void populateDecomposeConvolutionPatterns(RewritePatternSet &patterns);

} // namespace mlir::fbl

#endif // FBL_AUTODIFF_IMPORTERFORMS_H
