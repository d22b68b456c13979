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
#include <limits>
#include <string>
#include <string_view>
#include <vector>

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
  int64_t multiplyFs;    ///< a float multiply (GEMM multiply-adds, body
                         ///< multiplications), per compute unit, in fs
  int64_t stepPs;        ///< one memory access of a work-item that waits for
                         ///< the one before it: what a kernel with too few
                         ///< work-items to hide latency pays per access

  bool operator==(const ExecutionModel &o) const {
    return waveSize == o.waveSize && residentItems == o.residentItems &&
           computeUnits == o.computeUnits && launchNs == o.launchNs &&
           fetchPs == o.fetchPs && missPs == o.missPs && writePs == o.writePs &&
           multiplyFs == o.multiplyFs && stepPs == o.stepPs;
  }
};

/// One optional integer field of a part of the target (its execution
/// model, its kernel argument limits): its key in `#fbl.target<...>`, where
/// it lives and the values it may take (a count is at least 1; a flag is 0
/// or 1).
template <typename Part> struct IntegerField {
  const char *key;
  int64_t Part::*member;
  int64_t least = 1;
  int64_t most = std::numeric_limits<int64_t>::max();
};
using ExecutionField = IntegerField<ExecutionModel>;
inline constexpr ExecutionField kExecutionFields[] = {
    {"wave_size", &ExecutionModel::waveSize},
    {"resident_items", &ExecutionModel::residentItems},
    {"compute_units", &ExecutionModel::computeUnits},
    {"launch_ns", &ExecutionModel::launchNs},
    {"fetch_ps", &ExecutionModel::fetchPs},
    {"miss_ps", &ExecutionModel::missPs},
    {"write_ps", &ExecutionModel::writePs},
    {"multiply_fs", &ExecutionModel::multiplyFs},
    {"step_ps", &ExecutionModel::stepPs},
};

/// How many arguments of each kind one kernel may take on the device
/// (CL_DEVICE_MAX_READ_IMAGE_ARGS, CL_DEVICE_MAX_WRITE_IMAGE_ARGS,
/// CL_DEVICE_MAX_PARAMETER_SIZE). A kernel past them does not fail to build
/// on every driver: NVIDIA's builds one with 96 write images where it
/// allows 32, and the launch faults the queue.
struct KernelArgumentLimits {
  int64_t readImages;
  int64_t writeImages;
  int64_t parameterBytes;
  /// 1 where the members of a merged launch may share their local arrays (a
  /// work-group runs one member, so one array serves all), 0 where each
  /// takes its own. PoCL 3.1 turns a kernel's local arrays into arguments
  /// and miscompiles one array that two members' branches use across their
  /// barriers: the first member's stores came back as garbage (the
  /// row-property test's seed 3, case 6), with either work-group method.
  int64_t sharedLocalMemory;

  bool operator==(const KernelArgumentLimits &o) const {
    return readImages == o.readImages && writeImages == o.writeImages &&
           parameterBytes == o.parameterBytes &&
           sharedLocalMemory == o.sharedLocalMemory;
  }
};
inline constexpr IntegerField<KernelArgumentLimits> kKernelArgumentFields[] = {
    {"max_read_image_args", &KernelArgumentLimits::readImages},
    {"max_write_image_args", &KernelArgumentLimits::writeImages},
    {"max_parameter_bytes", &KernelArgumentLimits::parameterBytes},
    {"shared_local_memory", &KernelArgumentLimits::sharedLocalMemory, 0, 1},
};
/// What OpenCL 1.2 promises every device with images (full profile): the
/// limits of a target that is not a preset and does not give its own.
inline constexpr KernelArgumentLimits kMinKernelArguments = {128, 8, 1024, 1};

/// The arguments one kernel takes, by kind.
struct KernelArguments {
  int64_t readImages = 0, writeImages = 0, buffers = 0;

  /// Bytes of its parameters: every argument is a memory object, whose
  /// handle takes a device pointer's 8 bytes.
  int64_t parameterBytes() const {
    return 8 * (readImages + writeImages + buffers);
  }
  KernelArguments &operator+=(const KernelArguments &o) {
    readImages += o.readImages;
    writeImages += o.writeImages;
    buffers += o.buffers;
    return *this;
  }
};

