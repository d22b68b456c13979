//===- Device.h - OpenCL platforms and devices ------------------*- C++ -*-===//
//
// The OpenCL devices of all platforms, selection by a user's selector, and
// checked OpenCL calls.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_RUNTIME_DEVICE_H
#define FBL_RUNTIME_DEVICE_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "fbl/Layout/TargetDescription.h"

#include <string>
#include <vector>

namespace fbl::runtime {

/// The name of an OpenCL error code.
const char *clErrorName(cl_int e);

/// Throws an Error naming `what` unless `err` is CL_SUCCESS.
void check(cl_int err, const std::string &what);

std::string deviceString(cl_device_id d, cl_device_info info);

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

/// Every device of every platform, in platform order.
std::vector<DeviceEntry> allDevices();

/// The device `selector` names: "gpu" (the first GPU), "cpu", an index, or
/// part of a device or platform name. Empty is the environment's
/// FBL_DEVICE where set, else the first GPU, else the first device.
DeviceEntry selectDevice(const char *selector);

/// The arguments one kernel may take on `d`.
::fbl::target::KernelArgumentLimits deviceArgumentLimits(cl_device_id d);

} // namespace fbl::runtime

#endif // FBL_RUNTIME_DEVICE_H
