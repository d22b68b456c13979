//===- CostModel.h - What an emitted kernel costs on image layouts -*- C++
//-*-===//
//
// Estimates the texel fetches, texture-cache misses, writes and time of one
// launch of a kernel as fbl emits it. No MLIR: a kernel is described by a
// KernelShape, which fbl/CostModel/KernelPlan.h builds with the same
// decisions fbl-lower-to-kernels takes (kernel family, work-items,
// work-group, what each work-item reads in which order).
//
// Fetches and writes are exact, by arithmetic over the kernel's loops.
// Misses come from a fixed-size sample: the work-groups that share compute
// unit 0's cache at one time (issued in order, every `computeUnits`-th
// group), their work-items interleaved a wave at a time, over a bounded
// window of reduction steps; the sample's miss rate times the exact fetches
// gives the misses. The sample's size does not depend on tensor extents, so
// neither does the cost of asking. docs/CostModel.md states the assumptions.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_COSTMODEL_COSTMODEL_H
#define FBL_COSTMODEL_COSTMODEL_H

#include "fbl/Layout/Layout.h"
#include "fbl/Layout/TargetDescription.h"

#include <array>
#include <cstdint>
#include <vector>

namespace fbl::cost {

/// Texture-cache geometry of a target.
struct CacheGeometry {
  int64_t lineWidth = 4;  ///< texels along x per line
  int64_t lineHeight = 2; ///< texels along y per line
  int64_t bytes = 16384;
  int64_t ways = 4;
  int64_t texelBytes = 16; ///< RGBA32F
  int64_t lineTexels() const { return lineWidth * lineHeight; }
  int64_t numLines() const { return bytes / (lineTexels() * texelBytes); }
  int64_t numSets() const {
    int64_t s = numLines() / ways;
    return s > 0 ? s : 1;
  }
};

/// What the model needs of a target.
struct DeviceModel {
  CacheGeometry cache;
  target::ExecutionModel execution = target::kDefaultExecution;
  std::array<int64_t, 2> preferredWorkgroup = {8, 8};
  /// Sample bounds: work-items simulated per kernel, and reduction steps
  /// (GEMM k-steps, or iterations of a generic kernel's reduction nest).
  int64_t sampledItems = 256;
  int64_t sampledSteps = 8;

  static DeviceModel of(const target::TargetDescription &t);
};

/// The kernel families of fbl-lower-to-kernels.
enum class KernelKind {
  /// One work-item per output texel computing its 4 channels together: the
  /// reduction nest runs once with 4 accumulators, and each input is read
  /// as its TensorAccess says (a whole texel for 4 channels or 4 steps, or
  /// an element per read). Generic ops, relayouts, slices and inserts.
  PerTexel,
  /// One work-item per output element (outputs in buffers), the same nest
  /// with one accumulator.
  PerElement,
  /// One work-item per 4x4 block of C, k walked 4 at a time, whole texels.
  RegisterTiledGemm,
  /// A work-group per tile of C (KernelShape::gemmTile: by default 8x8
  /// work-items over 64x64, 2x2 blocks each), slices of A and B staged
  /// through local memory.
  LocalTiledGemm,
  /// A relayout between packings: one work-item per 4x4 block over (the
  /// source's packed loop, the destination's), reading the block's 4 whole
  /// texels of the source, transposing them in registers and writing 4 whole
  /// texels of the destination.
  BlockTranspose,
};

/// A tensor a kernel reads or writes: for each tensor dim, the loop that
/// indexes it (-1: index 0).
struct TensorAccess {
  std::vector<int64_t> shape;
  std::vector<int> loopOfDim;
  layout::Layout layout;
  /// Slices: index d is (mul[d] * loop + add[d]) / div[d] (empty: the
  /// loop itself); a read whose index is off the stride or outside the
  /// tensor is not issued.
  std::vector<int64_t> mul, add, div;
  /// Reads issued only where input `outsideOf`'s read is not (the
  /// destination around an inserted slice); -1: always.
  int outsideOf = -1;
  /// Reads the launch issues when not one per output element and
  /// iteration (an inserted slice, the destination around it); -1: that.
  int64_t issued = -1;

  /// The index of dim `d` at loop value `i`, or -1 where no read is issued.
  int64_t indexAt(size_t d, int64_t i) const {
    if (mul.empty())
      return i;
    int64_t v = mul[d] * i + add[d];
    if (v < 0 || v % div[d] != 0 || v / div[d] >= shape[d])
      return -1;
    return v / div[d];
  }

