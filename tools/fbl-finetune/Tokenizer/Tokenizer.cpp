//===- Tokenizer.cpp - BPE from a Hugging Face tokenizer.json -------------===//

#include "Tokenizer.h"
#include "PreSplit.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

using json = nlohmann::json;
using namespace fbl::finetune;

namespace {

/// A problem with the file, reported by parse() as one line.
struct FormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const std::string &message) {
  throw FormatError(message);
}

/// A JSON string for messages: quoted, escaped, at most about 60 bytes.
std::string quote(const std::string &text) {
  std::string shown = text.size() > 60 ? text.substr(0, 57) + "..." : text;
  return json(shown).dump(-1, ' ', false, json::error_handler_t::replace);
}

/// `object[key]`, or nullptr when it is absent or null.
const json *field(const json &object, const char *key) {
  if (!object.is_object())
    return nullptr;
  auto it = object.find(key);
  if (it == object.end() || it->is_null())
    return nullptr;
  return &*it;
}

const json &required(const json &object, const char *key,
                     const std::string &where) {
  const json *value = field(object, key);
  if (!value)
    fail((where.empty() ? "" : where + ".") + key + " is missing");
  return *value;
}

std::string stringOf(const json &value, const std::string &what) {
  if (!value.is_string())
    fail(what + " is not a string");
  return value.get<std::string>();
}

bool boolField(const json &object, const char *key, bool otherwise,
               const std::string &where) {
  const json *value = field(object, key);
  if (!value)
    return otherwise;
  if (!value->is_boolean())
    fail(where + "." + key + " is not true or false");
  return value->get<bool>();
}

const json &arrayOf(const json &value, const std::string &what) {
  if (!value.is_array())
    fail(what + " is not an array");
  return value;
}

int32_t tokenIdOf(const json &value, const std::string &what) {
  if (!value.is_number_integer() ||
      (value.is_number_unsigned()
           ? value.get<uint64_t>() > INT32_MAX
           : value.get<int64_t>() < 0 || value.get<int64_t>() > INT32_MAX))
    fail(what + " is " + value.dump() +
         ", not a token id (an integer from 0 to 2^31-1)");
  return int32_t(value.get<int64_t>());
}

enum class Behavior {
  Removed,
  Isolated,
  MergedWithPrevious,
  MergedWithNext,
  Contiguous
};

struct Normalizer {
  enum Kind { Replace, Prepend } kind;
  std::string from, to;
};

struct PreTokenizer {
  enum Kind { ByteLevel, Split, Metaspace } kind;
  // ByteLevel.
  bool addPrefixSpace = false;
  bool useRegex = false;
  // Split (and ByteLevel's use_regex).
  std::optional<SplitPattern> pattern;
  Behavior behavior = Behavior::Isolated;
  bool invert = false;
  // Metaspace.
  std::string replacement;
  enum Prepend { Always, First, Never } prepend = Always;
  bool split = true;
};

struct AddedToken {
  std::string content;
  int32_t id;
  bool lstrip, rstrip, singleWord;
};

/// GPT-2's byte encoder: the printable bytes ('!'..'~', U+00A1..U+00AC,
/// U+00AE..U+00FF) stand for themselves, the other 68 for U+0100, U+0101,
/// ... in byte order (so ' ' is U+0120 'Ġ', '\n' U+010A 'Ċ').
uint32_t byteLevelCodePoint(unsigned b) {
  auto printable = [](unsigned c) {
    return (c >= 33 && c <= 126) || (c >= 161 && c <= 172) ||
           (c >= 174 && c <= 255);
  };
  if (printable(b))
    return b;
  uint32_t next = 256;
  for (unsigned c = 0; c < b; ++c)
    if (!printable(c))
      ++next;
  return next;
}

uint64_t pairKey(int32_t a, int32_t b) {
  return (uint64_t(uint32_t(a)) << 32) | uint32_t(b);
}

bool isWordChar(uint32_t cp) {
  return cp == '_' || isUnicodeLetter(cp) || isUnicodeNumber(cp);
}

