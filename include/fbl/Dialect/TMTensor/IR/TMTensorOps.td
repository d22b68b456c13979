//===- TMTensorOps.td - torch-mlir's tm_tensor ops fbl reads -*- tablegen -*-===//
//
// The part of torch-mlir's TMTensor dialect that its scaled-dot-product
// lowering emits, with the same name, syntax and meaning, so fbl reads
// torch-mlir output without torch-mlir. fbl-autodiff decomposes every op
// into linalg before differentiating.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_DIALECT_TMTENSOR_IR_TMTENSOROPS_TD
#define FBL_DIALECT_TMTENSOR_IR_TMTENSOROPS_TD

include "mlir/IR/OpBase.td"

def TMTensor_Dialect : Dialect {
  let name = "tm_tensor";
  let cppNamespace = "::mlir::fbl::tm_tensor";
  let summary = "The tm_tensor ops torch-mlir emits for attention";
  let description = [{
    Reads what torch-mlir's `torch-to-tmtensor` conversion emits for
    `aten.scaled_dot_product_attention`. Only `tm_tensor.attention` is
    defined; a compiler that already registers torch-mlir's own TMTensor
    dialect leaves this one out (the decomposition matches the op by name,
    so it works on either).
  }];
}

def TMTensor_AttentionOp : Op<TMTensor_Dialect, "attention",
                              [AttrSizedOperandSegments]> {
  let summary = "Scaled dot-product attention";
  let description = [{
    `ins(%query, %key, %value[, %mask]) outs(%init)`: with `query` of shape
    `[B..., Nq, D]`, `key` `[B..., Nk, D]`, `value` `[B..., Nk, Dv]` and an
    optional `mask` `[B..., Nq, Nk]` (f32, added to the scores; or i1, where
    false masks a score out), the result `[B..., Nq, Dv]` is

        softmax(query · keyᵀ / sqrt(D) + mask) · value

    over the last dim, a row whose every score is masked out giving zeros.
    The contents of `init` are not read.

    ```mlir
    %o = tm_tensor.attention ins(%q, %k, %v : tensor<2x4x8x16xf32>,
             tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>)
             outs(%init : tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
    ```

    fbl handles static shapes of f32 and rank 2 or more.
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs,
                       Variadic<AnyRankedTensor>:$outputs);
  let results = (outs Variadic<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    attr-dict
    `ins` `(` $inputs `:` type($inputs) `)`
    `outs` `(` $outputs `:` type($outputs) `)`
    (`->` type($result)^)?
  }];
  let hasVerifier = 1;
}

#endif // FBL_DIALECT_TMTENSOR_IR_TMTENSOROPS_TD
