//===- Npy.cpp - Reading and writing .npy files ---------------------------===//

#include "Npy.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

using namespace fbl::npy;

static const char kMagic[] = "\x93NUMPY";
static const char kBlanks[] = " \t\n\r\v\f";

/// Where the value of `'key':` starts in a .npy header (a Python dict
/// literal), blanks skipped; npos when the key is missing. Plain string
/// search: std::regex recurses per character and overflows the stack on a
/// header of some ten thousand characters.
static size_t headerValue(const std::string &header, const char *key) {
  std::string quoted = std::string("'") + key + "':";
  size_t at = header.find(quoted);
  if (at == std::string::npos)
    return at;
  at = header.find_first_not_of(kBlanks, at + quoted.size());
  return at == std::string::npos ? header.size() : at;
}

Array fbl::npy::read(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  return read(in, path);
}

Array fbl::npy::read(std::istream &in, const std::string &path) {
  char magic[6];
  in.read(magic, 6);
  if (!in || std::memcmp(magic, kMagic, 6) != 0)
    throw std::runtime_error(path + " is not a .npy file");
  unsigned char version[2];
  in.read(reinterpret_cast<char *>(version), 2);
  uint32_t headerLen = 0;
  if (version[0] == 1) {
    unsigned char b[2];
    in.read(reinterpret_cast<char *>(b), 2);
    headerLen = b[0] | (b[1] << 8);
  } else if (version[0] == 2 || version[0] == 3) {
    unsigned char b[4];
    in.read(reinterpret_cast<char *>(b), 4);
    headerLen = b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t(b[3]) << 24);
  } else {
    throw std::runtime_error(path + ": unsupported .npy version");
  }
  if (!in)
    throw std::runtime_error(path + ": truncated .npy header");
  // Sizes in the header are checked against the file before anything is
  // allocated: a corrupt header must not cost gigabytes.
  std::streamoff start = in.tellg();
  in.seekg(0, std::ios::end);
  std::streamoff fileSize = in.tellg();
  in.seekg(start);
  uint64_t remaining = fileSize > start ? uint64_t(fileSize - start) : 0;
  if (headerLen > remaining)
    throw std::runtime_error(path + ": .npy header claims " +
                             std::to_string(headerLen) + " bytes, the file " +
                             "has " + std::to_string(remaining) + " left");
  std::string header(headerLen, '\0');
  in.read(header.data(), headerLen);
  remaining -= headerLen;
  size_t at = headerValue(header, "descr");
  size_t end = at < header.size() && header[at] == '\''
                   ? header.find('\'', at + 1)
                   : std::string::npos;
  if (end == std::string::npos)
    throw std::runtime_error(path + ": .npy header has no descr");
  std::string descr = header.substr(at + 1, end - at - 1);
  at = headerValue(header, "fortran_order");
  bool fortran = at < header.size() && header.compare(at, 4, "True") == 0;
  at = headerValue(header, "shape");
  end = at < header.size() && header[at] == '(' ? header.find(')', at + 1)
                                                : std::string::npos;
  if (end == std::string::npos)
    throw std::runtime_error(path + ": .npy header has no shape");
  Array a;
  // Dimensions are separated by commas and blanks.
  std::string separators = std::string(",") + kBlanks;
  for (size_t pos = at + 1; pos < end;) {
    pos = header.find_first_not_of(separators, pos);
    if (pos >= end)
      break;
    size_t stop = std::min(header.find_first_of(separators, pos), end);
    std::string d = header.substr(pos, stop - pos);
    if (d.find_first_not_of("0123456789") != std::string::npos || d.size() > 18)
      throw std::runtime_error(path + ": invalid dimension '" +
                               d.substr(0, 40) + "' in the .npy shape");
    a.shape.push_back(std::stoll(d));
    pos = stop;
  }
  size_t size;
  if (descr == "<f4" || descr == "=f4" || descr == "|f4") {
    a.dtype = "f32";
    size = 4;
  } else if (descr == "<f8") {
    a.dtype = "f64";
    size = 8;
  } else if (descr == "<i8") {
    a.dtype = "i64";
    size = 8;
  } else if (descr == "<i4") {
    a.dtype = "i32";
    size = 4;
  } else {
    throw std::runtime_error(path + ": unsupported element type " +
                             descr.substr(0, 40));
  }
  // Elements times itemsize against the bytes the file has, overflow-safe.
  uint64_t limit = remaining / size, n = 1;
  bool fits = true;
  for (int64_t d : a.shape) {
    if (d == 0) {
      n = 0;
      fits = true;
      break;
    }
    if (uint64_t(d) > limit / n)
      fits = false;
    else
      n *= uint64_t(d);
  }
  if (!fits)
    throw std::runtime_error(path + ": file is shorter than its shape says");
  a.data.resize(n * size);
  in.read(reinterpret_cast<char *>(a.data.data()), a.data.size());
  if (static_cast<size_t>(in.gcount()) != a.data.size())
    throw std::runtime_error(path + ": file is shorter than its shape says");
  // An empty array has nothing to reorder, and the product of its other
  // dims need not fit in 64 bits: its strides are not computed.
  if (fortran && a.shape.size() > 1 && n > 0) {
    // Column-major on disk: element (i0, ..., ik) sits at sum(i_d * s_d)
    // with s_0 = 1; rewrite it row-major.
    std::vector<uint8_t> c(a.data.size());
    size_t rank = a.shape.size();
    std::vector<int64_t> idx(rank, 0), fstride(rank, 1);
    for (size_t d = 1; d < rank; ++d)
      fstride[d] = fstride[d - 1] * a.shape[d - 1];
    for (uint64_t i = 0; i < n; ++i) {
      int64_t src = 0;
      for (size_t d = 0; d < rank; ++d)
        src += idx[d] * fstride[d];
      std::memcpy(c.data() + i * size, a.data.data() + src * size, size);
      for (size_t d = rank; d-- > 0;) {
        if (++idx[d] < a.shape[d])
          break;
        idx[d] = 0;
      }
    }
    a.data = std::move(c);
  }
  if (a.dtype == "f64") {
    std::vector<uint8_t> f(n * 4);
    for (uint64_t i = 0; i < n; ++i) {
      double d;
      std::memcpy(&d, a.data.data() + 8 * i, 8);
      float v = static_cast<float>(d);
      std::memcpy(f.data() + 4 * i, &v, 4);
    }
    a.data = std::move(f);
    a.dtype = "f32";
  }
  return a;
}

