//===- FBLOps.td - fbl operations --------------------------*- tablegen -*-===//
//
// Ops only where linalg lacks the meaning: a costed layout conversion and
// zero-cost views. Compute stays in linalg on encoded tensors.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_DIALECT_FBL_IR_FBLOPS_TD
#define FBL_DIALECT_FBL_IR_FBLOPS_TD

include "fbl/Dialect/FBL/IR/FBLDialect.td"
include "fbl/Dialect/FBL/IR/FBLAttrs.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ViewLikeInterface.td"

def FBL_RelayoutOp : FBL_Op<"relayout", [Pure]> {
  let summary = "Converts a tensor to another layout (real data movement)";
  let description = [{
    Moves a tensor into another layout: a kernel that reads every texel of
    the source and writes the result. The compiler counts and costs these;
    layout selection exists to need as few as possible. A source without an
    encoding is a logical tensor being given its first layout.

    Folds away when source and result types are equal, and a relayout of a
    relayout reads the original source.

    ```mlir
    %1 = fbl.relayout %0 : tensor<64x64xf32, #fbl.channel_packed<packed = 1>>
                        to tensor<64x64xf32, #fbl.rtile<tile = [4, 4], packed = 0>>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$source);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$source attr-dict `:` type($source) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def FBL_TransposeViewOp : FBL_Op<"transpose_view", [Pure]> {
  let summary = "Zero-cost transpose of an encoded tensor";
  let description = [{
    The transpose `result[i_perm...] = source[i...]` (result dim `k` is
    source dim `permutation[k]`) as a change of coordinates: the result
    addresses the source's texels through the composed layout, which the
    result encoding must equal. No kernel runs.

    ```mlir
    %t = fbl.transpose_view %x, [1, 0]
        : tensor<64x32xf32, #fbl.rtile<tile = [4, 4], packed = 1>>
       -> tensor<32x64xf32, #fbl.rtile<tile = [4, 4], packed = 0,
                                         intra = rows_on_x, inter = col_major>>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$source,
                       DenseI64ArrayAttr:$permutation);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $source `,` $permutation attr-dict `:` type($source) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$source,
                   "::llvm::ArrayRef<int64_t>":$permutation)>
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def FBL_ReshapeViewOp : FBL_Op<"reshape_view", [Pure]> {
  let summary = "Zero-cost reshape that keeps every tile whole";
  let description = [{
    A `tensor.collapse_shape` or `tensor.expand_shape` (which one follows
    from the ranks; `reassociation` groups the dims of the larger shape)
    whose tiles and texels stay whole, as a change of coordinates. The
    result encoding must equal the composed layout. Reshapes that would
    split a tile or a texel are rejected: they need an `fbl.relayout`.

    Splitting hidden into heads with head_dim % 4 == 0:

    ```mlir
    %h = fbl.reshape_view %x [[0], [1, 2]]
        : tensor<128x512xf32, #fbl.channel_packed<packed = 1>>
       -> tensor<128x8x64xf32, #fbl.image<tile = [1, 1, 4], packed = 2,
                                x = [d1, d2], y = [d0], layers = []>>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$source,
                       IndexListArrayAttr:$reassociation);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $source $reassociation attr-dict `:` type($source) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The reassociation as index groups.
    ::llvm::SmallVector<::mlir::ReassociationIndices> getReassociationIndices();
    /// True when the result has fewer dims than the source.
    bool isCollapse() {
      return getResult().getType().getRank() < getSource().getType().getRank();
    }
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

#endif // FBL_DIALECT_FBL_IR_FBLOPS_TD