/// Why a kernel taking `a` cannot run under `limits` ("96 write images
/// (at most 32)"), or an empty string where it can.
inline std::string exceededArguments(const KernelArguments &a,
                                     const KernelArgumentLimits &limits) {
  auto over = [](int64_t n, const char *what, int64_t most) {
    return std::to_string(n) + " " + what + " (at most " +
           std::to_string(most) + ")";
  };
  if (a.writeImages > limits.writeImages)
    return over(a.writeImages, "write images", limits.writeImages);
  if (a.readImages > limits.readImages)
    return over(a.readImages, "read images", limits.readImages);
  if (a.parameterBytes() > limits.parameterBytes)
    return over(a.parameterBytes(), "bytes of parameters",
                limits.parameterBytes);
  return "";
}

/// The execution models of the presets and of targets that are not presets
/// (`"default"`), from ExecutionPresets.def: benchmarks/calibrate.py
/// rewrites a preset's line there with what it measured on the device.
struct NamedExecution {
  const char *name;
  ExecutionModel model;
};
inline constexpr NamedExecution kExecutionPresets[] = {
#define FBL_EXECUTION_PRESET(NAME, ...) {NAME, {__VA_ARGS__}},
#include "fbl/Layout/ExecutionPresets.def"
#undef FBL_EXECUTION_PRESET
};

/// The execution model recorded for `name` (`"default"` when there is none).
constexpr const ExecutionModel &executionPreset(std::string_view name) {
  for (const NamedExecution &e : kExecutionPresets)
    if (name == e.name)
      return e.model;
  return executionPreset("default");
}

/// What a target that is not a preset assumes (docs/Targets.md).
inline constexpr ExecutionModel kDefaultExecution = executionPreset("default");

/// What one kernel launch does, in the execution model's terms: the cost
/// model's counts or fbl-cachesim's.
struct LaunchWork {
  double fetches = 0, misses = 0, writes = 0;
  /// Float multiplies of the whole grid.
  double multiplies = 0;
  /// Memory accesses of the work-item that makes the most, in order.
  double itemAccesses = 0;
  int64_t groups = 1;     ///< work-groups of the grid
  int64_t groupItems = 1; ///< work-items per work-group
};

/// The time of one launch, in ns: the launch cost, then the larger of the
/// throughput bound (every count at its cost, spread over the compute units
/// the grid occupies) and the latency bound (the longest work-item's
/// accesses one after the other, once per round of work-groups a compute
/// unit holds at a time). docs/CostModel.md.
inline double launchTimeNs(const ExecutionModel &e, const LaunchWork &w) {
  int64_t groups = std::max<int64_t>(w.groups, 1);
  int64_t units = std::max<int64_t>(
      1, std::min<int64_t>(std::max<int64_t>(e.computeUnits, 1), groups));
  int64_t resident = std::max<int64_t>(
      1, e.residentItems / std::max<int64_t>(w.groupItems, 1));
  int64_t rounds = (groups + units * resident - 1) / (units * resident);
  double throughputPs = w.fetches * double(e.fetchPs) +
                        w.misses * double(e.missPs) +
                        w.writes * double(e.writePs) +
                        w.multiplies * double(e.multiplyFs) / 1000.0;
  // Work-groups are alike: the compute unit that takes the most of them
  // (the last wave's) ends the launch.
  int64_t busiest = (groups + units - 1) / units;
  double throughput = throughputPs / 1000.0 / double(groups) * double(busiest);
  double latency = double(rounds) * w.itemAccesses * double(e.stepPs) / 1000.0;
  return double(e.launchNs) + std::max(throughput, latency);
}

/// The local memory every OpenCL device has (CL_DEVICE_LOCAL_MEM_SIZE of
/// the full profile): a GEMM tile's staged slices must fit in it.
inline constexpr int64_t kMinLocalMemoryBytes = 32 * 1024;