/// The start of the character that ends at `end` (> floor) in `text`.
size_t previousCharStart(std::string_view text, size_t floor, size_t end,
                         uint32_t &cp) {
  size_t p = end - 1;
  while (p > floor && end - p < 4 && ((unsigned char)text[p] & 0xC0) == 0x80)
    --p;
  if (decodeUtf8(text, p, cp) != end - p) {
    p = end - 1;
    decodeUtf8(text, p, cp);
  }
  return p;
}

/// Calls emit(begin, end) for the non-empty pieces `text` splits into at
/// `matches` under `behavior` (Hugging Face's SplitDelimiterBehavior).
template <typename Emit>
void forEachPiece(std::string_view text, const ByteRanges &matches,
                  Behavior behavior, bool invert, Emit &&emit) {
  struct Segment {
    size_t begin, end;
    bool match;
  };
  std::vector<Segment> segments;
  size_t last = 0;
  for (auto [b, e] : matches) {
    if (b > last)
      segments.push_back({last, b, false});
    segments.push_back({b, e, true});
    last = e;
  }
  if (last < text.size())
    segments.push_back({last, text.size(), false});
  if (invert)
    for (Segment &s : segments)
      s.match = !s.match;
  std::vector<std::pair<size_t, size_t>> pieces;
  bool previous = false;
  switch (behavior) {
  case Behavior::Removed:
    for (const Segment &s : segments)
      if (!s.match)
        pieces.emplace_back(s.begin, s.end);
    break;
  case Behavior::Isolated:
    for (const Segment &s : segments)
      pieces.emplace_back(s.begin, s.end);
    break;
  case Behavior::MergedWithPrevious:
    // A match joins the piece before it (unless that is a match too).
    for (const Segment &s : segments) {
      if (s.match && !previous && !pieces.empty())
        pieces.back().second = s.end;
      else
        pieces.emplace_back(s.begin, s.end);
      previous = s.match;
    }
    break;
  case Behavior::MergedWithNext:
    // A match joins the piece after it (unless that is a match too).
    for (auto s = segments.rbegin(); s != segments.rend(); ++s) {
      if (s->match && !previous && !pieces.empty())
        pieces.back().first = s->begin;
      else
        pieces.emplace_back(s->begin, s->end);
      previous = s->match;
    }
    std::reverse(pieces.begin(), pieces.end());
    break;
  case Behavior::Contiguous:
    // Runs of matches (and of non-matches) become one piece each.
    for (const Segment &s : segments) {
      if (s.match == previous && !pieces.empty())
        pieces.back().second = s.end;
      else
        pieces.emplace_back(s.begin, s.end);
      previous = s.match;
    }
    break;
  }
  for (auto [b, e] : pieces)
    if (e > b)
      emit(b, e);
}

/// `text` as one line of UTF-8: control characters become spaces, bytes
/// that are not UTF-8 (the parser quotes what it read) \xNN.
std::string oneLine(const std::string &text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    uint32_t cp;
    size_t length = decodeUtf8(text, i, cp);
    if (cp >= 0x110000) {
      char hex[16];
      std::snprintf(hex, sizeof(hex), "\\x%02X", unsigned(cp - 0x110000));
      out += hex;
    } else if (cp < 0x20 || cp == 0x7F) {
      out += ' ';
    } else {
      out.append(text, i, length);
    }
    i += length;
  }
  return out;
}

void replaceAll(std::string &text, const std::string &from,
                const std::string &to) {
  if (from.empty() || text.find(from) == std::string::npos)
    return;
  std::string out;
  out.reserve(text.size());
  size_t at = 0;
  for (size_t hit = text.find(from); hit != std::string::npos;
       hit = text.find(from, at)) {
    out.append(text, at, hit - at);
    out += to;
    at = hit + from.size();
  }
  out.append(text, at, std::string::npos);
  text = std::move(out);
}

} // namespace

struct BpeTokenizer::Impl {
  // The model.
  std::unordered_map<std::string, int32_t> vocab;
  std::unordered_map<uint32_t, int32_t> charIds; ///< one-character tokens
  /// (left id, right id) -> (rank, merged id).
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> merges;
  int32_t unkId = -1;
  bool fuseUnk = false, byteFallback = false, ignoreMerges = false;
  int32_t byteFallbackIds[256]; ///< <0xNN>, or -1
  // Byte-level: each byte's character and the symbols it starts as (its
  // token, else its byte-fallback tokens; none known: unknown).
  bool byteLevel = false;
  std::string byteChars[256];
  std::vector<int32_t> byteSymbols[256];
  bool byteKnown[256];

