//===- TargetDescription.h - The devices fbl compiles for -------*- C++ -*-===//
//
// The one home of what fbl knows about a target device, without MLIR: the
// fields of `#fbl.target<...>`, the built-in presets, which preset a local
// OpenCL device gets by its vendor, and the attribute text that describes a
// device. The dialect's TargetAttr is built from these presets and the
// runtime describes local devices with the same fields, so the compiler, the
// runtime, fbl-run and Python agree on one list.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_LAYOUT_TARGETDESCRIPTION_H
#define FBL_LAYOUT_TARGETDESCRIPTION_H

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <string>

namespace fbl::target {

/// How a device runs kernels and what moving a texel costs: what the cost
/// model and fbl-cachesim need beyond the cache geometry. Optional fields of
/// `#fbl.target<...>`; targets that are not presets get `kDefaultExecution`.
struct ExecutionModel {
  int64_t waveSize;      ///< work-items issued in lockstep (wave, warp)
  int64_t residentItems; ///< work-items resident on one compute unit at once,
                         ///< sharing its texture cache
  int64_t computeUnits;  ///< compute units (shader cores, SMs) of the device
  int64_t launchNs;      ///< fixed cost of one kernel launch
  int64_t fetchPs;       ///< a texel read that hits, per compute unit
  int64_t missPs;        ///< a cache-line fill, per compute unit
  int64_t writePs;       ///< a texel written, per compute unit