/// The work-group tile of the local-tiled GEMM kernel (`gemm_tile`):
/// groupItems work-items along n (x) by rows() along m (y), each computing
/// blocksM() x blocksN() 4x4 blocks of C (itemBlocks a side, or along m
/// with itemBlocksN along n), so that a group covers a
/// tileM() x tileN() tile of C, and localK-deep slices of A and B staged in
/// local memory per step. groupRows 0 is a square group. An operand packed
/// along k is staged in whole 4x4 blocks: in the image's order with each
/// local row's blocks XOR-permuted (swizzleBlocks), or in runs of 8
/// neighbouring blocks as texel-staged operands are; which is faster
/// depends on the shape (docs/Kernels.md), so the tuning records it.
/// Each work-item reads its texels of the next slice before multiplying
/// the current one and stores them into local memory after storeAfterK of
/// the slice's k steps (0: after all of them); where the stores stand bounds
/// how far the device compiler can move the reads towards them (the
/// tuning records that too).
struct GemmTile {
  int64_t groupItems = 8, itemBlocks = 2, localK = 16, groupRows = 0;
  bool swizzleBlocks = true;
  int64_t storeAfterK = 0;
  /// Blocks a work-item computes along n; 0: itemBlocks (square).
  int64_t itemBlocksN = 0;

  constexpr int64_t rows() const { return groupRows ? groupRows : groupItems; }
  constexpr int64_t cols() const { return groupItems; }
  /// 4x4 blocks of C a work-item computes along m and along n.
  constexpr int64_t blocksM() const { return itemBlocks; }
  constexpr int64_t blocksN() const {
    return itemBlocksN ? itemBlocksN : itemBlocks;
  }
  /// 4x4 blocks of C along the tile's m and n sides.
  constexpr int64_t tileBlocksM() const { return rows() * blocksM(); }
  constexpr int64_t tileBlocksN() const { return cols() * blocksN(); }
  constexpr int64_t tileM() const { return 4 * tileBlocksM(); }
  constexpr int64_t tileN() const { return 4 * tileBlocksN(); }
  /// 4-deep steps of k per staged slice.
  constexpr int64_t kBlocks() const { return localK / 4; }
  constexpr int64_t items() const { return rows() * cols(); }
  /// Bytes of local memory the A and B tiles take (RGBA32F): two slices
  /// each, one multiplied while the next is staged.
  constexpr int64_t localBytes() const {
    return 2 * (tileBlocksM() + tileBlocksN()) * localK * 16;
  }
  /// Work-group tiles along C's m or n side of `range` elements, and staged
  /// slices along a k of `range`: the last ones ragged where the range does
  /// not divide (the kernel zeroes what lies beyond it and stores nothing
  /// there).
  constexpr int64_t tilesAlongM(int64_t range) const {
    return (range + tileM() - 1) / tileM();
  }
  constexpr int64_t tilesAlongN(int64_t range) const {
    return (range + tileN() - 1) / tileN();
  }
  constexpr int64_t slicesAlong(int64_t range) const {
    return (range + localK - 1) / localK;
  }
  /// Whether the tile covers a GEMM of M x N x K, in whole texels, with
  /// at most an eighth more along each of them: more waste than that leaves
  /// the GEMM to the register-tiled kernel.
  constexpr bool covers(int64_t m, int64_t n, int64_t k) const {
    auto close = [](int64_t range, int64_t covered) {
      int64_t texels = (range + 3) / 4 * 4;
      return range > 0 && (covered - texels) * 8 <= texels;
    };
    return close(m, tilesAlongM(m) * tileM()) &&
           close(n, tilesAlongN(n) * tileN()) &&
           close(k, slicesAlong(k) * localK);
  }
  /// Why the tile cannot be emitted, or null.
  constexpr const char *invalidReason() const {
    if (groupItems < 1 || itemBlocks < 1 || localK < 4 || groupRows < 0 ||
        itemBlocksN < 0)
      return "gemm_tile needs positive [group_items, item_blocks, local_k"
             "(, group_rows(, swizzle(, store_after_k(, item_blocks_n))))] "
             "with local_k >= 4";
    if (localK % 4)
      return "gemm_tile's local_k must be a multiple of 4";
    if (storeAfterK < 0 || storeAfterK >= localK)
      return "gemm_tile's store_after_k must be at least 0 and less than "
             "local_k";
    // Bounds that keep every product of the tile's sizes in range.
    if (groupItems > 1024 || rows() > 1024 || itemBlocks > 64 ||
        itemBlocksN > 64 || localK > 4096)
      return "gemm_tile's sizes must be at most [1024, 64, 4096, 1024] and "
             "item_blocks_n at most 64";
    return nullptr;
  }
  constexpr bool operator==(const GemmTile &o) const {
    return groupItems == o.groupItems && itemBlocks == o.itemBlocks &&
           blocksN() == o.blocksN() && localK == o.localK &&
           rows() == o.rows() && swizzleBlocks == o.swizzleBlocks &&
           storeAfterK == o.storeAfterK;
  }
};

