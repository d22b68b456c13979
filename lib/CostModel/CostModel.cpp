//===- CostModel.cpp - Texel fetches and texture-cache misses -------------===//
//
// Trace-driven estimate: the texel coordinates one work-group reads, step by
// step of its reduction loop, go through an LRU set-associative cache of 2D
// lines; fetches are the distinct texels each work-item needs per step.
// Counts are scaled by the number of work-groups (and by the reduction steps
// not simulated, when a long reduction is cut short).
//
//===----------------------------------------------------------------------===//

#include "fbl/CostModel/CostModel.h"

#include <algorithm>
#include <cstdint>
#include <list>
#include <set>
#include <tuple>
#include <unordered_map>

using namespace fbl;
using namespace fbl::cost;

namespace {

/// An LRU set-associative cache of 2D texel blocks.
class TextureCache {
public:
  explicit TextureCache(const CacheGeometry &g)
      : geometry(g), sets(static_cast<size_t>(g.numSets())) {}

  /// Returns true on a miss.
  bool access(const layout::TexelCoord &c) {
    int64_t lx = c.x / geometry.lineWidth, ly = c.y / geometry.lineHeight;
    uint64_t key = (static_cast<uint64_t>(c.layer) << 42) ^
                   (static_cast<uint64_t>(ly) << 21) ^
                   static_cast<uint64_t>(lx);
    // Neighbouring lines map to different sets.
    size_t set = static_cast<size_t>((lx + ly * 7 + c.layer * 13) %
                                     static_cast<int64_t>(sets.size()));
    std::list<uint64_t> &lru = sets[set];
    auto it = std::find(lru.begin(), lru.end(), key);
    if (it != lru.end()) {
      lru.splice(lru.begin(), lru, it);
      return false;
    }
    lru.push_front(key);
    if (static_cast<int64_t>(lru.size()) > geometry.ways)
      lru.pop_back();
    return true;
  }

private:
  CacheGeometry geometry;
  std::vector<std::list<uint64_t>> sets;
};

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Trip count of loop `l` in units of its step.
int64_t steps(const LoopNest &nest, int l) {
  int64_t step =
      (l == nest.blockX || l == nest.blockY || l == nest.unrolled) ? 4 : 1;
  return ceilDiv(nest.ranges[l], step);
}

} // namespace

LoopNest fbl::cost::makeLoopNest(std::vector<int64_t> ranges,
                                 std::vector<bool> reduction,
                                 const std::vector<int> &outputLoops) {
  LoopNest nest;
  nest.ranges = std::move(ranges);
  nest.reduction = std::move(reduction);
  size_t r = outputLoops.size();
  if (r >= 1 && outputLoops[r - 1] >= 0 && !nest.reduction[outputLoops[r - 1]])
    nest.blockX = outputLoops[r - 1];
  if (r >= 2 && outputLoops[r - 2] >= 0 && !nest.reduction[outputLoops[r - 2]])
    nest.blockY = outputLoops[r - 2];
  for (int l = static_cast<int>(nest.ranges.size()) - 1; l >= 0; --l)
    if (nest.reduction[l]) {
      nest.unrolled = l;
      break;
    }
  return nest;
}

int64_t fbl::cost::numWorkGroups(const LoopNest &nest, int64_t wgX,
                                 int64_t wgY) {
  int64_t groups = 1;
  for (int l = 0, e = static_cast<int>(nest.ranges.size()); l < e; ++l) {
    if (nest.reduction[l])
      continue;
    if (l == nest.blockX)
      groups *= ceilDiv(steps(nest, l), wgX);
    else if (l == nest.blockY)
      groups *= ceilDiv(steps(nest, l), wgY);
    else
      groups *= nest.ranges[l];
  }
  return groups;
}

