// The classification of the attention block's gradient: every backward
// matmul / batch_matmul operand read of a forward value is class IV, the
// elementwise activation gradients (loss, softmax) are class II, and the
// head split / merge gradients (reshapes, transposes) are class III.
// RUN: fbl-opt %fbl_src_root/examples/attention.mlir -fbl-autodiff -fbl-print-op-classes -o /dev/null | FileCheck %s

// CHECK-LABEL: fbl-print-op-classes: @attention
// CHECK: forward 28, backward 0 (I 0, II 0, III 0, IV 0), optimizer 0

// CHECK-LABEL: fbl-print-op-classes: @attention_grad
// CHECK: #  value op phase class reuse
// CHECK: linalg.softmax forward -
// Loss gradient: reads the residual sum elementwise.
// CHECK: linalg.generic backward II op0=%{{[0-9]+}} [reduce {} inner 1 | fwd reduce {0, 1} inner 1]
// dO = dY·Woᵀ reads Wo along its other dim.
// CHECK: linalg.generic backward IV op0=%arg4 [reduce {1} inner 0 | fwd reduce {0} inner 0] conflict
// dWo = Oᵀ·dY reduces the merged heads over tokens.
// CHECK: linalg.generic backward IV op0=%collapsed [reduce {0} inner 1 | fwd reduce {1} inner 1] conflict
// Head merge undone: reshape and transpose of the gradient.
// CHECK: tensor.expand_shape backward III
// CHECK: linalg.generic backward III
// dP = dO·Vᵀ and dV = Pᵀ·dO.
// CHECK: linalg.generic backward IV op0=%transposed_{{[0-9]+}} [reduce {2} inner 1 | fwd reduce {1} inner 1] conflict
// CHECK: linalg.generic backward IV op0=%{{[0-9]+}} [reduce {1} inner 2 | fwd reduce {2} inner 2] conflict
// Softmax gradient: a row sum and an elementwise product with P.
// CHECK: linalg.generic backward II op1=%{{[0-9]+}} [reduce {2} inner 2 | fwd reduce {2} inner 2]
// CHECK: linalg.generic backward II op0=%{{[0-9]+}} [reduce {} inner 2 | fwd reduce {2} inner 2]
// The 1/sqrt(d) scale of the gradient reads no forward value.
// CHECK: linalg.generic backward I
// dQ = dS·K and dK = dSᵀ·Q.
// CHECK: linalg.generic backward IV op0=%transposed_{{[0-9]+}} [reduce {1} inner 2 | fwd reduce {2} inner 2] conflict
// CHECK: linalg.generic backward IV op0=%transposed [reduce {1} inner 2 | fwd reduce {2} inner 2] conflict
// Head split undone for dV, dK, dQ.
// CHECK-COUNT-3: linalg.generic backward III
// dWq, dWk, dWv = Xᵀ·d(Q, K, V).
// CHECK-COUNT-3: linalg.generic backward IV op0=%arg0 [reduce {0} inner 1 | fwd reduce {1} inner 1] conflict
// CHECK: forward 28, backward 27 (I 7, II 3, III 8, IV 9), optimizer 0

// -----

// With AdamW, the step's moment and parameter updates are the optimizer
// phase; the MLP's matmul gradients reading forward values are class IV.
// RUN: fbl-opt %fbl_src_root/examples/mlp.mlir -fbl-autodiff="optimizer=adamw" -fbl-print-op-classes -o /dev/null | FileCheck %s --check-prefix=STEP
// STEP-LABEL: fbl-print-op-classes: @mlp_step
// STEP: math.powf optimizer -
// STEP: linalg.generic optimizer -
// STEP: forward 23, backward 28 (I 18, II 6, III 0, IV 4), optimizer 21
