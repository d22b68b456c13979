//===- CompileStep.h - The training step of a model, cached -----*- C++ -*-===//
//
// Builds a model's forward graph, adds LoRA adapters, runs the training
// pipeline and writes the OpenCL bundle, in process. Bundles are cached under
// a key of everything that decides them (config text, shapes, LoRA options,
// policy, target, optimizer, and the compiler binary itself), so a second
// run of the same job starts training at once.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_TOOLS_FINETUNE_COMPILESTEP_H
#define FBL_TOOLS_FINETUNE_COMPILESTEP_H

#include "fbl/Models/Model.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace fbl::finetune {

struct LoraOptions {
  int64_t rank = 8;
  double alpha = 16;
  std::string targets;   ///< modules to adapt, e.g. "q_proj,v_proj"
  std::string trainable; ///< names kept trainable besides the adapters
};

struct StepOptions {
  std::string configText; ///< the model's config.json
  models::TrainingShape shape;
  std::optional<LoraOptions> lora;
  std::string policy = "fblayout";
  std::string target; ///< preset or #fbl.target<...>
  double learningRate = 1e-4;
  std::string cacheDir; ///< empty: no cache
};

struct CompiledStep {
  std::string bundleDir;
  bool fromCache = false;
  double compileSeconds = 0;
};

/// The pass pipeline (fbl-opt syntax) that makes the training step.
std::string stepPipeline(const StepOptions &options);

/// Compiles (or finds in the cache) the AdamW training step; progress lines
/// go to `log`.
llvm::Expected<CompiledStep> compileStep(const models::ModelConfig &config,
                                         const StepOptions &options,
                                         const std::string &scratchDir,
                                         llvm::raw_ostream &log);

} // namespace fbl::finetune

#endif // FBL_TOOLS_FINETUNE_COMPILESTEP_H