  std::vector<Normalizer> normalizers;
  std::vector<PreTokenizer> preTokenizers;
  std::vector<AddedToken> added;
  std::vector<int32_t> addedByFirstByte[256]; ///< longest first

  int64_t maxTokenId = -1;
  std::optional<int64_t> bos;
  std::vector<std::string> warnings;

  // Encoding state.
  struct Symbol {
    int32_t id, prev, next;
  };
  struct Candidate {
    int32_t rank, left, right, leftId, rightId, merged;
    /// The heap's order: the top is the lowest rank, then the leftmost.
    static bool later(const Candidate &a, const Candidate &b) {
      return a.rank != b.rank ? a.rank > b.rank : a.left > b.left;
    }
  };
  std::vector<Symbol> symbols;
  std::vector<Candidate> heap;
  bool lastUnknown = false;
  std::unordered_map<std::string, std::vector<int32_t>> cache;

  /// Sequences within sequences: bounded, so that no file exhausts the
  /// stack.
  int nesting = 0;
  struct Nested {
    int &depth;
    Nested(int &depth, const std::string &where) : depth(depth) {
      if (++depth > 32)
        fail(where.substr(0, where.find('.')) +
             ": sequences nested more than 32 deep");
    }
    ~Nested() { --depth; }
  };

  void warn(const std::string &message) {
    if (std::find(warnings.begin(), warnings.end(), message) == warnings.end())
      warnings.push_back(message);
  }

  void read(const json &root);
  void readNormalizer(const json &n, const std::string &where);
  void readPreTokenizer(const json &p, const std::string &where);
  void readModel(const json &model);
  void readAddedTokens(const json &tokens);
  void readPostProcessor(const json &p, const std::string &where);

  void encode(std::string_view text, std::vector<int64_t> &ids);
  void encodeSegment(std::string_view text, bool atStart,
                     std::vector<int64_t> &ids);
  void preTokenize(size_t step, std::string_view piece, bool atStart,
                   std::vector<int64_t> &ids);
  void encodeWord(std::string_view word, std::vector<int64_t> &ids);
  void pushKnown(int32_t id) {
    symbols.push_back({id, int32_t(symbols.size()) - 1, -1});
    lastUnknown = false;
  }
  void pushUnknown() {
    if (unkId < 0 || (fuseUnk && lastUnknown))
      return;
    symbols.push_back({unkId, int32_t(symbols.size()) - 1, -1});
    lastUnknown = true;
  }
  void offer(int32_t left, int32_t right);
  void merge();
};

//===----------------------------------------------------------------------===//
// Reading tokenizer.json
//===----------------------------------------------------------------------===//

void BpeTokenizer::Impl::readNormalizer(const json &n,
                                        const std::string &where) {
  Nested nested(nesting, where);
  if (!n.is_object())
    fail(where + " is not an object");
  std::string type = stringOf(required(n, "type", where), where + ".type");
  if (type == "Sequence") {
    const json &list =
        arrayOf(required(n, "normalizers", where), where + ".normalizers");
    for (size_t i = 0; i < list.size(); ++i)
      readNormalizer(list[i],
                     where + ".normalizers[" + std::to_string(i) + "]");
  } else if (type == "Replace") {
    const json &pattern = required(n, "pattern", where);
    const json *literal = field(pattern, "String");
    if (!literal)
      fail(where + ": Replace with a regex pattern is not supported (only "
                   "{\"String\": ...})");
    normalizers.push_back(
        {Normalizer::Replace, stringOf(*literal, where + ".pattern.String"),
         stringOf(required(n, "content", where), where + ".content")});
  } else if (type == "Prepend") {
    normalizers.push_back(
        {Normalizer::Prepend, "",
         stringOf(required(n, "prepend", where), where + ".prepend")});
  } else if (type == "NFC" || type == "NFD" || type == "NFKC" ||
             type == "NFKD" || type == "Precompiled") {
    warn("normalizer " + type + " is not applied (the text is used as it is)");
  } else {
    fail(where + ": normalizer type " + quote(type) +
         " is not supported (Sequence, Replace, Prepend)");
  }
}