/// Another body of the local-tiled GEMM kernel for the device to measure
/// (`gemm_variants`): the same tile and launch, with the next slice's texels
/// stored into local memory after storeAfterK of a slice's k steps (0: after
/// all) and, with fusedMultiplyAdd, each multiply-add as fma(). Which body
/// is fastest depends on how the device's compiler schedules it, which
/// differs from kernel to kernel (docs/benchmarks.md), so the runtime times
/// them on the device and runs the fastest.
struct GemmVariant {
  int64_t storeAfterK = 0;
  bool fusedMultiplyAdd = false;

  constexpr bool operator==(const GemmVariant &o) const {
    return storeAfterK == o.storeAfterK &&
           fusedMultiplyAdd == o.fusedMultiplyAdd;
  }
};

/// The tile targets without `gemm_tile` take, and the one the local-tiled
/// GEMM falls back to for sizes that do not divide into the target's.
inline constexpr GemmTile kDefaultGemmTile{};

/// A GEMM shape class (`gemm_tile_classes`): GEMMs with at least
/// minOutputs elements of C (batch x M x N) take `tile` instead of
/// `gemm_tile`.
/// How many work-groups a tile leaves for the compute units is what moves
/// the best tile with the size (benchmarks/tune_gemm.py measures it).
/// ownLaunch GEMMs of the class run in launches of their own: merged with
/// another (fbl-merge-dispatches), a kernel takes the registers of its
/// largest member and one body variant for all members, which the step
/// timings of a class can show to cost more than the launch saved.
struct GemmTileClass {
  int64_t minOutputs = 0;
  GemmTile tile;
  bool ownLaunch = false;

  constexpr bool operator==(const GemmTileClass &o) const {
    return minOutputs == o.minOutputs && tile == o.tile &&
           ownLaunch == o.ownLaunch;
  }
};

/// The class of a batch x m x n C: the largest of `classes` (any range of
/// GemmTileClass, in increasing order) whose minOutputs batch x m x n
/// reaches, else `base`'s own ({0, base}). A class replaces the smaller
/// class only where its tile pads C no more: tiles are tuned on sizes they
/// divide, and rows or columns computed past C's sides are work the
/// tuning never saw (a 96x96 tile takes ViT's 6304 rows, padded to 6336
/// as with 64x64 tiles, but not 2048, which 64 divides and 96 pads by 64).
/// And only where `noSlower(tile, chosen)`: a size class is tuned on a few
/// shapes, and a tile best at 2048x2048 can be the slowest at 12000x384
/// (the local-tiled GEMM asks the cost model).
template <typename Classes, typename NoSlower>
GemmTileClass gemmTileClassFor(const GemmTile &base, const Classes &classes,
                               int64_t batch, int64_t m, int64_t n,
                               NoSlower noSlower) {
  auto padded = [&](const GemmTile &t) {
    return t.tilesAlongM(m) * t.tileM() * t.tilesAlongN(n) * t.tileN();
  };
  GemmTileClass chosen{0, base};
  for (const GemmTileClass &c : classes) {
    if (batch * m * n < c.minOutputs)
      break;
    if ((chosen.minOutputs == 0 || padded(c.tile) <= padded(chosen.tile)) &&
        noSlower(c.tile, chosen.tile))
      chosen = c;
  }
  return chosen;
}

