//===- SafeTensorsTest.cpp - The runtime's safetensors reader and writer --===//
//
// Through the C API, as embedders use it: files written by fbl read back
// bit for bit; F16 and BF16 decode and round (to nearest even) to known bit
// patterns and round-trip every one of their 65536 patterns; every kind of
// corrupt file fails with one line naming the file; and a property test
// corrupts random files at random and requires either a clean error or
// values equal to what an independent decoder in this file reads.
//
//===----------------------------------------------------------------------===//

#include "fbl_runtime/fbl_runtime.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

//===----------------------------------------------------------------------===//
// Helpers: files, the C API, an independent decoder
//===----------------------------------------------------------------------===//

/// The running test's own directory: ctest runs tests in parallel processes.
fs::path testDir() {
  return fs::path(::testing::TempDir()) /
         (std::string("fbl-safetensors-") +
          ::testing::UnitTest::GetInstance()->current_test_info()->name());
}

std::string tempPath(const std::string &name) {
  fs::create_directories(testDir());
  return (testDir() / name).string();
}

/// Removes the test's files.
class SafeTensors : public ::testing::Test {
protected:
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(testDir(), ec);
  }
};

void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  ASSERT_TRUE(out.good()) << path;
}

std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A file of `header` (JSON text, used as is) and `data`.
std::string fileOf(const std::string &header, const std::string &data) {
  std::string bytes(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<char>(n >> (8 * i));
  return bytes + header + data;
}

template <typename T> std::string bytesOf(const std::vector<T> &values) {
  return std::string(reinterpret_cast<const char *>(values.data()),
                     values.size() * sizeof(T));
}

/// One tensor `name` of `dtype` and `shape` holding `data`.
std::string oneTensor(const std::string &dtype,
                      const std::vector<int64_t> &shape,
                      const std::string &data, const std::string &name = "t") {
  Json h;
  h[name] = {
      {"dtype", dtype}, {"shape", shape}, {"data_offsets", {0, data.size()}}};
  return fileOf(h.dump(), data);
}

/// The result of opening and reading every tensor of a file.
struct ReadResult {
  bool ok = false;
  std::string error;
  std::map<std::string, std::vector<float>> tensors;
  std::map<std::string, std::vector<int64_t>> shapes;
  std::map<std::string, std::string> dtypes;
};

ReadResult readAll(const std::string &path) {
  ReadResult r;
  fbl_safetensors *f = nullptr;
  if (fbl_safetensors_open(path.c_str(), &f) != FBL_OK) {
    r.error = fbl_last_error();
    return r;
  }
  for (size_t k = 0; k < fbl_safetensors_num_tensors(f); ++k) {
    const char *name, *dtype;
    const int64_t *shape;
    size_t rank;
    EXPECT_EQ(fbl_safetensors_tensor_info(f, k, &name, &dtype, &shape, &rank),
              FBL_OK);
    size_t n = 1;
    for (size_t d = 0; d < rank; ++d)
      n *= static_cast<size_t>(shape[d]);
    std::vector<float> values(n);
    if (fbl_safetensors_read_f32(f, k, values.data(), n) != FBL_OK) {
      r.error = fbl_last_error();
      fbl_safetensors_close(f);
      return r;
    }
    r.tensors[name] = values;
    r.shapes[name] = std::vector<int64_t>(shape, shape + rank);
    r.dtypes[name] = dtype;
  }
  fbl_safetensors_close(f);
  r.ok = true;
  return r;
}

/// The error of reading `bytes` as a file, checked to be one line naming
/// the file.
std::string errorOf(const std::string &bytes) {
  std::string path = tempPath("corrupt.safetensors");
  writeBytes(path, bytes);
  ReadResult r = readAll(path);
  EXPECT_FALSE(r.ok) << "read a corrupt file";
  EXPECT_EQ(r.error.find('\n'), std::string::npos) << r.error;
  EXPECT_EQ(r.error.rfind(path, 0), 0u) << r.error;
  return r.error;
}

bool sameBits(float a, float b) {
  return std::memcmp(&a, &b, 4) == 0 || (std::isnan(a) && std::isnan(b));
}

/// binary16 by its definition, for checking the runtime's conversions.
double halfValue(uint16_t h) {
  int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exponent == 31)
    return mantissa ? std::numeric_limits<double>::quiet_NaN()
                    : sign * std::numeric_limits<double>::infinity();
  if (exponent == 0)
    return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

float bf16Value(uint16_t b) {
  uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

/// Writes `values` as one tensor of `dtype` through the C API writer and
/// returns the tensor's raw bytes from the file.
std::string writtenBits(const std::vector<float> &values,
                        const std::string &dtype) {
  std::string path = tempPath("bits.safetensors");
  fbl_safetensors_writer *w;
  EXPECT_EQ(fbl_safetensors_writer_create(&w), FBL_OK);
  int64_t n = static_cast<int64_t>(values.size());
  EXPECT_EQ(fbl_safetensors_writer_add_f32(w, "t", &n, 1, values.data(),
                                           dtype.c_str()),
            FBL_OK)
      << fbl_last_error();
  EXPECT_EQ(fbl_safetensors_writer_write(w, path.c_str()), FBL_OK)
      << fbl_last_error();
  fbl_safetensors_writer_free(w);
  std::string bytes = readBytes(path);
  uint64_t headerBytes = 0;
  for (int i = 7; i >= 0; --i)
    headerBytes = headerBytes << 8 | static_cast<unsigned char>(bytes[i]);
  return bytes.substr(8 + headerBytes);
}

std::vector<uint16_t> asU16(const std::string &bytes) {
  std::vector<uint16_t> v(bytes.size() / 2);
  std::memcpy(v.data(), bytes.data(), v.size() * 2);
  return v;
}

//===----------------------------------------------------------------------===//
// Round trips and bit patterns
//===----------------------------------------------------------------------===//

TEST_F(SafeTensors, F32RoundTripWithMetadata) {
  std::string path = tempPath("roundtrip.safetensors");
  std::vector<float> w = {1.0f, -0.0f, 3.5e-42f, INFINITY, NAN, -2.25f};
  std::vector<float> b = {0.5f, 7.0f};
  fbl_safetensors_writer *writer;
  ASSERT_EQ(fbl_safetensors_writer_create(&writer), FBL_OK);
  int64_t wShape[] = {2, 3}, bShape[] = {2};
  ASSERT_EQ(fbl_safetensors_writer_add_f32(writer, "model.w", wShape, 2,
                                           w.data(), "F32"),
            FBL_OK);
  ASSERT_EQ(fbl_safetensors_writer_add_f32(writer, "model.b", bShape, 1,
                                           b.data(), nullptr),
            FBL_OK);
  float scalar = 42.0f;
  ASSERT_EQ(fbl_safetensors_writer_add_f32(writer, "scalar", nullptr, 0,
                                           &scalar, "F32"),
            FBL_OK);
  int64_t emptyShape[] = {0, 3};
  ASSERT_EQ(fbl_safetensors_writer_add_f32(writer, "empty", emptyShape, 2,
                                           nullptr, "F32"),
            FBL_OK);
  ASSERT_EQ(fbl_safetensors_writer_add_metadata(writer, "format", "np"),
            FBL_OK);
  ASSERT_EQ(fbl_safetensors_writer_add_metadata(writer, "format", "pt"),
            FBL_OK);
  ASSERT_EQ(fbl_safetensors_writer_write(writer, path.c_str()), FBL_OK)
      << fbl_last_error();
  fbl_safetensors_writer_free(writer);
  EXPECT_FALSE(fs::exists(path + ".tmp"));

  // The header: padded with spaces to 8 bytes, metadata as written.
  std::string bytes = readBytes(path);
  uint64_t headerBytes = 0;
  for (int i = 7; i >= 0; --i)
    headerBytes = headerBytes << 8 | static_cast<unsigned char>(bytes[i]);
  EXPECT_EQ(headerBytes % 8, 0u);
  std::string header = bytes.substr(8, headerBytes);
  EXPECT_EQ(header.back(), ' ');
  Json json = Json::parse(header, nullptr, false);
  ASSERT_FALSE(json.is_discarded());
  EXPECT_EQ(json["__metadata__"], Json({{"format", "pt"}}));

  ReadResult r = readAll(path);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.tensors.size(), 4u);
  EXPECT_EQ(r.shapes["model.w"], (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.shapes["scalar"], std::vector<int64_t>{});
  EXPECT_EQ(r.shapes["empty"], (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(r.dtypes["model.w"], "F32");
  for (size_t i = 0; i < w.size(); ++i)
    EXPECT_TRUE(sameBits(r.tensors["model.w"][i], w[i])) << i;
  EXPECT_EQ(r.tensors["model.b"], b);
  EXPECT_EQ(r.tensors["scalar"], std::vector<float>{42.0f});

  fbl_safetensors *f;
  ASSERT_EQ(fbl_safetensors_open(path.c_str(), &f), FBL_OK);
  ASSERT_EQ(fbl_safetensors_num_metadata(f), 1u);
  const char *key, *value;
  ASSERT_EQ(fbl_safetensors_metadata(f, 0, &key, &value), FBL_OK);
  EXPECT_STREQ(key, "format");
  EXPECT_STREQ(value, "pt");
  size_t index;
  ASSERT_EQ(fbl_safetensors_find(f, "model.b", &index), FBL_OK);
  const char *name;
  ASSERT_EQ(
      fbl_safetensors_tensor_info(f, index, &name, nullptr, nullptr, nullptr),
      FBL_OK);
  EXPECT_STREQ(name, "model.b");
  EXPECT_EQ(fbl_safetensors_find(f, "model.c", &index), FBL_ERROR);
  EXPECT_NE(std::string(fbl_last_error()).find("no tensor named 'model.c'"),
            std::string::npos);
  float small[5];
  EXPECT_EQ(fbl_safetensors_read_f32(f, index, small, 5), FBL_ERROR);
  EXPECT_NE(std::string(fbl_last_error())
                .find("tensor 'model.b': holds 2 elements, the buffer 5"),
            std::string::npos)
      << fbl_last_error();
  fbl_safetensors_close(f);
}

TEST_F(SafeTensors, HalfBitPatternsDecode) {
  std::vector<uint16_t> bits = {0x3C00, 0xC000, 0x0001, 0x03FF, 0x0400,
                                0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0x8000};
  std::vector<float> want = {1.0f,
                             -2.0f,
                             std::ldexp(1.0f, -24),
                             std::ldexp(1023.0f, -24),
                             std::ldexp(1.0f, -14),
                             65504.0f,
                             INFINITY,
                             -INFINITY,
                             NAN,
                             -0.0f};
  std::string path = tempPath("half.safetensors");
  writeBytes(path, oneTensor("F16", {10}, bytesOf(bits)));
  ReadResult r = readAll(path);
  ASSERT_TRUE(r.ok) << r.error;
  for (size_t i = 0; i < bits.size(); ++i)
    EXPECT_TRUE(sameBits(r.tensors["t"][i], want[i]))
        << std::hex << bits[i] << " read as " << r.tensors["t"][i];
}

TEST_F(SafeTensors, BFloat16BitPatternsDecode) {
  std::vector<uint16_t> bits = {0x3F80, 0xC000, 0x7F80, 0xFF80,
                                0x7FC0, 0x0001, 0x8000, 0x4049};
  std::vector<float> want = {1.0f,      -2.0f,    INFINITY,
                             -INFINITY, NAN,      bf16Value(0x0001),
                             -0.0f,     3.140625f};
  std::string path = tempPath("bf16.safetensors");
  writeBytes(path, oneTensor("BF16", {2, 4}, bytesOf(bits)));
  ReadResult r = readAll(path);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.dtypes["t"], "BF16");
  for (size_t i = 0; i < bits.size(); ++i)
    EXPECT_TRUE(sameBits(r.tensors["t"][i], want[i])) << i;
  EXPECT_GT(bf16Value(0x0001), 0.0f); // a subnormal, not flushed
}

TEST_F(SafeTensors, HalfRoundsToNearestEven) {
  float one = 1.0f;
  std::vector<float> values = {
      1.0f,
      one + std::ldexp(1.0f, -11),     // halfway 0x3C00..0x3C01: even
      one + 3 * std::ldexp(1.0f, -11), // halfway 0x3C01..0x3C02: even
      one + std::ldexp(1.0f, -12),     // below halfway: down
      65504.0f,
      65519.0f, // below halfway to 65536: the largest finite
      65520.0f, // halfway: even is infinity
      1e10f,
      std::ldexp(1.0f, -24),    // smallest subnormal
      std::ldexp(1.0f, -25),    // halfway to it: even is zero
      std::ldexp(1.5f, -25),    // above halfway: the smallest subnormal
      std::ldexp(1023.5f, -24), // halfway 0x03FF..0x0400: even, the normal
      -0.0f,
      -INFINITY,
      NAN};
  std::vector<uint16_t> want = {0x3C00, 0x3C00, 0x3C02, 0x3C00, 0x7BFF,
                                0x7BFF, 0x7C00, 0x7C00, 0x0001, 0x0000,
                                0x0001, 0x0400, 0x8000, 0xFC00};
  std::vector<uint16_t> got = asU16(writtenBits(values, "F16"));
  ASSERT_EQ(got.size(), values.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(got[i], want[i]) << "value " << values[i];
  EXPECT_EQ(got.back() & 0x7C00, 0x7C00); // NaN stays NaN
  EXPECT_NE(got.back() & 0x03FF, 0);
}

TEST_F(SafeTensors, BFloat16RoundsToNearestEven) {
  float one = 1.0f;
  std::vector<float> values = {1.0f,
                               one + std::ldexp(1.0f, -8),        // tie: even
                               one + 3 * std::ldexp(1.0f, -8),    // tie: even
                               one + std::ldexp(1.0f, -9),        // down
                               std::numeric_limits<float>::max(), // inf
                               -2.0f,
                               NAN};
  std::vector<uint16_t> want = {0x3F80, 0x3F80, 0x3F82, 0x3F80, 0x7F80, 0xC000};
  std::vector<uint16_t> got = asU16(writtenBits(values, "BF16"));
  ASSERT_EQ(got.size(), values.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(got[i], want[i]) << "value " << values[i];
  EXPECT_TRUE(std::isnan(bf16Value(got.back())));
}

/// Every 16-bit pattern read as f32 and written back is the same pattern
/// (NaNs stay NaN); read values equal the format's definition.
void checkAllPatterns(const std::string &dtype) {
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < 65536; ++i)
    all[i] = static_cast<uint16_t>(i);
  std::string path = tempPath("all.safetensors");
  writeBytes(path, oneTensor(dtype, {256, 256}, bytesOf(all)));
  ReadResult r = readAll(path);
  ASSERT_TRUE(r.ok) << r.error;
  const std::vector<float> &values = r.tensors["t"];
  for (uint32_t i = 0; i < 65536; ++i) {
    double want = dtype == "F16" ? halfValue(all[i]) : bf16Value(all[i]);
    ASSERT_TRUE(sameBits(values[i], static_cast<float>(want)) ||
                (std::isnan(want) && std::isnan(values[i])))
        << dtype << " " << std::hex << i;
  }
  std::vector<uint16_t> back = asU16(writtenBits(values, dtype));
  for (uint32_t i = 0; i < 65536; ++i) {
    if (std::isnan(values[i]))
      EXPECT_TRUE(dtype == "F16" ? std::isnan(halfValue(back[i]))
                                 : std::isnan(bf16Value(back[i])));
    else
      ASSERT_EQ(back[i], all[i]) << dtype << " " << std::hex << i;
  }
}

TEST_F(SafeTensors, EveryHalfPatternRoundTrips) { checkAllPatterns("F16"); }
TEST_F(SafeTensors, EveryBFloat16PatternRoundTrips) {
  checkAllPatterns("BF16");
}

/// Random f32 values become the nearest binary16 (ties to even), checked
/// against its neighbours with exact double arithmetic.
TEST_F(SafeTensors, HalfIsNearestProperty) {
  std::mt19937 rng(7);
  std::vector<float> values;
  for (int i = 0; i < 20000; ++i) {
    // A random 24-bit mantissa, mostly within the binary16 range (from its
    // subnormals to past its largest value), where rounding is interesting.
    float mantissa = 0.5f + static_cast<float>(rng() & 0xffffff) * 0x1p-25f;
    int exponent = static_cast<int>(rng() % 48) - 30;
    values.push_back(std::ldexp(rng() % 2 ? mantissa : -mantissa, exponent));
  }
  std::vector<uint16_t> got = asU16(writtenBits(values, "F16"));
  for (size_t i = 0; i < values.size(); ++i) {
    double x = values[i], r = halfValue(got[i]);
    if (std::isinf(r)) {
      EXPECT_GE(std::fabs(x), 65520.0) << x;
      continue;
    }
    for (int step : {-1, 1}) {
      uint16_t neighbour = static_cast<uint16_t>(got[i] + step);
      double n = halfValue(neighbour);
      if (std::isnan(n) || (neighbour & 0x7FFF) == 0x7FFF ||
          ((got[i] & 0x7FFF) == 0 && step < 0))
        continue;
      double dr = std::fabs(r - x), dn = std::fabs(n - x);
      EXPECT_LE(dr, dn) << x;
      if (dr == dn) {
        EXPECT_EQ(got[i] & 1, 0) << "tie not to even: " << x;
      }
    }
  }
}

TEST_F(SafeTensors, WiderTypesConvertOrFail) {
  std::string path = tempPath("wide.safetensors");
  writeBytes(path, oneTensor("F64", {3},
                             bytesOf(std::vector<double>{1.5, 1e-300, -1e30})));
  ReadResult r = readAll(path);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.tensors["t"], (std::vector<float>{1.5f, 0.0f, -1e30f}));

  std::string error =
      errorOf(oneTensor("F64", {2}, bytesOf(std::vector<double>{1.0, -1e300})));
  EXPECT_NE(error.find("tensor 't': element 1 (-1e+300) is outside the range "
                       "of f32"),
            std::string::npos)
      << error;

  writeBytes(path,
             oneTensor("I64", {3},
                       bytesOf(std::vector<int64_t>{-5, 16777216, 1 << 30})));
  r = readAll(path);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.tensors["t"],
            (std::vector<float>{-5.0f, 16777216.0f, 1073741824.0f}));
  error = errorOf(
      oneTensor("I64", {2}, bytesOf(std::vector<int64_t>{0, 16777217})));
  EXPECT_NE(error.find("element 1 (16777217) has no exact f32 value"),
            std::string::npos)
      << error;
  error = errorOf(oneTensor(
      "I64", {1},
      bytesOf(std::vector<int64_t>{std::numeric_limits<int64_t>::max()})));
  EXPECT_NE(error.find("has no exact f32 value"), std::string::npos) << error;
  writeBytes(path, oneTensor("I32", {2}, bytesOf(std::vector<int32_t>{-7, 3})));
  r = readAll(path);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.tensors["t"], (std::vector<float>{-7.0f, 3.0f}));

  // Known but unread dtypes open (to be listed) and fail on read.
  error = errorOf(oneTensor("I8", {4}, std::string(4, '\1')));
  EXPECT_NE(error.find("tensor 't': dtype I8 is none of F32, F16, BF16, F64, "
                       "I64, I32 that fbl reads"),
            std::string::npos)
      << error;
}

//===----------------------------------------------------------------------===//
// Corrupt files: one line each
//===----------------------------------------------------------------------===//

TEST_F(SafeTensors, CorruptFilesFailWithOneLine) {
  std::string f32x3 = bytesOf(std::vector<float>{1, 2, 3});
  auto has = [](const std::string &error, const std::string &what) {
    EXPECT_NE(error.find(what), std::string::npos)
        << "'" << error << "' does not say '" << what << "'";
  };
  has(errorOf(""), "0 bytes, fewer than the 8 of the header length");
  has(errorOf("abcde"), "5 bytes, fewer than the 8");
  std::string good = oneTensor("F32", {3}, f32x3);
  std::string longHeader = good;
  longHeader[1] = '\x10'; // 4096 more
  has(errorOf(longHeader),
      "exceeds the file (" + std::to_string(good.size()) + " bytes)");
  std::string hugeHeader = good;
  hugeHeader[7] = '\x7f';
  has(errorOf(hugeHeader), "exceeds the file");
  has(errorOf(good.substr(0, good.size() - 1)),
      "data_offsets [0, 12) lie outside the 11 bytes of data");
  has(errorOf(fileOf("{\"t\": {\"dtype\": ", "")), "header is not valid JSON");
  has(errorOf(fileOf("[1, 2]", "")), "header is not a JSON object");
  has(errorOf(fileOf("{\"t\": 3}", "")), "tensor 't': entry is not an object");
  has(errorOf(fileOf(
          R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                         "a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
          std::string(8, '\0'))),
      "header names tensor 'a' twice");
  has(errorOf(
          fileOf(R"({"t": {"shape": [3], "data_offsets": [0, 12]}})", f32x3)),
      "tensor 't': no dtype string");
  has(errorOf(
          fileOf(R"({"t": {"dtype": "F32", "data_offsets": [0, 12]}})", f32x3)),
      "tensor 't': no shape array");
  has(errorOf(fileOf(
          R"({"t": {"dtype": "F32", "shape": [3], "data_offsets": [0, 4, 12]}})",
          f32x3)),
      "tensor 't': no data_offsets [begin, end]");
  has(errorOf(oneTensor("Q7", {3}, f32x3)), "tensor 't': unknown dtype 'Q7'");
  has(errorOf(oneTensor("F32", {4}, f32x3)),
      "tensor 't': data_offsets [0, 12) hold 12 bytes; shape [4] of F32 needs "
      "16");
  has(errorOf(oneTensor("F16", {3}, f32x3)), "shape [3] of F16 needs 6");
  has(errorOf(fileOf(
          R"({"t": {"dtype": "F32", "shape": [-3], "data_offsets": [0, 12]}})",
          f32x3)),
      "shape [-3] has an entry that is no non-negative integer");
  has(errorOf(fileOf(
          R"({"t": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 12]}})",
          f32x3)),
      "no non-negative integer");
  has(errorOf(fileOf(
          R"({"t": {"dtype": "F32", "shape": [1099511627776, 1099511627776], "data_offsets": [0, 12]}})",
          f32x3)),
      "shape [1099511627776, 1099511627776] overflows");
  has(errorOf(fileOf(
          R"({"t": {"dtype": "F32", "shape": [3], "data_offsets": [8, 4]}})",
          f32x3)),
      "data_offsets [8, 4) lie outside");
  has(errorOf(fileOf(
          R"({"t": {"dtype": "F32", "shape": [3], "data_offsets": [-4, 8]}})",
          f32x3)),
      "are not non-negative integers");
  has(errorOf(fileOf(
          R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                         "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
          f32x3)),
      "tensors 'a' and 'b' overlap: bytes [0, 8) and [4, 12)");
  has(errorOf(fileOf(
          R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                         "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}})",
          f32x3)),
      "bytes [4, 8) of the data belong to no tensor");
  has(errorOf(fileOf(
          R"({"t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})",
          f32x3)),
      "bytes [8, 12) of the data belong to no tensor");
  has(errorOf(fileOf(R"({"__metadata__": {"k": 3}})", "")),
      "__metadata__ 'k' is not a string");
  has(errorOf(fileOf(R"({"__metadata__": [1]})", "")),
      "__metadata__ is not an object of strings");
  has(errorOf(fileOf("{\"\xff\": 1}", "")), "header is not valid JSON");

  // A file truncated after it was opened fails the read, not the process.
  std::string path = tempPath("shrinking.safetensors");
  writeBytes(path, good);
  fbl_safetensors *f;
  ASSERT_EQ(fbl_safetensors_open(path.c_str(), &f), FBL_OK);
  fs::resize_file(path, good.size() - 4);
  float out[3];
  EXPECT_EQ(fbl_safetensors_read_f32(f, 0, out, 3), FBL_ERROR);
  EXPECT_NE(std::string(fbl_last_error()).find("the file ends inside"),
            std::string::npos)
      << fbl_last_error();
  fbl_safetensors_close(f);

  EXPECT_EQ(fbl_safetensors_open(tempPath("none.safetensors").c_str(), &f),
            FBL_ERROR);
  EXPECT_NE(std::string(fbl_last_error()).find("cannot read"),
            std::string::npos);
}

