//===- Device.cpp - OpenCL platforms and devices --------------------------===//
//
// Device enumeration and selection, and fbl_describe_device: a device's
// limits as the #fbl.target the compiler reads.
//
//===----------------------------------------------------------------------===//

#include "Device.h"
#include "Error.h"
#include "fbl/Layout/TargetDescription.h"

#include <CL/cl_ext.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

using namespace fbl::runtime;

const char *fbl::runtime::clErrorName(cl_int e) {
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

void fbl::runtime::check(cl_int err, const std::string &what) {
  if (err != CL_SUCCESS)
    throw Error(what + " failed: " + clErrorName(err) + " (" +
                std::to_string(err) + ")");
}

std::string fbl::runtime::deviceString(cl_device_id d, cl_device_info info) {
  size_t n = 0;
  clGetDeviceInfo(d, info, 0, nullptr, &n);
  std::string s(n, '\0');
  clGetDeviceInfo(d, info, n, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0')
    s.pop_back();
  return s;
}

std::vector<DeviceEntry> fbl::runtime::allDevices() {
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

DeviceEntry fbl::runtime::selectDevice(const char *selector) {
  std::vector<DeviceEntry> devices = allDevices();
  std::string s = selector ? selector : "";
  // The environment's default: a whole test suite or job runs on another
  // implementation without each tool passing a selector.
  if (s.empty())
    if (const char *env = std::getenv("FBL_DEVICE"))
      s = env;
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

::fbl::target::KernelArgumentLimits
fbl::runtime::deviceArgumentLimits(cl_device_id d) {
  return {deviceValue<cl_uint>(d, CL_DEVICE_MAX_READ_IMAGE_ARGS),
          deviceValue<cl_uint>(d, CL_DEVICE_MAX_WRITE_IMAGE_ARGS),
          static_cast<int64_t>(
              deviceValue<size_t>(d, CL_DEVICE_MAX_PARAMETER_SIZE))};
}

extern "C" {

fbl_status fbl_describe_device(const char *selector, char *buffer,
                               size_t size) {
  return guarded([&] {
    DeviceEntry d = selectDevice(selector);
    // The vendor's preset gives what OpenCL cannot tell (the texture-cache
    // geometry, GEMM tiling); the device gives its own limits.
    ::fbl::target::TargetDescription t = ::fbl::target::presetForDevice(
        deviceString(d.device, CL_DEVICE_VENDOR), d.name);
    t.name = d.name;
    for (char &c : t.name)
      if (!isalnum(static_cast<unsigned char>(c)))
        c = '-';
    auto v = [&](cl_device_info info) {
      return static_cast<int64_t>(deviceValue<size_t>(d.device, info));
    };
    t.maxImageWidth = v(CL_DEVICE_IMAGE2D_MAX_WIDTH);
    t.maxImageHeight = v(CL_DEVICE_IMAGE2D_MAX_HEIGHT);
    t.maxImageLayers = v(CL_DEVICE_IMAGE_MAX_ARRAY_SIZE);
    t.maxBufferBytes = static_cast<int64_t>(
        deviceValue<cl_ulong>(d.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE));
    t.fp16 = deviceString(d.device, CL_DEVICE_EXTENSIONS).find("cl_khr_fp16") !=
             std::string::npos;
    t.halfStorage = t.halfStorage && t.fp16;
    t.maxWorkgroupSize = v(CL_DEVICE_MAX_WORK_GROUP_SIZE);
    t.kernelArguments = deviceArgumentLimits(d.device);
    while (t.preferredWorkgroup[0] * t.preferredWorkgroup[1] >
           t.maxWorkgroupSize)
      (t.preferredWorkgroup[0] > t.preferredWorkgroup[1]
           ? t.preferredWorkgroup[0]
           : t.preferredWorkgroup[1]) /= 2;
    std::string s = ::fbl::target::printAttribute(t);
    if (buffer && size)
      std::snprintf(buffer, size, "%s", s.c_str());
  });
}

fbl_status fbl_target_preset(const char *selector, char *buffer, size_t size) {
  return guarded([&] {
    DeviceEntry d = selectDevice(selector);
    std::string name = ::fbl::target::presetForDevice(
                           deviceString(d.device, CL_DEVICE_VENDOR), d.name)
                           .name;
    if (buffer && size)
      std::snprintf(buffer, size, "%s", name.c_str());
  });
}

} // extern "C"
