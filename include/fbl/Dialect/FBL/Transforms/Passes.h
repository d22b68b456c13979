//===- Passes.h - fbl passes ------------------------------------*- C++ -*-===//
//
// Declares fbl's passes (generated from Passes.td) and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_DIALECT_FBL_TRANSFORMS_PASSES_H
#define FBL_DIALECT_FBL_TRANSFORMS_PASSES_H

#include "fbl/Dialect/FBL/IR/FBLAttrs.h"
#include "fbl/Dialect/FBL/IR/FBLDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::fbl {

#define GEN_PASS_DECL
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"

/// Options of the fbl-training-pipeline.
struct TrainingPipelineOptions
    : public PassPipelineOptions<TrainingPipelineOptions> {
  Option<std::string> policy{*this, "policy",
                             llvm::cl::desc("fblayout, reuse-forward or "
                                            "explicit-transpose"),
                             llvm::cl::init("fblayout")};
  Option<std::string> target{
      *this, "target",
      llvm::cl::desc("Target preset or #fbl.target<...>; "
                     "default: the module's fbl.target"),
      llvm::cl::init("")};
  Option<std::string> fallbackTarget{
      *this, "fallback-target",
      llvm::cl::desc("Target preset (or #fbl.target<...>) for a module "
                     "without fbl.target when target= is not given"),
      llvm::cl::init("")};
  Option<std::string> report{*this, "report",
                             llvm::cl::desc("Write the JSON report here"),
                             llvm::cl::init("")};
  Option<std::string> optimizer{*this, "optimizer",
                                llvm::cl::desc("none, sgd or adamw"),
                                llvm::cl::init("none")};
  Option<double> learningRate{*this, "lr", llvm::cl::desc("Learning rate"),
                              llvm::cl::init(1e-3)};
  Option<bool> fuse{*this, "fuse",
                    llvm::cl::desc("Fuse elementwise chains "
                                   "(fbl-fuse-elementwise, "
                                   "fbl-fuse-multi-output)"),
                    llvm::cl::init(true)};
  Option<bool> merge{*this, "merge",
                     llvm::cl::desc("Merge independent kernels into shared "
                                    "launches (fbl-merge-dispatches); false "
                                    "keeps one kernel per launch, as "
                                    "per-kernel profiles want (fuse=false "
                                    "merges none either)"),
                     llvm::cl::init(true)};
  Option<bool> rows{*this, "rows",
                    llvm::cl::desc("Compute each row group (a softmax, its "
                                   "backward) as one kernel with a "
                                   "work-group per row (fbl-lower-to-kernels "
                                   "rows; only where fuse is on)"),
                    llvm::cl::init(true)};
  Option<bool> rowPairs{
      *this, "row-pairs",
      llvm::cl::desc("Row kernels take two neighbouring rows a work-group "
                     "where they hold both (fbl-lower-to-kernels row-pairs)"),
      llvm::cl::init(FBLLowerToKernelsPassOptions().rowPairs)};
  Option<int64_t> rowKernelRowsPerUnit{
      *this, "row-kernel-rows-per-unit",
      llvm::cl::desc("Row reductions read back along the row stay whole for "
                     "a row kernel from this many rows per compute unit "
                     "(fbl-split-reductions)"),
      llvm::cl::init(FBLSplitReductionsPassOptions().rowKernelRowsPerUnit)};
  Option<std::string> gemmEpilogues{
      *this, "gemm-epilogues",
      llvm::cl::desc("Which readers of a GEMM's result its kernel computes "
                     "(fbl-lower-to-kernels gemm-epilogues): all, none, "
                     "sole-reader, same-shape, sole-same-shape"),
      llvm::cl::init(FBLLowerToKernelsPassOptions().gemmEpilogues)};
  Option<bool> kernels{*this, "kernels",
                       llvm::cl::desc("Lower to fbl.dispatch kernels at the "
                                      "end (what fbl-translate emits)"),
                       llvm::cl::init(true)};
};

/// Adds autodiff (for forward models), classification, layout selection,
/// R-Tile materialization, index-transform folding and the report.
void buildTrainingPipeline(OpPassManager &pm,
                           const TrainingPipelineOptions &options);

/// Registers `fbl-training-pipeline`.
void registerTrainingPipeline();

} // namespace mlir::fbl

#endif // FBL_DIALECT_FBL_TRANSFORMS_PASSES_H
