//===- PreSplit.cpp - The regex pre-split of byte-level BPE ---------------===//

#include "PreSplit.h"

#include <algorithm>
#include <cctype>
#include <iterator>

using namespace fbl::finetune;

namespace {
struct CodePointRange {
  uint32_t lo, hi;
};
#include "UnicodeClasses.inc"

bool inRanges(const CodePointRange *begin, const CodePointRange *end,
              uint32_t cp) {
  const CodePointRange *it =
      std::upper_bound(begin, end, cp, [](uint32_t c, const CodePointRange &r) {
        return c < r.lo;
      });
  return it != begin && cp <= (it - 1)->hi;
}

constexpr uint32_t kNotUtf8 = 0x110000;

bool isNewline(uint32_t cp) { return cp == '\r' || cp == '\n'; }

bool inClass(SplitAlternative::Class cls, uint32_t cp) {
  switch (cls) {
  case SplitAlternative::Letter:
    return isUnicodeLetter(cp);
  case SplitAlternative::Number:
    return isUnicodeNumber(cp);
  case SplitAlternative::Other:
    return !isUnicodeSpace(cp) && !isUnicodeLetter(cp) && !isUnicodeNumber(cp);
  }
  return false;
}

/// The simple case folding that matters for the contractions: ASCII, and
/// U+017F (long s) and U+212A (Kelvin sign), which fold to 's' and 'k'.
uint32_t foldCase(uint32_t cp) {
  if (cp >= 'A' && cp <= 'Z')
    return cp + ('a' - 'A');
  if (cp == 0x17F)
    return 's';
  if (cp == 0x212A)
    return 'k';
  return cp;
}

/// Splits `regex` at its top-level '|' (outside groups and brackets);
/// nullopt when brackets or parentheses do not balance.
std::optional<std::vector<std::string_view>>
splitAlternatives(std::string_view regex) {
  std::vector<std::string_view> parts;
  int depth = 0;
  bool inBracket = false;
  size_t start = 0;
  for (size_t i = 0; i < regex.size(); ++i) {
    char c = regex[i];
    if (c == '\\') {
      ++i;
      continue;
    }
    if (inBracket) {
      if (c == ']')
        inBracket = false;
      continue;
    }
    if (c == '[') {
      inBracket = true;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      if (--depth < 0)
        return std::nullopt;
    } else if (c == '|' && depth == 0) {
      parts.push_back(regex.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0 || inBracket)
    return std::nullopt;
  parts.push_back(regex.substr(start));
  return parts;
}

/// A literal alternative: characters that are not regex syntax, and
/// backslash escapes of punctuation or of n, r, t.
std::optional<std::vector<uint32_t>> parseLiteral(std::string_view text) {
  static const std::string_view meta = "\\^$.|?*+()[]{}";
  std::vector<uint32_t> out;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == '\\') {
      if (i + 1 >= text.size())
        return std::nullopt;
      char e = text[i + 1];
      i += 2;
      if (e == 'n')
        out.push_back('\n');
      else if (e == 'r')
        out.push_back('\r');
      else if (e == 't')
        out.push_back('\t');
      else if ((unsigned char)e < 0x80 && !std::isalnum((unsigned char)e))
        out.push_back((unsigned char)e);
      else
        return std::nullopt;
      continue;
    }
    if (meta.find(c) != std::string_view::npos)
      return std::nullopt;
    uint32_t cp;
    i += decodeUtf8(text, i, cp);
    if (cp >= kNotUtf8)
      return std::nullopt;
    out.push_back(cp);
  }
  if (out.empty())
    return std::nullopt;
  return out;
}

bool consume(std::string_view &text, std::string_view prefix) {
  if (text.substr(0, prefix.size()) != prefix)
    return false;
  text.remove_prefix(prefix.size());
  return true;
}

std::optional<SplitAlternative> parseAlternative(std::string_view text) {
  SplitAlternative alt;
  if (text == "\\s*[\\r\\n]+") {
    alt.kind = SplitAlternative::SpaceThenNewlines;
    return alt;
  }
  if (text == "\\s+(?!\\S)") {
    alt.kind = SplitAlternative::SpaceNotBeforeNonSpace;
    return alt;
  }
  if (text == "\\s+") {
    alt.kind = SplitAlternative::SpaceRun;
    return alt;
  }
  // (?i:'s|'t|...) or (?:...): a group of literals.
  std::string_view group = text;
  bool ignoreCase = consume(group, "(?i:");
  if ((ignoreCase || consume(group, "(?:")) && !group.empty() &&
      group.back() == ')') {
    group.remove_suffix(1);
    std::optional<std::vector<std::string_view>> parts =
        splitAlternatives(group);
    if (!parts)
      return std::nullopt;
    alt.kind = SplitAlternative::Literals;
    alt.ignoreCase = ignoreCase;
    for (std::string_view part : *parts) {
      std::optional<std::vector<uint32_t>> literal = parseLiteral(part);
      if (!literal)
        return std::nullopt;
      if (ignoreCase)
        for (uint32_t &cp : *literal)
          cp = foldCase(cp);
      alt.literals.push_back(std::move(*literal));
    }
    return alt;
  }
  // [prefix] class quantifier [suffix].
  std::string_view rest = text;
  alt.kind = SplitAlternative::ClassRun;
  if (consume(rest, " ?"))
    alt.prefix = SplitAlternative::OptionalSpace;
  else if (consume(rest, "[^\\r\\n\\p{L}\\p{N}]?"))
    alt.prefix = SplitAlternative::OptionalNotNewline;
  bool haveClass = true;
  if (consume(rest, "\\p{L}"))
    alt.cls = SplitAlternative::Letter;
  else if (consume(rest, "\\p{N}"))
    alt.cls = SplitAlternative::Number;
  else if (consume(rest, "[^\\s\\p{L}\\p{N}]"))
    alt.cls = SplitAlternative::Other;
  else
    haveClass = false;
  if (haveClass) {
    alt.maxCount = 1;
    if (consume(rest, "+")) {
      alt.maxCount = UINT32_MAX;
    } else if (consume(rest, "{1,")) {
      size_t close = rest.find('}');
      if (close == std::string_view::npos || close == 0 || close > 6)
        return std::nullopt;
      uint32_t k = 0;
      for (char c : rest.substr(0, close)) {
        if (c < '0' || c > '9')
          return std::nullopt;
        k = k * 10 + uint32_t(c - '0');
      }
      if (k < 1)
        return std::nullopt;
      alt.maxCount = k;
      rest.remove_prefix(close + 1);
    }
    alt.newlineSuffix = consume(rest, "[\\r\\n]*");
    if (rest.empty())
      return alt;
    return std::nullopt;
  }
  // A plain literal ('s in GPT-2's pattern).
  std::optional<std::vector<uint32_t>> literal = parseLiteral(text);
  if (!literal)
    return std::nullopt;
  SplitAlternative lit;
  lit.kind = SplitAlternative::Literals;
  lit.literals.push_back(std::move(*literal));
  return lit;
}

size_t spaceRun(const uint32_t *c, size_t n, size_t i) {
  size_t k = i;
  while (k < n && isUnicodeSpace(c[k]))
    ++k;
  return k - i;
}

/// The length of the match of `alt` at `c[i]` (0: none); the alternatives
/// have no match of length 0.
size_t matchAt(const SplitAlternative &alt, const uint32_t *c, size_t n,
               size_t i) {
  switch (alt.kind) {
  case SplitAlternative::Literals:
    for (const std::vector<uint32_t> &lit : alt.literals) {
      if (n - i < lit.size())
        continue;
      size_t k = 0;
      while (k < lit.size() &&
             (alt.ignoreCase ? foldCase(c[i + k]) : c[i + k]) == lit[k])
        ++k;
      if (k == lit.size())
        return k;
    }
    return 0;
  case SplitAlternative::ClassRun: {
    auto body = [&](size_t j) {
      size_t k = 0;
      while (j + k < n && k < alt.maxCount && inClass(alt.cls, c[j + k]))
        ++k;
      return k;
    };
    auto suffix = [&](size_t j) {
      size_t k = 0;
      if (alt.newlineSuffix)
        while (j + k < n && isNewline(c[j + k]))
          ++k;
      return k;
    };
    // The optional prefix is greedy: taken when the rest still matches
    // after it, else the run must start here.
    bool prefix =
        i < n &&
        ((alt.prefix == SplitAlternative::OptionalSpace && c[i] == ' ') ||
         (alt.prefix == SplitAlternative::OptionalNotNewline &&
          !isNewline(c[i]) && !isUnicodeLetter(c[i]) &&
          !isUnicodeNumber(c[i])));
    if (prefix)
      if (size_t b = body(i + 1))
        return 1 + b + suffix(i + 1 + b);
    if (size_t b = body(i))
      return b + suffix(i + b);
    return 0;
  }
  case SplitAlternative::SpaceThenNewlines: {
    // \s* backs off to the last line break of the whitespace run, where
    // [\r\n]+ takes that one break.
    size_t run = spaceRun(c, n, i);
    for (size_t k = i + run; k > i; --k)
      if (isNewline(c[k - 1]))
        return k - i;
    return 0;
  }
  case SplitAlternative::SpaceNotBeforeNonSpace: {
    // \s+ backs off one character when text follows the run.
    size_t run = spaceRun(c, n, i);
    if (run == 0)
      return 0;
    if (i + run == n)
      return run;
    return run >= 2 ? run - 1 : 0;
  }
  case SplitAlternative::SpaceRun:
    return spaceRun(c, n, i);
  }
  return 0;
}
} // namespace

