//===- Error.h - Errors of libfbl_runtime -----------------------*- C++ -*-===//
//
// Errors inside the runtime are exceptions; the C API turns them into
// FBL_ERROR and a message fbl_last_error() returns.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_RUNTIME_ERROR_H
#define FBL_RUNTIME_ERROR_H

#include "fbl_runtime/fbl_runtime.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace fbl::runtime {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// `shape` as messages show it: "[2, 3]".
inline std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// Records `message` for fbl_last_error() and returns FBL_ERROR.
fbl_status fail(const std::string &message);

/// Runs `fn`, turning an exception into FBL_ERROR and its message.
template <typename Fn> fbl_status guarded(Fn fn) {
  try {
    fn();
    return FBL_OK;
  } catch (const Error &e) {
    return fail(e.what());
  } catch (const nlohmann::json::exception &e) {
    return fail(std::string("malformed manifest: ") + e.what());
  } catch (const std::exception &e) {
    return fail(e.what());
  }
}

} // namespace fbl::runtime

#endif // FBL_RUNTIME_ERROR_H
