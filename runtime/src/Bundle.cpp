//===- Bundle.cpp - fbl bundles: manifest and program ---------------------===//
//
// Loading a bundle's manifest.json through the schema the compiler writes
// (fbl/Layout/BundleManifest.h), checking every id it names, and building
// kernels.cl with a binary cache, a large one as several programs at once.
//
//===----------------------------------------------------------------------===//

#include "Bundle.h"
#include "Error.h"

#include "fbl/Layout/BundleManifest.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string_view>
#include <thread>

#include <unistd.h>

namespace fs = std::filesystem;
namespace layout = fbl::layout;
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

/// Bounds on what a manifest may ask for, far above any real model and far
/// below where the arithmetic on them could overflow.
static constexpr int64_t kMaxElements = int64_t(1) << 40;
static constexpr int64_t kMaxGridDim = int64_t(1) << 31;
static constexpr int64_t kMaxGridItems = int64_t(1) << 40;

static Error manifestError(const std::string &what, const std::string &msg) {
  return Error("manifest.json: " + what + ": " + msg);
}

/// The product of `v` in `out`; false when it overflows or exceeds `max`.
/// Expects non-negative values.
static bool boundedProduct(const std::vector<int64_t> &v, int64_t max,
                           int64_t &out) {
  out = 1;
  for (int64_t x : v)
    if (__builtin_mul_overflow(out, x, &out) || out > max)
      return false;
  return true;
}

/// Empty when a tensor of `shape` and `dtype` in `layout` fits in `memory`,
/// else what does not fit. Expects a verified layout and a bounded shape;
/// computes the extents without overflow.
static std::string checkFits(const Layout &l, const std::vector<int64_t> &shape,
                             const std::string &dtype, const Memory &memory) {
  bool buffer = memory.storage == layout::StorageKind::Buffer;
  if (l.isBuffer() != buffer)
    return std::string("in a ") + (l.isBuffer() ? "buffer" : "image") +
           " layout cannot live in " +
           manifest::storageKindName(memory.storage);
  if (buffer) {
    std::optional<manifest::ElementType> type =
        manifest::parseElementType(dtype);
    if (!type)
      return {};
    int64_t bytes = Layout::product(shape) *
                    static_cast<int64_t>(manifest::elementTypeBytes(*type));
    if (bytes > memory.bytes)
      return "needs " + std::to_string(bytes) + " bytes, more than the " +
             std::to_string(memory.bytes);
    return {};
  }
  int64_t ext[layout::kNumAxes] = {1, 1, 1};
  for (unsigned a = 0; a < layout::kNumAxes; ++a)
    for (const layout::Factor &f : l.axes()[a])
      if (__builtin_mul_overflow(ext[a], l.factorExtent(shape, f), &ext[a]) ||
          ext[a] > kMaxElements)
        return "needs an image larger than 2^40 texels, more than the " +
               std::to_string(memory.width) + "x" +
               std::to_string(memory.height) + "x" +
               std::to_string(memory.layers);
  if (ext[0] > memory.width || ext[1] > memory.height || ext[2] > memory.layers)
    return "needs an image of " + std::to_string(ext[0]) + "x" +
           std::to_string(ext[1]) + "x" + std::to_string(ext[2]) +
           ", more than the " + std::to_string(memory.width) + "x" +
           std::to_string(memory.height) + "x" + std::to_string(memory.layers);
  return {};
}

Bundle Bundle::load(const fs::path &dir) {
  if (!fs::is_directory(dir))
    throw Error("bundle '" + dir.string() + "' is not a directory");
  for (const char *f : {"kernels.cl", "manifest.json"})
    if (!fs::exists(dir / f))
      throw Error("bundle '" + dir.string() + "' has no " + f);
  return parse(readFile(dir / "manifest.json"));
}