/// gemmTileClassFor by sizes alone.
template <typename Classes>
GemmTileClass gemmTileClassFor(const GemmTile &base, const Classes &classes,
                               int64_t batch, int64_t m, int64_t n) {
  return gemmTileClassFor(
      base, classes, batch, m, n,
      [](const GemmTile &, const GemmTile &) { return true; });
}

/// The tile of gemmTileClassFor's class.
template <typename Classes>
GemmTile gemmTileFor(const GemmTile &base, const Classes &classes,
                     int64_t batch, int64_t m, int64_t n) {
  return gemmTileClassFor(base, classes, batch, m, n).tile;
}

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
  GemmTile gemmTile = kDefaultGemmTile;
  /// Larger GEMMs' tiles, by increasing minOutputs.
  std::vector<GemmTileClass> gemmTileClasses = {};
  /// Other bodies of every local-tiled GEMM, measured on the device.
  std::vector<GemmVariant> gemmVariants = {};
  KernelArgumentLimits kernelArguments = kMinKernelArguments;
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
     executionPreset("adreno-a740"),
     // fp16 images, as the mobile frameworks store them.
     true,
     kDefaultGemmTile,
     {},
     {},
     // What OpenCL 3.0 promises a device with images (no public device
     // query of this one at hand).
     {128, 64, 1024, 1}},
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
     executionPreset("mali-g710"),
     true,
     kDefaultGemmTile,
     {},
     {},
     {128, 64, 1024, 1}},
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
     // Local tiles: 3x the register-tiled GEMM at 256x256x512 here
     // (benchmarks/calibrate_kinds.py, docs/benchmarks.md).
     true,
     executionPreset("pocl-cpu"),
     false,
     kDefaultGemmTile,
     {},
     {},
     // PoCL 3.1's CPU device reports 128 read and 128 write images and
     // 1024 bytes of parameters, rusticl on llvmpipe 128, 64 and 1576: the
     // tests run this preset's bundles on both. PoCL miscompiles merged
     // members that share a local array (sharedLocalMemory).
     {128, 64, 1024, 0}},
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
     executionPreset("nvidia-h200"),
     false,
     // benchmarks/tune_gemm.py on the H200 (docs/benchmarks.md, "GEMM
     // tiles by shape class", "k-major local tiles"): [8, 1, 16] below 1M
     // elements of C (1024x768: 21.6 TFLOP/s against 20.7 for [8, 2, 8]);
     // [8, 2, 16] from 1M: with k-major local tiles the best of nine tiles
     // (square and 8x16, 16x8 groups) at 512x2048, 2048^2 and ViT's
     // 6400x768 and 6400x3072 (34.1, 37.6 and 43.8 TFLOP/s geometric means,
     // against 31.7, 33.7, 39.0 for [8, 2, 16, 16]). Whole blocks in runs
     // from 4.5M elements ("Split-K and staging by shape class"): at
     // ViT's 6336x768 and 6336x3072 37.7 and 40.2 TFLOP/s against 33.5 and
     // 36.0 with XOR-permuted rows, at 2048^2 40.2 against 42.2. 96x96
     // tiles (12x12 of C a work-item) from ViT's 6304x768 ("Work-items of
     // 12x12"): on the H100 at 6336x768x3072 and 6336x768x768 46.7 and
     // 42.4 TFLOP/s against 41.5 and 38.9, ViT-B/16's steps 2.0% (LoRA)
     // and 2.4% (full) faster; at 2048^3 and 512x2048x2048, which 96 pads,
     // 38.9 and 17.9 against 42.5 and 33.1 (gemmTileFor keeps the smaller
     // class's tile there). 128x128 tiles in launches of their own from
     // 4M (2048^2): the MLP 2048^3 step 1.977 ms against 2.070 with the
     // 64x64 tiles (H100, "Launches of their own"); with the step's two
     // backward GEMMs merged into one launch they made it slower, 2.093 ms,
     // and at ViT's sizes the 128x128 tile loses.
     {8, 1, 16},
     {{1 << 20, {8, 2, 16}},
      {4194304, {16, 2, 16, 16, false}, true},
      {4718592, {8, 2, 16, 0, false}},
      {4841472, {8, 3, 8, 0, false}}},
     // Which of these runs fastest differs from GEMM to GEMM (H200,
     // docs/benchmarks.md "Where the next slice is stored, measured"):
     // stores after half a slice lift the GEMMs in the slow mode (2048^3
     // NT R-Tile 31 -> 40 TFLOP/s) and slow others; fma() is the best body
     // of the NN GEMMs (2048^3 39.7 -> 42.6). Stores after three quarters
     // of the slice were the H100's best body of 2048^3 NT R-Tile (41.8
     // TFLOP/s against 40.3) and TN channel-packed (45.3 against 43.0)
     // ("Kernel variants measured on the device").
     {{8, false}, {0, true}, {12, false}},
     // The H100's driver (clinfo, 2026-12-07): 256 read and 32 write
     // images. 4352 bytes of parameters: what NVIDIA's OpenCL reports for
     // its GPUs (that clinfo line was not kept).
     {256, 32, 4352, 1}},
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