  /// Per-texel kernels (decided by planReads): one fetch serves the
  /// output's 4 channels, because the tensor is packed along the output's
  /// packed loop (channel c holds channel c's element) or does not depend on
  /// it; else each channel fetches its own.
  bool channelsShareFetch = false;
  /// One fetch serves 4 consecutive iterations of the kernel's walked loop:
  /// the tensor is packed along it, or does not depend on it.
  bool stepsShareFetch = false;
  /// Read once before the reduction nest: it depends on no reduction loop.
  bool hoisted = false;

  /// Whether loop `l` indexes one of the tensor's dims.
  bool dependsOn(int l) const;
  /// Whether the tensor is an image packed along loop `l`.
  bool packedAlong(int l) const;
};

/// One kernel as fbl emits it.
struct KernelShape {
  KernelKind kind = KernelKind::PerTexel;
  std::vector<int64_t> ranges;
  std::vector<bool> reduction;
  TensorAccess output;
  /// Per-texel/per-element: the tensors the reduction nest reads, in load
  /// order. GEMMs: A (over m, k), then B (k, n).
  std::vector<TensorAccess> inputs;
  /// The output's initial value is loaded before the reduction (an
  /// accumulating op), through `output`'s access and layout (its read flags
  /// say how).
  bool readsInit = false;
  /// Loads at data-dependent addresses per iteration (gathers): each costs
  /// a fetch and a miss.
  int64_t gathersPerIteration = 0;
  /// GEMMs: the loops of C's rows, columns and the reduction. Block
  /// transposes: the source's packed loop (blocks along y) and the
  /// destination's (blocks along x).
  int mLoop = -1, nLoop = -1, kLoop = -1;
  /// Local-tiled GEMMs: the work-group tile.
  target::GemmTile gemmTile = target::kDefaultGemmTile;
  /// Per-texel kernels: the loop of the output's packed dim, whose 4
  /// consecutive values are a texel's 4 channels (-1: one channel).
  int channelLoop = -1;
  /// Per-texel kernels: the innermost reduction loop when an input is packed
  /// along it, walked 4 iterations per step (a tail of fewer at its end);
  /// -1: every loop one iteration per step.
  int walkLoop = -1;
  /// Float multiplies per application of the body (per element and
  /// reduction iteration): 1 for GEMMs, the body's multiplications for
  /// generic kernels.
  int64_t multipliesPerApplication = 0;
  /// For callers that plan from ops: the operand each input is.
  std::vector<unsigned> inputOperands;
  /// Tensors written, each through `output`'s access (per-texel and
  /// per-element kernels of ops with several results of one type).
  int64_t outputs = 1;
};

/// What one launch costs.
struct KernelCost {
  int64_t fetches = 0;    ///< texel (or buffer element) reads
  int64_t misses = 0;     ///< cache-line fills
  int64_t writes = 0;     ///< texels (or buffer elements / 4) written
  int64_t multiplies = 0; ///< float multiplies
  /// Memory accesses of one work-item (the grid's average; summed over
  /// kernels, the critical path of a sequence of launches).
  double itemAccesses = 0.0;
  int64_t launches = 0;
  double timeNs = 0.0;
  KernelCost &operator+=(const KernelCost &o) {
    fetches += o.fetches;
    misses += o.misses;
    writes += o.writes;
    multiplies += o.multiplies;
    itemAccesses += o.itemAccesses;
    launches += o.launches;
    timeNs += o.timeNs;
    return *this;
  }
};

/// What one read of a kernel costs in one launch.
struct ReadCost {
  int64_t fetches = 0;
  int64_t misses = 0;
};

/// The work-items of `k`'s grid (before rounding up to work-groups).
std::array<int64_t, 3> gridOf(const KernelShape &k);

/// The work-group a kernel over `items` work-items gets: the target's
/// preferred one (all of it along x for a grid one row high), each side
/// clamped to the next power of two of the grid, then halved (the larger
/// side first) while the grid has fewer groups than `execution`'s compute
/// units and a group more work-items than a wave.
std::array<int64_t, 3> workgroupFor(const std::array<int64_t, 3> &items,
                                    const std::array<int64_t, 2> &preferred,
                                    const target::ExecutionModel &execution);

/// What reading input `input` of `k` costs (`k.inputs.size()`: the
/// output's initial value). The kernel's reads share the cache: each is
/// simulated alone with an equal share of it, so that the cost of a read
/// depends on its own layout (and the kernel's launch) only.
ReadCost readCost(const KernelShape &k, unsigned input,
                  const DeviceModel &device);

/// Everything readCost(k, input, device) depends on besides the device, as
/// a key: reads of different ops that trace the same accesses (the same
/// tensor shapes and layouts under the same kernel) share one simulation.
std::vector<int64_t> readKey(const KernelShape &k, unsigned input);

/// One launch of `k` whose reads cost `reads`: adds gathers, writes, time.
KernelCost launchCost(const KernelShape &k, const std::vector<ReadCost> &reads,
                      const DeviceModel &device);

/// The cost of one launch of `k`: launchCost of every read's readCost.
KernelCost kernelCost(const KernelShape &k, const DeviceModel &device);

/// Decides how a per-texel (or per-element) kernel whose loops, inputs and
/// output `k` describes reads: its channel and walked loops, and for each
/// input (and the output, for its initial value) whether a fetch serves 4
/// channels, 4 steps, or the whole nest. planKernel calls it for generic
/// ops; the lowering emits what it decided.
void planReads(KernelShape &k);

/// How the local-tiled GEMM stages operand `a` (read as 4x4 blocks over
/// loops `rowLoop` x `colLoop`, one side of the tile along `tileLoop`, the
/// reduction along `kLoop`) into local memory, where each of the slice's k
/// is a row of texels along the tile (4 consecutive m, or n, a texel).
///
/// Where `a` is packed along the tile, each of its texels is such a row's
/// texel: work-items stage texels. Otherwise (packed along k: the
/// forward's activations, a transposed weight) a texel holds 4 k of one m,
/// so work-items stage whole 4x4 blocks (`wholeBlocks`) and transpose them
/// in registers. A slice's units are indexed by (kblk: the 4-deep step of
/// the slice, o: the texel of a 4x4 block, fixed at 0 for whole blocks,
/// blk: the block along the tile). Where the tile side has a multiple of 8
/// blocks, neighbouring work-items would store into different rows of one
/// column of the local tile (one bank): work-items staging texels take runs
/// of `run` = 8 neighbouring blocks, so that their stores fall on
/// consecutive texels of one row; whole blocks go in runs too, or one at a
/// time with the kernel permuting each local row's blocks instead
/// (`swizzled`), as `swizzleBlocks` (the tile's) says. The runs, then
/// `order` lists (kblk, o, blk-run) 0, 1, 2 slowest first: the one whose
/// step moves least in the image (layers, then rows, then columns) goes
/// fastest, so that a warp reads a compact patch of the image. Both the
/// kernel and its cost trace stage in this order: unit u is block
/// (u / run digit) * run + u % run.
enum GemmStagingDim { StageK = 0, StageTexel = 1, StageBlock = 2 };
struct LocalGemmStaging {
  std::array<int, 3> order;
  bool wholeBlocks;
  int packedLoop;
  int64_t run;
  bool swizzled;
  /// Extents of (kblk, o, blk-run) by dim: kBlocks, 4 (1 for whole
  /// blocks), sideBlocks / run.
  std::array<int64_t, 3> extents;

