//===- TrainingPipeline.cpp - fbl-training-pipeline -----------------------===//
//
// The whole compile of a training step, for fbl-opt:
//   fbl-set-target -> fbl-autodiff (forward models only) ->
//   fbl-decompose-aggregates -> fbl-fuse-elementwise (unless fuse=false) ->
//   fbl-split-reductions -> fbl-classify-ops ->
//   fbl-select-layouts -> fbl-materialize-rtile -> fbl-fold-index-transforms
//   -> canonicalize, cse -> fbl-training-report (when report= is given) ->
//   fbl-fuse-multi-output (unless fuse=false), fbl-lower-to-kernels (kernel
//   bodies folded and CSE'd),
//   fbl-merge-dispatches (unless fuse=false or merge=false),
//   fbl-plan-memory; the last
//   four unless kernels=false.
//
//===----------------------------------------------------------------------===//

#include "fbl/Dialect/FBL/IR/FBLOps.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::fbl;

void mlir::fbl::buildTrainingPipeline(OpPassManager &pm,
                                      const TrainingPipelineOptions &options) {
  FBLSetTargetPassOptions setTarget;
  setTarget.target = options.target;
  setTarget.fallback = options.fallbackTarget;
  pm.addPass(createFBLSetTargetPass(setTarget));
  FBLAutodiffPassOptions autodiff;
  autodiff.optimizer = options.optimizer;
  autodiff.learningRate = options.learningRate;
  autodiff.requireModel = true;
  pm.addPass(createFBLAutodiffPass(autodiff));
  pm.addPass(createFBLDecomposeAggregatesPass());
  if (options.fuse)
    pm.addPass(createFBLFuseElementwisePass());
  FBLSplitReductionsPassOptions split;
  split.rowKernels = options.kernels && options.fuse && options.rows;
  split.rowKernelRowsPerUnit = options.rowKernelRowsPerUnit;
  pm.addPass(createFBLSplitReductionsPass(split));
  pm.addPass(createFBLClassifyOpsPass());
  FBLSelectLayoutsPassOptions select;
  select.policy = options.policy;
  pm.addPass(createFBLSelectLayoutsPass(select));
  pm.addPass(createFBLMaterializeRTilePass());
  pm.addPass(createFBLFoldIndexTransformsPass());
  // Training functions are one block whose ops hold one-block bodies:
  // region simplification would only walk them all after every rewrite.
  GreedyRewriteConfig canonicalize;
  canonicalize.setRegionSimplificationLevel(
      GreedySimplifyRegionLevel::Disabled);
  pm.addPass(createCanonicalizerPass(canonicalize));
  pm.addPass(createCSEPass());
  if (!options.report.empty()) {
    FBLTrainingReportPassOptions report;
    report.file = options.report;
    report.policy = options.policy;
    pm.addPass(createFBLTrainingReportPass(report));
  }
  if (options.kernels) {
    if (options.fuse) {
      FBLFuseMultiOutputPassOptions multi;
      multi.gemmEpilogues = options.gemmEpilogues;
      pm.addPass(createFBLFuseMultiOutputPass(multi));
    }
    // Each distinct kernel body folded and CSE'd once, as it is built;
    // repeats are copies of clean bodies.
    FBLLowerToKernelsPassOptions lower;
    lower.cse = true;
    lower.fold = true;
    lower.rows = options.fuse && options.rows;
    lower.rowPairs = options.rowPairs;
    lower.gemmEpilogues = options.gemmEpilogues;
    pm.addPass(createFBLLowerToKernelsPass(lower));
    if (options.fuse && options.merge)
      pm.addPass(createFBLMergeDispatchesPass());
    pm.addPass(createFBLPlanMemoryPass());
  }
}

void mlir::fbl::registerTrainingPipeline() {
  PassPipelineRegistration<TrainingPipelineOptions>(
      "fbl-training-pipeline",
      "Compile a training step: autodiff, classification, layout selection, "
      "R-Tile materialization, index-transform folding, report",
      buildTrainingPipeline);
}
