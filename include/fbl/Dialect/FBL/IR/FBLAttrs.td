//===- FBLAttrs.td - fbl layout and target attributes ------*- tablegen -*-===//
//
// Layout encodings (one attribute per layout family, all implementing
// LayoutEncodingAttrInterface) and the target description.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_DIALECT_FBL_IR_FBLATTRS_TD
#define FBL_DIALECT_FBL_IR_FBLATTRS_TD

include "fbl/Dialect/FBL/IR/FBLDialect.td"
include "fbl/Dialect/FBL/IR/FBLInterfaces.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/TensorEncoding.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def FBL_BatchFold : I32EnumAttr<"BatchFold",
    "where the leading (batch/head) dims of a tensor go", [
      I32EnumAttrCase<"Y", 0, "y">,
      I32EnumAttrCase<"Layers", 1, "layers">
    ]> {
  let cppNamespace = "::mlir::fbl";
  let genSpecializedAttr = 0;
}

def FBL_IntraTileOrder : I32EnumAttr<"IntraTileOrder",
    "placement of the texels of one R-Tile", [
      I32EnumAttrCase<"RowsOnY", 0, "rows_on_y">,
      I32EnumAttrCase<"RowsOnX", 1, "rows_on_x">,
      I32EnumAttrCase<"Linear", 2, "linear">
    ]> {
  let cppNamespace = "::mlir::fbl";
  let genSpecializedAttr = 0;
}

