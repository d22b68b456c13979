//===- Session.cpp - A bundle opened on a device --------------------------===//
//
// Memory objects, host data in and out (packed through the manifest's
// layouts, so packing here is exactly the addressing the compiler used),
// timed runs, the training step, and weights in and out by input name.
//
//===----------------------------------------------------------------------===//

#include "Session.h"
#include "Error.h"
#include "Initializers.h"
#include "SafeTensors.h"

#include "fbl/Layout/BundleManifest.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>

namespace fs = std::filesystem;
namespace manifest = fbl::manifest;
using fbl::layout::StorageKind;
using namespace fbl::runtime;

fbl_session::~fbl_session() {
  for (Kernel &k : kernels)
    for (cl_kernel c : k.candidates)
      clReleaseKernel(c);
  for (Memory &m : memories)
    if (m.mem)
      clReleaseMemObject(m.mem);
  for (cl_program p : programs)
    clReleaseProgram(p);
  if (queue)
    clReleaseCommandQueue(queue);
  if (profilingQueue)
    clReleaseCommandQueue(profilingQueue);
  if (context)
    clReleaseContext(context);
}

void fbl_session::open(const fs::path &dir, const char *selector) {
  static_cast<Bundle &>(*this) = Bundle::load(dir);
  inputSet.assign(inputTensors.size(), false);
  updateOnDevice.assign(outputTensors.size(), false);
  for (size_t j = 0; j < outputTensors.size(); ++j)
    updateOnDevice[j] =
        outputUpdates[j] >= 0 &&
        storedAlike(outputTensors[j], inputTensors[outputUpdates[j]]);
  device = selectDevice(selector);
  if (!deviceValue<cl_bool>(device.device, CL_DEVICE_IMAGE_SUPPORT))
    throw Error("device '" + device.name + "' has no image support");
  cl_int err;
  context = clCreateContext(nullptr, 1, &device.device, nullptr, nullptr, &err);
  check(err, "clCreateContext");
  queue = clCreateCommandQueue(context, device.device, 0, &err);
  check(err, "clCreateCommandQueue");
  programs = buildPrograms(context, device, readFile(dir / "kernels.cl"));
  for (size_t i = 0; i < kernels.size(); ++i) {
    Kernel &k = kernels[i];
    auto create = [&](const std::string &function) {
      // The function is in one of the programs kernels.cl was built as.
      for (cl_program program : programs) {
        cl_kernel kernel = clCreateKernel(program, function.c_str(), &err);
        if (err == CL_INVALID_KERNEL_NAME)
          continue;
        check(err, "clCreateKernel(" + function + ")");
        return kernel;
      }
      throw Error("manifest.json: kernel " + std::to_string(i) + " (" + k.name +
                  "): kernels.cl has no function '" + function + "'");
    };
    for (size_t c = 0; c <= k.variants.size(); ++c)
      k.candidates.push_back(create(k.candidateFunction(c)));
  }
  checkKernels();
  allocate();
}

/// The parameter type `kind` needs in kernels.cl.
static bool typeMatches(StorageKind kind, const std::string &type) {
  switch (kind) {
  case StorageKind::Buffer:
    return type.find('*') != std::string::npos;
  case StorageKind::Image2D:
    return type == "image2d_t";
  case StorageKind::Image2DArray:
    return type == "image2d_array_t";
  }
  return false;
}

