//===- CostModel.h - Texel fetches and texture-cache misses -----*- C++ -*-===//
//
// Estimates what a kernel costs on an image layout: the texel fetches it
// issues and the misses of a set-associative texture cache whose lines cover
// 2D blocks of texels, from a trace of the texel coordinates one work-group
// reads, computed with the layout algebra. No MLIR: kernels are described by
// their loop nest and the loop each tensor dim is indexed by.
//
// The kernel model is fbl's (and MNN's) image kernel: every work-item
// computes a 4x4 block over the two loops that index the output's last two
// dims, walks the innermost reduction loop 4 at a time, and reads whole
// texels, transposing 4x4 blocks in registers when an operand is packed
// along the other dim. Work-groups have the target's preferred 2D size.
// Assumptions are documented in docs/CostModel.md.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_COSTMODEL_COSTMODEL_H
#define FBL_COSTMODEL_COSTMODEL_H

#include "fbl/Layout/Layout.h"

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

/// Weights turning counts into one estimated cost (in texel-fetch units).
struct CostWeights {
  double fetch = 1.0; ///< a texel read that hits
  double write = 1.0; ///< a texel written
  double miss = 8.0;  ///< a line fill from the next level
};

/// The loop nest of a kernel.
struct LoopNest {
  std::vector<int64_t> ranges;
  std::vector<bool> reduction;
  /// Loops a work-item blocks by 4 (x then y); -1 when absent.
  int blockX = -1, blockY = -1;
  /// The reduction loop walked 4 at a time; -1 when absent.
  int unrolled = -1;
};

/// One tensor a kernel reads or writes: for each tensor dim, the loop that
/// indexes it (access maps are projected permutations).
struct TensorAccess {
  std::vector<int64_t> shape;
  std::vector<int> loopOfDim;
  layout::Layout layout;
};

/// What one access of a kernel costs over the whole launch.
struct AccessCost {
  int64_t fetches = 0;  ///< texel reads (or writes)
  int64_t misses = 0;   ///< cache line fills (reads only)
  int64_t elements = 0; ///< elements the fetches deliver that the kernel uses
  double cost = 0.0;
  AccessCost &operator+=(const AccessCost &o) {
    fetches += o.fetches;
    misses += o.misses;
    elements += o.elements;
    cost += o.cost;
    return *this;
  }
};

/// Chooses the blocked and unrolled loops for a kernel whose output is
/// indexed by `outputLoops` (one loop per output dim).
LoopNest makeLoopNest(std::vector<int64_t> ranges, std::vector<bool> reduction,
                      const std::vector<int> &outputLoops);

/// Number of work-groups a launch of `nest` needs.
int64_t numWorkGroups(const LoopNest &nest, int64_t wgX, int64_t wgY);

/// Cost of reading `access` in a launch of `nest` (work-groups of wgX x wgY
/// work-items), simulating the cache for one work-group and scaling.
AccessCost readCost(const LoopNest &nest, const TensorAccess &access,
                    int64_t wgX, int64_t wgY, const CacheGeometry &cache,
                    const CostWeights &weights = {});

/// Cost of writing `access` (each texel written once; writes bypass the
/// texture cache).
AccessCost writeCost(const TensorAccess &access,
                     const CostWeights &weights = {});

/// Cost of a relayout kernel copying a tensor of `shape` from `from` to `to`:
/// a 4x4-blocked copy over the destination that reads the source.
AccessCost relayoutCost(const std::vector<int64_t> &shape,
                        const layout::Layout &from, const layout::Layout &to,
                        int64_t wgX, int64_t wgY, const CacheGeometry &cache,
                        const CostWeights &weights = {});

} // namespace fbl::cost

#endif // FBL_COSTMODEL_COSTMODEL_H
