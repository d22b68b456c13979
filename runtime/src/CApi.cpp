//===- CApi.cpp - The C API of libfbl_runtime -----------------------------===//
//
// extern "C" wrappers over sessions, devices and safetensors files: C++
// exceptions become FBL_ERROR and the message fbl_last_error() returns.
// fbl_describe_device lives with the devices (Device.cpp).
//
//===----------------------------------------------------------------------===//

#include "Error.h"
#include "SafeTensors.h"
#include "Session.h"

#include "fbl_runtime/fbl_runtime.h"

#include <cstdio>
#include <cstring>
#include <memory>

using namespace fbl::runtime;
namespace st = fbl::runtime::safetensors;

struct fbl_safetensors : st::Reader {
  using st::Reader::Reader;
  /// The dtype names tensor_info hands out.
  std::vector<std::string> dtypes;
};

struct fbl_safetensors_writer : st::Writer {};

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

const char *fbl_session_input_name(const fbl_session *s, size_t index) {
  return index < s->inputNames.size() ? s->inputNames[index].c_str() : "";
}

const char *fbl_session_input_init(const fbl_session *s, size_t index) {
  return index < s->inputInits.size() ? s->inputInits[index].c_str() : "";
}

int fbl_session_input_range(const fbl_session *s, size_t index, int64_t *min,
                            int64_t *max) {
  if (index >= s->inputRanges.size() || !s->inputRanges[index].present ||
      !min || !max)
    return 0;
  *min = s->inputRanges[index].min;
  *max = s->inputRanges[index].max;
  return 1;
}

const char *fbl_session_output_name(const fbl_session *s, size_t index) {
  return index < s->outputNames.size() ? s->outputNames[index].c_str() : "";
}

fbl_status fbl_session_find_input(const fbl_session *s, const char *name,
                                  size_t *index) {
  if (!name || !index)
    return fail("fbl_session_find_input: null argument");
  int64_t found = s->findInput(name);
  if (found < 0 || !*name)
    return fail(std::string("the bundle has no input named '") + name + "'");
  *index = static_cast<size_t>(found);
  return FBL_OK;
}

int fbl_session_input_is_set(const fbl_session *s, size_t index) {
  return index < s->inputSet.size() && s->inputSet[index];
}

fbl_status fbl_session_set_input(fbl_session *s, size_t index, const void *data,
                                 size_t bytes) {
  return guarded([&] { s->upload(index, data, bytes); });
}

fbl_status fbl_session_init_input(fbl_session *s, size_t index, uint64_t seed) {
  return guarded([&] { s->initInput(index, seed); });
}