void fbl_session::checkKernels() const {
  cl_ulong maxAlloc =
      deviceValue<cl_ulong>(device.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  for (size_t i = 0; i < memories.size(); ++i)
    if (memories[i].storage == StorageKind::Buffer && maxAlloc > 0 &&
        static_cast<cl_ulong>(memories[i].bytes) > maxAlloc)
      throw Error("manifest.json: memory " + std::to_string(i) +
                  ": buffer of " + std::to_string(memories[i].bytes) +
                  " bytes exceeds the limit of '" + device.name + "' (" +
                  std::to_string(maxAlloc) + ")");
  ::fbl::target::KernelArgumentLimits argumentLimits =
      deviceArgumentLimits(device.device);
  size_t maxGroup =
      deviceValue<size_t>(device.device, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  size_t maxItems[3] = {0, 0, 0};
  clGetDeviceInfo(device.device, CL_DEVICE_MAX_WORK_ITEM_SIZES,
                  sizeof(maxItems), maxItems, nullptr);
  for (size_t i = 0; i < kernels.size(); ++i) {
    const Kernel &k = kernels[i];
    std::string what =
        "manifest.json: kernel " + std::to_string(i) + " (" + k.name + "): ";
    size_t group = k.workgroup[0] * k.workgroup[1] * k.workgroup[2];
    bool over = maxGroup > 0 && group > maxGroup;
    for (int d = 0; d < 3; ++d)
      over |= maxItems[d] > 0 && k.workgroup[d] > maxItems[d];
    if (over)
      throw Error(what + "work-group " + std::to_string(k.workgroup[0]) + "x" +
                  std::to_string(k.workgroup[1]) + "x" +
                  std::to_string(k.workgroup[2]) + " exceeds the limits of '" +
                  device.name + "' (" + std::to_string(maxGroup) +
                  " work-items)");
    // A driver may build a kernel past these and fault the queue when it
    // runs (NVIDIA's, with more than 32 write images).
    ::fbl::target::KernelArguments arguments;
    for (size_t a = 0; a < k.args.size(); ++a)
      (memories[k.args[a]].storage == StorageKind::Buffer ? arguments.buffers
       : k.writes[a] ? arguments.writeImages
                     : arguments.readImages)++;
    if (std::string over =
            ::fbl::target::exceededArguments(arguments, argumentLimits);
        !over.empty())
      throw Error(what + "takes " + over + " on '" + device.name +
                  "': compile the bundle for this device's target "
                  "(fbl-run --print-target)");
    // The function and each variant take the manifest's arguments.
    for (size_t c = 0; c < k.candidates.size(); ++c) {
      cl_kernel kernel = k.candidates[c];
      const std::string &function = k.candidateFunction(c);
      std::string in = c ? " (variant " + function + ")" : "";
      cl_uint numArgs = 0;
      check(clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof(numArgs),
                            &numArgs, nullptr),
            "clGetKernelInfo(" + function + ")");
      if (numArgs != k.args.size())
        throw Error(what + std::to_string(k.args.size()) +
                    " arguments, kernels.cl declares " +
                    std::to_string(numArgs) + in);
      for (size_t a = 0; a < k.args.size(); ++a) {
        // Argument types need -cl-kernel-arg-info; without them (a driver
        // that drops them from binaries) only the count is checked.
        size_t n = 0;
        if (clGetKernelArgInfo(kernel, a, CL_KERNEL_ARG_TYPE_NAME, 0, nullptr,
                               &n) != CL_SUCCESS)
          break;
        std::string type(n, '\0');
        if (clGetKernelArgInfo(kernel, a, CL_KERNEL_ARG_TYPE_NAME, n,
                               type.data(), nullptr) != CL_SUCCESS)
          break;
        type.resize(std::strlen(type.c_str()));
        StorageKind kind = memories[k.args[a]].storage;
        if (!typeMatches(kind, type))
          throw Error(what + "argument " + std::to_string(a) + " is memory " +
                      std::to_string(k.args[a]) + " (" +
                      manifest::storageKindName(kind) +
                      "), but kernels.cl takes " + type + in);
      }
    }
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
    if (m.storage == StorageKind::Buffer) {
      m.mem = clCreateBuffer(context, CL_MEM_READ_WRITE,
                             std::max<int64_t>(m.bytes, 4), nullptr, &err);
      check(err, "clCreateBuffer(memory " + std::to_string(i) + ")");
      continue;
    }
    if (static_cast<size_t>(m.width) > maxW ||
        static_cast<size_t>(m.height) > maxH ||
        (m.storage == StorageKind::Image2DArray &&
         static_cast<size_t>(m.layers) > maxLayers))
      throw Error("image " + std::to_string(i) + " of " +
                  std::to_string(m.width) + "x" + std::to_string(m.height) +
                  "x" + std::to_string(m.layers) + " exceeds the limits of '" +
                  device.name + "' (" + std::to_string(maxW) + "x" +
                  std::to_string(maxH) + "x" + std::to_string(maxLayers) + ")");
    cl_image_format format = {
        CL_RGBA,
        static_cast<cl_channel_type>(
            m.dtype == manifest::elementTypeName(manifest::ElementType::F16)
                ? CL_HALF_FLOAT
                : CL_FLOAT)};
    cl_image_desc desc = {};
    desc.image_type = m.storage == StorageKind::Image2DArray
                          ? CL_MEM_OBJECT_IMAGE2D_ARRAY
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
      for (cl_kernel c : k.candidates)
        check(clSetKernelArg(c, a, sizeof(cl_mem), &memories[k.args[a]].mem),
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
    throw Error(inputLabel(input) + " needs " + std::to_string(want) +
                " bytes, got " + std::to_string(bytes));
  checkRange(input, data);
  Memory &m = memories[t.memory];
  if (m.storage == StorageKind::Buffer) {
    check(clEnqueueWriteBuffer(queue, m.mem, CL_TRUE, 0, bytes, data, 0,
                               nullptr, nullptr),
          "clEnqueueWriteBuffer");
  } else {
    if (t.dtype != manifest::elementTypeName(manifest::ElementType::F32))
      throw Error(inputLabel(input) + ": images take f32 host data");
    std::vector<float> texels = packTexels(t, static_cast<const float *>(data));
    size_t origin[3] = {0, 0, 0};
    // A CL_HALF_FLOAT image takes half texels from the host.
    std::vector<uint16_t> half;
    if (isHalf(m)) {
      half.resize(texels.size());
      std::transform(texels.begin(), texels.end(), half.begin(),
                     safetensors::floatToHalf);
    }
    const void *host = isHalf(m) ? static_cast<const void *>(half.data())
                                 : static_cast<const void *>(texels.data());
    check(clEnqueueWriteImage(queue, m.mem, CL_TRUE, origin, m.region().data(),
                              0, 0, host, 0, nullptr, nullptr),
          "clEnqueueWriteImage");
  }
  inputSet[input] = true;
}

void fbl_session::checkRange(size_t input, const void *data) const {
  const InputRange &range = inputRanges[input];
  if (!range.present)
    return;
  const Tensor &t = tensors[inputTensors[input]];
  bool i64 = t.dtype == manifest::elementTypeName(manifest::ElementType::I64);
  if (!i64 && t.dtype != manifest::elementTypeName(manifest::ElementType::I32))
    return;
  for (int64_t e = 0, n = t.elements(); e < n; ++e) {
    int64_t v;
    if (i64) {
      std::memcpy(&v, static_cast<const char *>(data) + 8 * e, 8);
    } else {
      int32_t v32;
      std::memcpy(&v32, static_cast<const char *>(data) + 4 * e, 4);
      v = v32;
    }
    if (v >= range.min && v <= range.max)
      continue;
    // Half-open like Python's range where the bound allows it.
    std::string bounds = range.max < std::numeric_limits<int64_t>::max()
                             ? "[" + std::to_string(range.min) + ", " +
                                   std::to_string(range.max + 1) + ")"
                             : "[" + std::to_string(range.min) + ", " +
                                   std::to_string(range.max) + "]";
    throw Error(inputLabel(input) + ": element " + std::to_string(e) + " is " +
                std::to_string(v) + ", outside " + bounds +
                (range.message.empty() ? "" : ": " + range.message));
  }
}

void fbl_session::download(size_t output, void *data, size_t bytes) {
  if (output >= outputTensors.size())
    throw Error("no output #" + std::to_string(output));
  const Tensor &t = tensors[outputTensors[output]];
  size_t want = t.hostBytes();
  if (bytes != want)
    throw Error("output #" + std::to_string(output) + " needs " +
                std::to_string(want) + " bytes, got " + std::to_string(bytes));
  readTensor(t, data, bytes);
}

void fbl_session::readInput(size_t input, void *data, size_t bytes) {
  if (input >= inputTensors.size())
    throw Error("no input #" + std::to_string(input) + " (the bundle has " +
                std::to_string(inputTensors.size()) + ")");
  if (!inputSet[input])
    throw Error(inputLabel(input) + " was not set");
  const Tensor &t = tensors[inputTensors[input]];
  size_t want = t.hostBytes();
  if (bytes != want)
    throw Error(inputLabel(input) + " needs " + std::to_string(want) +
                " bytes, got " + std::to_string(bytes));
  readTensor(t, data, bytes);
}

void fbl_session::readTensor(const Tensor &t, void *data, size_t bytes) {
  Memory &m = memories[t.memory];
  if (m.storage == StorageKind::Buffer) {
    // A buffer view is row-major like its memory.
    check(clEnqueueReadBuffer(queue, m.mem, CL_TRUE, 0, bytes, data, 0, nullptr,
                              nullptr),
          "clEnqueueReadBuffer");
    return;
  }
  std::vector<float> texels(m.width * m.height * m.layers * 4);
  size_t origin[3] = {0, 0, 0};
  std::vector<uint16_t> half(isHalf(m) ? texels.size() : 0);
  void *host = isHalf(m) ? static_cast<void *>(half.data())
                         : static_cast<void *>(texels.data());
  check(clEnqueueReadImage(queue, m.mem, CL_TRUE, origin, m.region().data(), 0,
                           0, host, 0, nullptr, nullptr),
        "clEnqueueReadImage");
  std::transform(half.begin(), half.end(), texels.begin(),
                 safetensors::halfToFloat);
  unpackTexels(t, texels, static_cast<float *>(data));
}

/// The median of `v`: over iterations, one slow launch does not skew it.
static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void fbl_session::run(int iterations, bool profile) {
  for (size_t i = 0; i < inputSet.size(); ++i)
    if (!inputSet[i])
      throw Error(inputLabel(i) + " was not set");
  // One untimed launch first: drivers compile kernels lazily.
  if (!warmedUp) {
    launchSchedule(queue, nullptr);
    check(clFinish(queue), "clFinish");
    chooseVariants();
    warmedUp = true;
  }
  // The timed iterations run on a queue without profiling: on a driver
  // where profiling costs host or device time per launch, a step of
  // thousands of kernels would be timed slower than it runs, and more
  // kernels more so. The profile takes as many iterations of its own, after
  // them, on a profiling queue.
  std::vector<double> times;
  for (int it = 0; it < std::max(iterations, 1); ++it) {
    auto start = std::chrono::steady_clock::now();
    launchSchedule(queue, nullptr);
    check(clFinish(queue), "clFinish");
    times.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count());
  }
  medianMs = median(times);
  if (profile)
    profileSchedule(std::max(iterations, 1));
}

/// Enqueues `kernel` on `on`, with a profiling event in `event` if given.
static void launch(cl_command_queue on, const Kernel &kernel, cl_event *event) {
  cl_uint dims = kernel.grid[2] > 1 ? 3 : 2;
  check(clEnqueueNDRangeKernel(on, kernel.launched(), dims, nullptr,
                               kernel.grid, kernel.workgroup, 0, nullptr,
                               event),
        "launch of " + kernel.name);
}

/// Whether FBL_LAUNCH_BLOCKING=1 asks to wait for each launch: a kernel
/// that faults the device then fails its own wait, under its own name,
/// instead of the step's clFinish naming nothing (a driver's error -36 or
/// -5 comes at the next wait, launches later).
static bool launchBlocking() {
  static const bool blocking = [] {
    const char *v = std::getenv("FBL_LAUNCH_BLOCKING");
    return v && std::string(v) == "1";
  }();
  return blocking;
}

void fbl_session::launchSchedule(cl_command_queue on,
                                 std::vector<cl_event> *events) {
  bool blocking = launchBlocking();
  for (size_t k = 0; k < kernels.size(); ++k) {
    launch(on, kernels[k], events ? &(*events)[k] : nullptr);
    if (blocking)
      check(clFinish(on), "launch " + std::to_string(k) + " of " +
                              std::to_string(kernels.size()) + " (" +
                              kernels[k].name + ", function " +
                              kernels[k].candidateFunction(kernels[k].chosen) +
                              ")");
  }
}

std::vector<double> fbl_session::timedSchedule() {
  if (!profilingQueue) {
    cl_int err;
    profilingQueue = clCreateCommandQueue(context, device.device,
                                          CL_QUEUE_PROFILING_ENABLE, &err);
    check(err, "clCreateCommandQueue");
  }
  std::vector<cl_event> events(kernels.size(), nullptr);
  launchSchedule(profilingQueue, &events);
  check(clFinish(profilingQueue), "clFinish");
  std::vector<double> ms(kernels.size());
  for (size_t k = 0; k < kernels.size(); ++k) {
    cl_ulong t0 = 0, t1 = 0;
    clGetEventProfilingInfo(events[k], CL_PROFILING_COMMAND_START, sizeof(t0),
                            &t0, nullptr);
    clGetEventProfilingInfo(events[k], CL_PROFILING_COMMAND_END, sizeof(t1),
                            &t1, nullptr);
    ms[k] = (t1 - t0) / 1e6;
    clReleaseEvent(events[k]);
  }
  return ms;
}

void fbl_session::profileSchedule(int iterations) {
  std::vector<std::vector<double>> kernelMs(kernels.size());
  for (int it = 0; it < iterations; ++it) {
    std::vector<double> ms = timedSchedule();
    for (size_t k = 0; k < kernels.size(); ++k)
      kernelMs[k].push_back(ms[k]);
  }
  for (size_t k = 0; k < kernels.size(); ++k)
    kernels[k].profiledMs = median(kernelMs[k]);
}

void fbl_session::chooseVariants() {
  size_t most = 0;
  for (const Kernel &k : kernels)
    most = std::max(most, k.variants.size());
  // FBL_KERNEL_VARIANTS: unset to measure, "host" to measure on the host,
  // N to run each kernel's variant N where it has one (0: its function).
  const char *choice = std::getenv("FBL_KERNEL_VARIANTS");
  std::string mode = choice ? choice : "";
  if (!mode.empty() && mode != "host") {
    char *end = nullptr;
    unsigned long forced = std::strtoul(mode.c_str(), &end, 10);
    if (*end || !std::isdigit(static_cast<unsigned char>(mode[0])))
      throw Error("FBL_KERNEL_VARIANTS must be host or a variant number (0: "
                  "every launch's function), got '" +
                  mode + "'");
    for (Kernel &k : kernels)
      k.choose(forced);
    return;
  }
  if (most == 0)
    return;
  // Whole steps, not a kernel alone: a launch may read what an earlier
  // one of the step wrote, and each runs in the caches the step leaves.
  // Round c runs every kernel's candidate c (0: its function) where it has
  // one, its function where not; rounds alternate, so drift between them
  // falls on every candidate alike.
  constexpr int kRounds = 3;
  // A driver whose profiling timestamps do not measure (rusticl on llvmpipe
  // reports 1 ns for a 10 ms kernel: the kernels' sum is under 1% of the
  // step's host time) is timed on the host instead, each launch finished
  // before the next.
  bool wallClock = mode == "host";
  auto stepTimes = [&] {
    if (!wallClock) {
      auto start = std::chrono::steady_clock::now();
      std::vector<double> ms = timedSchedule();
      double host = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count();
      if (std::accumulate(ms.begin(), ms.end(), 0.0) >= 0.01 * host)
        return ms;
      wallClock = true;
    }
    std::vector<double> ms(kernels.size());
    for (size_t k = 0; k < kernels.size(); ++k) {
      auto start = std::chrono::steady_clock::now();
      launch(queue, kernels[k], nullptr);
      check(clFinish(queue), "clFinish");
      ms[k] = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
    }
    return ms;
  };
  // ms[k][c]: kernel k's times with candidate c.
  std::vector<std::vector<std::vector<double>>> ms(kernels.size());
  for (size_t k = 0; k < kernels.size(); ++k)
    ms[k].resize(kernels[k].candidates.size());
  for (int round = 0; round < kRounds; ++round)
    for (size_t c = 0; c <= most; ++c) {
      for (Kernel &k : kernels)
        k.choose(c);
      std::vector<double> times = stepTimes();
      for (size_t k = 0; k < kernels.size(); ++k)
        if (c < kernels[k].candidates.size())
          ms[k][c].push_back(times[k]);
    }
  for (size_t k = 0; k < kernels.size(); ++k) {
    size_t best = 0;
    for (size_t c = 1; c < ms[k].size(); ++c)
      if (median(ms[k][c]) < median(ms[k][best]))
        best = c;
    kernels[k].chosen = best;
  }
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
  // One run: its outputs are what the updates below apply. A profile runs
  // the same step again on the same inputs.
  run(1, profile);
  // A non-finite loss poisons every parameter it updates: stop before the
  // updates replace the inputs, so the last finite state stays.
  const Tensor &lossTensor = tensors[outputTensors[0]];
  if (lossTensor.dtype ==
          manifest::elementTypeName(manifest::ElementType::F32) &&
      lossTensor.elements() == 1) {
    float loss;
    download(0, &loss, sizeof(loss));
    if (!std::isfinite(loss))
      throw Error("step " + std::to_string(step) + ": loss is " +
                  (std::isnan(loss) ? "nan"
                   : loss > 0       ? "inf"
                                    : "-inf") +
                  "; training stopped");
  }
  // Every update is read before any input is overwritten. An output stored
  // like the input it replaces is copied on the device (parameters and
  // optimizer state stay resident); any other goes through the host.
  std::vector<std::pair<int64_t, std::vector<uint8_t>>> updates;
  for (size_t j = 0; j < outputTensors.size(); ++j) {
    if (outputUpdates[j] < 0 || updateOnDevice[j])
      continue;
    const Tensor &t = tensors[outputTensors[j]];
    std::vector<uint8_t> host(t.hostBytes());
    download(j, host.data(), host.size());
    updates.emplace_back(outputUpdates[j], std::move(host));
  }
  for (size_t j = 0; j < outputTensors.size(); ++j) {
    if (!updateOnDevice[j])
      continue;
    const Memory &from = memories[tensors[outputTensors[j]].memory];
    const Memory &to = memories[tensors[inputTensors[outputUpdates[j]]].memory];
    size_t origin[3] = {0, 0, 0};
    if (from.storage == StorageKind::Buffer)
      check(clEnqueueCopyBuffer(queue, from.mem, to.mem, 0, 0,
                                std::max<int64_t>(from.bytes, 4), 0, nullptr,
                                nullptr),
            "clEnqueueCopyBuffer");
    else
      check(clEnqueueCopyImage(queue, from.mem, to.mem, origin, origin,
                               from.region().data(), 0, nullptr, nullptr),
            "clEnqueueCopyImage");
  }
  for (auto &[input, host] : updates)
    upload(input, host.data(), host.size());
  check(clFinish(queue), "clFinish");
}

bool fbl_session::isHalf(const Memory &m) {
  return m.dtype == manifest::elementTypeName(manifest::ElementType::F16);
}

bool fbl_session::storedAlike(int64_t a, int64_t b) const {
  const Tensor &ta = tensors[a], &tb = tensors[b];
  const Memory &ma = memories[ta.memory], &mb = memories[tb.memory];
  // An output that is itself an input's memory may be overwritten by
  // another update before it is copied.
  for (int64_t in : inputTensors)
    if (tensors[in].memory == ta.memory)
      return false;
  return ta.shape == tb.shape && ta.dtype == tb.dtype &&
         ta.layout.str() == tb.layout.str() && ma.storage == mb.storage &&
         ma.dtype == mb.dtype && ma.width == mb.width &&
         ma.height == mb.height && ma.layers == mb.layers &&
         ma.bytes == mb.bytes;
}

//===----------------------------------------------------------------------===//
// Initializers and weights
//===----------------------------------------------------------------------===//

namespace st = fbl::runtime::safetensors;

/// Whether weights files can set `t`: f32 inputs, and f16 ones (buffers)
/// through a conversion.
static bool holdsFloats(const Tensor &t) {
  return t.dtype == manifest::elementTypeName(manifest::ElementType::F32) ||
         t.dtype == manifest::elementTypeName(manifest::ElementType::F16);
}

/// Sets input `input` from f32 `values`, converting to its element type.
static void uploadFloats(fbl_session &s, size_t input,
                         const std::vector<float> &values) {
  const Tensor &t = s.tensors[s.inputTensors[input]];
  if (t.dtype == manifest::elementTypeName(manifest::ElementType::F32)) {
    s.upload(input, values.data(), values.size() * sizeof(float));
    return;
  }
  std::vector<uint16_t> half(values.size());
  std::transform(values.begin(), values.end(), half.begin(), st::floatToHalf);
  s.upload(input, half.data(), half.size() * sizeof(uint16_t));
}

/// Input `input`'s current value as f32.
static std::vector<float> readFloats(fbl_session &s, size_t input) {
  const Tensor &t = s.tensors[s.inputTensors[input]];
  std::vector<float> values(t.elements());
  if (t.dtype == manifest::elementTypeName(manifest::ElementType::F32)) {
    s.readInput(input, values.data(), values.size() * sizeof(float));
    return values;
  }
  std::vector<uint16_t> half(values.size());
  s.readInput(input, half.data(), half.size() * sizeof(uint16_t));
  std::transform(half.begin(), half.end(), values.begin(), st::halfToFloat);
  return values;
}

void fbl_session::initInput(size_t input, uint64_t seed) {
  if (input >= inputTensors.size())
    throw Error("no input #" + std::to_string(input) + " (the bundle has " +
                std::to_string(inputTensors.size()) + ")");
  std::string error;
  std::optional<manifest::InitSpec> spec =
      manifest::parseInitSpec(inputInits[input], error);
  if (inputInits[input].empty() || !spec)
    throw Error(inputLabel(input) + " has no initializer");
  const Tensor &t = tensors[inputTensors[input]];
  if (!holdsFloats(t))
    throw Error(inputLabel(input) + " is " + t.dtype +
                "; initializers set float inputs");
  std::string key = inputNames[input].empty() ? "arg" + std::to_string(input)
                                              : inputNames[input];
  std::vector<uint32_t> words = {static_cast<uint32_t>(seed),
                                 static_cast<uint32_t>(seed >> 32)};
  words.insert(words.end(), key.begin(), key.end());
  std::seed_seq seeds(words.begin(), words.end());
  std::mt19937_64 rng(seeds);
  std::vector<float> values(t.elements());
  using Kind = manifest::InitSpec::Kind;
  if (spec->kind == Kind::Zeros || spec->kind == Kind::Ones) {
    std::fill(values.begin(), values.end(), spec->kind == Kind::Ones);
  } else {
    // Parallel and seeded per element (Initializers.h): a billion-parameter
    // model initializes in seconds, not the minute one sequential generator
    // took.
    fbl::runtime::fillRandomParallel(values.data(), values.size(), rng(),
                                     spec->kind == Kind::Normal, spec->scale);
  }
  uploadFloats(*this, input, values);
}

/// Up to a few names of `names`, quoted, for a one-line message.
static std::string someNames(const std::vector<std::string> &names) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < 4; ++i)
    s += (i ? ", '" : "'") + names[i] + "'";
  if (names.size() > 4)
    s += ", and " + std::to_string(names.size() - 4) + " more";
  return s;
}