TEST_F(SafeTensors, WriterRefusesBadTensorsAndFailedWrites) {
  fbl_safetensors_writer *w;
  ASSERT_EQ(fbl_safetensors_writer_create(&w), FBL_OK);
  float v[2] = {1, 2};
  int64_t shape[] = {2}, negative[] = {-2};
  ASSERT_EQ(fbl_safetensors_writer_add_f32(w, "a", shape, 1, v, "F32"), FBL_OK);
  auto refused = [&](fbl_status s, const std::string &what) {
    EXPECT_EQ(s, FBL_ERROR);
    EXPECT_NE(std::string(fbl_last_error()).find(what), std::string::npos)
        << fbl_last_error();
  };
  refused(fbl_safetensors_writer_add_f32(w, "a", shape, 1, v, "F32"),
          "cannot add tensor 'a': a tensor of that name was added already");
  refused(fbl_safetensors_writer_add_f32(w, "__metadata__", shape, 1, v, "F32"),
          "the name is empty or reserved");
  refused(fbl_safetensors_writer_add_f32(w, "b", shape, 1, v, "I8"),
          "dtype I8 is none of F32, F16, BF16 that fbl writes");
  refused(fbl_safetensors_writer_add_f32(w, "b", shape, 1, v, "F12"),
          "unknown dtype 'F12'");
  refused(fbl_safetensors_writer_add_f32(w, "b", negative, 1, v, "F32"),
          "shape [-2] is negative or too large");
  refused(fbl_safetensors_writer_add_f32(w, "\xc3(", shape, 1, v, "F32"),
          "is not valid UTF-8");
  refused(fbl_safetensors_writer_add_metadata(w, "k", "\xff"),
          "is not valid UTF-8");

  // A directory that does not exist.
  std::string missing = tempPath("no/such/dir/w.safetensors");
  refused(fbl_safetensors_writer_write(w, missing.c_str()), "cannot write ");

  // A full disk: the temporary file is /dev/full. The old file stays, the
  // temporary name is removed.
  if (fs::exists("/dev/full")) {
    std::string path = tempPath("full.safetensors");
    writeBytes(path, "old");
    fs::remove(path + ".tmp");
    fs::create_symlink("/dev/full", path + ".tmp");
    refused(fbl_safetensors_writer_write(w, path.c_str()),
            "cannot write " + path + ".tmp: No space left on device");
    EXPECT_EQ(readBytes(path), "old");
    EXPECT_FALSE(fs::exists(fs::symlink_status(path + ".tmp")));
  }
  fbl_safetensors_writer_free(w);
}