void BpeTokenizer::Impl::readPreTokenizer(const json &p,
                                          const std::string &where) {
  Nested nested(nesting, where);
  if (!p.is_object())
    fail(where + " is not an object");
  std::string type = stringOf(required(p, "type", where), where + ".type");
  PreTokenizer step;
  if (type == "Sequence") {
    const json &list =
        arrayOf(required(p, "pretokenizers", where), where + ".pretokenizers");
    for (size_t i = 0; i < list.size(); ++i)
      readPreTokenizer(list[i],
                       where + ".pretokenizers[" + std::to_string(i) + "]");
    return;
  }
  if (type == "ByteLevel") {
    step.kind = PreTokenizer::ByteLevel;
    step.addPrefixSpace = boolField(p, "add_prefix_space", true, where);
    step.useRegex = boolField(p, "use_regex", true, where);
    if (step.useRegex)
      step.pattern = SplitPattern::parseRegex(SplitPattern::gpt2Regex());
    byteLevel = true;
  } else if (type == "Split") {
    step.kind = PreTokenizer::Split;
    const json &pattern = required(p, "pattern", where);
    if (const json *literal = field(pattern, "String")) {
      step.pattern =
          SplitPattern::literal(stringOf(*literal, where + ".pattern.String"));
    } else if (const json *regex = field(pattern, "Regex")) {
      std::string text = stringOf(*regex, where + ".pattern.Regex");
      step.pattern = SplitPattern::parseRegex(text);
      if (!step.pattern) {
        warn("the Split pattern " + quote(text) +
             " is not one fbl implements; splitting by Llama-3's pattern "
             "instead (an approximation)");
        step.pattern = SplitPattern::parseRegex(SplitPattern::llama3Regex());
      }
    } else {
      fail(where + ".pattern is neither {\"String\": ...} nor "
                   "{\"Regex\": ...}");
    }
    std::string behavior =
        stringOf(required(p, "behavior", where), where + ".behavior");
    if (behavior == "Removed")
      step.behavior = Behavior::Removed;
    else if (behavior == "Isolated")
      step.behavior = Behavior::Isolated;
    else if (behavior == "MergedWithPrevious")
      step.behavior = Behavior::MergedWithPrevious;
    else if (behavior == "MergedWithNext")
      step.behavior = Behavior::MergedWithNext;
    else if (behavior == "Contiguous")
      step.behavior = Behavior::Contiguous;
    else
      fail(where + ".behavior " + quote(behavior) + " is not a split behavior");
    step.invert = boolField(p, "invert", false, where);
  } else if (type == "Metaspace") {
    step.kind = PreTokenizer::Metaspace;
    step.replacement = "\xE2\x96\x81"; // U+2581 '▁'
    if (const json *r = field(p, "replacement"))
      step.replacement = stringOf(*r, where + ".replacement");
    if (const json *scheme = field(p, "prepend_scheme")) {
      std::string s = stringOf(*scheme, where + ".prepend_scheme");
      if (s == "always")
        step.prepend = PreTokenizer::Always;
      else if (s == "first")
        step.prepend = PreTokenizer::First;
      else if (s == "never")
        step.prepend = PreTokenizer::Never;
      else
        fail(where + ".prepend_scheme " + quote(s) +
             " is not always, first or never");
    } else {
      step.prepend = boolField(p, "add_prefix_space", true, where)
                         ? PreTokenizer::Always
                         : PreTokenizer::Never;
    }
    step.split = boolField(p, "split", true, where);
    if (step.split)
      step.pattern = SplitPattern::literal(step.replacement);
  } else {
    fail(where + ": pre-tokenizer type " + quote(type) +
         " is not supported (ByteLevel, Split, Metaspace, Sequence)");
  }
  preTokenizers.push_back(std::move(step));
}

