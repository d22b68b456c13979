//===- FBLOps.h - fbl operations --------------------------------*- C++ -*-===//
//
// Declares the fbl operations.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_DIALECT_FBL_IR_FBLOPS_H
#define FBL_DIALECT_FBL_IR_FBLOPS_H

#include "fbl/Dialect/FBL/IR/FBLAttrs.h"
#include "fbl/Dialect/FBL/IR/FBLDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#define GET_OP_CLASSES
#include "fbl/Dialect/FBL/IR/FBLOps.h.inc"

namespace mlir::fbl {
/// The value whose memory `v` addresses: `v` itself, or what the chain of
/// fbl.transpose_view / fbl.reshape_view ops it comes from views.
Value viewedValue(Value v);
} // namespace mlir::fbl

#endif // FBL_DIALECT_FBL_IR_FBLOPS_H