bool fbl::finetune::isUnicodeLetter(uint32_t cp) {
  if (cp < 0x80)
    return uint32_t((cp | 0x20) - 'a') < 26;
  return inRanges(std::begin(kLetterRanges), std::end(kLetterRanges), cp);
}

bool fbl::finetune::isUnicodeNumber(uint32_t cp) {
  if (cp < 0x80)
    return uint32_t(cp - '0') < 10;
  return inRanges(std::begin(kNumberRanges), std::end(kNumberRanges), cp);
}

bool fbl::finetune::isUnicodeSpace(uint32_t cp) {
  // Unicode's White_Space property (what \s matches in Oniguruma).
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
         cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

size_t fbl::finetune::decodeUtf8(std::string_view text, size_t i,
                                 uint32_t &cp) {
  auto byte = [&](size_t k) -> uint32_t { return (unsigned char)text[k]; };
  auto cont = [&](size_t k, uint32_t lo, uint32_t hi) {
    return k < text.size() && byte(k) >= lo && byte(k) <= hi;
  };
  uint32_t b0 = byte(i);
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  if (b0 >= 0xC2 && b0 <= 0xDF && cont(i + 1, 0x80, 0xBF)) {
    cp = ((b0 & 0x1F) << 6) | (byte(i + 1) & 0x3F);
    return 2;
  }
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    uint32_t lo = b0 == 0xE0 ? 0xA0 : 0x80, hi = b0 == 0xED ? 0x9F : 0xBF;
    if (cont(i + 1, lo, hi) && cont(i + 2, 0x80, 0xBF)) {
      cp = ((b0 & 0x0F) << 12) | ((byte(i + 1) & 0x3F) << 6) |
           (byte(i + 2) & 0x3F);
      return 3;
    }
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    uint32_t lo = b0 == 0xF0 ? 0x90 : 0x80, hi = b0 == 0xF4 ? 0x8F : 0xBF;
    if (cont(i + 1, lo, hi) && cont(i + 2, 0x80, 0xBF) &&
        cont(i + 3, 0x80, 0xBF)) {
      cp = ((b0 & 0x07) << 18) | ((byte(i + 1) & 0x3F) << 12) |
           ((byte(i + 2) & 0x3F) << 6) | (byte(i + 3) & 0x3F);
      return 4;
    }
  }
  cp = kNotUtf8 + b0;
  return 1;
}

