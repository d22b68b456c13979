//===- Runtime.cpp - Run fbl bundles on OpenCL devices --------------------===//
//
// A session owns an OpenCL context, queue and program for one bundle, one
// memory object per manifest memory entry, and host-side copies of inputs.
// Layouts come from the manifest's algebra description, so packing here is
// exactly the addressing the compiler used.
//
//===----------------------------------------------------------------------===//

#define CL_TARGET_OPENCL_VERSION 120
#include "fbl_runtime/fbl_runtime.h"

#include "fbl/Layout/Layout.h"

#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using json = nlohmann::json;
using fbl::layout::Layout;

namespace {

thread_local std::string lastError;

fbl_status fail(const std::string &message) {
  lastError = message;
  return FBL_ERROR;
}

/// Errors inside the implementation are exceptions; the C API turns them
/// into FBL_ERROR and a message.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename Fn> fbl_status guarded(Fn fn) {
  try {
    fn();
    return FBL_OK;
  } catch (const Error &e) {
    return fail(e.what());
  } catch (const json::exception &e) {
    return fail(std::string("malformed manifest: ") + e.what());
  } catch (const std::exception &e) {
    return fail(e.what());
  }
}

const char *clErrorName(cl_int e) {
  switch (e) {
  case CL_DEVICE_NOT_FOUND:
    return "CL_DEVICE_NOT_FOUND";
  case CL_OUT_OF_RESOURCES:
    return "CL_OUT_OF_RESOURCES";
  case CL_OUT_OF_HOST_MEMORY:
    return "CL_OUT_OF_HOST_MEMORY";
  case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
  case CL_IMAGE_FORMAT_NOT_SUPPORTED:
    return "CL_IMAGE_FORMAT_NOT_SUPPORTED";
  case CL_BUILD_PROGRAM_FAILURE:
    return "CL_BUILD_PROGRAM_FAILURE";
  case CL_INVALID_VALUE:
    return "CL_INVALID_VALUE";
  case CL_INVALID_IMAGE_SIZE:
    return "CL_INVALID_IMAGE_SIZE";
  case CL_INVALID_KERNEL_NAME:
    return "CL_INVALID_KERNEL_NAME";
  case CL_INVALID_KERNEL_ARGS:
    return "CL_INVALID_KERNEL_ARGS";
  case CL_INVALID_WORK_GROUP_SIZE:
    return "CL_INVALID_WORK_GROUP_SIZE";
  case CL_INVALID_WORK_ITEM_SIZE:
    return "CL_INVALID_WORK_ITEM_SIZE";
  case CL_INVALID_GLOBAL_WORK_SIZE:
    return "CL_INVALID_GLOBAL_WORK_SIZE";
  case CL_INVALID_BINARY:
    return "CL_INVALID_BINARY";
  case CL_PLATFORM_NOT_FOUND_KHR:
    return "CL_PLATFORM_NOT_FOUND_KHR";
  default:
    return "OpenCL error";
  }
}

void check(cl_int err, const std::string &what) {
  if (err != CL_SUCCESS)
    throw Error(what + " failed: " + clErrorName(err) + " (" +
                std::to_string(err) + ")");
}