void fbl::npy::write(const std::string &path, const Array &a) {
  std::ofstream out(path, std::ios::binary);
  if (!out)
    throw std::runtime_error("cannot write " + path);
  write(out, a);
  // ofstream buffers: a full disk may only show at the flush or the close.
  out.close();
  if (!out)
    throw std::runtime_error("cannot write " + path + ": " +
                             std::strerror(errno));
}

void fbl::npy::write(std::ostream &out, const Array &a) {
  std::string descr = a.dtype == "f32"   ? "<f4"
                      : a.dtype == "i64" ? "<i8"
                      : a.dtype == "i32" ? "<i4"
                                         : "";
  if (descr.empty())
    throw std::runtime_error("cannot write " + a.dtype + " to .npy");
  std::string shape = "(";
  for (size_t i = 0; i < a.shape.size(); ++i)
    shape += std::to_string(a.shape[i]) + (a.shape.size() == 1      ? ","
                                           : i + 1 < a.shape.size() ? ", "
                                                                    : "");
  shape += ")";
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  out.write(kMagic, 6);
  const char version[2] = {1, 0};
  out.write(version, 2);
  uint16_t len = static_cast<uint16_t>(header.size());
  const char lenBytes[2] = {static_cast<char>(len & 0xff),
                            static_cast<char>(len >> 8)};
  out.write(lenBytes, 2);
  out << header;
  out.write(reinterpret_cast<const char *>(a.data.data()), a.data.size());
}