Bundle Bundle::parse(const std::string &manifestText) {
  Json json;
  try {
    json = Json::parse(manifestText);
  } catch (const Json::parse_error &e) {
    throw Error(std::string("malformed manifest.json: ") + e.what());
  }
  if (!json.is_object() || json.value(key::format, "") != manifest::kFormatName)
    throw Error("manifest.json is not an fbl bundle manifest");
  std::string versionError = manifest::checkFormatVersion(json);
  if (!versionError.empty())
    throw Error(versionError);
  std::string integerError = manifest::checkIntegers(json);
  if (!integerError.empty())
    throw Error(integerError);

  Bundle b;
  const Json &memories = json.at(key::memory);
  for (size_t i = 0; i < memories.size(); ++i) {
    const Json &m = memories[i];
    std::string what = "memory " + std::to_string(i);
    std::string storage = m.at(key::storage).get<std::string>();
    std::optional<layout::StorageKind> kind =
        manifest::parseStorageKind(storage);
    if (!kind)
      throw Error("manifest.json: unknown storage kind '" + storage + "'");
    Memory memory{*kind,
                  m.at(key::dtype),
                  m.at(key::width).get<int64_t>(),
                  m.at(key::height).get<int64_t>(),
                  m.at(key::layers).get<int64_t>(),
                  m.at(key::bytes).get<int64_t>()};
    if (memory.bytes < 0 || memory.bytes > kMaxElements * 8)
      throw manifestError(what, "size of " + std::to_string(memory.bytes) +
                                    " bytes is out of range");
    if (*kind != layout::StorageKind::Buffer) {
      int64_t texels = 0;
      if (memory.width < 1 || memory.height < 1 || memory.layers < 1 ||
          !boundedProduct({memory.width, memory.height, memory.layers, 4},
                          kMaxElements, texels))
        throw manifestError(what, "image of " + std::to_string(memory.width) +
                                      "x" + std::to_string(memory.height) +
                                      "x" + std::to_string(memory.layers) +
                                      " is out of range");
      if (memory.dtype !=
              manifest::elementTypeName(manifest::ElementType::F32) &&
          memory.dtype != manifest::elementTypeName(manifest::ElementType::F16))
        throw manifestError(what, "an image stores f32 or f16, not '" +
                                      memory.dtype + "'");
    }
    b.memories.push_back(memory);
  }
  const Json &tensors = json.at(key::tensors);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Json &t = tensors[i];
    std::string what = "tensor " + std::to_string(i);
    std::vector<int64_t> shape = t.at(key::shape).get<std::vector<int64_t>>();
    for (int64_t d : shape)
      if (d < 1)
        throw manifestError(what, "shape " + shapeString(shape) +
                                      " has a non-positive dim");
    int64_t elements = 0;
    if (!boundedProduct(shape, kMaxElements, elements))
      throw manifestError(what, "shape " + shapeString(shape) +
                                    " has more than 2^40 elements");
    int64_t memory = t.at(key::memory);
    if (memory < 0 || memory >= static_cast<int64_t>(b.memories.size()))
      throw Error("tensor " + t.at(key::id).dump() + " names no memory object");
    std::string error;
    std::optional<Layout> layout = manifest::layoutFromJson(
        t.at(key::layout), static_cast<unsigned>(shape.size()), error);
    if (!layout)
      throw Error("invalid layout in the manifest: " + error);
    error = layout->verifyShape(shape);
    if (!error.empty())
      throw manifestError(what, "layout " + layout->str() + ": " + error);
    std::string dtype = t.at(key::dtype);
    error = checkFits(*layout, shape, dtype, b.memories[memory]);
    if (!error.empty())
      throw manifestError(what, "shape " + shapeString(shape) + " " + error +
                                    " of memory " + std::to_string(memory));
    b.tensors.push_back({shape, dtype, memory, *layout});
  }
  auto tensorIndex = [&](const Json &j) {
    int64_t id = j.at(key::tensor);
    if (id < 0 || id >= static_cast<int64_t>(b.tensors.size()))
      throw Error("manifest names tensor " + std::to_string(id) +
                  ", which does not exist");
    return id;
  };
  for (const Json &in : json.at(key::inputs)) {
    std::string what = "input " + std::to_string(b.inputTensors.size());
    b.inputTensors.push_back(tensorIndex(in));
    std::string name = in.value(key::name, "");
    if (in.contains(key::name) && name.empty())
      throw manifestError(what, "empty name");
    if (!name.empty() && b.findInput(name) >= 0)
      throw manifestError(what, "the name '" + name + "' is input " +
                                    std::to_string(b.findInput(name)) +
                                    "'s already");
    b.inputNames.push_back(name);
    std::string init = in.value(key::init, "");
    std::string error;
    if (in.contains(key::init) && !manifest::parseInitSpec(init, error))
      throw manifestError(what, error);
    b.inputInits.push_back(init);
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
    b.outputNames.push_back(out.value(key::name, ""));
    int64_t updates = out.value(key::updates, int64_t(-1));
    if (updates >= static_cast<int64_t>(b.inputTensors.size()))
      throw Error("output " + out.at(key::result).dump() +
                  " updates an input that does not exist");
    b.outputUpdates.push_back(updates);
  }
  const Json &kernels = json.at(key::kernels);
  for (size_t i = 0; i < kernels.size(); ++i) {
    const Json &k = kernels[i];
    Kernel kernel;
    kernel.name = k.at(key::name);
    kernel.function = k.value(key::function, kernel.name);
    std::string what = "kernel " + std::to_string(i) + " (" + kernel.name + ")";
    if (auto v = k.find(key::variants); v != k.end()) {
      if (!v->is_array())
        throw manifestError(what, "variants must be a list of functions");
      for (const Json &f : *v) {
        if (!f.is_string() || f.get<std::string>().empty())
          throw manifestError(what, "variants must be a list of functions");
        std::string function = f;
        if (function == kernel.function ||
            std::find(kernel.variants.begin(), kernel.variants.end(),
                      function) != kernel.variants.end())
          throw manifestError(what,
                              "function '" + function + "' is named twice");
        kernel.variants.push_back(function);
      }
    }
    const Json &args = k.at(key::args);
    for (size_t a = 0; a < args.size(); ++a) {
      int64_t memory = args[a].at(key::memory);
      if (memory < 0 || memory >= static_cast<int64_t>(b.memories.size()))
        throw manifestError(
            what, "argument " + std::to_string(a) + " names memory " +
                      std::to_string(memory) + ", which does not exist");
      kernel.args.push_back(memory);
      kernel.writes.push_back(args[a].value(key::access, "") ==
                              manifest::kAccessWrite);
    }
    std::vector<int64_t> grid(3), workgroup(3);
    for (int d = 0; d < 3; ++d) {
      grid[d] = k.at(key::grid).at(d);
      workgroup[d] = k.at(key::workgroup).at(d);
    }
    int64_t items = 0;
    for (int d = 0; d < 3; ++d)
      if (grid[d] < 1 || grid[d] > kMaxGridDim || workgroup[d] < 1 ||
          workgroup[d] > grid[d] || grid[d] % workgroup[d] != 0)
        throw manifestError(what,
                            "grid " + shapeString(grid) + " with work-group " +
                                shapeString(workgroup) + " is out of range");
    if (!boundedProduct(grid, kMaxGridItems, items))
      throw manifestError(what, "grid " + shapeString(grid) +
                                    " has more than 2^40 work-items");
    for (int d = 0; d < 3; ++d) {
      kernel.grid[d] = static_cast<size_t>(grid[d]);
      kernel.workgroup[d] = static_cast<size_t>(workgroup[d]);
    }
    b.kernels.push_back(kernel);
  }
  return b;
}