std::string deviceString(cl_device_id d, cl_device_info info) {
  size_t n = 0;
  clGetDeviceInfo(d, info, 0, nullptr, &n);
  std::string s(n, '\0');
  clGetDeviceInfo(d, info, n, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0')
    s.pop_back();
  return s;
}

template <typename T> T deviceValue(cl_device_id d, cl_device_info info) {
  T v{};
  clGetDeviceInfo(d, info, sizeof(T), &v, nullptr);
  return v;
}

struct DeviceEntry {
  cl_platform_id platform;
  cl_device_id device;
  std::string platformName, name;
  bool gpu;
};

std::vector<DeviceEntry> allDevices() {
  cl_uint numPlatforms = 0;
  cl_int err = clGetPlatformIDs(0, nullptr, &numPlatforms);
  if (err == CL_PLATFORM_NOT_FOUND_KHR || numPlatforms == 0)
    throw Error("no OpenCL platform found (is an ICD such as "
                "pocl-opencl-icd installed?)");
  check(err, "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(numPlatforms);
  check(clGetPlatformIDs(numPlatforms, platforms.data(), nullptr),
        "clGetPlatformIDs");
  std::vector<DeviceEntry> out;
  for (cl_platform_id p : platforms) {
    char pname[256] = {0};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof(pname) - 1, pname, nullptr);
    cl_uint n = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS)
      continue;
    std::vector<cl_device_id> devices(n);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, devices.data(), nullptr);
    for (cl_device_id d : devices) {
      cl_device_type type = deviceValue<cl_device_type>(d, CL_DEVICE_TYPE);
      out.push_back({p, d, pname, deviceString(d, CL_DEVICE_NAME),
                     (type & CL_DEVICE_TYPE_GPU) != 0});
    }
  }
  if (out.empty())
    throw Error("no OpenCL device found");
  return out;
}

DeviceEntry selectDevice(const char *selector) {
  std::vector<DeviceEntry> devices = allDevices();
  std::string s = selector ? selector : "";
  if (s.empty() || s == "gpu") {
    for (const DeviceEntry &d : devices)
      if (d.gpu)
        return d;
    if (s == "gpu")
      throw Error("no OpenCL GPU found");
    return devices.front();
  }
  if (s == "cpu") {
    for (const DeviceEntry &d : devices)
      if (!d.gpu)
        return d;
    throw Error("no OpenCL CPU device found");
  }
  if (std::all_of(s.begin(), s.end(), ::isdigit)) {
    size_t i = std::stoul(s);
    if (i >= devices.size())
      throw Error("no OpenCL device #" + s + " (there are " +
                  std::to_string(devices.size()) + ")");
    return devices[i];
  }
  for (const DeviceEntry &d : devices)
    if (d.name.find(s) != std::string::npos ||
        d.platformName.find(s) != std::string::npos)
      return d;
  throw Error("no OpenCL device matches '" + s + "'");
}

