//===- SafeTensors.cpp - Reading and writing .safetensors files -----------===//
//
// The header is parsed with nlohmann-json (a parse callback catches
// duplicate names, which a JSON object would silently merge) and checked
// entry by entry, then as a whole: sorted by offset, the byte ranges must
// tile the data section exactly, as Hugging Face's own reader requires.
//
//===----------------------------------------------------------------------===//

#include "SafeTensors.h"
#include "Error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <unordered_set>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian; this host is not");

using namespace fbl::runtime;
using namespace fbl::runtime::safetensors;
using Json = nlohmann::json;

/// Hugging Face's reader refuses headers over 100 MB; so does this one,
/// before reading them.
static constexpr uint64_t kMaxHeaderBytes = 100'000'000;
/// Elements converted per read of a non-f32 tensor.
static constexpr uint64_t kChunkElements = uint64_t(1) << 16;
static constexpr const char kMetadataKey[] = "__metadata__";

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

static constexpr struct {
  DType type;
  const char *name;
  size_t bytes;
} kDTypes[] = {
    {DType::BOOL, "BOOL", 1},       {DType::U8, "U8", 1},
    {DType::I8, "I8", 1},           {DType::F8_E5M2, "F8_E5M2", 1},
    {DType::F8_E4M3, "F8_E4M3", 1}, {DType::I16, "I16", 2},
    {DType::U16, "U16", 2},         {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2},       {DType::I32, "I32", 4},
    {DType::U32, "U32", 4},         {DType::F32, "F32", 4},
    {DType::F64, "F64", 8},         {DType::I64, "I64", 8},
    {DType::U64, "U64", 8},
};

const char *safetensors::dtypeName(DType type) {
  for (const auto &d : kDTypes)
    if (d.type == type)
      return d.name;
  return "";
}

std::optional<DType> safetensors::parseDType(std::string_view name) {
  for (const auto &d : kDTypes)
    if (name == d.name)
      return d.type;
  return std::nullopt;
}

size_t safetensors::dtypeBytes(DType type) {
  for (const auto &d : kDTypes)
    if (d.type == type)
      return d.bytes;
  return 0;
}

static uint32_t bitsOf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return x;
}

static float floatOf(uint32_t x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t safetensors::floatToHalf(float value) {
  uint32_t x = bitsOf(value);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t abs = x & 0x7fffffff;
  if (abs > 0x7f800000) // NaN: keep the payload's top bits, make it quiet.
    return sign | 0x7e00 | static_cast<uint16_t>((abs >> 13) & 0x3ff);
  if (abs >= 0x477ff000) // 65520 and above round to infinity.
    return sign | 0x7c00;
  if (abs >= 0x38800000) { // Normal: rebias the exponent, round 13 bits off.
    uint32_t r = abs - 0x38000000;
    r += 0xfff + ((r >> 13) & 1);
    return sign | static_cast<uint16_t>(r >> 13);
  }
  if (abs <= 0x33000000) // At most 2^-25, half the smallest subnormal: 0.
    return sign;
  // Subnormal: the value in units of 2^-24, rounded to nearest even.
  uint32_t exponent = abs >> 23;
  uint32_t mantissa = (abs & 0x7fffff) | 0x800000;
  uint32_t shift = 126 - exponent; // 14..24
  uint32_t q = mantissa >> shift;
  uint32_t rest = mantissa & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rest > half || (rest == half && (q & 1)))
    ++q;
  return sign | static_cast<uint16_t>(q);
}

