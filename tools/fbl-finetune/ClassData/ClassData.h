//===- ClassData.h - Labelled examples for fine-tuning a classifier -*- C++
//-*-===//
//
// The training data of a classifier or a speech model: an .npy of N
// examples (images [N, C, S, S] for a vision model, token ids [N, S] for a
// text classifier, log-mel features [N, M, F] for speech) and an .npy of
// their integer labels (one class each, or a token sequence [N, S] for
// speech), checked against the model once, then sampled into batches.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_TOOLS_FINETUNE_CLASSDATA_H
#define FBL_TOOLS_FINETUNE_CLASSDATA_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace fbl::finetune {

class ClassData {
public:
  /// What one example must be.
  struct Expect {
    bool isFloat = false;       ///< f32 pixels, else i64 token ids
    std::vector<int64_t> shape; ///< one example's; -1: any extent
    int64_t numLabels = 2;      ///< labels lie in [0, numLabels)
    int64_t maxId = 0;          ///< token ids lie in [0, maxId)
    /// One example's labels: {} (a class) or {-1} (a token sequence, where
    /// -100 marks a position that does not count).
    std::vector<int64_t> labelShape;
  };

  /// Reads `dataPath` and `labelsPath`; every error is one line naming the
  /// file.
  static llvm::Expected<ClassData> load(const std::string &dataPath,
                                        const std::string &labelsPath,
                                        const Expect &expect);

  int64_t numExamples() const { return int64_t(labels.size()) / perExample; }
  /// One example's shape (the -1 extents resolved).
  llvm::ArrayRef<int64_t> exampleShape() const { return shape; }
  /// Labels per example (1 for a class).
  int64_t labelsPerExample() const { return perExample; }

  /// `batch` examples drawn at random: their bytes (f32 or i64, as the
  /// model takes them) and their labels.
  void sample(std::mt19937_64 &rng, int64_t batch, std::vector<uint8_t> &bytes,
              std::vector<int64_t> &batchLabels) const;

private:
  std::vector<int64_t> shape;
  size_t exampleBytes = 0;
  int64_t perExample = 1;
  std::vector<uint8_t> examples;
  std::vector<int64_t> labels;
};

} // namespace fbl::finetune

#endif // FBL_TOOLS_FINETUNE_CLASSDATA_H