std::string readFile(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  if (!in)
    throw Error("cannot read " + p.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

size_t dtypeBytes(const std::string &dtype) {
  if (dtype == "f32" || dtype == "i32")
    return 4;
  if (dtype == "f16")
    return 2;
  if (dtype == "i64")
    return 8;
  throw Error("unsupported element type '" + dtype + "' in the manifest");
}

/// The layout algebra object a manifest tensor describes.
Layout layoutFromJson(const json &t, size_t rank) {
  const json &l = t.at("layout");
  if (l.at("kind") == "buffer")
    return Layout::buffer(static_cast<unsigned>(rank));
  std::vector<int64_t> tile = l.at("tile").get<std::vector<int64_t>>();
  Layout::AxisFactors axes;
  const char *names[] = {"x", "y", "layers"};
  for (unsigned a = 0; a < 3; ++a)
    for (const json &f : l.at(names[a]))
      axes[a].push_back({f.at(0).get<unsigned>(),
                         f.at(1).get<int>() ? fbl::layout::Level::Element
                                            : fbl::layout::Level::Tile});
  Layout layout = Layout::image(std::move(tile), l.at("packed").get<int>(),
                                std::move(axes));
  std::string err = layout.verify();
  if (!err.empty())
    throw Error("invalid layout in the manifest: " + err);
  return layout;
}

struct Tensor {
  std::vector<int64_t> shape;
  std::string dtype;
  int64_t memory;
  Layout layout;
  int64_t elements() const { return Layout::product(shape); }
  /// Bytes of the dense row-major host array.
  size_t hostBytes() const { return elements() * dtypeBytes(dtype); }
};

struct Memory {
  std::string storage, dtype;
  int64_t width, height, layers, bytes;
  cl_mem mem = nullptr;
  /// The whole image, for clEnqueueRead/WriteImage.
  std::array<size_t, 3> region() const {
    return {static_cast<size_t>(width), static_cast<size_t>(height),
            static_cast<size_t>(layers)};
  }
};

struct Kernel {
  std::string name;
  cl_kernel kernel = nullptr;
  std::vector<int64_t> args;
  size_t grid[3], workgroup[3];
  double profiledMs = 0.0;
};

} // namespace

struct fbl_session {
  DeviceEntry device;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  cl_program program = nullptr;
  std::vector<Tensor> tensors;
  std::vector<Memory> memories;
  std::vector<Kernel> kernels;
  std::vector<int64_t> inputTensors, outputTensors;
  std::vector<bool> inputIsParam, inputSet, inputIsStepCount;
  std::vector<int64_t> outputUpdates;
  double medianMs = 0.0;
  bool warmedUp = false;

  ~fbl_session() {
    for (Kernel &k : kernels)
      if (k.kernel)
        clReleaseKernel(k.kernel);
    for (Memory &m : memories)
      if (m.mem)
        clReleaseMemObject(m.mem);
    if (program)
      clReleaseProgram(program);
    if (queue)
      clReleaseCommandQueue(queue);
    if (context)
      clReleaseContext(context);
  }

  void open(const fs::path &dir, const char *selector);
  void build(const std::string &source);
  void allocate();
  void upload(size_t input, const void *data, size_t bytes);
  void download(size_t output, void *data, size_t bytes);
  void run(int iterations, bool profile);
  void trainStep(int64_t step, bool profile);
};

void fbl_session::open(const fs::path &dir, const char *selector) {
  if (!fs::is_directory(dir))
    throw Error("bundle '" + dir.string() + "' is not a directory");
  for (const char *f : {"kernels.cl", "manifest.json"})
    if (!fs::exists(dir / f))
      throw Error("bundle '" + dir.string() + "' has no " + f);
  json manifest;
  try {
    manifest = json::parse(readFile(dir / "manifest.json"));
  } catch (const json::parse_error &e) {
    throw Error(std::string("malformed manifest.json: ") + e.what());
  }
  if (manifest.value("format", "") != "fbl-bundle")
    throw Error("manifest.json is not an fbl bundle manifest");
  for (const json &m : manifest.at("memory"))
    memories.push_back({m.at("storage"), m.at("dtype"), m.at("width"),
                        m.at("height"), m.at("layers"), m.at("bytes")});
  for (const json &t : manifest.at("tensors")) {
    std::vector<int64_t> shape = t.at("shape").get<std::vector<int64_t>>();
    int64_t memory = t.at("memory");
    if (memory < 0 || memory >= static_cast<int64_t>(memories.size()))
      throw Error("tensor " + t.at("id").dump() + " names no memory object");
    tensors.push_back(
        {shape, t.at("dtype"), memory, layoutFromJson(t, shape.size())});
  }
  auto tensorIndex = [&](const json &j) {
    int64_t id = j.at("tensor");
    if (id < 0 || id >= static_cast<int64_t>(tensors.size()))
      throw Error("manifest names tensor " + std::to_string(id) +
                  ", which does not exist");
    return id;
  };
  for (const json &in : manifest.at("inputs")) {
    inputTensors.push_back(tensorIndex(in));
    inputIsParam.push_back(in.value("param", false));
    inputIsStepCount.push_back(in.value("step_count", false));
  }
  inputSet.assign(inputTensors.size(), false);
  for (const json &out : manifest.at("outputs")) {
    outputTensors.push_back(tensorIndex(out));
    int64_t updates = out.value("updates", int64_t(-1));
    if (updates >= static_cast<int64_t>(inputTensors.size()))
      throw Error("output " + out.at("result").dump() +
                  " updates an input that does not exist");
    outputUpdates.push_back(updates);
  }
  for (const json &k : manifest.at("kernels")) {
    Kernel kernel;
    kernel.name = k.at("name");
    for (const json &a : k.at("args"))
      kernel.args.push_back(a.at("memory"));
    for (int d = 0; d < 3; ++d) {
      kernel.grid[d] = k.at("grid").at(d);
      kernel.workgroup[d] = k.at("workgroup").at(d);
    }
    kernels.push_back(kernel);
  }

  device = selectDevice(selector);
  if (!deviceValue<cl_bool>(device.device, CL_DEVICE_IMAGE_SUPPORT))
    throw Error("device '" + device.name + "' has no image support");
  cl_int err;
  context = clCreateContext(nullptr, 1, &device.device, nullptr, nullptr, &err);
  check(err, "clCreateContext");
  queue = clCreateCommandQueue(context, device.device,
                               CL_QUEUE_PROFILING_ENABLE, &err);
  check(err, "clCreateCommandQueue");
  build(readFile(dir / "kernels.cl"));
  allocate();
}

void fbl_session::build(const std::string &source) {
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
  for (Kernel &k : kernels) {
    k.kernel = clCreateKernel(program, k.name.c_str(), &err);
    check(err, "clCreateKernel(" + k.name + ")");
  }
}

void fbl_session::allocate() {
  size_t maxW = deviceValue<size_t>(device.device, CL_DEVICE_IMAGE2D_MAX_WIDTH);
  size_t maxH =
      deviceValue<size_t>(device.device, CL_DEVICE_IMAGE2D_MAX_HEIGHT);
  size_t maxLayers =
      deviceValue<size_t>(device.device, CL_DEVICE_IMAGE_MAX_ARRAY_SIZE);
  for (size_t i = 0; i < memories.size(); ++i) {
    Memory &m = memories[i];
    cl_int err;
    if (m.storage == "buffer") {
      m.mem = clCreateBuffer(context, CL_MEM_READ_WRITE,
                             std::max<int64_t>(m.bytes, 4), nullptr, &err);
      check(err, "clCreateBuffer(memory " + std::to_string(i) + ")");
      continue;
    }
    if (static_cast<size_t>(m.width) > maxW ||
        static_cast<size_t>(m.height) > maxH ||
        (m.storage == "image2d_array" &&
         static_cast<size_t>(m.layers) > maxLayers))
      throw Error("image " + std::to_string(i) + " of " +
                  std::to_string(m.width) + "x" + std::to_string(m.height) +
                  "x" + std::to_string(m.layers) + " exceeds the limits of '" +
                  device.name + "' (" + std::to_string(maxW) + "x" +
                  std::to_string(maxH) + "x" + std::to_string(maxLayers) + ")");
    cl_image_format format = {CL_RGBA,
                              static_cast<cl_channel_type>(
                                  m.dtype == "f16" ? CL_HALF_FLOAT : CL_FLOAT)};
    cl_image_desc desc = {};
    desc.image_type = m.storage == "image2d_array" ? CL_MEM_OBJECT_IMAGE2D_ARRAY
                                                   : CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = m.width;
    desc.image_height = m.height;
    desc.image_array_size = m.layers;
    m.mem = clCreateImage(context, CL_MEM_READ_WRITE, &format, &desc, nullptr,
                          &err);
    check(err, "clCreateImage(memory " + std::to_string(i) + ", " +
                   std::to_string(m.width) + "x" + std::to_string(m.height) +
                   ")");
  }
  for (Kernel &k : kernels)
    for (size_t a = 0; a < k.args.size(); ++a) {
      if (k.args[a] < 0 || k.args[a] >= static_cast<int64_t>(memories.size()))
        throw Error("kernel " + k.name + " names no memory object " +
                    std::to_string(k.args[a]));
      check(
          clSetKernelArg(k.kernel, a, sizeof(cl_mem), &memories[k.args[a]].mem),
          "clSetKernelArg(" + k.name + ", " + std::to_string(a) + ")");
    }
}

void fbl_session::upload(size_t input, const void *data, size_t bytes) {
  if (input >= inputTensors.size())
    throw Error("no input #" + std::to_string(input) + " (the bundle has " +
                std::to_string(inputTensors.size()) + ")");
  const Tensor &t = tensors[inputTensors[input]];
  size_t want = t.hostBytes();
  if (bytes != want)
    throw Error("input #" + std::to_string(input) + " needs " +
                std::to_string(want) + " bytes, got " + std::to_string(bytes));
  Memory &m = memories[t.memory];
  if (m.storage == "buffer") {
    check(clEnqueueWriteBuffer(queue, m.mem, CL_TRUE, 0, bytes, data, 0,
                               nullptr, nullptr),
          "clEnqueueWriteBuffer");
  } else {
    if (t.dtype != "f32")
      throw Error("images take f32 host data");
    std::vector<float> texels(m.width * m.height * m.layers * 4);
    t.layout.pack(t.shape, static_cast<const float *>(data), texels.data());
    size_t origin[3] = {0, 0, 0};
    check(clEnqueueWriteImage(queue, m.mem, CL_TRUE, origin, m.region().data(),
                              0, 0, texels.data(), 0, nullptr, nullptr),
          "clEnqueueWriteImage");
  }
  inputSet[input] = true;
}

void fbl_session::download(size_t output, void *data, size_t bytes) {
  if (output >= outputTensors.size())
    throw Error("no output #" + std::to_string(output));
  const Tensor &t = tensors[outputTensors[output]];
  size_t want = t.hostBytes();
  if (bytes != want)
    throw Error("output #" + std::to_string(output) + " needs " +
                std::to_string(want) + " bytes, got " + std::to_string(bytes));
  Memory &m = memories[t.memory];
  if (m.storage == "buffer") {
    // A buffer view is row-major like its memory.
    check(clEnqueueReadBuffer(queue, m.mem, CL_TRUE, 0, bytes, data, 0, nullptr,
                              nullptr),
          "clEnqueueReadBuffer");
    return;
  }
  std::vector<float> texels(m.width * m.height * m.layers * 4);
  size_t origin[3] = {0, 0, 0};
  check(clEnqueueReadImage(queue, m.mem, CL_TRUE, origin, m.region().data(), 0,
                           0, texels.data(), 0, nullptr, nullptr),
        "clEnqueueReadImage");
  t.layout.unpack(t.shape, texels.data(), static_cast<float *>(data));
}

void fbl_session::run(int iterations, bool profile) {
  for (size_t i = 0; i < inputSet.size(); ++i)
    if (!inputSet[i])
      throw Error("input #" + std::to_string(i) + " was not set");
  std::vector<double> times;
  // One untimed launch first: drivers compile kernels lazily.
  if (!warmedUp) {
    for (Kernel &kernel : kernels)
      check(clEnqueueNDRangeKernel(
                queue, kernel.kernel, kernel.grid[2] > 1 ? 3 : 2, nullptr,
                kernel.grid, kernel.workgroup, 0, nullptr, nullptr),
            "launch of " + kernel.name);
    check(clFinish(queue), "clFinish");
    warmedUp = true;
  }
  std::vector<std::vector<double>> kernelMs(kernels.size());
  for (int it = 0; it < std::max(iterations, 1); ++it) {
    std::vector<cl_event> events(kernels.size(), nullptr);
    auto start = std::chrono::steady_clock::now();
    for (size_t k = 0; k < kernels.size(); ++k) {
      Kernel &kernel = kernels[k];
      cl_uint dims = kernel.grid[2] > 1 ? 3 : 2;
      check(clEnqueueNDRangeKernel(queue, kernel.kernel, dims, nullptr,
                                   kernel.grid, kernel.workgroup, 0, nullptr,
                                   profile ? &events[k] : nullptr),
            "launch of " + kernel.name);
    }
    check(clFinish(queue), "clFinish");
    times.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count());
    for (size_t k = 0; k < kernels.size(); ++k) {
      if (!events[k])
        continue;
      cl_ulong t0 = 0, t1 = 0;
      clGetEventProfilingInfo(events[k], CL_PROFILING_COMMAND_START, sizeof(t0),
                              &t0, nullptr);
      clGetEventProfilingInfo(events[k], CL_PROFILING_COMMAND_END, sizeof(t1),
                              &t1, nullptr);
      kernelMs[k].push_back((t1 - t0) / 1e6);
      clReleaseEvent(events[k]);
    }
  }
  // Medians over the iterations: one slow launch does not skew them.
  auto median = [](std::vector<double> &v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  for (size_t k = 0; k < kernels.size(); ++k)
    if (!kernelMs[k].empty())
      kernels[k].profiledMs = median(kernelMs[k]);
  medianMs = median(times);
}

void fbl_session::trainStep(int64_t step, bool profile) {
  if (std::none_of(outputUpdates.begin(), outputUpdates.end(),
                   [](int64_t u) { return u >= 0; }))
    throw Error("the bundle is not a training step: compile with "
                "optimizer=sgd or optimizer=adamw");
  float count = static_cast<float>(step);
  for (size_t i = 0; i < inputTensors.size(); ++i)
    if (inputIsStepCount[i])
      upload(i, &count, sizeof(count));
  run(1, profile);
  // Every update is read before any input is overwritten, through the host:
  // an output and the input it replaces may live in memories of different
  // kinds.
  std::vector<std::pair<int64_t, std::vector<uint8_t>>> updates;
  for (size_t j = 0; j < outputTensors.size(); ++j) {
    if (outputUpdates[j] < 0)
      continue;
    const Tensor &t = tensors[outputTensors[j]];
    std::vector<uint8_t> host(t.hostBytes());
    download(j, host.data(), host.size());
    updates.emplace_back(outputUpdates[j], std::move(host));
  }
  for (auto &[input, host] : updates)
    upload(input, host.data(), host.size());
}

//===----------------------------------------------------------------------===//
// C API
//===----------------------------------------------------------------------===//

extern "C" {

const char *fbl_last_error(void) { return lastError.c_str(); }

fbl_status fbl_list_devices(char *buffer, size_t size) {
  return guarded([&] {
    std::string s;
    std::vector<DeviceEntry> devices = allDevices();
    for (size_t i = 0; i < devices.size(); ++i)
      s += std::to_string(i) + ": " + devices[i].platformName + " / " +
           devices[i].name + " / " + (devices[i].gpu ? "GPU" : "CPU") + "\n";
    if (buffer && size)
      std::snprintf(buffer, size, "%s", s.c_str());
  });
}

fbl_status fbl_describe_device(const char *selector, char *buffer,
                               size_t size) {
  return guarded([&] {
    DeviceEntry d = selectDevice(selector);
    auto v = [&](cl_device_info info) {
      return std::to_string(deviceValue<size_t>(d.device, info));
    };
    std::string ext = deviceString(d.device, CL_DEVICE_EXTENSIONS);
    size_t wg = deviceValue<size_t>(d.device, CL_DEVICE_MAX_WORK_GROUP_SIZE);
    size_t wgX = 16, wgY = 16;
    while (wgX * wgY > wg)
      (wgX > wgY ? wgX : wgY) /= 2;
    std::string name = d.name;
    for (char &c : name)
      if (!isalnum(static_cast<unsigned char>(c)))
        c = '-';
    std::string s =
        "#fbl.target<\"" + name +
        "\", max_image_width = " + v(CL_DEVICE_IMAGE2D_MAX_WIDTH) +
        ", max_image_height = " + v(CL_DEVICE_IMAGE2D_MAX_HEIGHT) +
        ", max_image_layers = " + v(CL_DEVICE_IMAGE_MAX_ARRAY_SIZE) +
        ", max_buffer_bytes = " +
        std::to_string(
            deviceValue<cl_ulong>(d.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE)) +
        ", cache_line_texels = [4, 1], cache_bytes = 16384, cache_ways = 4"
        ", fp16 = " +
        (ext.find("cl_khr_fp16") != std::string::npos ? "true" : "false") +
        ", max_workgroup_size = " + std::to_string(wg) +
        ", preferred_workgroup = [" + std::to_string(wgX) + ", " +
        std::to_string(wgY) + "]>";
    if (buffer && size)
      std::snprintf(buffer, size, "%s", s.c_str());
  });
}

fbl_status fbl_session_open(const char *bundle_dir, const char *device,
                            fbl_session **session) {
  if (!bundle_dir || !session)
    return fail("fbl_session_open: null argument");
  auto s = std::make_unique<fbl_session>();
  fbl_status st = guarded([&] { s->open(bundle_dir, device); });
  if (st == FBL_OK)
    *session = s.release();
  return st;
}

void fbl_session_close(fbl_session *session) { delete session; }

const char *fbl_session_device_name(const fbl_session *s) {
  return s->device.name.c_str();
}

size_t fbl_session_num_inputs(const fbl_session *s) {
  return s->inputTensors.size();
}
size_t fbl_session_num_outputs(const fbl_session *s) {
  return s->outputTensors.size();
}

fbl_status fbl_session_tensor_info(const fbl_session *s, int output,
                                   size_t index, int64_t *shape, size_t *rank,
                                   const char **dtype, int *is_param) {
  return guarded([&] {
    const std::vector<int64_t> &list =
        output ? s->outputTensors : s->inputTensors;
    if (index >= list.size())
      throw Error(std::string("no ") + (output ? "output" : "input") + " #" +
                  std::to_string(index));
    const Tensor &t = s->tensors[list[index]];
    if (t.shape.size() > 8)
      throw Error("tensor of rank > 8");
    if (shape)
      std::copy(t.shape.begin(), t.shape.end(), shape);
    if (rank)
      *rank = t.shape.size();
    if (dtype)
      *dtype = t.dtype.c_str();
    if (is_param)
      *is_param = output ? 0 : static_cast<int>(s->inputIsParam[index]);
  });
}

int64_t fbl_session_output_updates(const fbl_session *s, size_t index) {
  return index < s->outputUpdates.size() ? s->outputUpdates[index] : -1;
}

int fbl_session_input_is_step_count(const fbl_session *s, size_t index) {
  return index < s->inputIsStepCount.size() && s->inputIsStepCount[index];
}

fbl_status fbl_session_set_input(fbl_session *s, size_t index, const void *data,
                                 size_t bytes) {
  return guarded([&] { s->upload(index, data, bytes); });
}

fbl_status fbl_session_run(fbl_session *s, int iterations, int profile) {
  return guarded([&] { s->run(iterations, profile != 0); });
}

fbl_status fbl_session_train_step(fbl_session *s, int64_t step, int profile) {
  return guarded([&] { s->trainStep(step, profile != 0); });
}

double fbl_session_median_ms(const fbl_session *s) { return s->medianMs; }

fbl_status fbl_session_get_output(fbl_session *s, size_t index, void *data,
                                  size_t bytes) {
  return guarded([&] { s->download(index, data, bytes); });
}

size_t fbl_session_num_kernels(const fbl_session *s) {
  return s->kernels.size();
}
const char *fbl_session_kernel_name(const fbl_session *s, size_t k) {
  return k < s->kernels.size() ? s->kernels[k].name.c_str() : "";
}
double fbl_session_kernel_ms(const fbl_session *s, size_t k) {
  return k < s->kernels.size() ? s->kernels[k].profiledMs : 0.0;
}

int64_t fbl_session_device_bytes(const fbl_session *s) {
  int64_t total = 0;
  for (const Memory &m : s->memories)
    total += m.bytes;
  return total;
}

} // extern "C"
