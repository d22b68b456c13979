//===- SafeTensors.h - Reading and writing .safetensors files ---*- C++ -*-===//
//
// The safetensors format Hugging Face models and PEFT adapters ship in: an
// 8-byte little-endian header length N, N bytes of JSON
//   {"__metadata__": {str: str}, NAME: {"dtype": "F32", "shape": [...],
//                                       "data_offsets": [begin, end]}, ...}
// (padded with spaces), then the tensors' little-endian bytes, offsets
// relative to the end of the header.
//
// The reader checks the whole header against the file's size before anything
// is allocated for tensor data: a sane header length, JSON that is an object
// of well-formed entries with no duplicate names, known dtypes, byte ranges
// inside the file that match shape x dtype size, do not overlap and leave no
// hole. Tensors are read as f32 (F32, F16, BF16; F64 with a range check; I64
// and I32 when f32 holds them exactly). The writer writes F32, F16 or BF16
// (rounded to nearest even) through a temporary file renamed into place.
// Every failure throws an Error of one line naming the file and the tensor.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_RUNTIME_SAFETENSORS_H
#define FBL_RUNTIME_SAFETENSORS_H

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace fbl::runtime::safetensors {

/// The element types of the format; the reader converts the float and
/// 32/64-bit integer ones to f32, the writer writes F32, F16 and BF16.
enum class DType : uint8_t {
  BOOL,
  U8,
  I8,
  F8_E5M2,
  F8_E4M3,
  I16,
  U16,
  F16,
  BF16,
  I32,
  U32,
  F32,
  F64,
  I64,
  U64
};

const char *dtypeName(DType type);
std::optional<DType> parseDType(std::string_view name);
size_t dtypeBytes(DType type);

/// IEEE binary16 and bfloat16 from f32, rounded to nearest even (NaNs stay
/// NaN, overflow becomes infinity), and back (exact).
uint16_t floatToHalf(float value);
float halfToFloat(uint16_t bits);
uint16_t floatToBFloat16(float value);
float bfloat16ToFloat(uint16_t bits);

struct TensorEntry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  /// Byte range in the data section (after the header).
  uint64_t begin = 0, end = 0;
  uint64_t elements() const;
};

/// An open .safetensors file, its header validated.
class Reader {
public:
  /// Opens `path` and validates its header; throws Error.
  explicit Reader(std::string path);

  const std::string &path() const { return path_; }
  /// In the order of the header.
  const std::vector<TensorEntry> &tensors() const { return tensors_; }
  /// `__metadata__`, in the order of the header.
  const std::vector<std::pair<std::string, std::string>> &metadata() const {
    return metadata_;
  }
  std::optional<size_t> find(std::string_view name) const;

  /// Reads tensor `index` into `out`, `count` f32 elements row-major; throws
  /// when `count` is not its element count, its dtype is none the reader
  /// converts, a value does not fit f32, or the file ends early.
  void readF32(size_t index, float *out, uint64_t count);

private:
  [[noreturn]] void fail(const std::string &message) const;
  void readBytes(uint64_t offset, char *out, uint64_t bytes,
                 const TensorEntry &t);

  std::string path_;
  std::ifstream file_;
  uint64_t dataStart_ = 0;
  std::vector<TensorEntry> tensors_;
  std::vector<std::pair<std::string, std::string>> metadata_;
  std::unordered_map<std::string, size_t> index_;
};

/// Collects tensors (converted to their file dtype when added) and metadata,
/// then writes them in one go.
class Writer {
public:
  /// Adds `data` (product(shape) f32 values, row-major) as `name`, stored as
  /// `dtype` (F32, F16 or BF16); throws on a duplicate or reserved name, a
  /// negative or overflowing shape, or another dtype.
  void add(const std::string &name, const std::vector<int64_t> &shape,
           const float *data, DType dtype);
  /// Sets `__metadata__[key]` to `value` (replacing an earlier value).
  void addMetadata(const std::string &key, const std::string &value);
  size_t size() const { return tensors_.size(); }
  /// Writes `path` through `path`.tmp, renamed when every byte is written;
  /// throws (removing the temporary file) when a write, the close or the
  /// rename fails.
  void write(const std::string &path) const;

private:
  struct Pending {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    std::string bytes;
  };
  std::vector<Pending> tensors_;
  std::vector<std::pair<std::string, std::string>> metadata_;
};

} // namespace fbl::runtime::safetensors

#endif // FBL_RUNTIME_SAFETENSORS_H
