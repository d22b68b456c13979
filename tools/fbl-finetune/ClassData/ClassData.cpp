//===- ClassData.cpp - Labelled examples for fine-tuning a classifier -----===//

#include "ClassData.h"

#include "NpyChecks.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cstring>

using namespace fbl::finetune;

llvm::Expected<ClassData> ClassData::load(const std::string &dataPath,
                                          const std::string &labelsPath,
                                          const Expect &expect) {
  std::string dataWhat = "--data '" + dataPath + "'",
              labelsWhat = "--labels '" + labelsPath + "'";
  llvm::Expected<npy::Array> dataRead = readNpy(dataWhat, dataPath);
  if (!dataRead)
    return dataRead.takeError();
  llvm::Expected<npy::Array> labelsRead = readNpy(labelsWhat, labelsPath);
  if (!labelsRead)
    return labelsRead.takeError();
  npy::Array &data = *dataRead, &labels = *labelsRead;
  std::vector<int64_t> want = {-1};
  want.insert(want.end(), expect.shape.begin(), expect.shape.end());
  if (!shapeMatches(data.shape, want))
    return npyError(dataWhat, "shape " + shapeText(data.shape) + ", expected " +
                                  shapeText(want) + " (examples first)");
  if (expect.isFloat ? data.dtype != "f32"
                     : data.dtype != "i64" && data.dtype != "i32")
    return npyError(dataWhat, "holds " + data.dtype + "; expected " +
                                  (expect.isFloat ? "floats (pixel values)"
                                                  : "integers (token ids)"));
  bool sequences = !expect.labelShape.empty();
  if (labels.shape.size() != 1 + expect.labelShape.size() ||
      labels.shape[0] != data.shape[0] || (sequences && labels.shape[1] < 1))
    return npyError(
        labelsWhat,
        llvm::formatv("shape {0}, expected [{1}{2}] ({3} per example)",
                      shapeText(labels.shape), data.shape[0],
                      sequences ? ", any" : "",
                      sequences ? "a token sequence" : "a label"));
  if (labels.dtype != "i64" && labels.dtype != "i32")
    return npyError(labelsWhat,
                    "holds " + labels.dtype + "; expected integers");

  auto integers = [](const npy::Array &a) {
    std::vector<int64_t> v(a.data.size() / (a.dtype == "i64" ? 8 : 4));
    for (size_t i = 0; i < v.size(); ++i) {
      if (a.dtype == "i64") {
        std::memcpy(&v[i], a.data.data() + 8 * i, 8);
      } else {
        int32_t x;
        std::memcpy(&x, a.data.data() + 4 * i, 4);
        v[i] = x;
      }
    }
    return v;
  };
  ClassData d;
  d.labels = integers(labels);
  d.perExample = sequences ? labels.shape[1] : 1;
  for (size_t i = 0; i < d.labels.size(); ++i)
    if ((d.labels[i] < 0 || d.labels[i] >= expect.numLabels) &&
        !(sequences && d.labels[i] == -100))
      return npyError(
          labelsWhat,
          llvm::formatv("label {0} of example {1} is outside [0, {2})",
                        d.labels[i], i / d.perExample, expect.numLabels));
  d.shape.assign(data.shape.begin() + 1, data.shape.end());
  if (expect.isFloat) {
    d.examples = std::move(data.data);
  } else {
    std::vector<int64_t> ids = integers(data);
    for (size_t i = 0; i < ids.size(); ++i)
      if (ids[i] < 0 || ids[i] >= expect.maxId)
        return npyError(dataWhat,
                        llvm::formatv("token id {0} at {1} is outside [0, {2})",
                                      ids[i], i, expect.maxId));
    d.examples.resize(ids.size() * 8);
    std::memcpy(d.examples.data(), ids.data(), d.examples.size());
  }
  d.exampleBytes = d.examples.size() / size_t(data.shape[0]);
  return d;
}

void ClassData::sample(std::mt19937_64 &rng, int64_t batch,
                       std::vector<uint8_t> &bytes,
                       std::vector<int64_t> &batchLabels) const {
  size_t n = labels.size() / size_t(perExample);
  std::uniform_int_distribution<size_t> pick(0, n - 1);
  bytes.resize(size_t(batch) * exampleBytes);
  batchLabels.resize(size_t(batch * perExample));
  for (int64_t b = 0; b < batch; ++b) {
    size_t i = pick(rng);
    std::memcpy(bytes.data() + b * exampleBytes,
                examples.data() + i * exampleBytes, exampleBytes);
    std::copy_n(labels.begin() + i * perExample, perExample,
                batchLabels.begin() + b * perExample);
  }
}