std::string fbl_session::loadWeights(const std::string &path, int flags) {
  st::Reader file(path);
  // Every match is checked before any input is set.
  std::vector<std::pair<size_t, size_t>> matches; // input, tensor in file
  std::vector<bool> used(file.tensors().size(), false);
  std::vector<std::string> missing, unused;
  for (size_t i = 0; i < inputTensors.size(); ++i) {
    std::optional<size_t> found;
    if (!inputNames[i].empty())
      found = file.find(inputNames[i]);
    if (!found) {
      // Parameters nothing else sets: no initializer, not set before.
      if (inputIsParam[i] && inputInits[i].empty() && !inputSet[i])
        missing.push_back(inputNames[i].empty() ? "arg" + std::to_string(i)
                                                : inputNames[i]);
      continue;
    }
    const Tensor &t = tensors[inputTensors[i]];
    const st::TensorEntry &entry = file.tensors()[*found];
    if (!holdsFloats(t))
      throw Error(path + ": tensor '" + entry.name + "' cannot set " +
                  inputLabel(i) + ", which is " + t.dtype +
                  "; weights set float inputs");
    if (entry.shape != t.shape)
      throw Error(path + ": tensor '" + entry.name + "' has shape " +
                  shapeString(entry.shape) + ", " + inputLabel(i) + " has " +
                  shapeString(t.shape));
    matches.emplace_back(i, *found);
    used[*found] = true;
  }
  for (size_t k = 0; k < used.size(); ++k)
    if (!used[k])
      unused.push_back(file.tensors()[k].name);
  if ((flags & FBL_WEIGHTS_STRICT) && (!missing.empty() || !unused.empty())) {
    std::string message = path + ":";
    if (!missing.empty())
      message += " " + std::to_string(missing.size()) + " parameter" +
                 (missing.size() == 1 ? " is" : "s are") + " missing (" +
                 someNames(missing) + ")" + (unused.empty() ? "" : ";");
    if (!unused.empty())
      message += " " + std::to_string(unused.size()) + " tensor" +
                 (unused.size() == 1 ? " matches" : "s match") + " no input (" +
                 someNames(unused) + ")";
    throw Error(message);
  }
  std::string report;
  for (auto [input, k] : matches) {
    std::vector<float> values(file.tensors()[k].elements());
    file.readF32(k, values.data(), values.size());
    uploadFloats(*this, input, values);
    report += "loaded " + inputNames[input] + "\n";
  }
  for (const std::string &name : missing)
    report += "missing " + name + "\n";
  for (const std::string &name : unused)
    report += "unused " + name + "\n";
  return report;
}