std::string Bundle::inputLabel(size_t input) const {
  if (input < inputNames.size() && !inputNames[input].empty())
    return "input '" + inputNames[input] + "' (arg " + std::to_string(input) +
           ")";
  return "input arg" + std::to_string(input);
}

int64_t Bundle::findInput(const std::string &name) const {
  for (size_t i = 0; i < inputNames.size(); ++i)
    if (inputNames[i] == name)
      return static_cast<int64_t>(i);
  return -1;
}

/// Copies the rows of a texel array of `from`'s extents into one of `to`'s
/// (or back, with `toMemory` false): a tensor may take less of an image than
/// the memory object's width and height, and rows follow the memory's pitch.
static void copyRows(const layout::Extents &tensor, const Memory &memory,
                     const float *from, float *to, bool toMemory) {
  size_t row = static_cast<size_t>(tensor.width) * layout::kTexelChannels;
  for (int64_t l = 0; l < tensor.layers; ++l)
    for (int64_t y = 0; y < tensor.height; ++y) {
      size_t t = static_cast<size_t>((l * tensor.height + y) * tensor.width) *
                 layout::kTexelChannels;
      size_t m = static_cast<size_t>((l * memory.height + y) * memory.width) *
                 layout::kTexelChannels;
      if (toMemory)
        std::copy(from + t, from + t + row, to + m);
      else
        std::copy(from + m, from + m + row, to + t);
    }
}

