//===- fbl-fuzz-npy.cpp - Fuzz fbl-run's .npy reader ----------------------===//
//
// libFuzzer target: the input is a .npy file for fbl::npy::read. A
// std::runtime_error (the one line fbl-run prints) is a fine outcome. Bugs
// are: a crash or sanitizer report, any other exception, an array whose
// bytes do not match its shape and type, and one that does not read back
// the same after fbl::npy::write.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>

using namespace fbl;

[[noreturn]] static void bug(const std::string &what) {
  std::fprintf(stderr, "fbl-fuzz-npy: %s\n", what.c_str());
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char *>(data), size),
                        std::ios::binary);
  npy::Array array;
  try {
    array = npy::read(in, "input.npy");
  } catch (const std::runtime_error &) {
    return 0;
  }

  size_t itemSize = array.dtype == "i64" ? 8 : 4;
  if (array.dtype != "f32" && array.dtype != "i64" && array.dtype != "i32")
    bug("read an array of element type '" + array.dtype + "'");
  uint64_t elements = 1;
  for (int64_t d : array.shape) {
    if (d < 0)
      bug("read a negative dimension");
    elements *= static_cast<uint64_t>(d);
  }
  if (array.data.size() != elements * itemSize)
    bug("read " + std::to_string(array.data.size()) + " bytes for " +
        std::to_string(elements) + " elements of " + array.dtype);

  std::ostringstream out(std::ios::binary);
  npy::write(out, array);
  std::istringstream again(out.str(), std::ios::binary);
  npy::Array back = npy::read(again, "written.npy");
  if (back.shape != array.shape || back.dtype != array.dtype ||
      back.data != array.data)
    bug("a written array reads back differently");
  return 0;
}
