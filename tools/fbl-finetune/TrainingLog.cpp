//===- TrainingLog.cpp - Loss curve, plot and summary of a run ------------===//

#include "TrainingLog.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace fbl::finetune;

static llvm::Error ioError(const std::string &path, const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 ("cannot write '" + path + "': " + why).str());
}

llvm::Error fbl::finetune::writeFileAtomically(const std::string &path,
                                               llvm::StringRef text) {
  std::string tmp = path + ".partial";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec);
    if (ec)
      return ioError(path, ec.message());
    os << text;
    os.close();
    if (os.has_error()) {
      std::error_code e = os.error();
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return ioError(path, e.message());
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    return ioError(path, ec.message());
  }
  return llvm::Error::success();
}

llvm::Error fbl::finetune::writeJson(const std::string &path,
                                     const llvm::json::Value &value) {
  return writeFileAtomically(path, llvm::formatv("{0:2}\n", value).str());
}

llvm::Error TrainingLog::readCsv(const std::string &path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read '%s'",
                                   path.c_str());
  records.clear();
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, false);
  for (llvm::StringRef line : llvm::drop_begin(lines)) {
    llvm::SmallVector<llvm::StringRef> f;
    line.split(f, ',');
    StepRecord r{};
    if (f.size() != 4 || f[0].getAsInteger(10, r.step) ||
        f[1].getAsDouble(r.loss) || f[2].getAsDouble(r.milliseconds) ||
        f[3].getAsDouble(r.tokensPerSecond))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "'%s': malformed line '%s'", path.c_str(),
                                     line.str().c_str());
    records.push_back(r);
  }
  return llvm::Error::success();
}

llvm::Error TrainingLog::writeCsv(const std::string &path) const {
  std::string text = "step,loss,step_ms,tokens_per_s\n";
  for (const StepRecord &r : records)
    text += llvm::formatv("{0},{1},{2:f3},{3:f1}\n", r.step,
                          llvm::format("%.8g", r.loss), r.milliseconds,
                          r.tokensPerSecond)
                .str();
  return writeFileAtomically(path, text);
}

double TrainingLog::medianMilliseconds() const {
  std::vector<double> ms;
  for (size_t i = records.size() > 1 ? 1 : 0; i < records.size(); ++i)
    ms.push_back(records[i].milliseconds);
  if (ms.empty())
    return 0.0;
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

llvm::Error TrainingLog::writeSvg(const std::string &path,
                                  llvm::StringRef title) const {
  // A 640x400 plot: axes with ticks, the loss per step and its moving mean.
  const double width = 640, height = 400, left = 64, right = 16, top = 36,
               bottom = 48;
  double plotW = width - left - right, plotH = height - top - bottom;
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" "
                      "width=\"{0}\" height=\"{1}\" font-family=\"sans-serif\" "
                      "font-size=\"12\">\n",
                      width, height);
  os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  os << llvm::formatv("<text x=\"{0}\" y=\"20\" text-anchor=\"middle\" "
                      "font-size=\"14\">{1}</text>\n",
                      width / 2, title);
  if (!records.empty()) {
    double lo = records[0].loss, hi = records[0].loss;
    for (const StepRecord &r : records) {
      lo = std::min(lo, r.loss);
      hi = std::max(hi, r.loss);
    }
    if (hi - lo < 1e-9)
      hi = lo + 1.0;
    int64_t first = records.front().step, last = records.back().step;
    double span = std::max<int64_t>(last - first, 1);
    auto x = [&](int64_t step) { return left + plotW * (step - first) / span; };
    auto y = [&](double loss) { return top + plotH * (hi - loss) / (hi - lo); };
    os << llvm::formatv("<path d=\"M{0},{1} V{2} H{3}\" stroke=\"black\" "
                        "fill=\"none\"/>\n",
                        left, top, top + plotH, left + plotW);
    for (int i = 0; i <= 4; ++i) {
      double v = lo + (hi - lo) * i / 4;
      os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" text-anchor=\"end\">"
                          "{2:f3}</text>\n",
                          left - 6, y(v) + 4, v);
      int64_t step = first + int64_t(std::llround(span * i / 4));
      os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\">"
                          "{2}</text>\n",
                          x(step), top + plotH + 18, step);
    }
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\">"
                        "step</text>\n",
                        left + plotW / 2, height - 8);
    os << llvm::formatv("<text x=\"14\" y=\"{0}\" text-anchor=\"middle\" "
                        "transform=\"rotate(-90 14 {0})\">loss</text>\n",
                        top + plotH / 2);
    auto polyline = [&](llvm::ArrayRef<double> values, llvm::StringRef color,
                        double strokeWidth) {
      os << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\""
         << strokeWidth << "\" points=\"";
      for (size_t i = 0; i < values.size(); ++i)
        os << llvm::formatv("{0:f1},{1:f1} ", x(records[i].step), y(values[i]));
      os << "\"/>\n";
    };
    std::vector<double> loss, mean;
    double window = std::max<double>(1.0, records.size() / 20.0), acc = 0;
    for (size_t i = 0; i < records.size(); ++i) {
      loss.push_back(records[i].loss);
      acc += records[i].loss;
      if (i >= size_t(window))
        acc -= records[i - size_t(window)].loss;
      mean.push_back(acc / std::min<double>(i + 1, window));
    }
    polyline(loss, "#9db8d9", 1);
    polyline(mean, "#1f4e89", 2);
  }
  os << "</svg>\n";
  return writeFileAtomically(path, s);
}