  bool operator==(const ExecutionModel &o) const {
    return waveSize == o.waveSize && residentItems == o.residentItems &&
           computeUnits == o.computeUnits && launchNs == o.launchNs &&
           fetchPs == o.fetchPs && missPs == o.missPs && writePs == o.writePs;
  }
};

/// One optional integer field of the execution model: its key in
/// `#fbl.target<...>` and where it lives.
struct ExecutionField {
  const char *key;
  int64_t ExecutionModel::*member;
};
inline constexpr ExecutionField kExecutionFields[] = {
    {"wave_size", &ExecutionModel::waveSize},
    {"resident_items", &ExecutionModel::residentItems},
    {"compute_units", &ExecutionModel::computeUnits},
    {"launch_ns", &ExecutionModel::launchNs},
    {"fetch_ps", &ExecutionModel::fetchPs},
    {"miss_ps", &ExecutionModel::missPs},
    {"write_ps", &ExecutionModel::writePs},
};

/// What a target that is not a preset assumes (docs/Targets.md).
inline constexpr ExecutionModel kDefaultExecution = {32,   1024, 1,   5000,
                                                     1000, 8000, 1000};

/// Every field of `#fbl.target<...>` (docs/Targets.md says what each means).
struct TargetDescription {
  std::string name;
  int64_t maxImageWidth, maxImageHeight, maxImageLayers;
  int64_t maxBufferBytes;
  std::array<int64_t, 2> cacheLineTexels;
  int64_t cacheBytes, cacheWays;
  bool fp16;
  int64_t maxWorkgroupSize;
  std::array<int64_t, 2> preferredWorkgroup;
  bool localTiledGemm;
  ExecutionModel execution;
  /// Image tensors other than parameters, optimizer state and step results
  /// are stored as CL_HALF_FLOAT (arithmetic stays f32).
  bool halfStorage;
};

/// Presets from public device data (docs/Targets.md says where each number
/// comes from).
inline const TargetDescription kPresets[] = {
    // Qualcomm Adreno 740 (Snapdragon 8 Gen 2).
    {"adreno-a740",
     16384,
     16384,
     2048,
     int64_t(1) << 30,
     {4, 2},
     16384,
     4,
     true,
     1024,
     {16, 8},
     false,
     // Waves of 64 fibers; 6 shader processors; launch, fetch and fill
     // costs estimated (docs/Targets.md).
     {64, 1024, 6, 8000, 1500, 6000, 1500},
     // fp16 images, as the mobile frameworks store them.
     true},
    // Arm Mali-G710 (Valhall).
    {"mali-g710",
     65536,
     65536,
     2048,
     int64_t(1) << 30,
     {4, 2},
     32768,
     4,
     true,
     1024,
     {8, 8},
     false,
     // Warps of 16 threads, 1024 threads per core, 10 cores (MC10).
     {16, 1024, 10, 10000, 1200, 4700, 1200},
     true},
    // PoCL on the host CPU (Debian pocl-opencl-icd).
    {"pocl-cpu",
     8192,
     8192,
     2048,
     int64_t(1) << 32,
     {4, 1},
     32768,
     8,
     true,
     4096,
     {8, 8},
     false,
     // One work-group per host thread at a time; 16-wide vectorized
     // work-items.
     {16, 64, 2, 20000, 2000, 8000, 2000},
     false},
    // NVIDIA H200 (OpenCL 3.0 driver).
    {"nvidia-h200",
     32768,
     32768,
     2048,
     int64_t(1) << 34,
     {8, 4},
     262144,
     4,
     true,
     1024,
     {16, 16},
     true,
     // Warps of 32, 2048 threads per SM, 132 SMs.
     {32, 2048, 132, 4800, 250, 4000, 250},
     false},
};

/// The preset called `name`, or null.
inline const TargetDescription *findPreset(const std::string &name) {
  for (const TargetDescription &p : kPresets)
    if (name == p.name)
      return &p;
  return nullptr;
}

/// The presets' names, comma separated (for messages).
inline std::string presetNames() {
  std::string s;
  for (const TargetDescription &p : kPresets)
    s += (s.empty() ? "" : ", ") + p.name;
  return s;
}

/// The preset for a local OpenCL device, chosen by its vendor and device
/// name; devices of other vendors get the PoCL CPU preset.
inline const TargetDescription &presetForDevice(const std::string &vendor,
                                                const std::string &device) {
  std::string s = vendor + " " + device;
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  struct Rule {
    const char *key, *preset;
  };
  static const Rule rules[] = {{"nvidia", "nvidia-h200"},
                               {"adreno", "adreno-a740"},
                               {"qualcomm", "adreno-a740"},
                               {"mali", "mali-g710"}};
  for (const Rule &r : rules)
    if (s.find(r.key) != std::string::npos)
      return *findPreset(r.preset);
  return *findPreset("pocl-cpu");
}

/// The execution-model fields of `e`, each as ", key = value".
inline std::string executionFields(const ExecutionModel &e) {
  std::string s;
  for (const ExecutionField &f : kExecutionFields)
    s += std::string(", ") + f.key + " = " + std::to_string(e.*f.member);
  return s;
}

/// `t` as `#fbl.target<...>` text with every field spelled out (what the
/// dialect parses; a preset's own name alone also parses).
inline std::string printAttribute(const TargetDescription &t) {
  auto pair = [](const std::array<int64_t, 2> &p) {
    return "[" + std::to_string(p[0]) + ", " + std::to_string(p[1]) + "]";
  };
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  return "#fbl.target<\"" + t.name +
         "\", max_image_width = " + std::to_string(t.maxImageWidth) +
         ", max_image_height = " + std::to_string(t.maxImageHeight) +
         ", max_image_layers = " + std::to_string(t.maxImageLayers) +
         ", max_buffer_bytes = " + std::to_string(t.maxBufferBytes) +
         ", cache_line_texels = " + pair(t.cacheLineTexels) +
         ", cache_bytes = " + std::to_string(t.cacheBytes) +
         ", cache_ways = " + std::to_string(t.cacheWays) +
         ", fp16 = " + flag(t.fp16) +
         ", max_workgroup_size = " + std::to_string(t.maxWorkgroupSize) +
         ", preferred_workgroup = " + pair(t.preferredWorkgroup) +
         (t.localTiledGemm ? ", local_tiled_gemm = true" : "") +
         (t.halfStorage ? ", half_storage = true" : "") +
         executionFields(t.execution) + ">";
}

} // namespace fbl::target

#endif // FBL_LAYOUT_TARGETDESCRIPTION_H
