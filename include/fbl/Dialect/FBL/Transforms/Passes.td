//===- Passes.td - fbl passes ------------------------------*- tablegen -*-===//
//
// The passes of fbl's training pipeline, one per file under
// lib/Dialect/FBL/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_DIALECT_FBL_TRANSFORMS_PASSES_TD
#define FBL_DIALECT_FBL_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

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
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def FBLClassifyOpsPass : Pass<"fbl-classify-ops", "::mlir::ModuleOp"> {
  let summary = "Marks each op of a training function with phase and class";
  let description = [{
    For every function returning a loss followed by gradients or updated
    parameters, finds the phase of each op from the data flow: forward ops
    are those the loss depends on; optimizer ops update a parameter or
    optimizer state elementwise; the rest is the backward pass. Backward ops
    get a class from two questions (DESIGN §2): does the op read a forward
    value, and is its access to each tensor consistent with how the tensor
    was accessed before (same reduced dims, same innermost dim)?

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

#endif // FBL_DIALECT_FBL_TRANSFORMS_PASSES_TD
