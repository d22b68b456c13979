//===- TextData.h - Token batches from text for fine-tuning -----*- C++ -*-===//
//
// The training data of fbl-finetune: a text file (or every file of a
// folder), each file a document, tokenized by a tokenizer.json's BPE
// (Tokenizer.h) or byte by byte, cut into random windows of `seq` tokens.
// Byte by byte, byte b is token `byteBase + b`: 0 for fbl's tiny presets
// (ids 0..255 are bytes), 3 for LLaMA-style vocabularies whose ids 3..258
// are the SentencePiece byte-fallback tokens <0x00>..<0xFF>.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_TOOLS_FINETUNE_TEXTDATA_H
#define FBL_TOOLS_FINETUNE_TEXTDATA_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
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

/// Appends the tokens of one document (bos included) to the vector.
using DocumentEncoder =
    llvm::function_ref<void(llvm::StringRef, std::vector<int64_t> &)>;

class TextData {
public:
  /// Reads `path` (a file, or the regular files of a folder in name order).
  static llvm::Expected<TextData> load(const std::string &path,
                                       DocumentEncoder encode);

  /// Fills `ids` with `batch` windows of `seq` tokens, each starting at a
  /// random offset drawn from `rng`.
  void sample(std::mt19937_64 &rng, int64_t batch, int64_t seq,
              std::vector<int64_t> &ids) const;

  int64_t numTokens() const { return int64_t(tokens.size()); }
  int64_t numDocuments() const { return int64_t(starts.size()); }
  /// The tokens of document `d` (the `d`th file).
  llvm::ArrayRef<int64_t> document(int64_t d) const;

private:
  std::vector<int64_t> tokens;
  std::vector<size_t> starts; ///< of each document in `tokens`
};

} // namespace fbl::finetune

#endif // FBL_TOOLS_FINETUNE_TEXTDATA_H