std::vector<float> Bundle::packTexels(const Tensor &t,
                                      const float *data) const {
  const Memory &m = memories[t.memory];
  std::vector<float> texels(m.width * m.height * m.layers *
                            layout::kTexelChannels);
  layout::Extents e = t.layout.extents(t.shape);
  if (e.width == m.width && e.height == m.height) {
    t.layout.pack(t.shape, data, texels.data());
    return texels;
  }
  std::vector<float> packed(e.elements());
  t.layout.pack(t.shape, data, packed.data());
  copyRows(e, m, packed.data(), texels.data(), /*toMemory=*/true);
  return texels;
}

void Bundle::unpackTexels(const Tensor &t, const std::vector<float> &texels,
                          float *data) const {
  const Memory &m = memories[t.memory];
  layout::Extents e = t.layout.extents(t.shape);
  if (e.width == m.width && e.height == m.height) {
    t.layout.unpack(t.shape, texels.data(), data);
    return;
  }
  std::vector<float> packed(e.elements());
  copyRows(e, m, texels.data(), packed.data(), /*toMemory=*/false);
  t.layout.unpack(t.shape, packed.data(), data);
}

/// The program binary cache: a file per source, device and driver holding a
/// header (magic, binary size, FNV-1a hash of the binary) and the binary.
/// Written to a temporary file and renamed, and checked on load, so a
/// truncated or corrupt file is rebuilt instead of handed to the driver.
static constexpr char kCacheMagic[8] = {'F', 'B', 'L', 'B', 'I', 'N', '0', '1'};
static constexpr const char *kBuildOptions =
    "-cl-std=CL1.2 -cl-kernel-arg-info";

static uint64_t fnv1a(const std::string &data, size_t from) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = from; i < data.size(); ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 1099511628211ull;
  }
  return h;
}

static constexpr size_t kCacheHeader = sizeof(kCacheMagic) + 2 * 8;

/// The binary in a cache file's contents; empty when it is no intact cache
/// file.
static std::string cachedBinary(const std::string &file) {
  if (file.size() <= kCacheHeader ||
      file.compare(0, sizeof(kCacheMagic), kCacheMagic, sizeof(kCacheMagic)))
    return {};
  uint64_t size, hash;
  std::memcpy(&size, file.data() + sizeof(kCacheMagic), 8);
  std::memcpy(&hash, file.data() + sizeof(kCacheMagic) + 8, 8);
  if (size != file.size() - kCacheHeader || hash != fnv1a(file, kCacheHeader))
    return {};
  return file.substr(kCacheHeader);
}

