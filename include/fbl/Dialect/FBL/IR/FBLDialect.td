//===- FBLDialect.td - The fbl dialect ---------------------*- tablegen -*-===//
//
// The fbl dialect: tensor layouts on OpenCL images for training graphs.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_DIALECT_FBL_IR_FBLDIALECT_TD
#define FBL_DIALECT_FBL_IR_FBLDIALECT_TD

include "mlir/IR/OpBase.td"

def FBL_Dialect : Dialect {
  let name = "fbl";
  let cppNamespace = "::mlir::fbl";
  let summary = "Layouts of training-graph tensors on mobile-GPU image memory";
  let description = [{
    The `fbl` dialect describes where the tensors of a training step live in
    OpenCL image memory (RGBA texels, `image2d_t` / `image2d_array_t`) or in
    buffers. Layouts are encodings of `RankedTensorType`, so linalg ops on
    encoded tensors keep their meaning; the dialect adds only what linalg
    lacks: a costed layout conversion (`fbl.relayout`), zero-cost views for
    tile-preserving transposes and reshapes, and the target description
    (`#fbl.target`) whose limits every encoded tensor must respect.

    ```mlir
    module attributes {fbl.target = #fbl.target<"adreno-a740">} {
      func.func @f(%x: tensor<128x64xf32, #fbl.rtile<tile = [4, 4], packed = 1>>)
    }
    ```

    Function arguments of a model carry `fbl.param` (unit: trained),
    `fbl.name` (a string unique among the function's arguments: the Hugging
    Face tensor name of a weight, or the name of data such as `"input_ids"`;
    results may be named too) and `fbl.init` (how a parameter that no
    weights file sets starts: `"zeros"`, `"ones"`, `"normal:<std>"`,
    `"uniform:<bound>"`). The bundle's manifest carries names and
    initializers, so the runtime loads and saves weights by name.

    ```mlir
    func.func @m(%ids: tensor<2x8xi64> {fbl.name = "input_ids"},
                 %a: tensor<8x64xf32> {fbl.param, fbl.init = "normal:0.02",
                     fbl.name = "model.layers.0.mlp.up_proj.lora_A.weight"})
        -> (tensor<f32> {fbl.name = "loss"})
    ```
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Registers the attributes (defined with their storage in FBLAttrs.cpp).
    void registerAttributes();

    /// Name of the module attribute holding the target.
    static constexpr ::llvm::StringLiteral getTargetAttrName() {
      return ::llvm::StringLiteral("fbl.target");
    }
    /// Names of the op attributes fbl-classify-ops records.
    static constexpr ::llvm::StringLiteral getPhaseAttrName() {
      return ::llvm::StringLiteral("fbl.phase");
    }
    static constexpr ::llvm::StringLiteral getClassAttrName() {
      return ::llvm::StringLiteral("fbl.class");
    }
    static constexpr ::llvm::StringLiteral getReuseAttrName() {
      return ::llvm::StringLiteral("fbl.reuse");
    }
    /// Names of fbl-plan-memory's records.
    static constexpr ::llvm::StringLiteral getSlotAttrName() {
      return ::llvm::StringLiteral("fbl.slot");
    }
    /// Element type the memory of an argument (argument attribute) or of a
    /// kernel output (on its tensor.empty) stores, where it differs from the
    /// tensor's (f16 images on a half_storage target).
    static constexpr ::llvm::StringLiteral getStorageAttrName() {
      return ::llvm::StringLiteral("fbl.storage");
    }
    static constexpr ::llvm::StringLiteral getMemoryPlanAttrName() {
      return ::llvm::StringLiteral("fbl.memory_plan");
    }
    /// Name of the cost model's estimate fbl-lower-to-kernels records on
    /// each fbl.dispatch (what fbl-cachesim compares with).
    static constexpr ::llvm::StringLiteral getEstimateAttrName() {
      return ::llvm::StringLiteral("fbl.estimate");
    }
    /// Name of the unit attribute fbl-split-reductions puts on the
    /// tensor.expand_shape that cuts a reduction's row into chunks: the
    /// kernel's shape, not the model's, so a view under every policy.
    static constexpr ::llvm::StringLiteral getReductionChunksAttrName() {
      return ::llvm::StringLiteral("fbl.reduction_chunks");
    }
    /// Name of the unit attribute fbl-lower-to-kernels puts on a GEMM
    /// kernel whose tile class says it runs in a launch of its own
    /// (`own_launch` of `gemm_tile_classes`): fbl-merge-dispatches leaves it
    /// alone.
    static constexpr ::llvm::StringLiteral getOwnLaunchAttrName() {
      return ::llvm::StringLiteral("fbl.own_launch");
    }
    /// Name of the i64 array attribute that says which GEMMs a kernel
    /// computes, six numbers each: batch, m, n, k, and the rows and columns
    /// of C one work-group computes. fbl-lower-to-kernels puts it on GEMM
    /// kernels and fbl-merge-dispatches concatenates its members'; the
    /// bundle's manifest carries it (`gemms`) for profiles to read.
    static constexpr ::llvm::StringLiteral getGemmAttrName() {
      return ::llvm::StringLiteral("fbl.gemm");
    }
    /// Name of the kernel configuration fbl-materialize-rtile records.
    static constexpr ::llvm::StringLiteral getKernelAttrName() {
      return ::llvm::StringLiteral("fbl.kernel");
    }
    /// Name of the unit argument attribute marking trainable parameters.
    static constexpr ::llvm::StringLiteral getParamAttrName() {
      return ::llvm::StringLiteral("fbl.param");
    }
    /// Name of the string attribute naming an argument or result (a
    /// Hugging Face tensor name; unique among a function's arguments).
    static constexpr ::llvm::StringLiteral getNameAttrName() {
      return ::llvm::StringLiteral("fbl.name");
    }
    /// Name of the string attribute saying how an argument that no weights
    /// file sets starts ("zeros", "ones", "normal:<std>", "uniform:<bound>").
    static constexpr ::llvm::StringLiteral getInitAttrName() {
      return ::llvm::StringLiteral("fbl.init");
    }
  }];
}

class FBL_Op<string mnemonic, list<Trait> traits = []>
    : Op<FBL_Dialect, mnemonic, traits>;

#endif // FBL_DIALECT_FBL_IR_FBLDIALECT_TD
