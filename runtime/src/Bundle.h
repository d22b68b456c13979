//===- Bundle.h - fbl bundles: manifest and program -------------*- C++ -*-===//
//
// What a bundle directory describes (memory objects, tensors with their
// layouts, kernels, inputs and outputs), read from its manifest.json and
// validated, and the OpenCL program built from its kernels.cl.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_RUNTIME_BUNDLE_H
#define FBL_RUNTIME_BUNDLE_H

#include "Device.h"

#include "fbl/Layout/Layout.h"

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace fbl::runtime {

struct Tensor {
  std::vector<int64_t> shape;
  std::string dtype;
  int64_t memory;
  layout::Layout layout;
  int64_t elements() const { return layout::Layout::product(shape); }
  /// Bytes of the dense row-major host array.
  size_t hostBytes() const;
};

struct Memory {
  layout::StorageKind storage;
  std::string dtype;
  int64_t width, height, layers, bytes;
  cl_mem mem = nullptr;
  /// The whole image, for clEnqueueRead/WriteImage.
  std::array<size_t, 3> region() const {
    return {static_cast<size_t>(width), static_cast<size_t>(height),
            static_cast<size_t>(layers)};
  }
};

struct Kernel {
  std::string name;     ///< unique per launch (profiles)
  std::string function; ///< the __kernel function of kernels.cl it runs
  /// Other functions it may run instead (manifest `variants`).
  std::vector<std::string> variants;
  /// The program's kernels, one per candidate: the function's, then each
  /// variant's.
  std::vector<cl_kernel> candidates;
  /// The candidate it runs (the fastest once a session has measured them).
  size_t chosen = 0;

  const std::string &candidateFunction(size_t c) const {
    return c ? variants[c - 1] : function;
  }
  cl_kernel launched() const { return candidates[chosen]; }
  /// Runs candidate `c`, or the function where it has no such candidate.
  void choose(size_t c) { chosen = c < candidates.size() ? c : 0; }
  std::vector<int64_t> args;
  /// Whether the kernel writes argument i (manifest `access`).
  std::vector<bool> writes;
  size_t grid[3], workgroup[3];
  double profiledMs = 0.0;
};

/// The valid elements of an integer input, from the manifest: kernels do
/// not check indices, so the runtime checks inputs before upload.
struct InputRange {
  bool present = false;
  int64_t min = 0, max = 0; ///< Both inclusive.
  std::string message;
};

/// A bundle as its manifest describes it; ids in the manifest are indices
/// into these vectors.
struct Bundle {
  std::vector<Tensor> tensors;
  std::vector<Memory> memories;
  std::vector<Kernel> kernels;
  std::vector<int64_t> inputTensors, outputTensors;
  std::vector<bool> inputIsParam, inputIsStepCount;
  std::vector<InputRange> inputRanges;
  /// Per input, its `name` (unique) and `init`; "" when it has none.
  std::vector<std::string> inputNames, inputInits;
  /// Per output, its `name`, or "".
  std::vector<std::string> outputNames;
  /// Per output, the input it replaces after a training step, or -1.
  std::vector<int64_t> outputUpdates;

  /// How errors name input `input`: "input 'labels' (arg 2)", or "input
  /// arg2" when it has no name.
  std::string inputLabel(size_t input) const;
  /// The input named `name`, or -1.
  int64_t findInput(const std::string &name) const;

  /// Reads `dir`/manifest.json; throws an Error when the directory is no
  /// bundle of this runtime's format version or names things that do not
  /// exist.
  static Bundle load(const std::filesystem::path &dir);

  /// The bundle `manifest` (the text of a manifest.json) describes; throws
  /// as load() does, or nlohmann::json::exception for a field of the wrong
  /// JSON type.
  static Bundle parse(const std::string &manifest);

  /// The texels (RGBA, f32) of the image memory of `tensor` holding the
  /// dense row-major host array `data`, packed through the tensor's layout;
  /// where the tensor takes less than the memory's width or height, its
  /// rows follow the memory's.
  std::vector<float> packTexels(const Tensor &tensor, const float *data) const;

  /// Unpacks `texels` (the whole image memory of `tensor`, as packTexels
  /// lays it out) into the dense row-major host array `data`.
  void unpackTexels(const Tensor &tensor, const std::vector<float> &texels,
                    float *data) const;
};

std::string readFile(const std::filesystem::path &p);

/// Builds `source` for `device`, through a binary cache keyed by source,
/// device and driver ($XDG_CACHE_HOME/fbl or ~/.cache/fbl) on drivers that
/// keep none of their own (all but PoCL; FBL_PROGRAM_CACHE=0/1 decides).
cl_program buildProgram(cl_context context, const DeviceEntry &device,
                        const std::string &source);

/// `source` (a kernels.cl as fbl-translate writes it: a preamble of
/// samplers and helpers, then kernel functions, each after the constant
/// tables it reads) as at most `parts` sources of whole functions, of about
/// equal size, each with the preamble: programs a driver compiles one at a
/// time can then be compiled side by side. One part where there is no
/// function or `parts` is below 2.
std::vector<std::string> splitKernelSource(const std::string &source,
                                           unsigned parts);

/// The kernels.cl `source` built for `device` as programs compiled at once
/// (buildProgram's cache per part), by as many threads as the host runs at
/// once: a part per 1 MiB of source, at most as many as the host has
/// hardware threads (at most 16); FBL_PROGRAM_PARTS=N asks for N. A
/// Whisper-tiny step's 42 MB of OpenCL C was one program that the NVIDIA
/// driver compiled for minutes on one core.
std::vector<cl_program> buildPrograms(cl_context context,
                                      const DeviceEntry &device,
                                      const std::string &source);

} // namespace fbl::runtime

#endif // FBL_RUNTIME_BUNDLE_H
