//===- Npy.cpp - Reading and writing .npy files ---------------------------===//

#include "Npy.h"

#include <cstring>
#include <fstream>
#include <regex>
#include <stdexcept>

using namespace fbl::npy;

static const char kMagic[] = "\x93NUMPY";

Array fbl::npy::read(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read " + path);
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
  std::string header(headerLen, '\0');
  in.read(header.data(), headerLen);
  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr':\\s*'([^']*)'")))
    throw std::runtime_error(path + ": .npy header has no descr");
  std::string descr = m[1];
  if (std::regex_search(header, m, std::regex("'fortran_order':\\s*True")))
    throw std::runtime_error(path + ": Fortran-order arrays are not supported");
  if (!std::regex_search(header, m, std::regex("'shape':\\s*\\(([^)]*)\\)")))
    throw std::runtime_error(path + ": .npy header has no shape");
  Array a;
  std::string dims = m[1];
  std::regex num("\\d+");
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), num);
       it != std::sregex_iterator(); ++it)
    a.shape.push_back(std::stoll(it->str()));
  int64_t n = 1;
  for (int64_t d : a.shape)
    n *= d;
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
    throw std::runtime_error(path + ": unsupported element type " + descr);
  }
  a.data.resize(n * size);
  in.read(reinterpret_cast<char *>(a.data.data()), a.data.size());
  if (static_cast<size_t>(in.gcount()) != a.data.size())
    throw std::runtime_error(path + ": file is shorter than its shape says");
  if (a.dtype == "f64") {
    std::vector<uint8_t> f(n * 4);
    for (int64_t i = 0; i < n; ++i) {
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
  std::ofstream out(path, std::ios::binary);
  if (!out)
    throw std::runtime_error("cannot write " + path);
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
