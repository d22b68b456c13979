/*===- fbl_runtime.h - Run fbl bundles on OpenCL devices ----------*- C -*-===*\
|*                                                                            *|
|* libfbl_runtime loads a bundle (kernels.cl + manifest.json), allocates its  *|
|* images and buffers, packs host tensors into them with the layout algebra,  *|
|* runs the launch schedule and unpacks results. Depends only on the OpenCL   *|
|* ICD loader, the layout algebra and a JSON library; never on MLIR.          *|
|*                                                                            *|
|* Every call returns FBL_OK or FBL_ERROR; fbl_last_error() then holds one    *|
|* line saying what went wrong.                                               *|
\*===----------------------------------------------------------------------===*/

#ifndef FBL_RUNTIME_H
#define FBL_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fbl_status { FBL_OK = 0, FBL_ERROR = 1 } fbl_status;

typedef struct fbl_session fbl_session;

/// The message of the last failed call on this thread.
const char *fbl_last_error(void);

/// Writes one line per OpenCL device ("index: platform / device / type").
fbl_status fbl_list_devices(char *buffer, size_t size);

/// Writes the `#fbl.target<...>` attribute describing `device` (see
/// fbl_session_open for the selector).
fbl_status fbl_describe_device(const char *device, char *buffer, size_t size);

/// Writes the name of the built-in target preset for `device`, chosen by its
/// vendor (NVIDIA, Qualcomm Adreno, Arm Mali), else the PoCL CPU preset.
fbl_status fbl_target_preset(const char *device, char *buffer, size_t size);

/// Opens the bundle in `bundle_dir` on `device`: NULL or "" for the first GPU
/// (else the first CPU), a device index, "gpu", "cpu", or part of a device
/// name. Builds the program (using a binary cache) and allocates memory.
fbl_status fbl_session_open(const char *bundle_dir, const char *device,
                            fbl_session **session);
void fbl_session_close(fbl_session *session);

/// The chosen device's name.
const char *fbl_session_device_name(const fbl_session *session);

size_t fbl_session_num_inputs(const fbl_session *session);
size_t fbl_session_num_outputs(const fbl_session *session);

/// Shape and element type ("f32", "f16", "i64", "i32") of input `index`
/// (output `index` with `output` set). `shape` holds up to 8 dims.
fbl_status fbl_session_tensor_info(const fbl_session *session, int output,
                                   size_t index, int64_t *shape, size_t *rank,
                                   const char **dtype, int *is_param);

/// For a training step: the input output `index` replaces in the next step,
/// or -1 (the loss, or a plain result).
int64_t fbl_session_output_updates(const fbl_session *session, size_t index);

/// For a training step: whether input `index` is the 1-based step count.
int fbl_session_input_is_step_count(const fbl_session *session, size_t index);

/// Sets input `index` from a dense row-major host array of its element type.
/// An integer input whose manifest gives a valid range (token ids, labels)
/// is checked first: an element outside it fails the call, naming the
/// element and the model's message.
fbl_status fbl_session_set_input(fbl_session *session, size_t index,
                                 const void *data, size_t bytes);

/// Runs the schedule `iterations` times; with `profile`, records each
/// kernel's median device time (profiling events) over the iterations.
fbl_status fbl_session_run(fbl_session *session, int iterations, int profile);

/// Runs step `step` (1-based) of a training-step bundle: sets its step-count
/// inputs to `step`, runs the schedule once, then makes each output that
/// updates an input (parameters, optimizer state) that input for the next
/// step. Read the loss with fbl_session_get_output(0). A non-finite loss
/// fails the call ("step N: loss is nan; training stopped") before the
/// updates apply, so the inputs keep the last finite step's state.
fbl_status fbl_session_train_step(fbl_session *session, int64_t step,
                                  int profile);

/// Median wall time of one iteration of the last run, in milliseconds.
double fbl_session_median_ms(const fbl_session *session);

/// Reads output `index` into a dense row-major host array.
fbl_status fbl_session_get_output(fbl_session *session, size_t index,
                                  void *data, size_t bytes);

/// Kernels of the schedule and, after a profiled run, their median device
/// times in milliseconds.
size_t fbl_session_num_kernels(const fbl_session *session);
const char *fbl_session_kernel_name(const fbl_session *session, size_t k);
double fbl_session_kernel_ms(const fbl_session *session, size_t k);

/// Bytes of device memory the bundle's images and buffers take.
int64_t fbl_session_device_bytes(const fbl_session *session);

#ifdef __cplusplus
}
#endif

#endif /* FBL_RUNTIME_H */
