//===- Bundle.cpp - fbl bundles: manifest and program ---------------------===//
//
// Loading a bundle's manifest.json through the schema the compiler writes
// (fbl/Layout/BundleManifest.h), checking every id it names, and building
// kernels.cl with a binary cache.
//
//===----------------------------------------------------------------------===//

#include "Bundle.h"
#include "Error.h"

#include "fbl/Layout/BundleManifest.h"

#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>

namespace fs = std::filesystem;
namespace manifest = fbl::manifest;
namespace key = fbl::manifest::key;
using fbl::layout::Layout;
using manifest::Json;
using namespace fbl::runtime;

std::string fbl::runtime::readFile(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  if (!in)
    throw Error("cannot read " + p.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

size_t Tensor::hostBytes() const {
  std::optional<manifest::ElementType> type = manifest::parseElementType(dtype);
  if (!type)
    throw Error("unsupported element type '" + dtype + "' in the manifest");
  return elements() * manifest::elementTypeBytes(*type);
}

Bundle Bundle::load(const fs::path &dir) {
  if (!fs::is_directory(dir))
    throw Error("bundle '" + dir.string() + "' is not a directory");
  for (const char *f : {"kernels.cl", "manifest.json"})
    if (!fs::exists(dir / f))
      throw Error("bundle '" + dir.string() + "' has no " + f);
  Json json;
  try {
    json = Json::parse(readFile(dir / "manifest.json"));
  } catch (const Json::parse_error &e) {
    throw Error(std::string("malformed manifest.json: ") + e.what());
  }
  if (!json.is_object() || json.value(key::format, "") != manifest::kFormatName)
    throw Error("manifest.json is not an fbl bundle manifest");
  std::string versionError = manifest::checkFormatVersion(json);
  if (!versionError.empty())
    throw Error(versionError);

  Bundle b;
  for (const Json &m : json.at(key::memory)) {
    std::string storage = m.at(key::storage).get<std::string>();
    std::optional<layout::StorageKind> kind =
        manifest::parseStorageKind(storage);
    if (!kind)
      throw Error("manifest.json: unknown storage kind '" + storage + "'");
    b.memories.push_back({*kind, m.at(key::dtype), m.at(key::width),
                          m.at(key::height), m.at(key::layers),
                          m.at(key::bytes)});
  }
  for (const Json &t : json.at(key::tensors)) {
    std::vector<int64_t> shape = t.at(key::shape).get<std::vector<int64_t>>();
    int64_t memory = t.at(key::memory);
    if (memory < 0 || memory >= static_cast<int64_t>(b.memories.size()))
      throw Error("tensor " + t.at(key::id).dump() + " names no memory object");
    std::string error;
    std::optional<Layout> layout = manifest::layoutFromJson(
        t.at(key::layout), static_cast<unsigned>(shape.size()), error);
    if (!layout)
      throw Error("invalid layout in the manifest: " + error);
    b.tensors.push_back({shape, t.at(key::dtype), memory, *layout});
  }
  auto tensorIndex = [&](const Json &j) {
    int64_t id = j.at(key::tensor);
    if (id < 0 || id >= static_cast<int64_t>(b.tensors.size()))
      throw Error("manifest names tensor " + std::to_string(id) +
                  ", which does not exist");
    return id;
  };
  for (const Json &in : json.at(key::inputs)) {
    b.inputTensors.push_back(tensorIndex(in));
    b.inputIsParam.push_back(in.value(key::param, false));
    b.inputIsStepCount.push_back(in.value(key::stepCount, false));
    InputRange range;
    if (auto it = in.find(key::range); it != in.end()) {
      range.present = true;
      range.min = it->at(key::min).get<int64_t>();
      range.max = it->at(key::max).get<int64_t>();
      range.message = it->value(key::message, "");
    }
    b.inputRanges.push_back(range);
  }
  for (const Json &out : json.at(key::outputs)) {
    b.outputTensors.push_back(tensorIndex(out));
    int64_t updates = out.value(key::updates, int64_t(-1));
    if (updates >= static_cast<int64_t>(b.inputTensors.size()))
      throw Error("output " + out.at(key::result).dump() +
                  " updates an input that does not exist");
    b.outputUpdates.push_back(updates);
  }
  for (const Json &k : json.at(key::kernels)) {
    Kernel kernel;
    kernel.name = k.at(key::name);
    for (const Json &a : k.at(key::args))
      kernel.args.push_back(a.at(key::memory));
    for (int d = 0; d < 3; ++d) {
      kernel.grid[d] = k.at(key::grid).at(d);
      kernel.workgroup[d] = k.at(key::workgroup).at(d);
    }
    b.kernels.push_back(kernel);
  }
  return b;
}

cl_program fbl::runtime::buildProgram(cl_context context,
                                      const DeviceEntry &device,
                                      const std::string &source) {
  // Binary cache keyed by source, device and driver.
  std::string key =
      source + device.name + deviceString(device.device, CL_DRIVER_VERSION);
  size_t hash = std::hash<std::string>{}(key);
  const char *home = std::getenv("XDG_CACHE_HOME");
  fs::path cacheDir =
      home ? fs::path(home) / "fbl"
           : fs::path(std::getenv("HOME") ? std::getenv("HOME") : "/tmp") /
                 ".cache" / "fbl";
  fs::path cached = cacheDir / (std::to_string(hash) + ".bin");
  cl_program program = nullptr;
  cl_int err;
  if (fs::exists(cached)) {
    std::string binary = readFile(cached);
    const unsigned char *bytes =
        reinterpret_cast<const unsigned char *>(binary.data());
    size_t size = binary.size();
    cl_int status;
    program = clCreateProgramWithBinary(context, 1, &device.device, &size,
                                        &bytes, &status, &err);
    if (err != CL_SUCCESS || status != CL_SUCCESS ||
        clBuildProgram(program, 1, &device.device, "", nullptr, nullptr) !=
            CL_SUCCESS) {
      if (program)
        clReleaseProgram(program);
      program = nullptr;
    }
  }
  if (!program) {
    const char *src = source.c_str();
    size_t len = source.size();
    program = clCreateProgramWithSource(context, 1, &src, &len, &err);
    check(err, "clCreateProgramWithSource");
    err = clBuildProgram(program, 1, &device.device, "-cl-std=CL1.2", nullptr,
                         nullptr);
    if (err != CL_SUCCESS) {
      size_t n = 0;
      clGetProgramBuildInfo(program, device.device, CL_PROGRAM_BUILD_LOG, 0,
                            nullptr, &n);
      std::string log(n, '\0');
      clGetProgramBuildInfo(program, device.device, CL_PROGRAM_BUILD_LOG, n,
                            log.data(), nullptr);
      clReleaseProgram(program);
      throw Error("OpenCL build of kernels.cl failed on '" + device.name +
                  "': " + clErrorName(err) + "\n" + log);
    }
    size_t size = 0;
    if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size,
                         nullptr) == CL_SUCCESS &&
        size > 0) {
      std::string binary(size, '\0');
      unsigned char *ptr = reinterpret_cast<unsigned char *>(binary.data());
      if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(ptr), &ptr,
                           nullptr) == CL_SUCCESS) {
        std::error_code ec;
        fs::create_directories(cacheDir, ec);
        std::ofstream(cached, std::ios::binary) << binary;
      }
    }
  }
  return program;
}