//===----------------------------------------------------------------------===//
// Property: random files, random corruption
//===----------------------------------------------------------------------===//

/// What an independent reader makes of `bytes`: std::nullopt when it is not
/// a file whose tensors it can all decode, else the values by name.
std::optional<std::map<std::string, std::vector<float>>>
independentDecode(const std::string &bytes) {
  if (bytes.size() < 8)
    return std::nullopt;
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = n << 8 | static_cast<unsigned char>(bytes[i]);
  if (n > bytes.size() - 8)
    return std::nullopt;
  Json header = Json::parse(bytes.substr(8, n), nullptr, false);
  if (header.is_discarded() || !header.is_object())
    return std::nullopt;
  std::string data = bytes.substr(8 + n);
  std::map<std::string, std::vector<float>> out;
  for (const auto &[name, e] : header.items()) {
    if (name == "__metadata__")
      continue;
    std::string dtype = e.value("dtype", "");
    uint64_t begin = e["data_offsets"][0], end = e["data_offsets"][1];
    std::vector<float> values;
    for (uint64_t at = begin; at < end;) {
      const char *p = data.data() + at;
      if (dtype == "F32") {
        float f;
        std::memcpy(&f, p, 4);
        values.push_back(f);
        at += 4;
      } else if (dtype == "F16" || dtype == "BF16") {
        uint16_t h;
        std::memcpy(&h, p, 2);
        values.push_back(dtype == "F16" ? static_cast<float>(halfValue(h))
                                        : bf16Value(h));
        at += 2;
      } else {
        int32_t i;
        std::memcpy(&i, p, 4);
        values.push_back(static_cast<float>(i));
        at += 4;
      }
    }
    out[name] = values;
  }
  return out;
}

