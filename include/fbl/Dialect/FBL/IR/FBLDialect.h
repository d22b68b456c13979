//===- FBLDialect.h - The fbl dialect ---------------------------*- C++ -*-===//
//
// Declares the fbl dialect class.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_DIALECT_FBL_IR_FBLDIALECT_H
#define FBL_DIALECT_FBL_IR_FBLDIALECT_H

#include "mlir/IR/Dialect.h"

#include "fbl/Dialect/FBL/IR/FBLDialect.h.inc"

#endif // FBL_DIALECT_FBL_IR_FBLDIALECT_H
