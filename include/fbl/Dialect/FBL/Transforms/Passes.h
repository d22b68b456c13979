//===- Passes.h - fbl passes ------------------------------------*- C++ -*-===//
//
// Declares fbl's passes (generated from Passes.td) and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_DIALECT_FBL_TRANSFORMS_PASSES_H
#define FBL_DIALECT_FBL_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::fbl {

#define GEN_PASS_DECL
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"

} // namespace mlir::fbl

#endif // FBL_DIALECT_FBL_TRANSFORMS_PASSES_H