void fbl::finetune::appendUtf8(uint32_t cp, std::string &out) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

const char *SplitPattern::gpt2Regex() {
  return "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|"
         "\\s+(?!\\S)|\\s+";
}

const char *SplitPattern::llama3Regex() {
  return "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
         "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
         "\\s+(?!\\S)|\\s+";
}

std::optional<SplitPattern> SplitPattern::parseRegex(std::string_view regex) {
  std::optional<std::vector<std::string_view>> parts = splitAlternatives(regex);
  if (!parts)
    return std::nullopt;
  SplitPattern pattern;
  for (std::string_view part : *parts) {
    std::optional<SplitAlternative> alt = parseAlternative(part);
    if (!alt)
      return std::nullopt;
    pattern.alternatives.push_back(std::move(*alt));
  }
  return pattern;
}

SplitPattern SplitPattern::literal(std::string_view text) {
  SplitPattern pattern;
  pattern.isLiteral = true;
  pattern.literalText = std::string(text);
  return pattern;
}

void SplitPattern::findMatches(std::string_view text,
                               ByteRanges &matches) const {
  if (isLiteral) {
    if (literalText.empty())
      return;
    for (size_t at = text.find(literalText); at != std::string_view::npos;
         at = text.find(literalText, at + literalText.size()))
      matches.emplace_back(at, at + literalText.size());
    return;
  }
  // Code points and their byte offsets (offsets[n] = the text's size).
  thread_local std::vector<uint32_t> cps;
  thread_local std::vector<size_t> offsets;
  cps.clear();
  offsets.clear();
  for (size_t i = 0; i < text.size();) {
    uint32_t cp;
    offsets.push_back(i);
    i += decodeUtf8(text, i, cp);
    cps.push_back(cp);
  }
  offsets.push_back(text.size());
  size_t n = cps.size();
  for (size_t i = 0; i < n;) {
    size_t length = 0;
    for (const SplitAlternative &alt : alternatives)
      if ((length = matchAt(alt, cps.data(), n, i)) > 0)
        break;
    if (length == 0) {
      ++i; // no alternative matches here: the search moves on
      continue;
    }
    matches.emplace_back(offsets[i], offsets[i + length]);
    i += length;
  }
}
