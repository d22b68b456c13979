//===- Session.h - A bundle opened on a device ------------------*- C++ -*-===//
//
// A session owns an OpenCL context, queue and programs for one bundle, one
// memory object per manifest memory entry, and which inputs are set.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_RUNTIME_SESSION_H
#define FBL_RUNTIME_SESSION_H

#include "Bundle.h"
#include "Device.h"

#include "fbl_runtime/fbl_runtime.h"

#include <filesystem>

/// The bundle's description plus the OpenCL objects that run it.
struct fbl_session : fbl::runtime::Bundle {
  fbl::runtime::DeviceEntry device;
  cl_context context = nullptr;
  /// Every command but profiled launches: no profiling, which some drivers
  /// pay for per launch whether or not an event is asked for.
  cl_command_queue queue = nullptr;
  /// Profiled launches (fbl_session_run's profile), created when first
  /// needed; every use finishes before `queue` is used again.
  cl_command_queue profilingQueue = nullptr;
  /// kernels.cl, built as one program or as several (buildPrograms).
  std::vector<cl_program> programs;
  std::vector<bool> inputSet;
  /// Per output: whether train steps copy it into its input on the device.
  std::vector<bool> updateOnDevice;
  double medianMs = 0.0;
  bool warmedUp = false;

  ~fbl_session();

  void open(const std::filesystem::path &dir, const char *selector);
  /// Checks the manifest's kernels against the program and the device:
  /// argument counts and storage kinds, work-group sizes, buffer sizes.
  /// Throws before anything is allocated.
  void checkKernels() const;
  void allocate();
  void upload(size_t input, const void *data, size_t bytes);
  /// Throws the one-line error for the first element of integer input
  /// `input` outside its manifest range.
  void checkRange(size_t input, const void *data) const;
  void download(size_t output, void *data, size_t bytes);
  /// Reads input `input`'s current value: what was set, or after training
  /// steps the latest update.
  void readInput(size_t input, void *data, size_t bytes);
  /// Sets input `input` from its `init`, drawing from a generator seeded by
  /// `seed` and the input's name (its index when it has none), so one
  /// input's values do not depend on which other inputs exist.
  void initInput(size_t input, uint64_t seed);
  void run(int iterations, bool profile);
  void trainStep(int64_t step, bool profile);
  /// fbl_session_load_weights: returns the report, one line per tensor.
  std::string loadWeights(const std::string &path, int flags);
  /// fbl_session_save_weights.
  void saveWeights(const std::string &path, const std::string &filter,
                   int flags, const std::string &dtype);

private:
  /// Enqueues every kernel of the schedule once on `on`, each with a
  /// profiling event in `events` when given (`on` the profiling queue).
  void launchSchedule(cl_command_queue on, std::vector<cl_event> *events);
  /// Runs the schedule once on the profiling queue: each kernel's device
  /// time in milliseconds.
  std::vector<double> timedSchedule();
  /// Runs the schedule `iterations` more times with profiling events and
  /// records each kernel's median device time.
  void profileSchedule(int iterations);
  /// Where kernels have variants: times whole steps with each kernel's
  /// function and each variant in turn, three rounds, and makes each kernel
  /// run its fastest by median time (device time from profiling events;
  /// host time with FBL_KERNEL_VARIANTS=host or where the events do not
  /// measure). FBL_KERNEL_VARIANTS=N runs variant N where a kernel has one,
  /// its function where not (0: every function), without measuring.
  void chooseVariants();
  void readTensor(const fbl::runtime::Tensor &t, void *data, size_t bytes);
  /// Whether memory `m` stores half floats (converted from and to f32).
  static bool isHalf(const fbl::runtime::Memory &m);
  /// Whether tensors `a` (an output) and `b` live in distinct memories of one
  /// descriptor with one layout, so a device copy moves `a` into `b`.
  bool storedAlike(int64_t a, int64_t b) const;
};

#endif // FBL_RUNTIME_SESSION_H
