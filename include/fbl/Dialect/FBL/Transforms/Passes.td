//===- Passes.td - fbl passes ------------------------------*- tablegen -*-===//
//
// The passes of fbl's training pipeline, one per file under
// lib/Dialect/FBL/Transforms, in the order fbl-training-pipeline runs them;
// first fbl-insert-lora, which rewrites a forward model before the pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_DIALECT_FBL_TRANSFORMS_PASSES_TD
#define FBL_DIALECT_FBL_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FBLInsertLoraPass : Pass<"fbl-insert-lora", "::mlir::ModuleOp"> {
  let summary = "Adds LoRA adapters to the linear layers of a forward model";
  let description = [{
    Low-rank adaptation as a rewrite of a forward model (run it before
    `fbl-autodiff`). In every function returning a scalar `tensor<f32>`
    loss, each weight argument whose `fbl.name` names a target module
    (`targets=q_proj` matches `model.layers.3.self_attn.q_proj.weight`: the
    module path before `.weight` is the target or ends in `.` and the
    target) is frozen, and every contraction reading it as its right operand
    gets an adapter:

    `y = x·Wᵀ` becomes `y = x·Wᵀ + (alpha/rank)·(x·Aᵀ)·Bᵀ`

    with two new arguments appended in argument order of their weights,
    named and shaped as PEFT saves them: `<module>.lora_A.weight :
    [rank, IN]` (`fbl.init = "uniform:<1/sqrt(IN)>"`, PEFT's Kaiming-uniform
    bound) and `<module>.lora_B.weight : [OUT, rank]` (`fbl.init =
    "zeros"`), both `fbl.param`; so at initialization the model computes
    what it computed before. The contractions understood are
    `linalg.matmul` on the weight stored `[IN, OUT]`, on its
    `linalg.transpose` (Hugging Face storage `[OUT, IN]`, as torch-mlir
    emits `nn.Linear`) or with a transposed-B indexing map;
    `linalg.batch_matmul` reading the weight broadcast over the batch; and
    multiply-add `linalg.generic`s of these shapes. The adapter's two
    products are copies of the matched op (same kind, same maps) on `A` and
    `B` (transposed as the op reads the weight), and the scaled sum is a
    `linalg.generic`.

    Every other argument loses `fbl.param` unless its `fbl.name` contains
    one of the `trainable=` substrings, so the adapters are what
    `fbl-autodiff` differentiates and no gradient of a frozen weight is
    built. A target or `trainable=` entry matching nothing, a target weight
    that is not a matrix, is read by anything other than such a contraction
    (a tied embedding's gather, `W·x`), is smaller than `rank` in a dim, or
    is also kept `trainable`, and a function left without parameters, are
    errors.

    ```mlir
    // fbl-opt --fbl-insert-lora="rank=2 alpha=4 targets=q_proj"
    func.func @f(%x: tensor<8x16xf32>,
                 %w: tensor<32x16xf32> {fbl.name = "layers.0.q_proj.weight", fbl.param})
    // becomes
    func.func @f(%x: tensor<8x16xf32>,
                 %w: tensor<32x16xf32> {fbl.name = "layers.0.q_proj.weight"},
                 %a: tensor<2x16xf32> {fbl.init = "uniform:0.25",
                                       fbl.name = "layers.0.q_proj.lora_A.weight", fbl.param},
                 %b: tensor<32x2xf32> {fbl.init = "zeros",
                                       fbl.name = "layers.0.q_proj.lora_B.weight", fbl.param})
    ```
  }];
  let options = [
    Option<"rank", "rank", "int64_t", /*default=*/"8",
           "Rank r of the adapters (PEFT's r)">,
    Option<"alpha", "alpha", "double", /*default=*/"8.0",
           "Adapters are scaled by alpha/rank (PEFT's lora_alpha; both "
           "default to PEFT's 8)">,
    ListOption<"targets", "targets", "std::string",
               "Modules to adapt: a module path (the fbl.name before "
               "'.weight') matches when it is the target or ends in "
               "'.<target>'">,
    ListOption<"trainable", "trainable", "std::string",
               "fbl.param arguments whose fbl.name contains one of these "
               "stay trainable (default: none)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FBLSetTargetPass : Pass<"fbl-set-target", "::mlir::ModuleOp"> {
  let summary = "Sets the target device the module is compiled for";
  let description = [{
    Puts `fbl.target` on the module: the one place every later pass reads
    the target from (`TargetAttr::lookup`). `target=` names a preset
    (`adreno-a740`, `mali-g710`, `pocl-cpu`, `nvidia-h200`) or gives a whole
    `#fbl.target<...>` attribute, and replaces any target the module has;
    `fallback=` does the same only for a module without one (the local
    device's preset, say, for models that may carry their own target).
    `fbl-training-pipeline` runs it first with its `target=` option.

    ```mlir
    // fbl-opt --fbl-set-target=target=mali-g710
    module attributes {fbl.target = #fbl.target<"mali-g710">} {}
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "Preset name or #fbl.target<...> attribute to set">,
    Option<"fallback", "fallback", "std::string", /*default=*/"\"\"",
           "Preset name or #fbl.target<...> attribute to set when the "
           "module has no fbl.target">,
  ];
  let dependentDialects = ["::mlir::fbl::FBLDialect"];
}

def FBLAutodiffPass : Pass<"fbl-autodiff", "::mlir::ModuleOp"> {
  let summary = "Builds the gradient (and optimizer step) of a forward model";
  let description = [{
    For every `func.func @f` returning a scalar `tensor<f32>` loss whose
    arguments include trainable parameters (unit argument attribute
    `fbl.param`), adds `@f_grad`: the same arguments, returning the loss and
    then one gradient per differentiated parameter, in argument order.
    Reverse mode over linalg on tensors; the result uses only upstream
    dialects (linalg, tensor, arith, math, scf), so upstream lowering and
    `mlir-runner` execute it.

    Every linalg structured op with a scalar arith/math body is
    differentiated from its indexing maps: the scalar body is differentiated
    symbolically and each operand's adjoint is a `linalg.generic` over the
    same iteration space, reducing over the dims its map drops (so gradients
    of broadcast operands come back in their own shape, and matmul gradients
    are the transposed contractions). Sum and max/min reductions, `tensor`
    reshapes and slices, `linalg.softmax` and gathers (`tensor.extract` in a
    body, differentiated as a scatter-add) have rules of their own.

    Operand maps must be projected permutations: constant-0 indices into
    size-1 dims (keepdim reductions, broadcast reads of `tensor<Nx1xf32>`)
    are first folded into reshapes around projected-permutation generics in
    every function; any other map (`i + k`, `2 * i`, `i + 1`, constants) is
    refused with one diagnostic before anything is built.

    Activity analysis limits the work to values that depend on a
    differentiated parameter and that the loss depends on; everything else
    (index math, gathers from frozen tables, `cf.assert`) is left as it is.
    An op that needs a derivative and has no rule is an error naming it.

    With `optimizer=sgd|adamw` it also adds `@f_step`, returning the loss and
    the updated parameters; AdamW takes and returns its moments.

    ```mlir
    func.func @loss(%w: tensor<4x4xf32> {fbl.param}, %x: tensor<8x4xf32>)
        -> tensor<f32>
    // becomes, in addition:
    func.func @loss_grad(%w: tensor<4x4xf32> {fbl.param}, %x: tensor<8x4xf32>)
        -> (tensor<f32>, tensor<4x4xf32>)
    ```
  }];
  let options = [
    ListOption<"wrt", "wrt", "unsigned",
               "Argument indices to differentiate (a subset of the fbl.param "
               "arguments; default: all of them)">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"none\"",
           "Also build @<name>_step with this update rule: none, sgd, adamw">,
    Option<"learningRate", "lr", "double", /*default=*/"1e-3",
           "Learning rate of the optimizer step">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9",
           "AdamW first-moment decay">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999",
           "AdamW second-moment decay">,
    Option<"epsilon", "eps", "double", /*default=*/"1e-8",
           "AdamW denominator epsilon">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "Decoupled weight decay (AdamW) or L2 decay (SGD)">,
    Option<"requireModel", "require-model", "bool", /*default=*/"false",
           "Fail when no function of the module is a trainable model (the "
           "training pipeline sets it)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def FBLDecomposeAggregatesPass
    : Pass<"fbl-decompose-aggregates", "::mlir::ModuleOp"> {
  let summary = "Decomposes aggregated linalg ops (softmax) into generics";
  let description = [{
    `linalg.softmax` and other ops implementing `AggregatedOpInterface`
    become the linalg generics they stand for (max, exp-sum, normalize), so
    layout selection and kernel lowering see only structured ops. The
    training pipeline runs it after fbl-autodiff, which differentiates
    softmax as a whole.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def FBLFuseElementwisePass
    : Pass<"fbl-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "Fuses elementwise linalg chains into their consumers";
  let description = [{
    Upstream linalg producer-consumer fusion of elementwise `linalg.generic`
    ops, controlled for training graphs: a producer is fused only into its
    single user (a value the backward pass re-reads stays materialized and
    nothing is computed twice), and contractions are never fusion consumers
    (their body stays `acc + a * b`, which the register-tiled GEMM kernel
    needs). A chain such as bias-add, GELU and scale becomes one op, hence
    one kernel after fbl-lower-to-kernels. Named elementwise ops over
    whole operands (`linalg.add`, `linalg.mul`, ...; not fills, transposes
    or broadcasts) become `linalg.generic` first, so that they take their
    producers too: autodiff sums two gradient contributions with
    `linalg.add`, and ViT-B/16's full step had 97 such adds, each reading a
    broadcast or elementwise result that another kernel had written (129
    fewer kernels a step). An elementwise op between reshapes that only add
    or drop unit dims (a norm's `sum / D` on the keepdim `[N, 1]`, between
    the `[N]` reduction and its `[N]` broadcast) is collapsed to the
    reshapes' source first (upstream's fold-by-collapsing patterns), so the
    reshapes cancel and the op fuses: each such pair had become a relayout
    there and back (the tiny ViT's step: 60 relayouts to 20).

    A producer read more than once is copied into each reader instead where
    computing it again costs less than storing it: it is elementwise, reads
    at most one tensor of its own size (a permutation map; the others are
    broadcast along some dim), and every reader is a non-contraction
    generic that upstream fusion takes. Each reader then reads that tensor
    where it read the result (as many reads), and the producer's write and
    kernel are gone. A softmax's `exp(x - max)`, read by the row sum and by
    the normalization, is such a producer (ViT-B/16 wrote 384 x 197 x 197 of
    them a layer), as is a norm's `(x - mean) * rstd` read by the scale and
    by the backward pass's sums. A producer of two tensors of its size (a
    residual sum) stays: copies would read both.

    The training pipeline runs it
    after fbl-decompose-aggregates, before classification and layout
    selection, so layouts are chosen for the fused graph.

    ```mlir
    %a = linalg.generic ... ins(%x, %b) { addf }   // one use
    %g = linalg.generic ... ins(%a) { tanh }
    // becomes
    %g = linalg.generic ... ins(%x, %b) { addf; tanh }
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def FBLFuseMultiOutputPass
    : Pass<"fbl-fuse-multi-output", "::mlir::ModuleOp"> {
  let summary = "Fuses elementwise producers read elsewhere into their "
                "consumers as extra outputs";
  let description = [{
    Upstream linalg producer-consumer fusion of elementwise `linalg.generic`
    ops whose producer result is read again after the consumer: the fused
    op keeps that result as one more output, so one kernel computes and
    writes both where two kernels wrote the producer's result and read it
    back. It fuses only where every result of both ops has the same type and
    layout (the generic kernel stores each texel to all outputs at one
    place), the consumer reads the producer's result at its own index, all
    other readers come after the consumer, and neither op is an epilogue a
    GEMM kernel computes as its result's only reader (of the kinds
    `gemm-epilogues` names, as fbl-lower-to-kernels' option does). The training pipeline runs it after layout
    selection, before fbl-lower-to-kernels; AdamW's moment updates and the
    parameter update that reads them become one kernel.

    ```mlir
    %m1 = linalg.generic ... ins(%m, %g) { b1 * m + (1 - b1) * g }
    %p1 = linalg.generic ... ins(%p, %m1) { p - lr * m1 }
    return %p1, %m1
    // becomes
    %f:2 = linalg.generic ... ins(%m, %g, %p) outs(%e0, %e1) { ...; yield %m1, %p1 }
    return %f#1, %f#0
    ```
  }];
  let options = [
    Option<"gemmEpilogues", "gemm-epilogues", "std::string",
           /*default=*/"\"all\"",
           "The kinds of GEMM epilogue fbl-lower-to-kernels computes (its "
           "option of that name), whose ops this pass leaves to the GEMM">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def FBLSplitReductionsPass
    : Pass<"fbl-split-reductions", "::mlir::ModuleOp"> {
  let summary = "Splits whole-tensor and long-row reductions in two stages";
  let description = [{
    A `linalg.generic` that reduces every loop into a scalar (a loss) would
    become a kernel of one work-item walking every element. With at least
    `min-elements` iterations and a single associative, commutative combiner
    with a neutral element (`arith.addf`, `mulf`, `maximumf`, `minimumf`,
    ...), it becomes a reduction parallel along the outermost loop into a
    vector of partial results (from the neutral element), and a reduction
    of that vector combined into the original init. Only the order of the
    combination changes. The training pipeline runs it after
    fbl-fuse-elementwise.

    ```mlir
    %l = linalg.generic {iterator_types = ["reduction", "reduction"]}
        ins(%x : tensor<512x512xf32>) outs(%init : tensor<f32>) {...}
    // becomes
    %p = linalg.generic {iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<512x512xf32>) outs(%zeros : tensor<512xf32>) {...}
    %l = linalg.generic {iterator_types = ["reduction"]}
        ins(%p : tensor<512xf32>) outs(%init : tensor<f32>) {addf}
    ```

    The partial stage's rows (each as long as the tensor is wide) are then
    split as long rows are (below) from `min-partial-row-length`
    iterations: a mean-square loss over 512x2048 was 128 work-items each
    walking 2048 elements of two tensors, a third of an MLP's training step
    on the H200.

    The second stage of a whole-tensor reduction is itself one row: the
    vector of partial results reduced into the scalar, which a single
    work-item would walk. It splits as a row does (from `min-row-length`
    iterations, or `min-modelled-row-length` where the target's model
    finds it faster), as does any vector reduced into a scalar (a loss
    over a flattened tensor); a single row's partial stage is then
    partial[C], and its second stage C values. A dot product (a
    contraction with no output dim) stays whole. A mean-square loss over
    2048 x 2048 ended in one work-item summing 2048 partial sums, 34 us on
    the H200, as long as the rest of the loss; split, 64 chunks of 32 and
    then the 64.

    Likewise a reduction of few rows (at most `max-rows` iterations of its
    parallel loops) along one long loop (at least `min-row-length`): each
    row would be one work-item walking the whole row, one access after
    another. A LayerNorm's weight gradient is such a reduction: 768 columns
    summed over ViT-base's 6304 tokens were 192 work-items walking 6304
    texels, 1.37 ms each on the H200 (24 per step); split, the full ViT
    step went from 256 to 194 ms. The row loop of N iterations becomes C
    chunks of N / C; the inputs it indexes are expanded
    (`tensor.expand_shape`) to [..., C, N / C, ...], a first generic
    reduces each chunk into partial[rows..., C] and a second the chunks
    into the original init. A body's `linalg.index` of the row loop becomes
    chunk * (N / C) + offset. A contraction's partial is partial[C,
    rows...] instead, the chunk dim first, so that its first stage is a
    batched GEMM (split-K) that the GEMM kernels take. On a module with a
    target, C is the chunk count the target's cost model finds fastest
    among the divisors of N that leave chunks of a multiple of 4 (whole
    texels along a packed row; any divisor for a row that is not whole
    texels anyway, such as a 30522-word vocabulary); without one, the
    largest such divisor up to sqrt(N). The square root balances work-items
    against walks only where N divides near it: for ViT-base's 6304 tokens
    it gave 8 chunks of 788, 1536 work-items for a LayerNorm or bias weight
    gradient (0.23 ms each on the H200); the model picks 197 of 32 there,
    and the full ViT step went from 146.1 to 141.3 ms.

    With a target, the model also weighs ragged splits of rows that are not
    contractions and whose inputs along the row are floats (what lies past
    the row is computed on, then dropped): C a power of two that does not divide N, chunks of
    ceil(N / C) iterations (rounded up to whole texels where N is), the
    inputs the row loop indexes first inserted into tensors C chunks long
    (one copy; what lies past N is never used) and the partial stage's
    accumulator kept where chunk * width + offset >= N (an `arith.select`
    before the yield), whatever the body makes of those elements. BERT's
    30522 words are 2 x 3 x 5087: the best divisor left 6 chunks of 5087,
    1536 work-items walking a vocabulary row's sixth (0.87 ms for each of
    the cross-entropy's 4 reductions on the H200); ragged, 128 chunks of
    239.

    On a module with a target (`fbl.target`) the other row reductions of
    at least `min-modelled-row-length` iterations (more rows than
    `max-rows`, or rows shorter than `min-row-length`) are split where the
    target's cost model (the kernels fbl-lower-to-kernels would emit,
    costed by the execution model) finds two stages faster than one; C is
    then the chunk count it finds fastest, as above. LoRA's adapter gradients are such reductions: 8 x
    768 outputs summed over ViT-base's 6304 tokens were one register-tiled
    GEMM kernel of 384 work-items, each walking all 6304 tokens (0.78 ms
    each on the H200, 48 per step); the model picks 197 chunks of 32 there.
    So are the adapters' products in the forward pass, 512 x 8 outputs over
    640 channels in SD's UNet (0.08 ms each, 144 per step), and LayerNorm's
    statistics. Named contractions (the forward pass's `linalg.matmul`) are
    asked about through a generic clone and become their generic form only
    where they split. On pocl-cpu, whose work-items wait on no memory
    latency worth hiding, the model splits only to fill the last wave of
    its 2 cores (a 780 x 8 adapter gradient in 3 chunks: 25 work-groups
    unsplit). Deciding from 256
    iterations rather than 2048 took the H200's ViT-base LoRA step from 116
    to 108 ms and the UNet's from 113 to 102 (two alternating rounds in one
    call, docs/benchmarks.md), and the full UNet step's from 104.1 to 92.8
    (timed without profiling events; with an event on each of its 6000
    launches it had seemed 8% slower).

    ```mlir
    %m = linalg.generic {iterator_types = ["parallel", "reduction"]}
        ins(%logits : tensor<128x32000xf32>) outs(%init : tensor<128xf32>) {maximumf}
    // becomes
    %x = tensor.expand_shape %logits [[0], [1, 2]] : tensor<128x32000xf32> into tensor<128x160x200xf32>
    %p = linalg.generic {iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x : tensor<128x160x200xf32>) outs(%neutral : tensor<128x160xf32>) {maximumf}
    %m = linalg.generic {iterator_types = ["parallel", "reduction"]}
        ins(%p : tensor<128x160xf32>) outs(%init : tensor<128xf32>) {maximumf}
    ```

    A reduction of few rows over several loops (at least `min-row-length`
    iterations together; on a module with a target also any number of rows
    from `min-modelled-row-length`, where the model finds a split faster)
    needs no reshape: its outer reduction loops, never the innermost,
    become parallel loops of the partial stage, and a second stage reduces
    them. How many of them: with a target, the prefix the model finds
    fastest; without one, the prefix whose iterations are closest to the
    square root of the whole. A GroupNorm's statistics over SD-1.5's
    [C/G, H, W] = [10, 32, 32] were 64 rows of 10240, one work-item each
    (0.8 ms each on the H200); a convolution's bias gradient over [N, H, W]
    likewise. Constant results of the output map (a keepdim's unit dims)
    are dropped from the partial result. A partial stage left with one
    reduction loop is then split along it as any row reduction is:
    Whisper-tiny's first convolution's bias gradient over 8 images x 3000
    frames became 384 x 8 rows of 3000, 768 work-items walking a row each
    (0.84 ms of its full step on the H100), and now 25 chunks of 120 per
    row (the full step 2.6% faster).

    ```mlir
    %s = linalg.generic {iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
        ins(%x : tensor<2x32x10x32x32xf32>) outs(%init : tensor<2x32xf32>) {addf}
    // becomes
    %p = linalg.generic {iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
        ins(%x : tensor<2x32x10x32x32xf32>) outs(%zeros : tensor<2x32x10x32xf32>) {addf}
    %s = linalg.generic {iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
        ins(%p : tensor<2x32x10x32xf32>) outs(%init : tensor<2x32xf32>) {addf}
    ```
  }];
  let options = [
    Option<"minElements", "min-elements", "int64_t", /*default=*/"1024",
           "Split reductions to a scalar of at least this many iterations">,
    Option<"minRowLength", "min-row-length", "int64_t", /*default=*/"2048",
           "Split row reductions whose row (or reduction loops together) "
           "is at least this long">,
    Option<"minModelledRowLength", "min-modelled-row-length", "int64_t",
           /*default=*/"256",
           "On a module with a target, let its cost model decide the other "
           "row reductions from this row length">,
    Option<"minPartialRowLength", "min-partial-row-length", "int64_t",
           /*default=*/"512",
           "Split the rows of a whole-tensor reduction's partial stage from "
           "this length">,
    Option<"maxRows", "max-rows", "int64_t", /*default=*/"4096",
           "... and whose parallel loops have at most this many iterations">,
    Option<"rowKernels", "row-kernels", "bool", /*default=*/"false",
           "Leave whole the reductions over a row's last loop that an "
           "elementwise op over the same rows reads back along the row, "
           "where there are enough rows per compute unit "
           "(row-kernel-rows-per-unit), rows of at most 8192 elements (16 "
           "turns of a row kernel's work-group) and nothing before that "
           "reader reads "
           "them or what is made of them at their row (a loss before its "
           "backward's softmax): fbl-lower-to-kernels' row kernels compute "
           "them">,
    Option<"rowKernelRowsPerUnit", "row-kernel-rows-per-unit", "int64_t",
           /*default=*/"4",
           "With row-kernels, the rows per compute unit of the target from "
           "which such reductions stay whole (fewer, longer rows split)">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FBLClassifyOpsPass : Pass<"fbl-classify-ops", "::mlir::ModuleOp"> {
  let summary = "Marks each op of a training function with phase and class";
  let description = [{
    For every function returning a loss followed by gradients or updated
    parameters, finds the phase of each op from the data flow: forward ops
    are those the loss depends on; optimizer ops update a parameter or
    optimizer state elementwise; the rest is the backward pass. Backward ops
    get a class from two questions (docs/OpClassification.md): does the op
    read a forward value, and is its access to each tensor consistent with
    how the tensor was accessed before (same reduced dims, same innermost
    dim)?

    | class | reads forward values | access |
    | --- | --- | --- |
    | I | no | consistent |
    | II | yes | consistent |
    | III | no | conflicting |
    | IV | yes | conflicting |

    Ops get `fbl.phase` (`"forward"`, `"backward"`, `"optimizer"`) and, in
    the backward, `fbl.class` (1 to 4); backward ops reading forward values
    get `fbl.reuse`, one entry per such operand: the operand number, the
    reduced dims and innermost dim of this access and of the forward one.
    Functions without a scalar loss first result are left alone.
  }];
}

def FBLPrintOpClassesPass : Pass<"fbl-print-op-classes", "::mlir::ModuleOp"> {
  let summary = "Prints the operator classification as a table per function";
  let description = [{
    Runs the classification of `fbl-classify-ops` and prints, per function,
    one line per op: phase, class and the activation-reuse edges with their
    access patterns, then the counts per class. The IR is not changed.
  }];
}

def FBLSelectLayoutsPass : Pass<"fbl-select-layouts", "::mlir::ModuleOp"> {
  let summary = "Chooses a layout for every tensor of the training functions";
  let description = [{
    Activation-guided global layout selection (docs/LayoutSelection.md).
    For every training function (one with backward ops), every tensor gets
    an fbl layout encoding that fits the target, and every use that reads
    another layout than the value's gets an `fbl.relayout`. Index transforms
    (reshapes, transposes) keep their ops; `fbl-fold-index-transforms` turns
    them into views or relayouts afterwards.

    Policies run through one cost model: `fblayout` searches channel-packed,
    R-Tile and view-composed layouts for the cheapest plan;
    `reuse-forward` (MNN-like) keeps the forward's layouts and reads them
    transposed in the backward; `explicit-transpose` (TFLite-like) gives
    every reader its preferred layout through relayout kernels.

    Tensors no image of the target can hold fold their batch dims into
    image-array layers, or go to a buffer; a tensor no buffer can hold is an
    error.
  }];
  let options = [
    Option<"policy", "policy", "std::string", /*default=*/"\"fblayout\"",
           "fblayout, reuse-forward or explicit-transpose">,
  ];
  let dependentDialects = ["::mlir::fbl::FBLDialect"];
}

def FBLMaterializeRTilePass : Pass<"fbl-materialize-rtile", "::mlir::ModuleOp"> {
  let summary = "Puts class IV ops on R-Tile operands with their kernel configs";
  let description = [{
    Class IV ops (the matmul family and column reductions reading forward
    tensors along another dim than the forward did) read the operands they
    share with the forward pass as R-Tiles, so both passes read whole tiles
    and nobody relayouts between them. Operands without a layout (hand-written
    IR) get a 4x4 R-Tile packed along their last dim; laid-out operands keep
    the layout selection chose. Every class IV op gets `fbl.kernel`: the
    register tile, the reduced loops, the loop walked 4 at a time, and per
    operand whether the kernel reads whole tiles, whole texels or single
    channels.
  }];
  let dependentDialects = ["::mlir::fbl::FBLDialect"];
}

def FBLFoldIndexTransformsPass
    : Pass<"fbl-fold-index-transforms", "::mlir::ModuleOp"> {
  let summary = "Turns tile-preserving reshapes and transposes into views";
  let description = [{
    `tensor.expand_shape`, `tensor.collapse_shape`, `linalg.transpose` and
    generics that only permute their input, on encoded tensors, become
    `fbl.reshape_view` / `fbl.transpose_view` when the result's layout is the
    composed layout of the source's (every tile stays whole: no data moves).
    Otherwise the source is relaid out into the layout whose view is the
    result's (or through a row-major buffer), and the view follows: the data
    movement is an explicit, counted `fbl.relayout`.
  }];
  let dependentDialects = ["::mlir::fbl::FBLDialect"];
}

def FBLTrainingReportPass : Pass<"fbl-training-report", "::mlir::ModuleOp"> {
  let summary = "Writes the JSON report of a compiled training step";
  let description = [{
    For every training function: the policy, ops per class, relayouts and the
    bytes they move, views folded, tensors per layout kind, and the cost
    model's estimate of the whole step (the fields are listed in
    docs/UserGuide.md).
  }];
  let options = [
    Option<"file", "file", "std::string", /*default=*/"\"-\"",
           "Where to write the report (- for stdout)">,
    Option<"policy", "policy", "std::string", /*default=*/"\"\"",
           "The policy to name in the report">,
  ];
  let dependentDialects = ["::mlir::fbl::FBLDialect"];
}

def FBLLowerToKernelsPass : Pass<"fbl-lower-to-kernels", "::mlir::ModuleOp"> {
  let summary = "Turns encoded linalg and fbl ops into fbl.dispatch kernels";
  let description = [{
    Every op of a laid-out training function that computes becomes an
    `fbl.dispatch` whose body reads and writes texels (or buffer elements)
    at addresses computed from the layouts: linalg ops (one work-item per
    output texel, reduction loops inside, the op's scalar body inlined,
    gathers as loads at computed places), relayouts (copies between
    layouts), and the scatter-add loops of embedding gradients (in place on
    a buffer; one work-item per iteration of a loop whose induction
    variable indexes every access of the buffer directly, as the column
    loop of an embedding table does, else one work-item). GEMMs get the
    register-tiled kernel, or the local-memory tiled one on targets with
    `local_tiled_gemm`; either carries `fbl.gemm` (batch, m, n, k, and the
    rows and columns of C a work-group computes), which the bundle's
    manifest gives profiles. A GEMM's kernel also computes an elementwise
    reader of its result (`matchGemmEpilogue`: an optimizer update, an
    activation's backward, a bias, residual add and activation) and stores
    that reader's result, and C only where something else reads it too.
    `gemm-epilogues` leaves kinds out, to measure what each gains on a
    device: `sole-reader` (no reader beside others: one output),
    `same-shape` (no input that drops m or n, such as a bias),
    `sole-same-shape` (neither: the epilogues before 2026-12-07), `none`;
    the training pipeline tells fbl-fuse-multi-output the same.
    Scalar computations the kernels use
    are rematerialized inside them. Views stay: they are no kernel.

    With `rows`, each row group (`matchRowGroups`: reductions over the
    last loop of a row, per-row ops between them, and the elementwise ops
    reading them back along the row, as a softmax, a LayerNorm and their
    backward passes are) is one kernel with a work-group per 4
    neighbouring rows where a tensor it stores packs 4 rows into a texel,
    else per 2 neighbouring rows where its work-items can hold both in
    registers, else per row: its work-items stride along the row a texel
    at a time and reduce their partials in local memory. The elementwise results are stored; a row
    value is stored only where something outside the group reads it (a
    norm's statistics for its weight's gradient).

    Ops that repeat an earlier op (the same op, attributes, body, operand
    types and layouts and captured values: the layers of a model) get a
    copy of its kernels instead of a lowering of their own. With `cse`,
    each kernel body is cleaned by common-subexpression elimination as it
    is built, so that copies are clean too (the training pipeline's way:
    one CSE per distinct kernel instead of one per kernel). With `fold`,
    each kernel body is first canonicalized by the patterns of the ops it
    holds (arith, scf, vector, memref, math): constants fold, `x % 1` and
    `x + 0` go, single-iteration loops are inlined. The kernels' OpenCL
    source gets about a fifth smaller, which is what a driver compiles at
    a bundle's first run.
  }];
  let options = [
    Option<"cse", "cse", "bool", /*default=*/"false",
           "Eliminate common subexpressions in each kernel body as it is "
           "built">,
    Option<"fold", "fold", "bool", /*default=*/"false",
           "Canonicalize each kernel body (fold constants) as it is built">,
    Option<"rows", "rows", "bool", /*default=*/"false",
           "Compute each row group (reductions over a row and the "
           "elementwise ops that read them: a softmax) in one kernel with a "
           "work-group per row">,
    Option<"rowPairs", "row-pairs", "bool", /*default=*/"true",
           "With rows, a work-group takes two neighbouring rows where it "
           "can hold both in registers and stores nothing that packs rows">,
    Option<"gemmEpilogues", "gemm-epilogues", "std::string",
           /*default=*/"\"all\"",
           "Which readers of a GEMM's result its kernel computes: all, none, "
           "sole-reader (no reader beside others), same-shape (no input "
           "that drops m or n), sole-same-shape (neither)">
  ];
  let dependentDialects = ["::mlir::fbl::FBLDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def FBLMergeDispatchesPass
    : Pass<"fbl-merge-dispatches", "::mlir::ModuleOp"> {
  let summary = "Merges independent kernels into one launch";
  let description = [{
    Horizontal fusion of `fbl.dispatch` kernels. Each kernel gets a level:
    one more than the highest level of the kernels that last wrote what it
    reads or writes and that read what it writes since. Kernels of one level
    touch no memory another of them writes; those with the same number of
    work-items per work-group and no local memory share one launch, whose
    work-groups are theirs one after another along a 1-D grid. Each
    work-group runs the body of the kernel it belongs to (an `scf.if` on
    its group id) with the group, local and global ids that kernel would
    have seen. The function's kernels are then ordered by level (views and
    empty tensors just before their first reader).

    A launch costs microseconds on a GPU whatever it does, and kernels too
    small to fill the device run side by side in one launch where they ran
    one after another: bias and norm-weight gradient sums, the optimizer
    updates of the parameters, the attention heads' copies.

    Small kernels wait for the end of the step where they can: those of
    fewer work-groups than the target's compute units, whose tensors hold
    at most 2^20 elements each, whose results only the function's results
    and other waiting kernels read (directly or through views), and that no
    kernel they move past writes what they touch or reads what they write.
    Their levels start after every other kernel's, so the updates of a
    model's biases and norm weights, which each come right after their
    gradient, share a few launches at the end. Without a target nothing
    waits.

    Memory is tensors before `fbl-plan-memory` (the training pipeline runs
    this pass there: the plan then follows the new schedule) and the plan's
    memory objects after it (reuse then orders kernels as well, and the plan
    stays valid). A merged kernel takes the registers and local memory of
    its largest member, so kernels share a launch only with kernels of the
    same family: the same work-group size, and for GEMMs the same kind and
    local tiles (declared once; each work-group runs one member). On a
    target with `half_storage`, kernels whose storage `fbl-plan-memory`
    decides from their own body or inputs (copies and selects, tables
    computed from constants) stay alone too. On every target GEMMs marked
    `fbl.own_launch` stay alone (their tile class's `own_launch`: merged,
    two GEMMs that each fill the device share one body variant and the
    larger's registers, and the target's timings say that costs more than
    the launch saves). A merged kernel carries its members' `fbl.gemm`, one
    after another.

    A merged kernel takes every member's outputs and their inputs (each
    once), so a launch takes no more members than the target's kernel
    argument limits admit (`max_read_image_args`, `max_write_image_args`,
    `max_parameter_bytes`; OpenCL 1.2's minimums without a target): the
    step's end, where the optimizer updates of every bias and norm weight
    wait, would otherwise make kernels of 96 write images, which NVIDIA's
    driver (32 at most) builds and faults the queue on.

    ```mlir
    %a = fbl.dispatch @k1 ins(%x : T) outs(%e0 : T) grid [16, 8, 1] workgroup [8, 8, 1] {...}
    %b = fbl.dispatch @k2 ins(%y : U) outs(%e1 : U) grid [64, 1, 1] workgroup [64, 1, 1] {...}
    // becomes
    %m:2 = fbl.dispatch @k1_merged ins(%x, %y : T, U) outs(%e0, %e1 : T, U)
        grid [192, 1, 1] workgroup [64, 1, 1] {
      // group 0 and 1: @k1's body (its groups (0, 0) and (1, 0));
      // group 2: @k2's body (its group 0)
    }
    ```
  }];
  let options = [
    Option<"maxKernels", "max-kernels", "int64_t", /*default=*/"32",
           "Most kernels merged into one launch">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def FBLPlanMemoryPass : Pass<"fbl-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Assigns kernel outputs to reusable images and buffers";
  let description = [{
    For every function of fbl.dispatch kernels: the lifetime of each kernel
    output runs from the kernel that writes it to the last kernel, view or
    return that reads it (through views). Outputs whose lifetimes do not
    overlap share one memory object when their images (or buffers) have the
    same kind, extents and element type; a kernel never writes the memory it
    reads. Each output's `tensor.empty` gets `fbl.slot`, and the function
    gets `fbl.memory_plan = {objects, peak_bytes, unplanned_bytes}`: the
    device memory of the step with and without reuse. Arguments keep their
    own memory (they hold the inputs across iterations).

    On a target with `half_storage`, every f32 image that holds neither a
    trained parameter, nor an argument the step updates (optimizer state),
    nor a result of the step (through views) stores f16: its argument or
    `tensor.empty` gets `fbl.storage = f16`, and the plan counts two bytes
    per element. Kernels are unchanged: image reads and writes convert.
  }];
}

#endif // FBL_DIALECT_FBL_TRANSFORMS_PASSES_TD