void fbl_session::saveWeights(const std::string &path,
                              const std::string &filter, int flags,
                              const std::string &dtype) {
  std::optional<st::DType> type = st::parseDType(dtype);
  if (!type || (*type != st::DType::F32 && *type != st::DType::F16 &&
                *type != st::DType::BF16))
    throw Error("cannot save weights as '" + dtype +
                "': fbl writes F32, F16 and BF16");
  std::vector<bool> isState(inputTensors.size(), false);
  for (int64_t updated : outputUpdates)
    if (updated >= 0 && !inputIsParam[updated])
      isState[updated] = true;
  st::Writer writer;
  writer.addMetadata("format", "pt");
  for (size_t i = 0; i < inputTensors.size(); ++i) {
    bool wanted = inputIsParam[i] ||
                  ((flags & FBL_WEIGHTS_OPTIMIZER_STATE) && isState[i]);
    if (!wanted || inputNames[i].empty() ||
        inputNames[i].find(filter) == std::string::npos)
      continue;
    const Tensor &t = tensors[inputTensors[i]];
    if (!holdsFloats(t))
      throw Error("cannot save " + inputLabel(i) + ": it is " + t.dtype);
    std::vector<float> values = readFloats(*this, i);
    writer.add(inputNames[i], t.shape, values.data(), *type);
  }
  if (writer.size() == 0)
    throw Error("no named parameter" +
                (filter.empty() ? std::string()
                                : " with '" + filter + "' in its name") +
                "; nothing written to " + path);
  writer.write(path);
}
