/*===- fbl_runtime.h - Run fbl bundles on OpenCL devices ----------*- C -*-===*\
|*                                                                            *|
|* libfbl_runtime loads a bundle (kernels.cl + manifest.json), allocates its  *|
|* images and buffers, packs host tensors into them with the layout algebra,  *|
|* runs the launch schedule and unpacks results. It reads and writes          *|
|* safetensors files, and loads and saves a session's inputs by name. Depends *|
|* only on the OpenCL ICD loader, the layout algebra and a JSON library;      *|
|* never on MLIR.                                                             *|
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

/// Opens the bundle in `bundle_dir` on `device`: NULL or "" for the
/// environment's FBL_DEVICE where set (a selector as here), else the first
/// GPU (else the first CPU); a device index, "gpu", "cpu", or part of a
/// device name. Builds the program (using a binary cache) and allocates
/// memory.
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

/// The name of input `index` (the model argument's `fbl.name`: a Hugging Face
/// tensor name such as "model.norm.weight", or "input_ids"; optimizer state
/// is named "<parameter>.exp_avg" / ".exp_avg_sq", the step count "step"),
/// or "" when it has none or there is no such input.
const char *fbl_session_input_name(const fbl_session *session, size_t index);

/// The initializer of input `index` (its `fbl.init`: "zeros", "ones",
/// "normal:<std>", "uniform:<bound>"), or "".
const char *fbl_session_input_init(const fbl_session *session, size_t index);

/// The name of output `index`: "loss", a gradient's "<parameter>.grad", or
/// for a training step's update the name of the input it updates; or "".
const char *fbl_session_output_name(const fbl_session *session, size_t index);

/// The index of the input named `name`.
fbl_status fbl_session_find_input(const fbl_session *session, const char *name,
                                  size_t *index);

/// Whether input `index` holds a value (set, initialized or loaded).
int fbl_session_input_is_set(const fbl_session *session, size_t index);

/// The valid range of integer input `index` (token ids, labels), both
/// bounds inclusive: 1 with `*min` and `*max` set when its manifest gives
/// one, else 0.
int fbl_session_input_range(const fbl_session *session, size_t index,
                            int64_t *min, int64_t *max);

/// Sets input `index` from a dense row-major host array of its element type.
/// An integer input whose manifest gives a valid range (token ids, labels)
/// is checked first: an element outside it fails the call, naming the
/// element and the model's message.
fbl_status fbl_session_set_input(fbl_session *session, size_t index,
                                 const void *data, size_t bytes);

/// Sets input `index` from its initializer (fbl_session_input_init), with a
/// generator seeded by `seed` and the input's name: the same seed gives an
/// input the same values whatever other inputs the bundle has.
fbl_status fbl_session_init_input(fbl_session *session, size_t index,
                                  uint64_t seed);

/// Reads input `index`'s current value into a dense row-major host array:
/// what was set, or after training steps the latest update. An input whose
/// memory stores f16 (a frozen weight on a half_storage target) reads back
/// as its f16 rounding.
fbl_status fbl_session_get_input(fbl_session *session, size_t index, void *data,
                                 size_t bytes);

/// Runs the schedule `iterations` times and records the median wall time
/// of one; with `profile`, then `iterations` more times with profiling
/// events, recording each kernel's median device time (the timed
/// iterations carry no events, so profiling does not slow what is timed).
fbl_status fbl_session_run(fbl_session *session, int iterations, int profile);

/// Runs step `step` (1-based) of a training-step bundle: sets its step-count
/// inputs to `step`, runs the schedule once, then makes each output that
/// updates an input (parameters, optimizer state) that input for the next
/// step, by a device copy where both are stored alike. Read the loss with
/// fbl_session_get_output(0). A non-finite loss fails the call ("step N: loss
/// is nan; training stopped") before the updates apply, so the inputs keep the
/// last finite step's state.
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
/// The variant launch `k` runs instead of its function, or "" when it runs
/// its function: where the manifest gives a launch `variants`, the first
/// run times each on the device and keeps the fastest
/// (FBL_KERNEL_VARIANTS=0 keeps every launch's function, =N runs variant N
/// where a launch has one; =host times them on the host, each launch
/// finished before the next, instead of by profiling events).
const char *fbl_session_kernel_variant(const fbl_session *session, size_t k);

/// Bytes of device memory the bundle's images and buffers take.
int64_t fbl_session_device_bytes(const fbl_session *session);

/*===----------------------------------------------------------------------===*\
|* Weights by name                                                            *|
\*===----------------------------------------------------------------------===*/

typedef enum fbl_weights_flags {
  /// fbl_session_load_weights: fail, setting nothing, when a parameter is
  /// missing or a tensor of the file matches no input.
  FBL_WEIGHTS_STRICT = 1,
  /// fbl_session_save_weights: also write the optimizer state (inputs a
  /// training step updates that are not parameters).
  FBL_WEIGHTS_OPTIMIZER_STATE = 2
} fbl_weights_flags;