/// The integer fields `fields` of `part` (the execution model, the kernel
/// argument limits), each as ", key = value".
template <typename Part, size_t N>
inline std::string integerFields(const IntegerField<Part> (&fields)[N],
                                 const Part &part) {
  std::string s;
  for (const IntegerField<Part> &f : fields)
    s += std::string(", ") + f.key + " = " + std::to_string(part.*f.member);
  return s;
}

/// `[group_items, item_blocks, local_k]`, with `, group_rows` where the
/// group is not square or more follows, `, swizzle` where blocks are staged
/// in runs or more follows, `, store_after_k` where it is not 0 or more
/// follows, and `, item_blocks_n` where a work-item's blocks are oblong;
/// with `full`, all seven.
inline std::string tileText(const GemmTile &t, bool full = false) {
  bool wide = full || t.blocksN() != t.blocksM();
  bool store = wide || t.storeAfterK;
  bool swizzle = store || !t.swizzleBlocks;
  bool rows = t.rows() != t.cols() || swizzle;
  return "[" + std::to_string(t.groupItems) + ", " +
         std::to_string(t.itemBlocks) + ", " + std::to_string(t.localK) +
         (rows ? ", " + std::to_string(t.rows()) : "") +
         (swizzle ? (t.swizzleBlocks ? ", 1" : ", 0") : "") +
         (store ? ", " + std::to_string(t.storeAfterK) : "") +
         (wide ? ", " + std::to_string(t.blocksN()) : "") + "]";
}

/// `[[min_outputs, group_items, item_blocks, local_k(, group_rows(,
/// swizzle(, store_after_k(, item_blocks_n(, own_launch)))))], ...]`
/// (cs: any range of GemmTileClass).
template <typename Classes> std::string tileClassesText(const Classes &cs) {
  std::string s = "[";
  for (const GemmTileClass &c : cs) {
    std::string tile = tileText(c.tile, c.ownLaunch).substr(1);
    if (c.ownLaunch)
      tile.insert(tile.size() - 1, ", 1");
    s += (s.size() > 1 ? ", [" : "[") + std::to_string(c.minOutputs) + ", " +
         tile;
  }
  return s + "]";
}

/// `[[store_after_k, fma], ...]` (vs: any range of GemmVariant).
template <typename Variants> std::string variantsText(const Variants &vs) {
  std::string s = "[";
  for (const GemmVariant &v : vs)
    s += (s.size() > 1 ? ", [" : "[") + std::to_string(v.storeAfterK) +
         (v.fusedMultiplyAdd ? ", 1]" : ", 0]");
  return s + "]";
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
         (t.gemmTile == kDefaultGemmTile
              ? std::string()
              : ", gemm_tile = " + tileText(t.gemmTile)) +
         (t.gemmTileClasses.empty()
              ? std::string()
              : ", gemm_tile_classes = " + tileClassesText(t.gemmTileClasses)) +
         (t.gemmVariants.empty()
              ? std::string()
              : ", gemm_variants = " + variantsText(t.gemmVariants)) +
         integerFields(kExecutionFields, t.execution) +
         integerFields(kKernelArgumentFields, t.kernelArguments) + ">";
}

} // namespace fbl::target

#endif // FBL_LAYOUT_TARGETDESCRIPTION_H