float safetensors::halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  if (exponent == 0) { // Zero or subnormal: mantissa * 2^-24, exact in f32.
    float f = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -f : f;
  }
  if (exponent == 31)
    return floatOf(sign | 0x7f800000 | (mantissa << 13));
  return floatOf(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t safetensors::floatToBFloat16(float value) {
  uint32_t x = bitsOf(value);
  if ((x & 0x7fffffff) > 0x7f800000) // NaN: truncate, make it quiet.
    return static_cast<uint16_t>((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

float safetensors::bfloat16ToFloat(uint16_t bits) {
  return floatOf(static_cast<uint32_t>(bits) << 16);
}

uint64_t TensorEntry::elements() const {
  uint64_t n = 1;
  for (int64_t d : shape)
    n *= static_cast<uint64_t>(d);
  return n;
}

/// Byte ranges as half-open intervals, the way offsets are meant.
static std::string rangeString(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

//===----------------------------------------------------------------------===//
// Reader
//===----------------------------------------------------------------------===//

void Reader::fail(const std::string &message) const {
  throw Error(path_ + ": " + message);
}

/// A JSON number that is a non-negative integer.
static std::optional<uint64_t> unsignedValue(const Json &j) {
  if (j.is_number_unsigned())
    return j.get<uint64_t>();
  return std::nullopt;
}

Reader::Reader(std::string path) : path_(std::move(path)) {
  // A directory opens as a stream that fails its first read.
  std::error_code ec;
  if (std::filesystem::is_directory(path_, ec))
    fail("a directory, not a safetensors file");
  file_.open(path_, std::ios::binary);
  if (!file_)
    throw Error("cannot read " + path_ + ": " + std::strerror(errno));
  file_.seekg(0, std::ios::end);
  std::streamoff end = file_.tellg();
  if (end < 0)
    fail("cannot determine the file's size");
  uint64_t fileSize = static_cast<uint64_t>(end);
  if (fileSize < 8)
    fail("not a safetensors file: " + std::to_string(fileSize) +
         " bytes, fewer than the 8 of the header length");
  unsigned char lengthBytes[8];
  file_.seekg(0);
  if (!file_.read(reinterpret_cast<char *>(lengthBytes), 8))
    fail("cannot read the header length");
  uint64_t headerBytes = 0;
  for (int i = 7; i >= 0; --i)
    headerBytes = headerBytes << 8 | lengthBytes[i];
  if (headerBytes > fileSize - 8)
    fail("header length " + std::to_string(headerBytes) +
         " exceeds the file (" + std::to_string(fileSize) + " bytes)");
  if (headerBytes > kMaxHeaderBytes)
    fail("header length " + std::to_string(headerBytes) +
         " exceeds the limit of " + std::to_string(kMaxHeaderBytes) + " bytes");
  dataStart_ = 8 + headerBytes;
  uint64_t dataBytes = fileSize - dataStart_;
  std::string header(headerBytes, '\0');
  if (!file_.read(header.data(), static_cast<std::streamsize>(headerBytes)))
    fail("cannot read the header");

  // A JSON object keeps one of two equal keys; safetensors names are unique.
  std::unordered_set<std::string> names;
  std::string duplicate;
  Json::parser_callback_t noteDuplicates =
      [&](int depth, Json::parse_event_t event, Json &parsed) {
        if (depth == 1 && event == Json::parse_event_t::key &&
            duplicate.empty() && parsed.is_string() &&
            !names.insert(parsed.get_ref<const std::string &>()).second)
          duplicate = parsed.get<std::string>();
        return true;
      };
  Json json;
  try {
    json = Json::parse(header, noteDuplicates);
  } catch (const Json::exception &e) {
    fail(std::string("header is not valid JSON: ") + e.what());
  }
  if (!duplicate.empty())
    fail("header names tensor '" + duplicate + "' twice");
  if (!json.is_object())
    fail("header is not a JSON object");

  for (const auto &[name, entry] : json.items()) {
    if (name == kMetadataKey) {
      if (!entry.is_object())
        fail("__metadata__ is not an object of strings");
      for (const auto &[key, value] : entry.items()) {
        if (!value.is_string())
          fail("__metadata__ '" + key + "' is not a string");
        metadata_.emplace_back(key, value.get<std::string>());
      }
      continue;
    }
    std::string what = "tensor '" + name + "': ";
    if (!entry.is_object())
      fail(what + "entry is not an object");
    auto dtypeIt = entry.find("dtype");
    auto shapeIt = entry.find("shape");
    auto offsetsIt = entry.find("data_offsets");
    if (dtypeIt == entry.end() || !dtypeIt->is_string())
      fail(what + "no dtype string");
    if (shapeIt == entry.end() || !shapeIt->is_array())
      fail(what + "no shape array");
    if (offsetsIt == entry.end() || !offsetsIt->is_array() ||
        offsetsIt->size() != 2)
      fail(what + "no data_offsets [begin, end]");
    TensorEntry t;
    t.name = name;
    std::string dtype = dtypeIt->get<std::string>();
    std::optional<DType> type = parseDType(dtype);
    if (!type)
      fail(what + "unknown dtype '" + dtype + "'");
    t.dtype = *type;
    uint64_t elements = 1;
    bool overflow = false;
    for (const Json &d : *shapeIt) {
      std::optional<uint64_t> dim = unsignedValue(d);
      if (!dim || *dim > uint64_t(std::numeric_limits<int64_t>::max()))
        fail(what + "shape " + shapeIt->dump() +
             " has an entry that is no non-negative integer");
      t.shape.push_back(static_cast<int64_t>(*dim));
      overflow |= __builtin_mul_overflow(elements, *dim, &elements);
    }
    uint64_t bytes = 0;
    overflow |= __builtin_mul_overflow(elements, dtypeBytes(*type), &bytes);
    if (overflow)
      fail(what + "shape " + shapeString(t.shape) + " overflows");
    std::optional<uint64_t> begin = unsignedValue((*offsetsIt)[0]),
                            endOffset = unsignedValue((*offsetsIt)[1]);
    if (!begin || !endOffset)
      fail(what + "data_offsets " + offsetsIt->dump() +
           " are not non-negative integers");
    if (*begin > *endOffset || *endOffset > dataBytes)
      fail(what + "data_offsets " + rangeString(*begin, *endOffset) +
           " lie outside the " + std::to_string(dataBytes) + " bytes of data");
    if (*endOffset - *begin != bytes)
      fail(what + "data_offsets " + rangeString(*begin, *endOffset) + " hold " +
           std::to_string(*endOffset - *begin) + " bytes; shape " +
           shapeString(t.shape) + " of " + dtype + " needs " +
           std::to_string(bytes));
    t.begin = *begin;
    t.end = *endOffset;
    index_.emplace(name, tensors_.size());
    tensors_.push_back(std::move(t));
  }

  // The byte ranges tile the data section: no overlap, no hole.
  std::vector<const TensorEntry *> byOffset;
  for (const TensorEntry &t : tensors_)
    byOffset.push_back(&t);
  std::stable_sort(byOffset.begin(), byOffset.end(),
                   [](const TensorEntry *a, const TensorEntry *b) {
                     return a->begin < b->begin ||
                            (a->begin == b->begin && a->end < b->end);
                   });
  uint64_t covered = 0;
  const TensorEntry *previous = nullptr;
  for (const TensorEntry *t : byOffset) {
    if (t->begin < covered)
      fail("tensors '" + previous->name + "' and '" + t->name +
           "' overlap: bytes " + rangeString(previous->begin, previous->end) +
           " and " + rangeString(t->begin, t->end));
    if (t->begin > covered)
      fail("bytes " + rangeString(covered, t->begin) +
           " of the data belong to no tensor");
    covered = t->end;
    previous = t;
  }
  if (covered != dataBytes)
    fail("bytes " + rangeString(covered, dataBytes) +
         " of the data belong to no tensor");
}

std::optional<size_t> Reader::find(std::string_view name) const {
  auto it = index_.find(std::string(name));
  if (it == index_.end())
    return std::nullopt;
  return it->second;
}

void Reader::readBytes(uint64_t offset, char *out, uint64_t bytes,
                       const TensorEntry &t) {
  file_.clear();
  file_.seekg(static_cast<std::streamoff>(dataStart_ + offset));
  if (!file_.read(out, static_cast<std::streamsize>(bytes)))
    fail("tensor '" + t.name + "': the file ends inside bytes " +
         rangeString(t.begin, t.end) +
         " (was it changed since it was "
         "opened?)");
}

/// Converts `n` little-endian elements of `type` at `in` to f32; false, with
/// the index and value of the first element f32 does not hold (F64 out of
/// range, an integer it rounds), when there is one.
static bool convertChunk(DType type, const char *in, float *out, uint64_t n,
                         uint64_t &badIndex, std::string &badValue) {
  for (uint64_t i = 0; i < n; ++i) {
    switch (type) {
    case DType::F16:
    case DType::BF16: {
      uint16_t bits;
      std::memcpy(&bits, in + 2 * i, 2);
      out[i] = type == DType::F16 ? halfToFloat(bits) : bfloat16ToFloat(bits);
      break;
    }
    case DType::F64: {
      double d;
      std::memcpy(&d, in + 8 * i, 8);
      out[i] = static_cast<float>(d);
      if (std::isinf(out[i]) && std::isfinite(d)) {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "%g", d);
        badIndex = i;
        badValue = buf;
        return false;
      }
      break;
    }
    case DType::I32:
    case DType::I64: {
      int64_t v;
      if (type == DType::I64) {
        std::memcpy(&v, in + 8 * i, 8);
      } else {
        int32_t v32;
        std::memcpy(&v32, in + 4 * i, 4);
        v = v32;
      }
      out[i] = static_cast<float>(v);
      // 2^63 rounds to itself as f32 but is no int64.
      if (out[i] >= 0x1p63f || static_cast<int64_t>(out[i]) != v) {
        badIndex = i;
        badValue = std::to_string(v);
        return false;
      }
      break;
    }
    default:
      return false;
    }
  }
  return true;
}

void Reader::readF32(size_t index, float *out, uint64_t count) {
  if (index >= tensors_.size())
    fail("no tensor #" + std::to_string(index) + " (the file has " +
         std::to_string(tensors_.size()) + ")");
  const TensorEntry &t = tensors_[index];
  std::string what = "tensor '" + t.name + "': ";
  if (count != t.elements())
    fail(what + "holds " + std::to_string(t.elements()) +
         " elements, the buffer " + std::to_string(count));
  switch (t.dtype) {
  case DType::F32:
    readBytes(t.begin, reinterpret_cast<char *>(out), t.end - t.begin, t);
    return;
  case DType::F16:
  case DType::BF16:
  case DType::F64:
  case DType::I32:
  case DType::I64:
    break;
  default:
    fail(what + "dtype " + dtypeName(t.dtype) +
         " is none of F32, F16, BF16, F64, I64, I32 that fbl reads");
  }
  size_t elementBytes = dtypeBytes(t.dtype);
  std::vector<char> chunk(std::min(count, kChunkElements) * elementBytes);
  for (uint64_t done = 0; done < count;) {
    uint64_t n = std::min(kChunkElements, count - done);
    readBytes(t.begin + done * elementBytes, chunk.data(), n * elementBytes, t);
    uint64_t badIndex = 0;
    std::string badValue;
    if (!convertChunk(t.dtype, chunk.data(), out + done, n, badIndex, badValue))
      fail(what + "element " + std::to_string(done + badIndex) + " (" +
           badValue + ") " +
           (t.dtype == DType::F64 ? "is outside the range of f32"
                                  : "has no exact f32 value"));
    done += n;
  }
}

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

/// Throws unless `s` is valid UTF-8, which a JSON header must be.
static void checkUtf8(const std::string &s, const std::string &what) {
  try {
    (void)Json(s).dump();
  } catch (const Json::exception &) {
    throw Error(what + " is not valid UTF-8");
  }
}

void Writer::add(const std::string &name, const std::vector<int64_t> &shape,
                 const float *data, DType dtype) {
  std::string what = "cannot add tensor '" + name + "': ";
  if (name.empty() || name == kMetadataKey)
    throw Error(what + "the name is empty or reserved");
  checkUtf8(name, "cannot add a tensor: its name");
  for (const Pending &p : tensors_)
    if (p.name == name)
      throw Error(what + "a tensor of that name was added already");
  if (dtype != DType::F32 && dtype != DType::F16 && dtype != DType::BF16)
    throw Error(what + "dtype " + dtypeName(dtype) +
                " is none of F32, F16, BF16 that fbl writes");
  uint64_t elements = 1;
  for (int64_t d : shape)
    if (d < 0 ||
        __builtin_mul_overflow(elements, static_cast<uint64_t>(d), &elements) ||
        elements > (uint64_t(1) << 50))
      throw Error(what + "shape " + shapeString(shape) +
                  " is negative or too large");
  if (elements && !data)
    throw Error(what + "no data");
  Pending p{name, dtype, shape, {}};
  p.bytes.resize(elements * dtypeBytes(dtype));
  if (dtype == DType::F32) {
    if (elements)
      std::memcpy(p.bytes.data(), data, p.bytes.size());
  } else {
    for (uint64_t i = 0; i < elements; ++i) {
      uint16_t bits =
          dtype == DType::F16 ? floatToHalf(data[i]) : floatToBFloat16(data[i]);
      std::memcpy(p.bytes.data() + 2 * i, &bits, 2);
    }
  }
  tensors_.push_back(std::move(p));
}

void Writer::addMetadata(const std::string &key, const std::string &value) {
  checkUtf8(key, "cannot add metadata: its key");
  checkUtf8(value, "cannot add metadata: its value");
  for (auto &[k, v] : metadata_)
    if (k == key) {
      v = value;
      return;
    }
  metadata_.emplace_back(key, value);
}

void Writer::write(const std::string &path) const {
  // Wider elements first, then by name, as Hugging Face's writer does: every
  // tensor stays aligned to its element size.
  std::vector<const Pending *> order;
  for (const Pending &p : tensors_)
    order.push_back(&p);
  std::sort(order.begin(), order.end(), [](const Pending *a, const Pending *b) {
    size_t sa = dtypeBytes(a->dtype), sb = dtypeBytes(b->dtype);
    return sa != sb ? sa > sb : a->name < b->name;
  });
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata_.empty()) {
    nlohmann::ordered_json &m = header[kMetadataKey];
    m = nlohmann::ordered_json::object();
    for (const auto &[k, v] : metadata_)
      m[k] = v;
  }
  uint64_t offset = 0;
  for (const Pending *p : order) {
    nlohmann::ordered_json &t = header[p->name];
    t["dtype"] = dtypeName(p->dtype);
    t["shape"] = p->shape;
    t["data_offsets"] = {offset, offset + p->bytes.size()};
    offset += p->bytes.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  unsigned char length[8];
  for (int i = 0; i < 8; ++i)
    length[i] = static_cast<unsigned char>(uint64_t(text.size()) >> (8 * i));

  std::string tmp = path + ".tmp";
  std::FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    throw Error("cannot write " + tmp + ": " + std::strerror(errno));
  auto put = [&](const void *data, size_t bytes) {
    return bytes == 0 || std::fwrite(data, 1, bytes, f) == bytes;
  };
  bool ok = put(length, 8) && put(text.data(), text.size());
  for (size_t i = 0; ok && i < order.size(); ++i)
    ok = put(order[i]->bytes.data(), order[i]->bytes.size());
  ok = ok && std::fflush(f) == 0;
  int error = errno;
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    error = errno;
  }
  if (!ok) {
    std::remove(tmp.c_str());
    throw Error("cannot write " + tmp + ": " + std::strerror(error));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    error = errno;
    std::remove(tmp.c_str());
    throw Error("cannot rename " + tmp + " to " + path + ": " +
                std::strerror(error));
  }
}