void BpeTokenizer::Impl::readModel(const json &model) {
  if (!model.is_object())
    fail("model is not an object");
  std::string type;
  if (const json *t = field(model, "type"))
    type = stringOf(*t, "model.type");
  else if (field(model, "merges"))
    type = "BPE"; // files written before "type" existed
  else
    fail("model.type is missing");
  if (type != "BPE")
    fail("model type " + quote(type) + " is not supported (only BPE)");

  const json &vocabJson = required(model, "vocab", "model");
  if (!vocabJson.is_object())
    fail("model.vocab is not an object");
  vocab.reserve(vocabJson.size());
  for (auto it = vocabJson.begin(); it != vocabJson.end(); ++it) {
    int32_t id = tokenIdOf(it.value(), "model.vocab[" + quote(it.key()) + "]");
    vocab.emplace(it.key(), id);
    maxTokenId = std::max<int64_t>(maxTokenId, id);
    uint32_t cp;
    if (!it.key().empty() && decodeUtf8(it.key(), 0, cp) == it.key().size() &&
        cp < 0x110000)
      charIds.emplace(cp, id);
  }

  for (const char *key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (const json *v = field(model, key))
      if (!stringOf(*v, std::string("model.") + key).empty())
        fail(std::string("model.") + key + " is not supported");
  byteFallback = boolField(model, "byte_fallback", false, "model");
  fuseUnk = boolField(model, "fuse_unk", false, "model");
  ignoreMerges = boolField(model, "ignore_merges", false, "model");
  // dropout only matters when training a tokenizer: ignored.
  if (const json *unk = field(model, "unk_token")) {
    std::string name = stringOf(*unk, "model.unk_token");
    auto it = vocab.find(name);
    if (it != vocab.end())
      unkId = it->second;
    else
      warn("model.unk_token " + quote(name) +
           " is not in model.vocab; unknown characters are dropped");
  }
  for (unsigned b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    auto it = vocab.find(name);
    byteFallbackIds[b] = it == vocab.end() ? -1 : it->second;
  }

  const json *mergesJson = field(model, "merges");
  if (mergesJson) {
    arrayOf(*mergesJson, "model.merges");
    merges.reserve(mergesJson->size());
    for (size_t rank = 0; rank < mergesJson->size(); ++rank) {
      const json &m = (*mergesJson)[rank];
      std::string where = "model.merges[" + std::to_string(rank) + "]";
      std::string left, right;
      if (m.is_string()) {
        // "a b": the two tokens, separated at the first space.
        std::string text = m.get<std::string>();
        size_t space = text.find(' ');
        if (space == std::string::npos)
          fail(where + " " + quote(text) +
               " is not two tokens separated by a space");
        left = text.substr(0, space);
        right = text.substr(space + 1);
      } else if (m.is_array() && m.size() == 2) {
        left = stringOf(m[0], where + "[0]");
        right = stringOf(m[1], where + "[1]");
      } else {
        fail(where + " is neither \"a b\" nor [\"a\", \"b\"]");
      }
      auto idOf = [&](const std::string &token) {
        auto it = vocab.find(token);
        if (it == vocab.end())
          fail(where + ": " + quote(token) + " is not in model.vocab");
        return it->second;
      };
      int32_t a = idOf(left), b = idOf(right), merged = idOf(left + right);
      merges.emplace(pairKey(a, b), std::make_pair(int32_t(rank), merged));
    }
  }
}

void BpeTokenizer::Impl::readAddedTokens(const json &tokens) {
  arrayOf(tokens, "added_tokens");
  for (size_t i = 0; i < tokens.size(); ++i) {
    const json &t = tokens[i];
    std::string where = "added_tokens[" + std::to_string(i) + "]";
    if (!t.is_object())
      fail(where + " is not an object");
    AddedToken token;
    token.id = tokenIdOf(required(t, "id", where), where + ".id");
    token.content = stringOf(required(t, "content", where), where + ".content");
    token.lstrip = boolField(t, "lstrip", false, where);
    token.rstrip = boolField(t, "rstrip", false, where);
    token.singleWord = boolField(t, "single_word", false, where);
    maxTokenId = std::max<int64_t>(maxTokenId, token.id);
    if (!token.content.empty())
      added.push_back(std::move(token));
  }
  for (size_t i = 0; i < added.size(); ++i)
    addedByFirstByte[(unsigned char)added[i].content[0]].push_back(int32_t(i));
  for (std::vector<int32_t> &list : addedByFirstByte)
    std::stable_sort(list.begin(), list.end(), [&](int32_t a, int32_t b) {
      return added[a].content.size() > added[b].content.size();
    });
}

void BpeTokenizer::Impl::readPostProcessor(const json &p,
                                           const std::string &where) {
  Nested nested(nesting, where);
  if (!p.is_object())
    fail(where + " is not an object");
  std::string type = stringOf(required(p, "type", where), where + ".type");
  if (type == "Sequence") {
    const json &list =
        arrayOf(required(p, "processors", where), where + ".processors");
    for (size_t i = 0; i < list.size() && !bos; ++i)
      readPostProcessor(list[i],
                        where + ".processors[" + std::to_string(i) + "]");
    return;
  }
  if (type != "TemplateProcessing")
    return; // ByteLevel (offsets only), Bert/Roberta: no bos read
  const json &single = arrayOf(required(p, "single", where), where + ".single");
  if (single.empty())
    return;
  const json *special = field(single[0], "SpecialToken");
  if (!special)
    return; // the sequence comes first
  std::string name =
      stringOf(required(*special, "id", where + ".single[0].SpecialToken"),
               where + ".single[0].SpecialToken.id");
  const json &tokens = required(p, "special_tokens", where);
  const json *entry = field(tokens, name.c_str());
  if (!entry)
    fail(where + ".special_tokens has no " + quote(name));
  const json &ids =
      arrayOf(required(*entry, "ids", where + ".special_tokens." + name),
              where + ".special_tokens." + name + ".ids");
  if (ids.empty())
    fail(where + ".special_tokens." + name + ".ids is empty");
  bos = tokenIdOf(ids[0], where + ".special_tokens." + name + ".ids[0]");
}

void BpeTokenizer::Impl::read(const json &root) {
  if (!root.is_object())
    fail("the file is not a JSON object");
  readModel(required(root, "model", ""));
  if (const json *n = field(root, "normalizer"))
    readNormalizer(*n, "normalizer");
  if (const json *p = field(root, "pre_tokenizer"))
    readPreTokenizer(*p, "pre_tokenizer");
  if (const json *a = field(root, "added_tokens"))
    readAddedTokens(*a);
  if (const json *p = field(root, "post_processor"))
    readPostProcessor(*p, "post_processor");
  if (bos)
    maxTokenId = std::max(maxTokenId, *bos);

  if (byteLevel) {
    for (unsigned b = 0; b < 256; ++b) {
      appendUtf8(byteLevelCodePoint(b), byteChars[b]);
      byteKnown[b] = true;
      auto it = vocab.find(byteChars[b]);
      if (it != vocab.end()) {
        byteSymbols[b] = {it->second};
        continue;
      }
      // The character's own bytes as <0xNN> tokens (as Hugging Face
      // does), else the unknown token.
      for (unsigned char c : byteChars[b])
        if (byteFallback && byteFallbackIds[c] >= 0)
          byteSymbols[b].push_back(byteFallbackIds[c]);
      if (byteSymbols[b].size() != byteChars[b].size()) {
        byteSymbols[b].clear();
        byteKnown[b] = false;
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Encoding
//===----------------------------------------------------------------------===//

void BpeTokenizer::Impl::offer(int32_t left, int32_t right) {
  auto it = merges.find(pairKey(symbols[left].id, symbols[right].id));
  if (it == merges.end())
    return;
  heap.push_back({it->second.first, left, right, symbols[left].id,
                  symbols[right].id, it->second.second});
  std::push_heap(heap.begin(), heap.end(), Candidate::later);
}

void BpeTokenizer::Impl::merge() {
  // A min-heap of (rank, position) over adjacent pairs: the lowest rank,
  // then the leftmost, merges first; entries whose symbols have changed
  // since are skipped.
  heap.clear();
  for (size_t i = 0; i + 1 < symbols.size(); ++i)
    offer(int32_t(i), int32_t(i + 1));
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), Candidate::later);
    Candidate c = heap.back();
    heap.pop_back();
    Symbol &left = symbols[c.left];
    if (left.id != c.leftId || left.next != c.right)
      continue;
    Symbol &right = symbols[c.right];
    if (right.id != c.rightId)
      continue;
    left.id = c.merged;
    left.next = right.next;
    if (right.next >= 0)
      symbols[right.next].prev = c.left;
    right.id = -1;
    right.next = right.prev = -1;
    if (left.prev >= 0)
      offer(left.prev, c.left);
    if (left.next >= 0)
      offer(c.left, left.next);
  }
}

void BpeTokenizer::Impl::encodeWord(std::string_view word,
                                    std::vector<int64_t> &ids) {
  bool cacheable = word.size() <= 64;
  std::string key;
  if (cacheable) {
    key.assign(word.data(), word.size());
    auto it = cache.find(key);
    if (it != cache.end()) {
      ids.insert(ids.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  symbols.clear();
  lastUnknown = false;
  if (ignoreMerges) {
    // A piece that is a token is that token, whatever the merges say.
    std::string text;
    if (byteLevel)
      for (unsigned char b : word)
        text += byteChars[b];
    else
      text.assign(word.data(), word.size());
    auto it = vocab.find(text);
    if (it != vocab.end())
      pushKnown(it->second);
  }
  if (symbols.empty()) {
    if (byteLevel) {
      for (unsigned char b : word) {
        if (!byteKnown[b]) {
          pushUnknown();
          continue;
        }
        for (int32_t id : byteSymbols[b])
          pushKnown(id);
      }
    } else {
      for (size_t i = 0; i < word.size();) {
        uint32_t cp;
        size_t length = decodeUtf8(word, i, cp);
        auto it = cp < 0x110000 ? charIds.find(cp) : charIds.end();
        if (it != charIds.end()) {
          pushKnown(it->second);
        } else {
          bool all = byteFallback;
          for (size_t k = i; k < i + length && all; ++k)
            all = byteFallbackIds[(unsigned char)word[k]] >= 0;
          if (all) {
            for (size_t k = i; k < i + length; ++k)
              pushKnown(byteFallbackIds[(unsigned char)word[k]]);
          } else {
            pushUnknown();
          }
        }
        i += length;
      }
    }
    for (size_t i = 0; i < symbols.size(); ++i)
      symbols[i].next = i + 1 < symbols.size() ? int32_t(i + 1) : -1;
    merge();
  }
  std::vector<int32_t> out;
  for (int32_t s = symbols.empty() ? -1 : 0; s >= 0; s = symbols[s].next)
    out.push_back(symbols[s].id);
  ids.insert(ids.end(), out.begin(), out.end());
  if (cacheable) {
    if (cache.size() >= (1u << 20))
      cache.clear();
    cache.emplace(std::move(key), std::move(out));
  }
}

void BpeTokenizer::Impl::preTokenize(size_t step, std::string_view piece,
                                     bool atStart, std::vector<int64_t> &ids) {
  if (piece.empty())
    return;
  if (step == preTokenizers.size()) {
    encodeWord(piece, ids);
    return;
  }
  const PreTokenizer &p = preTokenizers[step];
  std::string changed;
  std::string_view text = piece;
  ByteRanges matches;
  Behavior behavior = p.behavior;
  bool invert = p.invert;
  switch (p.kind) {
  case PreTokenizer::ByteLevel:
    if (p.addPrefixSpace && text[0] != ' ') {
      changed = " ";
      changed += piece;
      text = changed;
    }
    if (!p.useRegex) {
      preTokenize(step + 1, text, atStart, ids);
      return;
    }
    behavior = Behavior::Isolated;
    invert = false;
    break;
  case PreTokenizer::Split:
    break;
  case PreTokenizer::Metaspace: {
    changed.assign(piece.data(), piece.size());
    replaceAll(changed, " ", p.replacement);
    bool prepend = p.prepend == PreTokenizer::Always ||
                   (p.prepend == PreTokenizer::First && atStart);
    if (prepend && changed.compare(0, p.replacement.size(), p.replacement))
      changed.insert(0, p.replacement);
    text = changed;
    if (!p.split) {
      preTokenize(step + 1, text, atStart, ids);
      return;
    }
    behavior = Behavior::MergedWithNext;
    invert = false;
    break;
  }
  }
  p.pattern->findMatches(text, matches);
  forEachPiece(text, matches, behavior, invert, [&](size_t b, size_t e) {
    preTokenize(step + 1, text.substr(b, e - b), atStart && b == 0, ids);
  });
}

void BpeTokenizer::Impl::encodeSegment(std::string_view text, bool atStart,
                                       std::vector<int64_t> &ids) {
  if (text.empty())
    return;
  if (normalizers.empty()) {
    preTokenize(0, text, atStart, ids);
    return;
  }
  std::string normalized(text);
  for (const Normalizer &n : normalizers) {
    if (n.kind == Normalizer::Replace)
      replaceAll(normalized, n.from, n.to);
    else if (!normalized.empty())
      normalized.insert(0, n.to);
  }
  preTokenize(0, normalized, atStart, ids);
}

void BpeTokenizer::Impl::encode(std::string_view text,
                                std::vector<int64_t> &ids) {
  // Cut at the added tokens: at each position the longest one that occurs
  // there (leftmost-longest), matched on the raw text.
  size_t segment = 0;
  for (size_t i = 0; i < text.size();) {
    const AddedToken *hit = nullptr;
    for (int32_t k : addedByFirstByte[(unsigned char)text[i]]) {
      const AddedToken &t = added[k];
      if (text.compare(i, t.content.size(), t.content) != 0)
        continue;
      if (t.singleWord) {
        uint32_t before = ' ', after = ' ';
        if (i > 0)
          previousCharStart(text, 0, i, before);
        if (i + t.content.size() < text.size())
          decodeUtf8(text, i + t.content.size(), after);
        if (isWordChar(before) || isWordChar(after))
          continue;
      }
      hit = &t;
      break;
    }
    if (!hit) {
      ++i;
      continue;
    }
    size_t start = i, end = i + hit->content.size();
    uint32_t cp;
    while (hit->lstrip && start > segment) {
      size_t p = previousCharStart(text, segment, start, cp);
      if (!isUnicodeSpace(cp))
        break;
      start = p;
    }
    while (hit->rstrip && end < text.size()) {
      size_t length = decodeUtf8(text, end, cp);
      if (!isUnicodeSpace(cp))
        break;
      end += length;
    }
    encodeSegment(text.substr(segment, start - segment), segment == 0, ids);
    ids.push_back(hit->id);
    segment = i = end;
  }
  encodeSegment(text.substr(segment), segment == 0, ids);
}

//===----------------------------------------------------------------------===//
// BpeTokenizer
//===----------------------------------------------------------------------===//

BpeTokenizer::BpeTokenizer(std::unique_ptr<Impl> impl)
    : impl(std::move(impl)) {}
BpeTokenizer::~BpeTokenizer() = default;

std::unique_ptr<BpeTokenizer> BpeTokenizer::parse(std::string_view text,
                                                  std::string &error) {
  try {
    json root = json::parse(text.begin(), text.end());
    auto impl = std::make_unique<Impl>();
    impl->read(root);
    return std::unique_ptr<BpeTokenizer>(new BpeTokenizer(std::move(impl)));
  } catch (const json::parse_error &e) {
    error = std::string("not valid JSON: ") + e.what();
  } catch (const std::bad_alloc &) {
    error = "out of memory while reading it";
  } catch (const std::exception &e) {
    error = e.what();
  }
  error = oneLine(error);
  return nullptr;
}

std::unique_ptr<BpeTokenizer> BpeTokenizer::load(const std::string &path,
                                                 std::string &error) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file) {
    error = std::strerror(errno);
    return nullptr;
  }
  std::string text;
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0)
    text.append(buffer, n);
  bool bad = std::ferror(file);
  std::fclose(file);
  if (bad) {
    error = "cannot read it";
    return nullptr;
  }
  return parse(text, error);
}

void BpeTokenizer::encode(std::string_view text, std::vector<int64_t> &ids) {
  impl->encode(text, ids);
}

int64_t BpeTokenizer::maxId() const { return impl->maxTokenId; }

std::optional<int64_t> BpeTokenizer::bosFromTemplate() const {
  return impl->bos;
}

bool BpeTokenizer::isByteLevel() const { return impl->byteLevel; }

const std::vector<std::string> &BpeTokenizer::warnings() const {
  return impl->warnings;
}