def FBL_InterTileOrder : I32EnumAttr<"InterTileOrder",
    "placement of the grid of R-Tiles", [
      I32EnumAttrCase<"RowMajor", 0, "row_major">,
      I32EnumAttrCase<"ColMajor", 1, "col_major">
    ]> {
  let cppNamespace = "::mlir::fbl";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Layout encodings
//===----------------------------------------------------------------------===//

// Tile sizes print as a bracketed list so they fit `struct(params)`.
def FBL_TileSizesParameter : ArrayRefParameter<"int64_t", "tile sizes"> {
  let parser = [{ [&]() -> ::mlir::FailureOr<::llvm::SmallVector<int64_t>> {
    ::llvm::SmallVector<int64_t> sizes;
    if ($_parser.parseCommaSeparatedList(::mlir::AsmParser::Delimiter::Square,
            [&]() { return $_parser.parseInteger(sizes.emplace_back()); }))
      return ::mlir::failure();
    return sizes;
  }() }];
  let printer = [{
    $_printer << '[';
    ::llvm::interleaveComma($_self, $_printer);
    $_printer << ']';
  }];
}

class FBL_LayoutAttr<string name, string attrMnemonic>
    : AttrDef<FBL_Dialect, name, [
        DeclareAttrInterfaceMethods<FBL_LayoutEncodingAttrInterface>,
        DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let mnemonic = attrMnemonic;
}

def FBL_BufferLayoutAttr : FBL_LayoutAttr<"BufferLayout", "buffer"> {
  let summary = "Dense row-major OpenCL buffer";
  let description = [{
    The tensor lives in a plain `__global` buffer, row-major, without
    padding. Any element type; no image limits apply.

    ```mlir
    tensor<16x32xf32, #fbl.buffer>
    ```
  }];
}

def FBL_ChannelPackedLayoutAttr
    : FBL_LayoutAttr<"ChannelPackedLayout", "channel_packed"> {
  let summary = "Image with one dim packed by 4 into RGBA (MNN/TFLite style)";
  let description = [{
    The layout mobile frameworks use for every tensor: dim `packed` is
    packed four elements to a texel (padded to a multiple of 4); the last
    dim goes along x, the second-to-last down y, and the leading (batch or
    head) dims are folded into y (`batch = y`, above the rows) or into the
    layers of an `image2d_array_t` (`batch = layers`).

    For `tensor<MxKxf32>` with `packed = 1`, element (m, k) is channel
    `k mod 4` of texel (x = k floordiv 4, y = m).

    ```mlir
    tensor<8x64x32xf32, #fbl.channel_packed<packed = 2, batch = layers>>
    ```
  }];
  let parameters = (ins
    "int64_t":$packed,
    DefaultValuedParameter<"::mlir::fbl::BatchFold",
                           "::mlir::fbl::BatchFold::Y">:$batch);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def FBL_RTileLayoutAttr : FBL_LayoutAttr<"RTileLayout", "rtile"> {
  let summary = "R-Tile: whole tiles that every reduction direction reads";
  let description = [{
    The last two dims are cut into `tile[0] x tile[1]` tiles; the `packed`
    dim (one of the two) is packed four elements to a texel, so a tile is
    `tile[0] * tile[1] / 4` texels that a kernel always loads whole. Whether
    a kernel reduces over rows (forward `X·W`) or columns (backward `Xᵀ·dY`)
    it reads whole texels from one small 2D neighbourhood and contracts in
    registers, so forward and backward share one layout.

    `intra` places the texels of a tile (`rows_on_y`: tile rows down y;
    `rows_on_x`: tile rows along x; `linear`: the whole tile on one image
    row), `inter` places the tile grid (`row_major`: tile rows on y,
    `col_major`: tile rows on x), `batch` folds leading dims into y or into
    image-array layers. Shapes that are not multiples of the tile are padded.

    ```mlir
    tensor<512x2048xf32, #fbl.rtile<tile = [4, 4], packed = 1,
                                    intra = rows_on_x, inter = row_major>>
    ```
  }];
  let parameters = (ins
    FBL_TileSizesParameter:$tile,
    "int64_t":$packed,
    DefaultValuedParameter<"::mlir::fbl::IntraTileOrder",
                           "::mlir::fbl::IntraTileOrder::RowsOnY">:$intra,
    DefaultValuedParameter<"::mlir::fbl::InterTileOrder",
                           "::mlir::fbl::InterTileOrder::RowMajor">:$inter,
    DefaultValuedParameter<"::mlir::fbl::BatchFold",
                           "::mlir::fbl::BatchFold::Y">:$batch);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def FBL_ImageLayoutAttr : FBL_LayoutAttr<"ImageLayout", "image"> {
  let summary = "General tiled image layout (the composed layout of views)";
  let description = [{
    The general form behind every image layout: per-dim `tile` sizes, the
    `packed` dim (tile size a multiple of 4), and the placement of each
    factor on the image axes, most significant first. Factor `dN` is the
    tile index of dim N (`i floordiv tile[N]`), `dN.e` its element index
    inside the tile (`i mod tile[N]`, in texels for the packed dim).
    Every tile index is placed once; an element index is placed when its
    extent exceeds one.

    Transposes and reshapes that keep tiles whole compose into this form;
    when the result is a channel-packed or R-Tile layout it is printed as
    such instead.

    ```mlir
    // [S, H, D] seen as heads-major after splitting hidden = H * D:
    #fbl.image<tile = [1, 1, 4], packed = 2, x = [d1, d2], y = [d0], layers = []>
    ```
  }];
  let parameters = (ins
    FBL_TileSizesParameter:$tile,
    "int64_t":$packed,
    ArrayRefParameter<"int64_t", "factors on x">:$x,
    ArrayRefParameter<"int64_t", "factors on y">:$y,
    ArrayRefParameter<"int64_t", "factors on array layers">:$layers);
  let assemblyFormat = [{
    `<` `tile` `=` $tile `,` `packed` `=` $packed `,`
        `x` `=` custom<Factors>($x) `,` `y` `=` custom<Factors>($y) `,`
        `layers` `=` custom<Factors>($layers) `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Factors are stored as `dim * 2 + level` (level 1 = element index).
    static int64_t encodeFactor(::fbl::layout::Factor f) {
      return f.dim * 2 + (f.level == ::fbl::layout::Level::Element);
    }
    static ::fbl::layout::Factor decodeFactor(int64_t v) {
      return {static_cast<unsigned>(v / 2),
              v % 2 ? ::fbl::layout::Level::Element
                    : ::fbl::layout::Level::Tile};
    }
  }];
}

//===----------------------------------------------------------------------===//
// Target
//===----------------------------------------------------------------------===//

def FBL_TargetAttr : AttrDef<FBL_Dialect, "Target"> {
  let mnemonic = "target";
  let summary = "The OpenCL device a training step is compiled for";
  let description = [{
    Image limits that every encoded tensor must respect, the texture-cache
    geometry the cost model uses, fp16 image storage and work-group sizes.
    Put it on the module as `fbl.target`. A known preset name alone fills in
    every field (`adreno-a740`, `mali-g710`, `pocl-cpu`); otherwise give
    every field:

    ```mlir
    module attributes {fbl.target = #fbl.target<"mali-g710">} {}
    #fbl.target<"my-gpu", max_image_width = 16384, max_image_height = 16384,
                max_image_layers = 2048, max_buffer_bytes = 1073741824,
                cache_line_texels = [4, 4], cache_bytes = 16384, cache_ways = 4,
                fp16 = true, max_workgroup_size = 1024,
                preferred_workgroup = [8, 8]>
    ```

    `local_tiled_gemm` (optional, default false; the NVIDIA and PoCL presets set it)
    makes GEMM kernels stage operand tiles in local memory: it pays where
    the texel fetch rate, not texture-cache hits, bounds the register-tiled
    kernel. A preset's fields can be overridden one by one:
    `#fbl.target<"nvidia-h200", local_tiled_gemm = false>`.
    `gemm_tile = [group_items, item_blocks, local_k(, group_rows(, swizzle(,
    store_after_k(, item_blocks_n))))]` (optional, default `[8, 2, 16]`)
    shapes that kernel: group_items work-items along n by group_rows
    (default: group_items) along m per group, item_blocks x item_blocks_n
    (default: item_blocks) 4x4 blocks of C per work-item,
    local_k-deep slices of A and B per staging step; swizzle (default 1)
    stages whole 4x4 blocks in the image's order with XOR-permuted rows, 0
    in runs of 8; store_after_k (default 0: after all) is how many of a
    slice's k steps are multiplied before the next slice's texels are
    stored into local memory. Sizes that do not divide into its tile take
    the default tile, then the register-tiled kernel. Presets record the
    tile benchmarks/tune_gemm.py measured on their device.
    `gemm_tile_classes = [[min_outputs, group_items, item_blocks, local_k(,
    group_rows(, swizzle(, store_after_k(, item_blocks_n(, own_launch)))))],
    ...]` (optional, by increasing min_outputs) gives GEMMs of at least
    min_outputs elements of C (batch x M x N) another tile: the number of
    work-groups a tile leaves for the compute units moves the best tile with
    the size, and a batched GEMM's batches are work-groups too. A class's
    tile replaces the smaller class's only where it pads C (rows and
    columns computed past its sides) no more than that one does. own_launch
    1 (default 0; it follows a whole tile) runs the class's GEMMs in
    launches of their own, where fbl-merge-dispatches would merge them.
    `tune_gemm.py classes` derives the list from per-shape runs.
    `gemm_variants = [[store_after_k, fma], ...]` (optional, default none;
    the NVIDIA preset sets it) gives every local-tiled GEMM other bodies
    with the same tile and launch: the next slice stored after
    store_after_k k steps (a tile whose local_k is not more has no such
    variant), and with fma 1 each multiply-add as `fma()`. The bundle lists them as the kernel's
    `variants`; the runtime times each on the device at the first run and
    runs the fastest, since which body the device's compiler schedules best
    differs from GEMM to GEMM.

    `half_storage` (optional, default false; the Adreno and Mali presets
    set it) stores every image tensor that is not a parameter, optimizer
    state or a result of the step as `CL_HALF_FLOAT`: kernels still compute
    in f32 (`read_imagef` and `write_imagef` convert), the images take half
    the memory and the texture cache holds twice the texels. It needs
    `fp16 = true`. fbl-plan-memory decides which tensors it applies to.

    The execution model (optional integers: `wave_size`, `resident_items`,
    `compute_units`, `launch_ns`, `fetch_ps`, `miss_ps`, `write_ps`) tells
    the cost model and `fbl-cachesim` how work-groups share a compute unit's
    cache and what fetches, line fills, writes and launches cost; presets
    carry their own, other targets a generic default.

    Kernel argument limits (optional integers: `max_read_image_args`,
    `max_write_image_args`, `max_parameter_bytes`, the device's
    CL_DEVICE_MAX_READ_IMAGE_ARGS, CL_DEVICE_MAX_WRITE_IMAGE_ARGS and
    CL_DEVICE_MAX_PARAMETER_SIZE) bound the arguments of one kernel:
    fbl-merge-dispatches merges no more kernels into a launch than they
    admit, and fbl-to-opencl refuses a kernel past them. Presets carry
    their device's; other targets default to what OpenCL 1.2 promises
    (128, 8 and 1024).
  }];
  let parameters = (ins
    StringRefParameter<"device name">:$name,
    "int64_t":$maxImageWidth,
    "int64_t":$maxImageHeight,
    "int64_t":$maxImageLayers,
    "int64_t":$maxBufferBytes,
    ArrayRefParameter<"int64_t", "texel footprint (w, h) of a cache line">:
        $cacheLineTexels,
    "int64_t":$cacheBytes,
    "int64_t":$cacheWays,
    "bool":$fp16,
    "int64_t":$maxWorkgroupSize,
    ArrayRefParameter<"int64_t", "preferred 2D work-group size">:
        $preferredWorkgroup,
    "bool":$localTiledGemm,
    "::fbl::target::ExecutionModel":$execution,
    "bool":$halfStorage,
    "::fbl::target::GemmTile":$gemmTile,
    ArrayRefParameter<"::fbl::target::GemmTileClass",
                      "larger GEMMs' tiles by size">:$gemmTileClasses,
    ArrayRefParameter<"::fbl::target::GemmVariant",
                      "other GEMM bodies measured on the device">:
        $gemmVariants,
    "::fbl::target::KernelArgumentLimits":$kernelArguments);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Names of the built-in presets.
    static ::llvm::ArrayRef<::llvm::StringRef> getPresetNames();
    /// The preset called `name`, or a null attribute.
    static TargetAttr getPreset(::mlir::MLIRContext *context,
                                ::llvm::StringRef name);
    /// The target `op` is compiled for: the `fbl.target` of `op` or of its
    /// closest ancestor that has one, or a null attribute.
    static TargetAttr lookup(::mlir::Operation *op);
    /// lookup(op), with an error on `op` naming the ways to set a target
    /// when there is none.
    static TargetAttr lookupOrEmitError(::mlir::Operation *op);
    /// The kernel argument limits of lookup(op), or OpenCL 1.2's minimums
    /// where `op` has no target.
    static ::fbl::target::KernelArgumentLimits
    lookupKernelArguments(::mlir::Operation *op);
    /// Image limits in the algebra's terms.
    ::fbl::layout::DeviceLimits getLimits() const;
    /// Every field, as the MLIR-free description.
    ::fbl::target::TargetDescription getDescription() const;
    /// The attribute holding every field of `d`.
    static TargetAttr get(::mlir::MLIRContext *context,
                          const ::fbl::target::TargetDescription &d);
  }];
}

#endif // FBL_DIALECT_FBL_IR_FBLATTRS_TD
