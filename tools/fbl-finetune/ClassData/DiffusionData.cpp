//===- DiffusionData.cpp - Latents and text context for a diffusion UNet --===//

#include "DiffusionData.h"

#include "NpyChecks.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstring>

using namespace fbl::finetune;

/// An f32 .npy of finite values and the shape `want` (-1: any extent).
static llvm::Expected<fbl::npy::Array> readFloats(const std::string &what,
                                                  const std::string &path,
                                                  llvm::ArrayRef<int64_t> want,
                                                  const char *meaning) {
  llvm::Expected<fbl::npy::Array> a = readNpy(what, path);
  if (!a)
    return a.takeError();
  if (a->dtype != "f32")
    return npyError(what, "holds " + a->dtype + "; expected f32 " + meaning);
  if (!shapeMatches(a->shape, want))
    return npyError(what, "shape " + shapeText(a->shape) + ", expected " +
                              shapeText(want) + " (" + meaning + ")");
  for (size_t i = 0; i < a->data.size() / 4; ++i) {
    float v;
    std::memcpy(&v, a->data.data() + 4 * i, 4);
    if (!std::isfinite(v))
      return npyError(what,
                      llvm::formatv("value {0} at {1} is not finite", v, i));
  }
  return a;
}

llvm::Expected<DiffusionData>
DiffusionData::load(const std::string &latentsPath,
                    const std::string &contextPath, const Expect &expect) {
  std::string latentsWhat = "--data '" + latentsPath + "'",
              contextWhat = "--context '" + contextPath + "'";
  llvm::Expected<fbl::npy::Array> latents = readFloats(
      latentsWhat, latentsPath, {-1, expect.channels, expect.size, expect.size},
      "latents, examples first");
  if (!latents)
    return latents.takeError();
  int64_t n = latents->shape[0];
  llvm::Expected<fbl::npy::Array> context =
      readFloats(contextWhat, contextPath, {n, -1, expect.contextWidth},
                 "text encoder hidden states, one per latent");
  if (!context)
    return context.takeError();

  DiffusionData d;
  d.numExamples_ = n;
  d.contextLength_ = context->shape[1];
  d.latentSize = latents->data.size() / 4 / size_t(n);
  d.contextSize = context->data.size() / 4 / size_t(n);
  d.latents.resize(latents->data.size() / 4);
  std::memcpy(d.latents.data(), latents->data.data(), latents->data.size());
  d.context.resize(context->data.size() / 4);
  std::memcpy(d.context.data(), context->data.data(), context->data.size());
  // beta_t = (sqrt(b0) + t (sqrt(b1) - sqrt(b0)) / (T - 1))^2.
  double from = std::sqrt(0.00085), to = std::sqrt(0.012), product = 1.0;
  for (int64_t t = 0; t < kTrainTimesteps; ++t) {
    double root = from + (to - from) * double(t) / double(kTrainTimesteps - 1);
    product *= 1.0 - root * root;
    d.alphasCumprod.push_back(product);
  }
  return d;
}

void DiffusionData::sample(std::mt19937_64 &rng, int64_t batch,
                           Batch &out) const {
  std::uniform_int_distribution<int64_t> pick(0, numExamples_ - 1);
  std::uniform_int_distribution<int64_t> timestep(0, kTrainTimesteps - 1);
  std::normal_distribution<float> gaussian;
  out.sample.resize(size_t(batch) * latentSize);
  out.noise.resize(out.sample.size());
  out.context.resize(size_t(batch) * contextSize);
  out.timesteps.resize(size_t(batch));
  for (int64_t b = 0; b < batch; ++b) {
    int64_t i = pick(rng), t = timestep(rng);
    out.timesteps[b] = t;
    double signal = std::sqrt(alphasCumprod[t]),
           spread = std::sqrt(1.0 - alphasCumprod[t]);
    for (size_t k = 0; k < latentSize; ++k) {
      float e = gaussian(rng);
      out.noise[b * latentSize + k] = e;
      out.sample[b * latentSize + k] =
          float(signal * latents[i * latentSize + k] + spread * e);
    }
    std::memcpy(out.context.data() + b * contextSize,
                context.data() + i * contextSize, contextSize * sizeof(float));
  }
}
