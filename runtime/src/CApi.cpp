//===- CApi.cpp - The C API of libfbl_runtime -----------------------------===//
//
// extern "C" wrappers over sessions and devices: C++ exceptions become
// FBL_ERROR and the message fbl_last_error() returns. fbl_describe_device
// lives with the devices (Device.cpp).
//
//===----------------------------------------------------------------------===//

#include "Error.h"
#include "Session.h"

#include "fbl_runtime/fbl_runtime.h"

#include <cstdio>
#include <memory>

using namespace fbl::runtime;

/// The message of the last failed call on this thread.
static thread_local std::string lastError;

fbl_status fbl::runtime::fail(const std::string &message) {
  lastError = message;
  return FBL_ERROR;
}

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