AccessCost fbl::cost::readCost(const LoopNest &nest, const TensorAccess &access,
                               int64_t wgX, int64_t wgY,
                               const CacheGeometry &cache,
                               const CostWeights &weights) {
  const int numLoops = static_cast<int>(nest.ranges.size());
  // Work-items along each blocked loop, clipped to the loop's blocks.
  int64_t itemsX =
      nest.blockX >= 0 ? std::min(wgX, steps(nest, nest.blockX)) : 1;
  int64_t itemsY =
      nest.blockY >= 0 ? std::min(wgY, steps(nest, nest.blockY)) : 1;
  // Reduction iteration points, outer loops by 1, the unrolled one by 4.
  std::vector<int> redLoops;
  int64_t redSteps = 1;
  for (int l = 0; l < numLoops; ++l)
    if (nest.reduction[l]) {
      redLoops.push_back(l);
      redSteps *= steps(nest, l);
    }
  // Long reductions repeat the same pattern: simulate a prefix and scale.
  const int64_t maxSimulated = 512;
  int64_t simulated = std::min(redSteps, maxSimulated);

  TextureCache tc(cache);
  AccessCost total;
  std::vector<int64_t> loopBase(numLoops, 0);
  std::vector<int64_t> lo(access.shape.size()), hi(access.shape.size());
  std::set<std::tuple<int64_t, int64_t, int64_t>> texels;
  for (int64_t s = 0; s < simulated; ++s) {
    // Decode the reduction step into loop positions.
    int64_t rest = s;
    for (auto it = redLoops.rbegin(); it != redLoops.rend(); ++it) {
      int64_t n = steps(nest, *it);
      loopBase[*it] = (rest % n) * (*it == nest.unrolled ? 4 : 1);
      rest /= n;
    }
    for (int64_t iy = 0; iy < itemsY; ++iy)
      for (int64_t ix = 0; ix < itemsX; ++ix) {
        if (nest.blockX >= 0)
          loopBase[nest.blockX] = ix * 4;
        if (nest.blockY >= 0)
          loopBase[nest.blockY] = iy * 4;
        // The element box this work-item reads at this step.
        bool empty = false;
        for (size_t d = 0; d < access.shape.size(); ++d) {
          int l = access.loopOfDim[d];
          int64_t extent =
              (l == nest.blockX || l == nest.blockY || l == nest.unrolled) ? 4
                                                                           : 1;
          lo[d] = l >= 0 ? loopBase[l] : 0;
          hi[d] = std::min(lo[d] + extent, access.shape[d]);
          empty |= lo[d] >= hi[d];
        }
        if (empty)
          continue;
        texels.clear();
        int64_t elements = 0;
        // Odometer over the box [lo, hi).
        std::vector<int64_t> idx(lo.begin(), lo.end());
        while (true) {
          layout::TexelCoord c = access.layout.toTexel(access.shape, idx);
          texels.insert({c.layer, c.y, c.x});
          ++elements;
          size_t d = idx.size();
          while (d-- > 0) {
            if (++idx[d] < hi[d])
              break;
            idx[d] = lo[d];
          }
          if (d == SIZE_MAX)
            break;
        }
        total.elements += elements;
        total.fetches += static_cast<int64_t>(texels.size());
        for (const auto &[layer, y, x] : texels)
          total.misses += tc.access(layout::TexelCoord{layer, y, x, 0});
      }
  }
  double scale = static_cast<double>(redSteps) /
                 static_cast<double>(simulated) *
                 static_cast<double>(numWorkGroups(nest, wgX, wgY));
  total.fetches = static_cast<int64_t>(total.fetches * scale);
  total.misses = static_cast<int64_t>(total.misses * scale);
  total.elements = static_cast<int64_t>(total.elements * scale);
  total.cost = total.fetches * weights.fetch + total.misses * weights.miss;
  return total;
}

AccessCost fbl::cost::writeCost(const TensorAccess &access,
                                const CostWeights &weights) {
  AccessCost c;
  layout::Extents e = access.layout.extents(access.shape);
  c.fetches = access.layout.isBuffer() ? ceilDiv(e.elements(), 4) : e.texels();
  c.elements = layout::Layout::product(access.shape);
  c.cost = c.fetches * weights.write;
  return c;
}

AccessCost fbl::cost::relayoutCost(const std::vector<int64_t> &shape,
                                   const layout::Layout &from,
                                   const layout::Layout &to, int64_t wgX,
                                   int64_t wgY, const CacheGeometry &cache,
                                   const CostWeights &weights) {
  int rank = static_cast<int>(shape.size());
  std::vector<int> loops(rank);
  for (int d = 0; d < rank; ++d)
    loops[d] = d;
  LoopNest nest = makeLoopNest(shape, std::vector<bool>(rank, false), loops);
  AccessCost c = readCost(nest, TensorAccess{shape, loops, from}, wgX, wgY,
                          cache, weights);
  c += writeCost(TensorAccess{shape, loops, to}, weights);
  return c;
}