fbl_status fbl_session_get_input(fbl_session *s, size_t index, void *data,
                                 size_t bytes) {
  return guarded([&] { s->readInput(index, data, bytes); });
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
const char *fbl_session_kernel_variant(const fbl_session *s, size_t k) {
  if (k >= s->kernels.size() || s->kernels[k].chosen == 0)
    return "";
  return s->kernels[k].candidateFunction(s->kernels[k].chosen).c_str();
}

int64_t fbl_session_device_bytes(const fbl_session *s) {
  int64_t total = 0;
  for (const Memory &m : s->memories)
    total += m.bytes;
  return total;
}

fbl_status fbl_session_load_weights(fbl_session *s, const char *path, int flags,
                                    char *report, size_t report_size) {
  if (!path)
    return fail("fbl_session_load_weights: null path");
  return guarded([&] {
    std::string lines = s->loadWeights(path, flags);
    if (!report || !report_size)
      return;
    // Whole lines only.
    size_t fits = lines.size();
    if (fits >= report_size) {
      size_t end = report_size >= 2 ? lines.rfind('\n', report_size - 2)
                                    : std::string::npos;
      fits = end == std::string::npos ? 0 : end + 1;
    }
    std::memcpy(report, lines.data(), fits);
    report[fits] = '\0';
  });
}

fbl_status fbl_session_save_weights(fbl_session *s, const char *path,
                                    const char *filter, int flags,
                                    const char *dtype) {
  if (!path)
    return fail("fbl_session_save_weights: null path");
  return guarded([&] {
    s->saveWeights(path, filter ? filter : "", flags, dtype ? dtype : "F32");
  });
}

fbl_status fbl_safetensors_open(const char *path, fbl_safetensors **file) {
  if (!path || !file)
    return fail("fbl_safetensors_open: null argument");
  return guarded([&] {
    auto f = std::make_unique<fbl_safetensors>(path);
    for (const st::TensorEntry &t : f->tensors())
      f->dtypes.push_back(st::dtypeName(t.dtype));
    *file = f.release();
  });
}

void fbl_safetensors_close(fbl_safetensors *file) { delete file; }

size_t fbl_safetensors_num_tensors(const fbl_safetensors *file) {
  return file->tensors().size();
}

fbl_status fbl_safetensors_tensor_info(const fbl_safetensors *file,
                                       size_t index, const char **name,
                                       const char **dtype,
                                       const int64_t **shape, size_t *rank) {
  if (index >= file->tensors().size())
    return fail(file->path() + ": no tensor #" + std::to_string(index) +
                " (the file has " + std::to_string(file->tensors().size()) +
                ")");
  const st::TensorEntry &t = file->tensors()[index];
  if (name)
    *name = t.name.c_str();
  if (dtype)
    *dtype = file->dtypes[index].c_str();
  if (shape)
    *shape = t.shape.data();
  if (rank)
    *rank = t.shape.size();
  return FBL_OK;
}

fbl_status fbl_safetensors_find(const fbl_safetensors *file, const char *name,
                                size_t *index) {
  if (!name || !index)
    return fail("fbl_safetensors_find: null argument");
  std::optional<size_t> found = file->find(name);
  if (!found)
    return fail(file->path() + ": no tensor named '" + name + "'");
  *index = *found;
  return FBL_OK;
}

fbl_status fbl_safetensors_read_f32(fbl_safetensors *file, size_t index,
                                    float *data, size_t count) {
  if (!data && count)
    return fail("fbl_safetensors_read_f32: null data");
  return guarded([&] { file->readF32(index, data, count); });
}

size_t fbl_safetensors_num_metadata(const fbl_safetensors *file) {
  return file->metadata().size();
}

fbl_status fbl_safetensors_metadata(const fbl_safetensors *file, size_t index,
                                    const char **key, const char **value) {
  if (index >= file->metadata().size())
    return fail(file->path() + ": no metadata entry #" + std::to_string(index));
  if (key)
    *key = file->metadata()[index].first.c_str();
  if (value)
    *value = file->metadata()[index].second.c_str();
  return FBL_OK;
}

fbl_status fbl_safetensors_writer_create(fbl_safetensors_writer **writer) {
  if (!writer)
    return fail("fbl_safetensors_writer_create: null argument");
  *writer = new fbl_safetensors_writer();
  return FBL_OK;
}

void fbl_safetensors_writer_free(fbl_safetensors_writer *writer) {
  delete writer;
}

fbl_status fbl_safetensors_writer_add_f32(fbl_safetensors_writer *writer,
                                          const char *name,
                                          const int64_t *shape, size_t rank,
                                          const float *data,
                                          const char *dtype) {
  if (!name || (rank && !shape))
    return fail("fbl_safetensors_writer_add_f32: null argument");
  std::string dtypeName = dtype ? dtype : "F32";
  std::optional<st::DType> type = st::parseDType(dtypeName);
  if (!type)
    return fail(std::string("cannot add tensor '") + name +
                "': unknown dtype '" + dtypeName + "'");
  return guarded([&] {
    writer->add(name, std::vector<int64_t>(shape, shape + rank), data, *type);
  });
}

fbl_status fbl_safetensors_writer_add_metadata(fbl_safetensors_writer *writer,
                                               const char *key,
                                               const char *value) {
  if (!key || !value)
    return fail("fbl_safetensors_writer_add_metadata: null argument");
  return guarded([&] { writer->addMetadata(key, value); });
}

fbl_status fbl_safetensors_writer_write(const fbl_safetensors_writer *writer,
                                        const char *path) {
  if (!path)
    return fail("fbl_safetensors_writer_write: null path");
  return guarded([&] { writer->write(path); });
}

} // extern "C"
