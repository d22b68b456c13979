//===- Tokenizer.h - BPE from a Hugging Face tokenizer.json -----*- C++ -*-===//
//
// The tokenizer of `fbl-finetune --tokenizer FILE`: a Hugging Face
// tokenizer.json whose model is BPE, in the two forms the supported model
// families ship:
//
// - byte-level BPE (GPT-2, Llama-3, Qwen2): a `ByteLevel` pre-tokenizer
//   (alone, splitting by GPT-2's pattern, or in a `Sequence` after a `Split`
//   by a regex, see PreSplit.h), the bytes of each piece mapped to GPT-2's
//   printable alphabet, merges by rank;
// - SentencePiece-style BPE (LLaMA-2, TinyLlama, Gemma): normalizers
//   `Replace` " " -> "▁" and `Prepend` "▁" (or a `Metaspace`
//   pre-tokenizer), merges by rank over UTF-8 characters, characters
//   outside the vocabulary as their bytes' <0xNN> tokens (`byte_fallback`)
//   or `unk_token`.
//
// The text is first cut at the `added_tokens` (special tokens such as <s>,
// <|endoftext|>): each occurrence is its own token, the text between is
// normalized, pre-tokenized and merged. Merges follow Hugging Face's BPE: the
// adjacent pair of lowest rank first, the leftmost of equal ones, one merge
// at a time (a priority queue per word); pieces are cached.
//
// Plain C++ with exceptions inside (nlohmann-json throws); the interface
// reports errors as one-line strings.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_TOOLS_FINETUNE_TOKENIZER_H
#define FBL_TOOLS_FINETUNE_TOKENIZER_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fbl::finetune {

class BpeTokenizer {
public:
  /// Reads tokenizer.json at `path`; nullptr and `error` set on failure.
  static std::unique_ptr<BpeTokenizer> load(const std::string &path,
                                            std::string &error);
  /// Reads a tokenizer.json's text.
  static std::unique_ptr<BpeTokenizer> parse(std::string_view json,
                                             std::string &error);
  ~BpeTokenizer();

  /// Appends the tokens of `text` (one document, no bos) to `ids`.
  void encode(std::string_view text, std::vector<int64_t> &ids);

  /// The largest token id of the vocabulary and the added tokens.
  int64_t maxId() const;
  /// The token the post-processor puts before a sequence (TemplateProcessing
  /// that starts with a special token), when it does.
  std::optional<int64_t> bosFromTemplate() const;
  /// Whether the bytes are mapped to GPT-2's alphabet (a ByteLevel
  /// pre-tokenizer).
  bool isByteLevel() const;
  /// One line each: parts of the file fbl does not apply exactly.
  const std::vector<std::string> &warnings() const;

  struct Impl;

private:
  explicit BpeTokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace fbl::finetune

#endif // FBL_TOOLS_FINETUNE_TOKENIZER_H
