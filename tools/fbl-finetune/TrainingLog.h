//===- TrainingLog.h - Loss curve, plot and summary of a run ----*- C++ -*-===//
//
// What fbl-finetune leaves in its output folder besides the weights:
// loss.csv (step, loss, step time, tokens/s), loss.svg (the curve, drawn by
// this file so no plotting package is needed) and summary.json.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_TOOLS_FINETUNE_TRAININGLOG_H
#define FBL_TOOLS_FINETUNE_TRAININGLOG_H

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace fbl::finetune {

struct StepRecord {
  int64_t step;
  double loss;
  double milliseconds;
  double tokensPerSecond;
};

class TrainingLog {
public:
  void add(const StepRecord &r) { records.push_back(r); }
  const std::vector<StepRecord> &steps() const { return records; }
  /// Replaces the records (a resumed run continues its loss.csv).
  llvm::Error readCsv(const std::string &path);

  llvm::Error writeCsv(const std::string &path) const;
  llvm::Error writeSvg(const std::string &path, llvm::StringRef title) const;
  /// Median step time over the records after the first (which includes
  /// program and memory warm-up).
  double medianMilliseconds() const;

private:
  std::vector<StepRecord> records;
};

/// Writes `text` to `path` through a temporary file and a rename, so a
/// reader never sees a partial file.
llvm::Error writeFileAtomically(const std::string &path, llvm::StringRef text);
llvm::Error writeJson(const std::string &path, const llvm::json::Value &value);

} // namespace fbl::finetune

#endif // FBL_TOOLS_FINETUNE_TRAININGLOG_H