/// Sets every input whose name a tensor of the safetensors file `path` has.
/// The tensor's shape must equal the input's exactly, and the input must be
/// f32 or f16 (tensors are read as f32: F32, F16, BF16, F64, and I64/I32
/// that f32 holds exactly); otherwise the call fails before any input is
/// set. A parameter (`param`) without initializer that neither the file nor
/// an earlier call sets is missing; a tensor no input is named after is
/// unused. With FBL_WEIGHTS_STRICT either fails the call; without, they are
/// reported. `report` (when not NULL) receives one line per tensor:
/// "loaded NAME", "missing NAME" (an unnamed parameter: "argI"), "unused
/// NAME"; lines that do not fit in `report_size` are left out.
fbl_status fbl_session_load_weights(fbl_session *session, const char *path,
                                    int flags, char *report,
                                    size_t report_size);

/// Writes the current values (after training steps, the latest updates) of
/// the named parameters whose name contains `filter` (NULL or "" for all;
/// "lora_" for LoRA adapters) to the safetensors file `path` under their
/// names, as `dtype` ("F32", the default for NULL; "F16" or "BF16", rounded
/// to nearest even), with `__metadata__` {"format": "pt"}. With
/// FBL_WEIGHTS_OPTIMIZER_STATE, the named optimizer state matching `filter`
/// too. Unnamed parameters are not written. Fails when nothing matches or an
/// input to write was never set. The file is written under `path`.tmp and
/// renamed when complete.
fbl_status fbl_session_save_weights(fbl_session *session, const char *path,
                                    const char *filter, int flags,
                                    const char *dtype);

/*===----------------------------------------------------------------------===*\
|* safetensors files                                                          *|
\*===----------------------------------------------------------------------===*/

/// An open safetensors file: 8-byte little-endian header length N, N bytes
/// of JSON ({name: {"dtype", "shape", "data_offsets": [begin, end]},
/// "__metadata__": {str: str}}), then the tensors' bytes. Opening validates
/// the whole header against the file's size (no tensor data is read):
/// offsets in range, not overlapping and leaving no hole, sizes matching
/// shape and dtype, unique names, known dtypes.
typedef struct fbl_safetensors fbl_safetensors;

fbl_status fbl_safetensors_open(const char *path, fbl_safetensors **file);
void fbl_safetensors_close(fbl_safetensors *file);

size_t fbl_safetensors_num_tensors(const fbl_safetensors *file);

/// Name, dtype ("F32", "BF16", ...) and shape of tensor `index` (tensors
/// are in name order). The strings and `shape` live as long as `file`; any
/// out pointer may be NULL.
fbl_status fbl_safetensors_tensor_info(const fbl_safetensors *file,
                                       size_t index, const char **name,
                                       const char **dtype,
                                       const int64_t **shape, size_t *rank);

/// The index of the tensor named `name`.
fbl_status fbl_safetensors_find(const fbl_safetensors *file, const char *name,
                                size_t *index);

/// Reads tensor `index` as f32 into `data`, which holds `count` elements
/// (its element count). F32, F16 and BF16 convert exactly; F64 fails on a
/// finite value outside the f32 range, I64 and I32 on one f32 rounds; other
/// dtypes fail.
fbl_status fbl_safetensors_read_f32(fbl_safetensors *file, size_t index,
                                    float *data, size_t count);

/// `__metadata__`'s entries, in key order.
size_t fbl_safetensors_num_metadata(const fbl_safetensors *file);
fbl_status fbl_safetensors_metadata(const fbl_safetensors *file, size_t index,
                                    const char **key, const char **value);

/// Collects tensors and metadata, then writes a safetensors file (header
/// padded with spaces to 8 bytes; wider dtypes first, then by name).
typedef struct fbl_safetensors_writer fbl_safetensors_writer;

fbl_status fbl_safetensors_writer_create(fbl_safetensors_writer **writer);
void fbl_safetensors_writer_free(fbl_safetensors_writer *writer);

/// Adds `data` (product(shape) f32 values, row-major) as tensor `name`,
/// stored as `dtype`: "F32" (NULL), "F16" or "BF16" (rounded to nearest
/// even, overflow to infinity). The data is copied.
fbl_status fbl_safetensors_writer_add_f32(fbl_safetensors_writer *writer,
                                          const char *name,
                                          const int64_t *shape, size_t rank,
                                          const float *data, const char *dtype);

/// Sets `__metadata__[key]` (PEFT writes {"format": "pt"}).
fbl_status fbl_safetensors_writer_add_metadata(fbl_safetensors_writer *writer,
                                               const char *key,
                                               const char *value);

/// Writes `path` through `path`.tmp, renamed once every byte is written; a
/// failed write or rename removes the temporary file and fails the call.
fbl_status fbl_safetensors_writer_write(const fbl_safetensors_writer *writer,
                                        const char *path);

#ifdef __cplusplus
}
#endif

#endif /* FBL_RUNTIME_H */
