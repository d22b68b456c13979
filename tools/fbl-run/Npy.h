//===- Npy.h - Reading and writing .npy files -------------------*- C++ -*-===//
//
// The NumPy .npy format (little-endian; Fortran-order files are transposed
// on load) for the element types fbl bundles use: f32 (f64 files are
// converted), i64, i32.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_TOOLS_FBLRUN_NPY_H
#define FBL_TOOLS_FBLRUN_NPY_H

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace fbl::npy {

struct Array {
  std::vector<int64_t> shape;
  std::string dtype; ///< "f32", "i64" or "i32"
  std::vector<uint8_t> data;
};

/// Reads `path`; throws std::runtime_error with a readable message.
Array read(const std::string &path);

/// Reads a .npy file's bytes from `in` (seekable); messages name `name`.
Array read(std::istream &in, const std::string &name);

/// Writes `array` to `path`; throws std::runtime_error when any write or the
/// close fails (a full disk), leaving a partial file for the caller to
/// remove.
void write(const std::string &path, const Array &array);

/// Writes `array` as .npy bytes to `out`; throws std::runtime_error for an
/// element type .npy files of fbl do not hold. The caller checks `out`.
void write(std::ostream &out, const Array &array);

} // namespace fbl::npy

#endif // FBL_TOOLS_FBLRUN_NPY_H
