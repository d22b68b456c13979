//===- ProfilingQueue.h - The OpenCL queue a benchmark program times on ---===//
//
// The benchmark programs (clblast_gemm, launch_overhead, image_residency)
// take a device by its index among all platforms' devices and time on an
// in-order queue with profiling, as libfbl_runtime launches. Errors end the
// program with a message naming it.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_BENCHMARKS_PROFILINGQUEUE_H
#define FBL_BENCHMARKS_PROFILINGQUEUE_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

/// Ends `tool` with a message unless `e` is CL_SUCCESS.
inline void checkCL(const char *tool, cl_int e, const char *what) {
  if (e != CL_SUCCESS) {
    std::fprintf(stderr, "%s: %s failed (%d)\n", tool, what, e);
    std::exit(1);
  }
}

struct ProfilingQueue {
  cl_device_id device = nullptr;
  std::string name; ///< CL_DEVICE_NAME
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
};

/// Device `index` of all platforms' devices, with a context and an in-order
/// profiling queue.
inline ProfilingQueue openProfilingQueue(const char *tool, size_t index) {
  cl_uint np = 0;
  checkCL(tool, clGetPlatformIDs(0, nullptr, &np), "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(np);
  clGetPlatformIDs(np, platforms.data(), nullptr);
  std::vector<cl_device_id> devices;
  for (cl_platform_id p : platforms) {
    cl_uint nd = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS)
      continue;
    std::vector<cl_device_id> d(nd);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, d.data(), nullptr);
    devices.insert(devices.end(), d.begin(), d.end());
  }
  if (index >= devices.size()) {
    std::fprintf(stderr, "%s: no device %zu\n", tool, index);
    std::exit(1);
  }
  ProfilingQueue q;
  q.device = devices[index];
  char name[256] = {0};
  clGetDeviceInfo(q.device, CL_DEVICE_NAME, sizeof(name) - 1, name, nullptr);
  q.name = name;
  cl_int err;
  q.context = clCreateContext(nullptr, 1, &q.device, nullptr, nullptr, &err);
  checkCL(tool, err, "clCreateContext");
  q.queue = clCreateCommandQueue(q.context, q.device, CL_QUEUE_PROFILING_ENABLE,
                                 &err);
  checkCL(tool, err, "clCreateCommandQueue");
  return q;
}

#endif // FBL_BENCHMARKS_PROFILINGQUEUE_H
