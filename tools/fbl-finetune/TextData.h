//===- TextData.h - Token batches from text for fine-tuning -----*- C++ -*-===//
//
// The training data of fbl-finetune: a text file (or every file of a
// folder), tokenized byte by byte, cut into random windows of `seq` tokens.
// Byte b is token `byteBase + b`: 0 for fbl's tiny presets (ids 0..255 are
// bytes), 3 for LLaMA-style vocabularies whose ids 3..258 are the
// SentencePiece byte-fallback tokens <0x00>..<0xFF>.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_TOOLS_FINETUNE_TEXTDATA_H
#define FBL_TOOLS_FINETUNE_TEXTDATA_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace fbl::finetune {

struct ByteTokenizer {
  int64_t byteBase = 0;
  int64_t bos = -1; ///< prepended to each document when >= 0
  std::vector<int64_t> encode(llvm::StringRef text) const;
};

class TextData {
public:
  /// Reads `path` (a file, or the regular files of a folder in name order).
  static llvm::Expected<TextData> load(const std::string &path,
                                       const ByteTokenizer &tokenizer);

  /// Fills `ids` with `batch` windows of `seq` tokens, each starting at a
  /// random offset drawn from `rng`.
  void sample(std::mt19937_64 &rng, int64_t batch, int64_t seq,
              std::vector<int64_t> &ids) const;

  int64_t numTokens() const { return int64_t(tokens.size()); }
  int64_t numDocuments() const { return documents; }

private:
  std::vector<int64_t> tokens;
  int64_t documents = 0;
};

} // namespace fbl::finetune

#endif // FBL_TOOLS_FINETUNE_TEXTDATA_H
