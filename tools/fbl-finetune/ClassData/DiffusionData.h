//===- DiffusionData.h - Latents and text context of a UNet -----*- C++ -*-===//
//
// The training data of a diffusion UNet, as diffusers' text-to-image
// training scripts prepare it: an .npy of N image latents [N, C, S, S] (the
// VAE's, already scaled) and an .npy of the text encoder's hidden states
// for each [N, L, D]. A batch draws examples, a timestep per example
// uniformly from the noise schedule and Gaussian noise, and gives the UNet
// the noised latents sqrt(a_t) x + sqrt(1 - a_t) e to predict e from.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_TOOLS_FINETUNE_DIFFUSIONDATA_H
#define FBL_TOOLS_FINETUNE_DIFFUSIONDATA_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace fbl::finetune {

class DiffusionData {
public:
  /// What one example must be.
  struct Expect {
    int64_t channels = 4, size = 64; ///< latents [channels, size, size]
    int64_t contextWidth = 768;      ///< hidden states [any, contextWidth]
  };
  /// One batch, each as the UNet's inputs take it.
  struct Batch {
    std::vector<float> sample, context, noise;
    std::vector<int64_t> timesteps;
  };
  /// Stable Diffusion's training schedule: 1000 steps of "scaled_linear"
  /// betas from 0.00085 to 0.012 (its scheduler_config.json).
  static constexpr int64_t kTrainTimesteps = 1000;

  /// Reads `latentsPath` and `contextPath`; every error is one line naming
  /// the file.
  static llvm::Expected<DiffusionData> load(const std::string &latentsPath,
                                            const std::string &contextPath,
                                            const Expect &expect);

  int64_t numExamples() const { return numExamples_; }
  int64_t contextLength() const { return contextLength_; }

  /// `batch` examples drawn at random, noised at random timesteps.
  void sample(std::mt19937_64 &rng, int64_t batch, Batch &out) const;

private:
  int64_t numExamples_ = 0, contextLength_ = 0;
  size_t latentSize = 0, contextSize = 0;
  std::vector<float> latents, context;
  /// The cumulative product of (1 - beta) at each timestep.
  std::vector<double> alphasCumprod;
};

} // namespace fbl::finetune

#endif // FBL_TOOLS_FINETUNE_DIFFUSIONDATA_H
