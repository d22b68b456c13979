//===- TMTensor.h - torch-mlir's tm_tensor ops fbl reads --------*- C++ -*-===//
//
// Declares the tm_tensor import dialect and its ops.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_DIALECT_TMTENSOR_IR_TMTENSOR_H
#define FBL_DIALECT_TMTENSOR_IR_TMTENSOR_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"

#include "fbl/Dialect/TMTensor/IR/TMTensorDialect.h.inc"

#define GET_OP_CLASSES
#include "fbl/Dialect/TMTensor/IR/TMTensorOps.h.inc"

#endif // FBL_DIALECT_TMTENSOR_IR_TMTENSOR_H