  /// Units of a slice, and how many each of `items` work-items takes (the
  /// last round's extra work-items read the last unit and store nothing).
  int64_t units() const { return extents[0] * extents[1] * extents[2] * run; }
  int64_t unitsPerItem(int64_t items) const {
    return (units() + items - 1) / items;
  }
  /// Texels a unit reads.
  int64_t texelsPerUnit() const { return wholeBlocks ? 4 : 1; }
};
LocalGemmStaging localGemmStaging(const TensorAccess &a, int tileLoop,
                                  int kLoop, int rowLoop, int colLoop,
                                  size_t numLoops, int64_t kBlocks,
                                  int64_t sideBlocks, bool swizzleBlocks);
/// The staging of the local-tiled GEMM `k`'s A (`input` 0) or B (1).
LocalGemmStaging localGemmStaging(const KernelShape &k, unsigned input);

/// The kernel that rewrites a tensor of `shape` from `from` to `to`: a block
/// transpose where the packings differ and both sides tile into whole 4x4
/// blocks (the destination without padding), else the per-texel copy (one
/// fetch per texel when the packed dims agree).
KernelShape relayoutKernel(const std::vector<int64_t> &shape,
                           const layout::Layout &from,
                           const layout::Layout &to);

} // namespace fbl::cost

#endif // FBL_COSTMODEL_COSTMODEL_H