/// Best effort: a cache that cannot be written only costs a rebuild.
static void writeCache(const fs::path &cached, const std::string &binary) {
  std::error_code ec;
  fs::create_directories(cached.parent_path(), ec);
  std::string file(kCacheMagic, sizeof(kCacheMagic));
  uint64_t size = binary.size();
  uint64_t hash = fnv1a(binary, 0);
  file.append(reinterpret_cast<const char *>(&size), 8);
  file.append(reinterpret_cast<const char *>(&hash), 8);
  file += binary;
  fs::path tmp = cached;
  tmp += ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out << file;
    out.flush();
    if (!out) {
      out.close();
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, cached, ec);
  if (ec)
    fs::remove(tmp, ec);
}

/// The binary cache file for `source` built with `options` on `device`
/// (keyed by source, build options, device and driver), or none where
/// programs skip the cache: FBL_PROGRAM_CACHE=0 or 1 decides, otherwise
/// every driver but PoCL. PoCL keeps its own cache of each kernel's compiled
/// work-group functions, and asking it for a program's binary makes it
/// compile every kernel once more, for a local size no launch uses: twice
/// the compile time on a cold cache.
static std::optional<fs::path> cacheFile(const DeviceEntry &device,
                                         const std::string &source,
                                         const std::string &options) {
  const char *choice = std::getenv("FBL_PROGRAM_CACHE");
  bool wanted = choice && *choice
                    ? std::string_view(choice) != "0"
                    : device.platformName.find("Portable Computing Language") ==
                          std::string::npos;
  if (!wanted)
    return std::nullopt;
  std::string key = source + options + device.name +
                    deviceString(device.device, CL_DRIVER_VERSION);
  size_t hash = std::hash<std::string>{}(key);
  const char *home = std::getenv("XDG_CACHE_HOME");
  fs::path cacheDir =
      home ? fs::path(home) / "fbl"
           : fs::path(std::getenv("HOME") ? std::getenv("HOME") : "/tmp") /
                 ".cache" / "fbl";
  return cacheDir / (std::to_string(hash) + ".bin");
}

cl_program fbl::runtime::buildProgram(cl_context context,
                                      const DeviceEntry &device,
                                      const std::string &source) {
  // FBL_OPENCL_BUILD_OPTIONS adds options for the driver (a developer's
  // knob: register reports, register caps); the build log is then printed.
  const char *extra = std::getenv("FBL_OPENCL_BUILD_OPTIONS");
  std::string options = kBuildOptions;
  if (extra && *extra)
    options += std::string(" ") + extra;
  std::optional<fs::path> cached = cacheFile(device, source, options);
  cl_program program = nullptr;
  cl_int err;
  std::error_code ec;
  if (cached && fs::is_regular_file(*cached, ec)) {
    std::string binary;
    try {
      binary = cachedBinary(readFile(*cached));
    } catch (const Error &) {
    }
    if (!binary.empty()) {
      const unsigned char *bytes =
          reinterpret_cast<const unsigned char *>(binary.data());
      size_t size = binary.size();
      cl_int status;
      program = clCreateProgramWithBinary(context, 1, &device.device, &size,
                                          &bytes, &status, &err);
      if (err != CL_SUCCESS || status != CL_SUCCESS ||
          clBuildProgram(program, 1, &device.device, options.c_str(), nullptr,
                         nullptr) != CL_SUCCESS) {
        if (program)
          clReleaseProgram(program);
        program = nullptr;
      }
    }
  }
  if (!program) {
    const char *src = source.c_str();
    size_t len = source.size();
    program = clCreateProgramWithSource(context, 1, &src, &len, &err);
    check(err, "clCreateProgramWithSource");
    err = clBuildProgram(program, 1, &device.device, options.c_str(), nullptr,
                         nullptr);
    size_t n = 0;
    clGetProgramBuildInfo(program, device.device, CL_PROGRAM_BUILD_LOG, 0,
                          nullptr, &n);
    std::string log(n, '\0');
    clGetProgramBuildInfo(program, device.device, CL_PROGRAM_BUILD_LOG, n,
                          log.data(), nullptr);
    if (err == CL_SUCCESS && extra && *extra)
      std::fprintf(stderr, "OpenCL build log (%s):\n%s\n", options.c_str(),
                   log.c_str());
    if (err != CL_SUCCESS) {
      clReleaseProgram(program);
      throw Error("OpenCL build of kernels.cl failed on '" + device.name +
                  "': " + clErrorName(err) + "\n" + log);
    }
    size_t size = 0;
    if (cached &&
        clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size,
                         nullptr) == CL_SUCCESS &&
        size > 0) {
      std::string binary(size, '\0');
      unsigned char *ptr = reinterpret_cast<unsigned char *>(binary.data());
      if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(ptr), &ptr,
                           nullptr) == CL_SUCCESS)
        writeCache(*cached, binary);
    }
  }
  return program;
}

