//===- NpyChecks.cpp - Reading and checking training .npy files -----------===//

#include "NpyChecks.h"

#include <stdexcept>

using namespace fbl::finetune;

llvm::Error fbl::finetune::npyError(const std::string &what,
                                    const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 (what + ": " + why).str());
}

llvm::Expected<fbl::npy::Array>
fbl::finetune::readNpy(const std::string &what, const std::string &path) {
  try {
    return npy::read(path);
  } catch (const std::exception &e) {
    return npyError(what, e.what());
  }
}

bool fbl::finetune::shapeMatches(llvm::ArrayRef<int64_t> shape,
                                 llvm::ArrayRef<int64_t> want) {
  if (shape.size() != want.size())
    return false;
  for (size_t i = 0; i < want.size(); ++i)
    if (shape[i] < 1 || (want[i] >= 0 && shape[i] != want[i]))
      return false;
  return true;
}

std::string fbl::finetune::shapeText(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") +
         (shape[i] < 0 ? std::string("any") : std::to_string(shape[i]));
  return s + "]";
}
