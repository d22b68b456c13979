//===- KernelCompiler.h - fbl.dispatch bodies as flat programs --*- C++ -*-===//
//
// Compiles the body of an fbl.dispatch once into the register program
// fbl-cachesim runs per work-item (fbl/CacheSim/Program.h): the ops that
// addresses, control flow and memory accesses need, nothing of the float
// arithmetic.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_CACHESIM_KERNELCOMPILER_H
#define FBL_CACHESIM_KERNELCOMPILER_H

#include "fbl/CacheSim/Program.h"
#include "fbl/Dialect/FBL/IR/FBLOps.h"

namespace mlir::fbl {

/// The program of `dispatch`. Fails with an error on the first op of the
/// body it cannot interpret, on an address that depends on float data, and
/// on a gather index whose values have no recorded range
/// (`fbl.input_range` on the function argument they come from).
FailureOr<::fbl::cachesim::Program> compileKernel(DispatchOp dispatch);

} // namespace mlir::fbl

#endif // FBL_CACHESIM_KERNELCOMPILER_H