std::vector<std::string>
fbl::runtime::splitKernelSource(const std::string &source, unsigned parts) {
  // Where each function begins: its constant tables' first line, else its
  // `__kernel` line (a line of the top level starts with either).
  std::vector<size_t> starts;
  bool inTables = false;
  for (size_t at = 0; at < source.size();) {
    std::string_view line(source.data() + at,
                          std::min(source.find('\n', at), source.size()) - at);
    bool table = line.rfind("__constant ", 0) == 0 &&
                 line.rfind("__constant sampler_t", 0) != 0;
    bool kernel = line.rfind("__kernel ", 0) == 0;
    if ((table || kernel) && !inTables)
      starts.push_back(at);
    inTables = table || (inTables && !kernel);
    at += line.size() + 1;
  }
  if (parts < 2 || starts.empty())
    return {source};
  std::string preamble = source.substr(0, starts.front());
  starts.push_back(source.size());
  std::vector<std::string> out;
  size_t from = starts.front();
  for (size_t i = 1; i < starts.size(); ++i) {
    // Close the part once it holds its share of what is left.
    size_t left = parts - out.size();
    size_t share = (source.size() - from + left - 1) / left;
    if (starts[i] - from >= share || i + 1 == starts.size()) {
      out.push_back(preamble + source.substr(from, starts[i] - from));
      from = starts[i];
    }
  }
  return out;
}

std::vector<cl_program> fbl::runtime::buildPrograms(cl_context context,
                                                    const DeviceEntry &device,
                                                    const std::string &source) {
  constexpr size_t kPartBytes = size_t(1) << 20;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  unsigned parts = std::min<size_t>(
      std::min(threads, 16u), (source.size() + kPartBytes - 1) / kPartBytes);
  if (const char *asked = std::getenv("FBL_PROGRAM_PARTS"); asked && *asked) {
    char *end = nullptr;
    long n = std::strtol(asked, &end, 10);
    if (*end || n < 1 || n > 4096)
      throw Error(std::string("FBL_PROGRAM_PARTS must be the number of "
                              "programs to build kernels.cl as (1 to 4096), "
                              "got '") +
                  asked + "'");
    parts = static_cast<unsigned>(n);
  }
  std::vector<std::string> sources = splitKernelSource(source, parts);
  std::vector<cl_program> programs(sources.size(), nullptr);
  std::vector<std::exception_ptr> errors(sources.size());
  auto build = [&](size_t i) {
    try {
      programs[i] = buildProgram(context, device, sources[i]);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  // As many threads as the host runs at once, each taking the next part.
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < sources.size();)
      build(i);
  };
  std::vector<std::thread> workers;
  for (size_t t = 1; t < std::min<size_t>(sources.size(), threads); ++t)
    workers.emplace_back(work);
  work();
  for (std::thread &t : workers)
    t.join();
  for (size_t i = 0; i < sources.size(); ++i)
    if (errors[i]) {
      for (cl_program p : programs)
        if (p)
          clReleaseProgram(p);
      std::rethrow_exception(errors[i]);
    }
  return programs;
}
