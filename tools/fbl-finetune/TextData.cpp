//===- TextData.cpp - Token batches from text for fine-tuning -------------===//

#include "TextData.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>

using namespace fbl::finetune;

std::vector<int64_t> ByteTokenizer::encode(llvm::StringRef text) const {
  std::vector<int64_t> ids;
  ids.reserve(text.size() + 1);
  if (bos >= 0)
    ids.push_back(bos);
  for (unsigned char c : text)
    ids.push_back(byteBase + c);
  return ids;
}

static llvm::Error dataError(const std::string &path, const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 ("--data '" + path + "': " + why).str());
}

llvm::Expected<TextData> TextData::load(const std::string &path,
                                        DocumentEncoder encode) {
  std::vector<std::string> files;
  if (llvm::sys::fs::is_directory(path)) {
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(path, ec), end; it != end && !ec;
         it.increment(ec))
      if (llvm::sys::fs::is_regular_file(it->path()))
        files.push_back(it->path());
    if (ec)
      return dataError(path, ec.message());
    std::sort(files.begin(), files.end());
    if (files.empty())
      return dataError(path, "the folder holds no files");
  } else {
    files.push_back(path);
  }
  TextData data;
  for (const std::string &file : files) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        llvm::MemoryBuffer::getFile(file, /*IsText=*/false);
    if (!buffer)
      return dataError(file, buffer.getError().message());
    data.starts.push_back(data.tokens.size());
    encode((*buffer)->getBuffer(), data.tokens);
  }
  return data;
}

llvm::ArrayRef<int64_t> TextData::document(int64_t d) const {
  size_t end = size_t(d) + 1 < starts.size() ? starts[d + 1] : tokens.size();
  return llvm::ArrayRef<int64_t>(tokens).slice(starts[d], end - starts[d]);
}

void TextData::sample(std::mt19937_64 &rng, int64_t batch, int64_t seq,
                      std::vector<int64_t> &ids) const {
  ids.resize(batch * seq);
  int64_t n = numTokens();
  std::uniform_int_distribution<int64_t> start(0,
                                               std::max<int64_t>(n - seq, 0));
  for (int64_t b = 0; b < batch; ++b) {
    int64_t s = start(rng);
    for (int64_t t = 0; t < seq; ++t)
      ids[b * seq + t] = tokens[(s + t) % n];
  }
}
