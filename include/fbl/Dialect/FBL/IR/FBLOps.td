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
    relayout reads the original source. A relayout of a constant fill of a
    fresh tensor canonicalizes to the fill in the result's layout.

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
  let hasCanonicalizer = 1;
}

def FBL_TransposeViewOp : FBL_Op<"transpose_view", [Pure]> {
  let summary = "Zero-cost transpose of an encoded tensor";
  let description = [{
    The transpose `result[j] = source[k]` with `k[permutation[i]] = j[i]`
    (result dim `i` is source dim `permutation[i]`, as in `linalg.transpose`;
    see `fbl::layout::Permutation`) as a change of coordinates: the result
    addresses the source's texels through the composed layout, which the
    result encoding must equal. No kernel runs. A view of a constant fill of
    a fresh tensor canonicalizes to that fill in the result's type.

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
  let hasCanonicalizer = 1;
}

def FBL_ReshapeViewOp : FBL_Op<"reshape_view", [Pure]> {
  let summary = "Zero-cost reshape that keeps every tile whole";
  let description = [{
    A `tensor.collapse_shape` or `tensor.expand_shape` (which one follows
    from the ranks; `reassociation` groups the dims of the larger shape)
    whose tiles and texels stay whole, as a change of coordinates. The
    result encoding must equal the composed layout. Reshapes that would
    split a tile or a texel are rejected: they need an `fbl.relayout`. A
    view of a constant fill of a fresh tensor canonicalizes to that fill in
    the result's type (a keepdim's zeros become a row reduction's constant
    init).

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
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

def FBL_DispatchOp : FBL_Op<"dispatch", [IsolatedFromAbove,
    SingleBlockImplicitTerminator<"::mlir::fbl::KernelReturnOp">,
    AttrSizedOperandSegments]> {
  let summary = "One kernel launch over encoded tensors";
  let description = [{
    A kernel: its body runs once per work-item of a `grid` of work-items
    grouped by `workgroup`, reads the `ins` tensors and writes the `outs`
    tensors (fresh memory objects; the results are the written tensors).
    The body sees each tensor as a block argument of the same type and
    accesses it only through `fbl.load_texel` / `fbl.store_texel` (images)
    or `fbl.load_element` / `fbl.store_element` (buffers), with addresses
    computed in the body from the layout. Emitters print the body; nothing
    else about a kernel is implicit.

    ```mlir
    %r = fbl.dispatch @add ins(%a, %b : T, T) outs(%e : T)
        grid [16, 8, 1] workgroup [8, 8, 1] {
    ^bb0(%x: T, %y: T, %o: T):
      ...
    }
    ```

    A kernel may carry `variants`: other bodies with the same arguments
    that write the same results, written differently (where a local-tiled
    GEMM stores its next slice, `fma` for its multiply-adds). Which one is
    fastest depends on the device's compiler, so each is printed as a
    function of its own and the runtime measures them on the device and
    runs the fastest (docs/Kernels.md).

    ```mlir
    %r = fbl.dispatch @k0_gemm_local ins(...) outs(...) grid [...]
        workgroup [...] { ... } variants { ... }, { ... }
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel,
                       Variadic<AnyRankedTensor>:$ins,
                       Variadic<AnyRankedTensor>:$outs,
                       DenseI64ArrayAttr:$grid,
                       DenseI64ArrayAttr:$workgroup);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body,
                        VariadicRegion<SizedRegion<1>>:$variants);
  let assemblyFormat = [{
    $kernel (`ins` `(` $ins^ `:` type($ins) `)`)? `outs` `(` $outs `:` type($outs) `)`
    `grid` $grid `workgroup` $workgroup attr-dict-with-keyword $body
    (`variants` $variants^)? (`->` type($results)^)?
  }];
  let extraClassDeclaration = [{
    /// Whether the body only moves and selects values (copies, relayouts,
    /// max/min, constants): no float arithmetic, so each output equals
    /// some input or constant exactly.
    bool onlySelects();
    /// The arguments its OpenCL kernel takes: each input a read image or a
    /// buffer, each output a write image or a buffer (BufferLayoutAttr
    /// decides).
    ::fbl::target::KernelArguments getKernelArguments();
    /// Whether a kernel argument of tensor type `type` is a buffer (a
    /// BufferLayoutAttr encoding), not an image.
    static bool isBufferArgument(::mlir::Type type);
  }];
  let hasVerifier = 1;
}

def FBL_KernelReturnOp : FBL_Op<"kernel_return", [Pure, Terminator,
    HasParent<"::mlir::fbl::DispatchOp">]> {
  let summary = "Ends a kernel body";
  let assemblyFormat = "attr-dict";
}

def FBL_WorkItemIdOp : FBL_Op<"work_item_id", [Pure]> {
  let summary = "The work-item's index along one grid dimension";
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<2>]>:$dim);
  let results = (outs Index:$id);
  let assemblyFormat = "$dim attr-dict";
}

def FBL_LocalIdOp : FBL_Op<"local_id", [Pure]> {
  let summary = "The work-item's index inside its work-group (get_local_id)";
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<2>]>:$dim);
  let results = (outs Index:$id);
  let assemblyFormat = "$dim attr-dict";
}

def FBL_GroupIdOp : FBL_Op<"group_id", [Pure]> {
  let summary = "The work-group's index along one grid dimension (get_group_id)";
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<2>]>:$dim);
  let results = (outs Index:$id);
  let assemblyFormat = "$dim attr-dict";
}

def FBL_BarrierOp : FBL_Op<"barrier"> {
  let summary = "Work-group barrier over local memory";
  let description = [{
    Every work-item of the work-group waits here until all have arrived, and
    their local-memory writes before it are visible after it
    (`barrier(CLK_LOCAL_MEM_FENCE)`). Local memory is a `memref.alloca` in
    memory space 3 at the top of a dispatch body; every work-item of the
    group must reach each barrier.
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

// The RGBA texel kernels read and write.
def FBL_Texel : VectorOfLengthAndType<[4], [F32]>,
    BuildableType<"::mlir::VectorType::get({4}, $_builder.getF32Type())">;

class FBL_MemoryAccessOp<string mnemonic, list<Trait> traits = []>
    : FBL_Op<mnemonic, traits> {
  let hasVerifier = 1;
}

def FBL_LoadTexelOp : FBL_MemoryAccessOp<"load_texel"> {
  let summary = "Reads one RGBA texel of an image (read_imagef)";
  let description = [{
    Reads the texel at (`x`, `y`) of layer `layer`. Coordinates must lie in
    the image, unless `clamp_to_edge` is set: then the device clamps them to
    the image's edge (a sampler with `CLK_ADDRESS_CLAMP_TO_EDGE`), so a read
    past the edge is defined and costs no instructions. Kernels set it on
    reads whose values past the edge are never used (a GEMM tile's rows
    past a ragged M), where a clamp in code would cost work in every read.
  }];
  let arguments = (ins AnyRankedTensor:$image, Index:$layer, Index:$y,
                       Index:$x, UnitAttr:$clamp_to_edge);
  let results = (outs FBL_Texel:$texel);
  let assemblyFormat = [{
    $image `[` $layer `,` $y `,` $x `]` attr-dict `:` type($image)
  }];
}

def FBL_StoreTexelOp : FBL_MemoryAccessOp<"store_texel"> {
  let summary = "Writes one RGBA texel of an image (write_imagef)";
  let arguments = (ins FBL_Texel:$texel,
                       AnyRankedTensor:$image, Index:$layer, Index:$y,
                       Index:$x);
  let assemblyFormat = [{
    $texel `,` $image `[` $layer `,` $y `,` $x `]` attr-dict `:` type($image)
  }];
}

def FBL_LoadElementOp : FBL_MemoryAccessOp<"load_element"> {
  let summary = "Reads one element of a buffer";
  let arguments = (ins AnyRankedTensor:$buffer, Index:$offset);
  let results = (outs AnyTypeOf<[AnyFloat, AnySignlessInteger]>:$value);
  let assemblyFormat = [{
    $buffer `[` $offset `]` attr-dict `:` type($buffer) `->` type($value)
  }];
}

def FBL_StoreElementOp : FBL_MemoryAccessOp<"store_element"> {
  let summary = "Writes one element of a buffer";
  let arguments = (ins AnyTypeOf<[AnyFloat, AnySignlessInteger]>:$value,
                       AnyRankedTensor:$buffer, Index:$offset);
  let assemblyFormat = [{
    $value `,` $buffer `[` $offset `]` attr-dict `:` type($value) `,` type($buffer)
  }];
}

#endif // FBL_DIALECT_FBL_IR_FBLOPS_TD