TEST_F(SafeTensors, RandomCorruptionIsACleanErrorOrACorrectRead) {
  std::mt19937 rng(2024);
  const char *dtypes[] = {"F32", "F16", "BF16", "I32"};
  std::string path = tempPath("property.safetensors");
  int cleanErrors = 0, correctReads = 0;
  for (int file = 0; file < 40; ++file) {
    // A valid file: random names, dtypes and shapes, random bits.
    Json header = Json::object();
    std::string data;
    int tensors = 1 + rng() % 4;
    for (int t = 0; t < tensors; ++t) {
      std::string dtype = dtypes[rng() % 4];
      std::vector<int64_t> shape(rng() % 4);
      size_t elements = 1;
      for (int64_t &d : shape) {
        d = rng() % 5;
        elements *= d;
      }
      size_t bytes = elements * (dtype == "F32" || dtype == "I32" ? 4 : 2);
      if (dtype == "I32") {
        for (size_t i = 0; i < elements; ++i) {
          int32_t v = static_cast<int32_t>(rng() % 100000) - 50000;
          data.append(reinterpret_cast<const char *>(&v), 4);
        }
      } else {
        for (size_t i = 0; i < bytes; ++i)
          data.push_back(static_cast<char>(rng()));
      }
      header["layer." + std::to_string(t) + ".w" + std::to_string(rng() % 9)] =
          {{"dtype", dtype},
           {"shape", shape},
           {"data_offsets", {data.size() - bytes, data.size()}}};
    }
    if (rng() % 2)
      header["__metadata__"] = {{"format", "pt"}};
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');
    std::string valid = fileOf(text, data);
    writeBytes(path, valid);
    ReadResult r = readAll(path);
    ASSERT_TRUE(r.ok) << r.error << "\n" << text;

    for (int mutation = 0; mutation < 30; ++mutation) {
      std::string bytes = valid;
      switch (rng() % 5) {
      case 0: // Flip bytes anywhere.
        for (int k = 0, n = 1 + rng() % 3; k < n; ++k)
          bytes[rng() % bytes.size()] ^= static_cast<char>(1 + rng() % 255);
        break;
      case 1: // Truncate.
        bytes.resize(rng() % bytes.size());
        break;
      case 2: // Insert garbage.
        bytes.insert(rng() % bytes.size(), std::string(1 + rng() % 8, '7'));
        break;
      case 3: // Another header length.
        bytes[rng() % 8] = static_cast<char>(rng());
        break;
      case 4: // Flip a byte inside the header's digits and quotes.
        for (size_t at = 8; at < bytes.size(); ++at)
          if (std::isdigit(static_cast<unsigned char>(bytes[at])) &&
              rng() % 3 == 0) {
            bytes[at] = static_cast<char>('0' + rng() % 10);
            break;
          }
        break;
      }
      writeBytes(path, bytes);
      ReadResult got = readAll(path);
      if (!got.ok) {
        ++cleanErrors;
        EXPECT_EQ(got.error.find('\n'), std::string::npos) << got.error;
        EXPECT_EQ(got.error.rfind(path, 0), 0u) << got.error;
        continue;
      }
      ++correctReads;
      std::optional<std::map<std::string, std::vector<float>>> want =
          independentDecode(bytes);
      ASSERT_TRUE(want) << "fbl read a file the independent decoder cannot";
      ASSERT_EQ(want->size(), got.tensors.size());
      for (const auto &[name, values] : *want) {
        ASSERT_EQ(got.tensors[name].size(), values.size()) << name;
        for (size_t i = 0; i < values.size(); ++i)
          ASSERT_TRUE(sameBits(got.tensors[name][i], values[i]))
              << name << "[" << i << "]";
      }
    }
  }
  // Both outcomes happen: the test is not vacuous either way.
  EXPECT_GT(cleanErrors, 100);
  EXPECT_GT(correctReads, 100);
}

} // namespace
