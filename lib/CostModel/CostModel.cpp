//===- CostModel.cpp - What an emitted kernel costs on image layouts ------===//
//
// Fetches and writes by arithmetic; misses from the miss rate of a fixed
// sample (compute unit 0's resident work-groups, waves interleaved, a
// bounded window of reduction steps) through an LRU set-associative cache
// of 2D lines.
//
//===----------------------------------------------------------------------===//

#include "fbl/CostModel/CostModel.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

using namespace fbl;
using namespace fbl::cost;
namespace fl = fbl::layout;

DeviceModel DeviceModel::of(const target::TargetDescription &t) {
  DeviceModel d;
  d.cache.lineWidth = t.cacheLineTexels[0];
  d.cache.lineHeight = t.cacheLineTexels[1];
  d.cache.bytes = t.cacheBytes;
  d.cache.ways = t.cacheWays;
  d.execution = t.execution;
  d.preferredWorkgroup = t.preferredWorkgroup;
  return d;
}

namespace {

/// An LRU set-associative cache of 2D texel blocks, in flat arrays.
class TextureCache {
public:
  explicit TextureCache(const CacheGeometry &g)
      : sets(g.numSets()), ways(g.ways),
        tags(static_cast<size_t>(sets * ways), kEmpty),
        stamps(static_cast<size_t>(sets * ways), 0) {}

  /// Returns true on a miss of the line `key` (which maps to `set`).
  bool access(uint64_t key, uint64_t set) {
    int64_t at = static_cast<int64_t>(set % static_cast<uint64_t>(sets)) * ways;
    uint64_t *tag = &tags[static_cast<size_t>(at)];
    uint64_t *stamp = &stamps[static_cast<size_t>(at)];
    ++clock;
    int64_t victim = 0;
    for (int64_t w = 0; w < ways; ++w) {
      if (tag[w] == key) {
        stamp[w] = clock;
        return false;
      }
      if (stamp[w] < stamp[victim])
        victim = w;
    }
    tag[victim] = key;
    stamp[victim] = clock;
    return true;
  }

private:
  static constexpr uint64_t kEmpty = ~uint64_t(0);
  int64_t sets, ways;
  std::vector<uint64_t> tags, stamps;
  uint64_t clock = 0;
};

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Loop iterations of `k`'s reduction nest.
int64_t reductionIterations(const KernelShape &k) {
  int64_t n = 1;
  for (size_t l = 0; l < k.ranges.size(); ++l)
    if (k.reduction[l])
      n *= k.ranges[l];
  return n;
}

/// Steps of a per-texel kernel's reduction nest: its iterations, with the
/// walked loop's taken 4 at a time.
int64_t nestSteps(const KernelShape &k) {
  if (k.walkLoop < 0)
    return reductionIterations(k);
  int64_t walkRange = k.ranges[static_cast<size_t>(k.walkLoop)];
  return reductionIterations(k) / walkRange * ceilDiv(walkRange, 4);
}

/// Work-items of a per-texel kernel that compute: the output's texels that
/// hold an element (a per-element kernel's elements).
int64_t activeItems(const KernelShape &k) {
  const TensorAccess &out = k.output;
  int packed = out.layout.packedDim();
  if (k.kind == KernelKind::PerElement || out.layout.isBuffer() || packed < 0)
    return fl::Layout::product(out.shape);
  int64_t n = 1;
  for (size_t d = 0; d < out.shape.size(); ++d)
    n *=
        static_cast<int>(d) == packed ? ceilDiv(out.shape[d], 4) : out.shape[d];
  return n;
}

/// One read of a work-item's trace: a cache line and the set it maps to.
struct Read {
  uint64_t line;
  uint64_t set;
};

/// Maps elements of one tensor to cache lines: the layout algebra's texel
/// coordinates, resolved per dim once (a layout's coordinates are sums of
/// per-dim terms), then cut into lines.
class LineMapper {
public:
  LineMapper(const TensorAccess &a, unsigned image, const CacheGeometry &g)
      : access(a), image(image), buffer(a.layout.isBuffer()),
        lineX(0, buffer ? 16 : g.lineWidth, 0, 1),
        lineY(1, buffer ? 1 : g.lineHeight, 0, 1), perDim(a.shape.size()) {
    if (buffer) {
      int64_t stride = 1;
      for (size_t d = a.shape.size(); d-- > 0;) {
        perDim[d].push_back(Term(0, 1, 0, stride));
        stride *= a.shape[d];
      }
      return;
    }
    for (unsigned axis = 0; axis < fl::kNumAxes; ++axis)
      for (const fl::FactorTerm &t :
           a.layout.terms(a.shape, static_cast<fl::Axis>(axis)))
        perDim[t.factor.dim].push_back(
            Term(axis, t.divisor, t.modulus, t.stride));
  }

  /// Whether `a` issues a read at loop values `loops` (slices).
  static bool reads(const TensorAccess &a, const std::vector<int64_t> &loops) {
    if (a.mul.empty())
      return true;
    for (size_t d = 0; d < a.shape.size(); ++d) {
      int l = a.loopOfDim[d];
      if (a.indexAt(d, l >= 0 ? loops[static_cast<size_t>(l)] : 0) < 0)
        return false;
    }
    return true;
  }

  /// The line holding the element at loop values `loops`.
  Read lineOf(const std::vector<int64_t> &loops) const {
    int64_t coord[fl::kNumAxes] = {0, 0, 0};
    for (size_t d = 0; d < perDim.size(); ++d) {
      int l = access.loopOfDim[d];
      int64_t i = access.indexAt(d, l >= 0 ? loops[static_cast<size_t>(l)] : 0);
      for (const Term &t : perDim[d])
        coord[t.axis] += t.of(i) * t.stride;
    }
    int64_t lx = lineX.of(coord[0]), ly = lineY.of(coord[1]);
    uint64_t key = (static_cast<uint64_t>(image) << 58) ^
                   (static_cast<uint64_t>(coord[2]) << 44) ^
                   (static_cast<uint64_t>(ly) << 24) ^
                   static_cast<uint64_t>(lx);
    // Neighbouring lines (and the same line of different tensors) map to
    // different sets.
    uint64_t set = static_cast<uint64_t>(lx + ly * 7 + coord[2] * 13 +
                                         static_cast<int64_t>(image) * 31);
    return {key, set};
  }

private:
  /// (i / divisor) % modulus (no modulus when 0) of an index i >= 0, by
  /// shifts and masks where they are powers of two: the tracer computes
  /// millions per compile.
  struct Term {
    unsigned axis;
    int64_t divisor, modulus, stride;
    int shift = -1;
    int64_t mask = -1;
    Term(unsigned axis, int64_t divisor, int64_t modulus, int64_t stride)
        : axis(axis), divisor(divisor), modulus(modulus), stride(stride) {
      if (isPowerOf2(divisor))
        shift = __builtin_ctzll(static_cast<unsigned long long>(divisor));
      if (modulus && isPowerOf2(modulus))
        mask = modulus - 1;
    }
    int64_t of(int64_t i) const {
      int64_t v = shift >= 0 ? i >> shift : i / divisor;
      if (!modulus)
        return v;
      return mask >= 0 ? v & mask : v % modulus;
    }
    static bool isPowerOf2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
  };
  const TensorAccess &access;
  unsigned image;
  bool buffer;
  Term lineX, lineY;
  std::vector<std::vector<Term>> perDim;
};

/// Builds the reads of sampled work-items.
class Tracer {
public:
  /// Traces the reads of input `only` (inputs.size(): the output's initial
  /// value).
  Tracer(const KernelShape &k, const DeviceModel &d, unsigned only)
      : k(k), d(d), only(only),
        mapper(only < k.inputs.size() ? k.inputs[only] : k.output, only,
               d.cache) {
    for (size_t l = 0; l < k.ranges.size(); ++l)
      if (k.reduction[l] && static_cast<int>(l) != k.walkLoop)
        outerLoops.push_back(static_cast<int>(l));
  }

  /// Appends the reads of the work-item at global id `item` to `reads`.
  void trace(const std::array<int64_t, 3> &item,
             std::vector<Read> &reads) const {
    switch (k.kind) {
    case KernelKind::PerTexel:
    case KernelKind::PerElement:
      perOutput(item, reads);
      break;
    case KernelKind::RegisterTiledGemm:
      registerGemm(item, reads);
      break;
    case KernelKind::LocalTiledGemm:
      localGemm(item, reads);
      break;
    case KernelKind::BlockTranspose:
      blockTranspose(item, reads);
      break;
    }
  }

private:
  void read(unsigned image, const TensorAccess &a,
            const std::vector<int64_t> &loops, std::vector<Read> &reads) const {
    (void)a;
    if (image == only)
      reads.push_back(mapper.lineOf(loops));
  }

  /// Loop values of the batch loops of a GEMM for batch item `z`.
  std::vector<int64_t> batchOrigin(int64_t z) const {
    std::vector<int64_t> loops(k.ranges.size(), 0);
    for (size_t l = k.ranges.size(); l-- > 0;) {
      int li = static_cast<int>(l);
      if (li == k.mLoop || li == k.nLoop || li == k.kLoop)
        continue;
      loops[l] = z % k.ranges[l];
      z /= k.ranges[l];
    }
    return loops;
  }

  /// The 4 texels of `a`'s 4x4 block at `loops` over (row, col): one per
  /// position along the loop its layout does not pack.
  void block(unsigned image, const TensorAccess &a, int rowLoop, int colLoop,
             std::vector<int64_t> &loops, std::vector<Read> &reads) const {
    if (image != only)
      return;
    int packedLoop =
        a.layout.packedDim() >= 0
            ? a.loopOfDim[static_cast<size_t>(a.layout.packedDim())]
            : colLoop;
    int other = packedLoop == rowLoop ? colLoop : rowLoop;
    int64_t start = loops[static_cast<size_t>(other)];
    for (int64_t o = 0; o < 4; ++o) {
      loops[static_cast<size_t>(other)] = start + o;
      read(image, a, loops, reads);
    }
    loops[static_cast<size_t>(other)] = start;
  }

  void registerGemm(const std::array<int64_t, 3> &item,
                    std::vector<Read> &reads) const {
    std::vector<int64_t> loops = batchOrigin(item[2]);
    loops[static_cast<size_t>(k.mLoop)] = 4 * item[1];
    loops[static_cast<size_t>(k.nLoop)] = 4 * item[0];
    unsigned init = static_cast<unsigned>(k.inputs.size());
    if (k.readsInit)
      block(init, k.output, k.mLoop, k.nLoop, loops, reads);
    // An epilogue's inputs: their blocks at the output's, once.
    for (unsigned e = 2; e < k.inputs.size(); ++e)
      block(e, k.inputs[e], k.mLoop, k.nLoop, loops, reads);
    int64_t steps = std::min(ceilDiv(k.ranges[static_cast<size_t>(k.kLoop)], 4),
                             d.sampledSteps);
    for (int64_t s = 0; s < steps; ++s) {
      loops[static_cast<size_t>(k.kLoop)] = 4 * s;
      block(0, k.inputs[0], k.mLoop, k.kLoop, loops, reads);
      block(1, k.inputs[1], k.kLoop, k.nLoop, loops, reads);
    }
  }

  void localGemm(const std::array<int64_t, 3> &item,
                 std::vector<Read> &reads) const {
    // Work-groups of cols() x rows() work-items over tiles of C;
    // blocksM() x blocksN() blocks per work-item; localK-deep slices of A
    // and B staged cooperatively.
    const target::GemmTile &tile = k.gemmTile;
    int64_t cols = tile.cols(), rows = tile.rows();
    int64_t lx = item[0] % cols, ly = item[1] % rows;
    int64_t mTile = (item[1] / rows) * tile.tileM();
    int64_t nTile = (item[0] / cols) * tile.tileN();
    std::vector<int64_t> loops = batchOrigin(item[2]);
    size_t m = static_cast<size_t>(k.mLoop), n = static_cast<size_t>(k.nLoop),
           kk = static_cast<size_t>(k.kLoop);
    unsigned init = static_cast<unsigned>(k.inputs.size());
    for (int64_t i = 0; i < tile.blocksM(); ++i)
      for (int64_t j = 0; j < tile.blocksN(); ++j) {
        loops[m] = mTile + (ly + i * rows) * 4;
        loops[n] = nTile + (lx + j * cols) * 4;
        // Blocks beyond a ragged edge are not stored; their init is read
        // at a cached place.
        if (loops[m] >= k.ranges[m] || loops[n] >= k.ranges[n])
          continue;
        if (k.readsInit)
          block(init, k.output, k.mLoop, k.nLoop, loops, reads);
        // An epilogue's inputs: their blocks at the output's, once.
        for (unsigned e = 2; e < k.inputs.size(); ++e)
          block(e, k.inputs[e], k.mLoop, k.nLoop, loops, reads);
      }
    int64_t flat = ly * cols + lx;
    int64_t slices = std::min(tile.slicesAlong(k.ranges[kk]), d.sampledSteps);
    // A's (image 0) and B's (image 1) texels each work-item stages.
    auto stage = [&](unsigned image, int tileLoop, int64_t tileStart,
                     int rowLoop, int colLoop) {
      if (image != only)
        return;
      const TensorAccess &a = k.inputs[image];
      LocalGemmStaging st = localGemmStaging(k, image);
      int other = st.packedLoop == rowLoop ? colLoop : rowLoop;
      const std::array<int64_t, 3> &extent = st.extents;
      for (int64_t s = 0; s < slices; ++s)
        for (int64_t r = 0; r < st.unitsPerItem(tile.items()); ++r) {
          // The unit's (kblk, o, blk): its run's block, then its digits in
          // `order` (a read of the last unit where they do not split
          // evenly, as the kernel).
          int64_t u = std::min(flat + r * tile.items(), st.units() - 1);
          int64_t t = u / st.run;
          std::array<int64_t, 3> at3;
          at3[st.order[2]] = t % extent[st.order[2]];
          at3[st.order[1]] = (t / extent[st.order[2]]) % extent[st.order[1]];
          at3[st.order[0]] = t / (extent[st.order[2]] * extent[st.order[1]]);
          at3[StageBlock] = at3[StageBlock] * st.run + u % st.run;
          for (int64_t o = 0; o < st.texelsPerUnit(); ++o) {
            std::vector<int64_t> &at = scratch;
            at = loops;
            at[static_cast<size_t>(tileLoop)] = tileStart + 4 * at3[StageBlock];
            at[kk] = tile.localK * s + 4 * at3[StageK];
            // Texels beyond a ragged edge are read at 0, as the kernel
            // reads them beyond K (the kernel reads those beyond M or N at
            // the image's edge: a few reads of other texels, which the
            // trace leaves as they were when its tiles were compared).
            for (size_t l : {static_cast<size_t>(tileLoop), kk})
              if (at[l] >= k.ranges[l])
                at[l] = 0;
            // Texel o of that block.
            at[static_cast<size_t>(other)] +=
                st.wholeBlocks ? o : at3[StageTexel];
            read(image, a, at, reads);
          }
        }
    };
    stage(0, k.mLoop, mTile, k.mLoop, k.kLoop);
    stage(1, k.nLoop, nTile, k.kLoop, k.nLoop);
  }

  /// A per-texel kernel: its valid channels' logical indices (one for a
  /// per-element kernel); channel 0 reads what the channels share. Steps of
  /// the reduction nest in order (the walked loop 4 iterations a step), each
  /// issuing the reads of its iterations, then of its channels.
  void perOutput(const std::array<int64_t, 3> &item,
                 std::vector<Read> &reads) const {
    const TensorAccess &out = k.output;
    bool init = only == k.inputs.size();
    if (init && !k.readsInit)
      return;
    // Each channel's loop values, in buffers reused across work-items (the
    // model traces hundreds of thousands of them per compile).
    size_t n = 0;
    auto place = [&](const std::vector<int64_t> &idx, int packed, int64_t c) {
      if (loopScratch.size() <= n)
        loopScratch.emplace_back();
      std::vector<int64_t> &l = loopScratch[n++];
      l.assign(k.ranges.size(), 0);
      for (size_t dd = 0; dd < idx.size(); ++dd)
        if (out.loopOfDim[dd] >= 0)
          l[static_cast<size_t>(out.loopOfDim[dd])] =
              idx[dd] + (static_cast<int>(dd) == packed ? c : 0);
    };
    if (k.kind == KernelKind::PerElement) {
      int64_t rest = item[0];
      indexScratch.resize(out.shape.size());
      for (size_t dd = out.shape.size(); dd-- > 0;) {
        indexScratch[dd] = rest % out.shape[dd];
        rest /= out.shape[dd];
      }
      place(indexScratch, -1, 0);
    } else if (auto idx = out.layout.toLogical(
                   out.shape, fl::TexelCoord{item[2], item[1], item[0], 0})) {
      // Channel c of a texel is channel 0's element plus c along the packed
      // dim, while that stays inside the tensor; an unpacked layout has
      // channel 0 only.
      int packed = out.layout.packedDim();
      for (int64_t c = 0; c < (packed >= 0 ? fl::kTexelChannels : 1); ++c) {
        if (packed >= 0 && (*idx)[static_cast<size_t>(packed)] + c >=
                               out.shape[static_cast<size_t>(packed)])
          break;
        place(*idx, packed, c);
      }
    }
    const TensorAccess &a = init ? k.output : k.inputs[only];
    std::vector<std::vector<int64_t>> &loops = loopScratch;
    // Channel c's read at iteration j of a step, unless an earlier one's
    // fetch serves it.
    auto issue = [&](size_t c, int64_t j) {
      if ((c > 0 && a.channelsShareFetch) || (j > 0 && a.stepsShareFetch))
        return;
      // Slices read inside their range, inserts' destinations around it.
      bool issued =
          a.outsideOf >= 0
              ? !LineMapper::reads(k.inputs[static_cast<size_t>(a.outsideOf)],
                                   loops[c])
              : LineMapper::reads(a, loops[c]);
      if (issued)
        reads.push_back(mapper.lineOf(loops[c]));
    };
    if (init || a.hoisted) {
      for (size_t c = 0; c < n; ++c)
        issue(c, 0);
      return;
    }
    int64_t walkRange = k.walkLoop >= 0 ? k.ranges[k.walkLoop] : 1;
    int64_t walkSteps = k.walkLoop >= 0 ? ceilDiv(walkRange, 4) : 1;
    int64_t window = std::min(nestSteps(k), d.sampledSteps);
    for (int64_t r = 0; r < window; ++r) {
      // The outer reduction loops as an odometer, the walked loop fastest.
      int64_t rest = r, walkStep = r % walkSteps;
      rest /= walkSteps;
      for (auto it = outerLoops.rbegin(); it != outerLoops.rend(); ++it) {
        size_t l = static_cast<size_t>(*it);
        for (size_t c = 0; c < n; ++c)
          loops[c][l] = rest % k.ranges[l];
        rest /= k.ranges[l];
      }
      int64_t iterations =
          k.walkLoop >= 0 ? std::min<int64_t>(4, walkRange - 4 * walkStep) : 1;
      for (int64_t j = 0; j < iterations; ++j)
        for (size_t c = 0; c < n; ++c) {
          if (k.walkLoop >= 0)
            loops[c][static_cast<size_t>(k.walkLoop)] = 4 * walkStep + j;
          issue(c, j);
        }
    }
  }

  /// A block transpose: the 4 texels of the source's 4x4 block.
  void blockTranspose(const std::array<int64_t, 3> &item,
                      std::vector<Read> &reads) const {
    std::vector<int64_t> loops = batchOrigin(item[2]);
    loops[static_cast<size_t>(k.mLoop)] = 4 * item[1];
    loops[static_cast<size_t>(k.nLoop)] = 4 * item[0];
    block(0, k.inputs[0], k.mLoop, k.nLoop, loops, reads);
  }

  const KernelShape &k;
  const DeviceModel &d;
  unsigned only;
  LineMapper mapper;
  /// The reduction loops other than the walked one, outermost first.
  std::vector<int> outerLoops;
  /// Per-texel tracing's buffers: each channel's loop values, an index.
  mutable std::vector<std::vector<int64_t>> loopScratch;
  mutable std::vector<int64_t> indexScratch;
  /// A local GEMM's staged loop values.
  mutable std::vector<int64_t> scratch;
};

} // namespace

std::array<int64_t, 3> fbl::cost::gridOf(const KernelShape &k) {
  switch (k.kind) {
  case KernelKind::PerTexel: {
    fl::Extents e = k.output.layout.extents(k.output.shape);
    return {e.width, e.height, e.layers};
  }
  case KernelKind::PerElement:
    return {fl::Layout::product(k.output.shape), 1, 1};
  case KernelKind::RegisterTiledGemm:
  case KernelKind::LocalTiledGemm:
  case KernelKind::BlockTranspose: {
    int64_t batch = 1;
    for (size_t l = 0; l < k.ranges.size(); ++l) {
      int li = static_cast<int>(l);
      if (li != k.mLoop && li != k.nLoop && li != k.kLoop)
        batch *= k.ranges[l];
    }
    int64_t n = k.ranges[static_cast<size_t>(k.nLoop)],
            m = k.ranges[static_cast<size_t>(k.mLoop)];
    if (k.kind == KernelKind::LocalTiledGemm) {
      // Whole work-groups, the last ones ragged.
      const target::GemmTile &t = k.gemmTile;
      return {t.tilesAlongN(n) * t.cols(), t.tilesAlongM(m) * t.rows(), batch};
    }
    return {ceilDiv(n, 4), ceilDiv(m, 4), batch};
  }
  }
  return {1, 1, 1};
}

std::array<int64_t, 3>
fbl::cost::workgroupFor(const std::array<int64_t, 3> &items,
                        const std::array<int64_t, 2> &preferred,
                        const target::ExecutionModel &execution) {
  auto clamp = [](int64_t size, int64_t extent) {
    int64_t pow2 = 1;
    while (pow2 < extent)
      pow2 *= 2;
    return std::min(size, pow2);
  };
  // A one-row grid (buffers, rows of a reduction) takes the whole preferred
  // group along x: a 16-item group would leave most of a GPU's resident
  // work-items unused.
  std::array<int64_t, 3> wg =
      items[1] == 1
          ? std::array<int64_t, 3>{clamp(preferred[0] * preferred[1], items[0]),
                                   1, 1}
          : std::array<int64_t, 3>{clamp(preferred[0], items[0]),
                                   clamp(preferred[1], items[1]), 1};
  // A grid of fewer groups than compute units would leave the others idle:
  // each unit's texture path then serves a whole group's reads (a split
  // sum's second stage walking 197 partials on one of 132 SMs). Smaller
  // groups, down to a wave, spread it.
  auto groups = [&] {
    return ceilDiv(items[0], wg[0]) * ceilDiv(items[1], wg[1]) *
           std::max<int64_t>(items[2], 1);
  };
  while (groups() < execution.computeUnits &&
         wg[0] * wg[1] > std::max<int64_t>(execution.waveSize, 1)) {
    int64_t &side = wg[0] >= wg[1] ? wg[0] : wg[1];
    side /= 2;
  }
  return wg;
}

namespace {
/// The launch geometry of a kernel.
struct Launch {
  std::array<int64_t, 3> items, wg, groups;
  int64_t totalGroups, wgItems;
  Launch(const KernelShape &k, const DeviceModel &device) {
    items = gridOf(k);
    wg = k.kind == KernelKind::LocalTiledGemm
             ? std::array<int64_t, 3>{k.gemmTile.cols(), k.gemmTile.rows(), 1}
             : workgroupFor(items, device.preferredWorkgroup, device.execution);
    groups = {ceilDiv(items[0], wg[0]), ceilDiv(items[1], wg[1]), items[2]};
    totalGroups = groups[0] * groups[1] * groups[2];
    wgItems = wg[0] * wg[1] * wg[2];
  }
};

} // namespace

namespace {
void appendKey(const fl::Layout &l, std::vector<int64_t> &key) {
  key.push_back(static_cast<int64_t>(l.kind()));
  key.push_back(l.packedDim());
  key.push_back(static_cast<int64_t>(l.tile().size()));
  key.insert(key.end(), l.tile().begin(), l.tile().end());
  for (const std::vector<fl::Factor> &axis : l.axes()) {
    key.push_back(static_cast<int64_t>(axis.size()));
    for (const fl::Factor &f : axis)
      key.push_back(2 * static_cast<int64_t>(f.dim) +
                    (f.level == fl::Level::Element ? 1 : 0));
  }
}

template <typename T>
void appendKey(const std::vector<T> &v, std::vector<int64_t> &key) {
  key.push_back(static_cast<int64_t>(v.size()));
  key.insert(key.end(), v.begin(), v.end());
}

void appendKey(const TensorAccess &a, std::vector<int64_t> &key) {
  appendKey(a.shape, key);
  appendKey(a.loopOfDim, key);
  appendKey(a.layout, key);
  appendKey(a.mul, key);
  appendKey(a.add, key);
  appendKey(a.div, key);
  key.insert(key.end(), {a.outsideOf, a.issued, a.channelsShareFetch,
                         a.stepsShareFetch, a.hoisted});
}
} // namespace

std::vector<int64_t> fbl::cost::readKey(const KernelShape &k, unsigned input) {
  // What the tracer and the fetch count read: the launch (kind, loops,
  // output), the traced access and, for reads issued around another
  // input's, that input; the number of reads sharing the cache.
  std::vector<int64_t> key = {static_cast<int64_t>(k.kind),
                              input,
                              static_cast<int64_t>(k.inputs.size()),
                              k.readsInit,
                              k.mLoop,
                              k.nLoop,
                              k.kLoop,
                              k.channelLoop,
                              k.walkLoop,
                              k.gemmTile.groupItems,
                              k.gemmTile.itemBlocks,
                              k.gemmTile.blocksN(),
                              k.gemmTile.localK,
                              k.gemmTile.rows()};
  appendKey(k.ranges, key);
  appendKey(k.reduction, key);
  // Per-texel kernels run over the output's texels; GEMMs and block
  // transposes over blocks of their loops, whatever the output's layout.
  bool overOutput =
      k.kind == KernelKind::PerTexel || k.kind == KernelKind::PerElement;
  const TensorAccess &a = input < k.inputs.size() ? k.inputs[input] : k.output;
  if (overOutput || &a == &k.output)
    appendKey(k.output, key);
  if (&a != &k.output)
    appendKey(a, key);
  if (a.outsideOf >= 0)
    appendKey(k.inputs[static_cast<size_t>(a.outsideOf)], key);
  return key;
}

ReadCost fbl::cost::readCost(const KernelShape &k, unsigned input,
                             const DeviceModel &device) {
  ReadCost c;
  Launch launch(k, device);
  bool init = input == k.inputs.size();
  // Exact fetches.
  switch (k.kind) {
  case KernelKind::PerTexel:
  case KernelKind::PerElement: {
    // Per step of the nest, one fetch per work-item where the channels
    // share it, else one per element; per walked step, one where the
    // iterations share it, else one per iteration.
    const TensorAccess &a = init ? k.output : k.inputs[input];
    c.fetches = a.channelsShareFetch ? activeItems(k)
                                     : fl::Layout::product(k.output.shape);
    if (init || a.hoisted)
      break;
    // A slice's source is read once per element, an insert's destination
    // around the slice only.
    if (a.issued >= 0) {
      c.fetches = a.issued;
      break;
    }
    if (k.walkLoop < 0) {
      c.fetches *= reductionIterations(k);
      break;
    }
    int64_t walkRange = k.ranges[static_cast<size_t>(k.walkLoop)];
    c.fetches *= reductionIterations(k) / walkRange *
                 (a.stepsShareFetch ? ceilDiv(walkRange, 4) : walkRange);
    break;
  }
  case KernelKind::BlockTranspose:
    c.fetches = launch.items[0] * launch.items[1] * launch.items[2] * 4;
    break;
  case KernelKind::RegisterTiledGemm:
  case KernelKind::LocalTiledGemm: {
    bool local = k.kind == KernelKind::LocalTiledGemm;
    int64_t k4 = ceilDiv(k.ranges[static_cast<size_t>(k.kLoop)], 4);
    // Local tiles: each work-item stages its share of every slice. The
    // init and an epilogue's inputs: each block of the work-item once.
    const target::GemmTile &t = k.gemmTile;
    bool atOutput = init || input >= 2;
    int64_t staged = 0;
    if (local && !atOutput) {
      LocalGemmStaging st = localGemmStaging(k, input);
      staged = st.unitsPerItem(t.items()) * st.texelsPerUnit();
    }
    int64_t perItem =
        atOutput
            ? (local ? 4 * t.blocksM() * t.blocksN() : 4)
            : (local ? t.slicesAlong(k.ranges[static_cast<size_t>(k.kLoop)]) *
                           staged
                     : k4 * 4);
    c.fetches = launch.items[0] * launch.items[1] * launch.items[2] * perItem;
    break;
  }
  }
  // Each read shares the cache with the kernel's others: simulate it alone
  // with its share.
  unsigned numReads =
      static_cast<unsigned>(k.inputs.size()) + (k.readsInit ? 1 : 0);
  DeviceModel share = device;
  share.cache.bytes = std::max<int64_t>(
      device.cache.bytes / std::max(1u, numReads),
      device.cache.lineTexels() * device.cache.texelBytes * device.cache.ways);
  Tracer tracer(k, device, input);

  // The sample: compute unit 0's resident work-groups.
  const target::ExecutionModel &x = device.execution;
  int64_t units = std::max<int64_t>(1, x.computeUnits);
  int64_t resident = std::max<int64_t>(1, x.residentItems / launch.wgItems);
  int64_t budget = std::max<int64_t>(1, device.sampledItems / launch.wgItems);
  int64_t sampled =
      std::min({resident, budget, ceilDiv(launch.totalGroups, units)});
  // Every sampled work-item's reads, one after the other.
  std::vector<Read> reads;
  std::vector<size_t> starts;
  for (int64_t j = 0; j < sampled; ++j) {
    int64_t g = j * units;
    std::array<int64_t, 3> gid = {g % launch.groups[0],
                                  (g / launch.groups[0]) % launch.groups[1],
                                  g / (launch.groups[0] * launch.groups[1])};
    for (int64_t lz = 0; lz < launch.wg[2]; ++lz)
      for (int64_t ly = 0; ly < launch.wg[1]; ++ly)
        for (int64_t lx = 0; lx < launch.wg[0]; ++lx) {
          std::array<int64_t, 3> item = {gid[0] * launch.wg[0] + lx,
                                         gid[1] * launch.wg[1] + ly,
                                         gid[2] * launch.wg[2] + lz};
          if (item[0] >= launch.items[0] || item[1] >= launch.items[1] ||
              item[2] >= launch.items[2])
            continue;
          starts.push_back(reads.size());
          tracer.trace(item, reads);
          // Every item of a launch traces about as many reads as the first.
          if (starts.size() == 1)
            reads.reserve(reads.size() *
                          static_cast<size_t>(sampled * launch.wgItems));
        }
  }
  // Work-items in issue order, one read each per round: waves issue in
  // lockstep and in turn.
  TextureCache cache(share.cache);
  starts.push_back(reads.size());
  size_t longest = 0;
  for (size_t t = 0; t + 1 < starts.size(); ++t)
    longest = std::max(longest, starts[t + 1] - starts[t]);
  int64_t sampledReads = 0, sampledMisses = 0;
  for (size_t pos = 0; pos < longest; ++pos)
    for (size_t t = 0; t + 1 < starts.size(); ++t) {
      if (starts[t] + pos >= starts[t + 1])
        continue;
      const Read &r = reads[starts[t] + pos];
      sampledMisses += cache.access(r.line, r.set);
      ++sampledReads;
    }
  double rate = sampledReads ? static_cast<double>(sampledMisses) /
                                   static_cast<double>(sampledReads)
                             : 0.0;
  c.misses = static_cast<int64_t>(rate * static_cast<double>(c.fetches) + 0.5);
  return c;
}

KernelCost fbl::cost::launchCost(const KernelShape &k,
                                 const std::vector<ReadCost> &reads,
                                 const DeviceModel &device) {
  KernelCost c;
  c.launches = 1;
  Launch launch(k, device);
  for (const ReadCost &r : reads) {
    c.fetches += r.fetches;
    c.misses += r.misses;
  }
  // Gathers: a fetch and a miss each (data-dependent places, no reuse).
  int64_t elements = fl::Layout::product(k.output.shape);
  int64_t gathers = elements * reductionIterations(k) * k.gathersPerIteration;
  c.fetches += gathers;
  c.misses += gathers;
  switch (k.kind) {
  case KernelKind::PerTexel:
    c.writes = k.output.layout.extents(k.output.shape).texels();
    break;
  case KernelKind::PerElement:
    c.writes = ceilDiv(elements, 4);
    break;
  case KernelKind::RegisterTiledGemm:
  case KernelKind::LocalTiledGemm:
  case KernelKind::BlockTranspose:
    c.writes = ceilDiv(elements, 4);
    break;
  }
  c.writes *= k.outputs;
  c.multiplies = elements * reductionIterations(k) * k.multipliesPerApplication;
  // Work-items of the grid share its accesses about evenly: the longest
  // is taken to make the average.
  int64_t items =
      std::max<int64_t>(1, launch.items[0] * launch.items[1] * launch.items[2]);
  target::LaunchWork work;
  work.fetches = static_cast<double>(c.fetches);
  work.misses = static_cast<double>(c.misses);
  work.writes = static_cast<double>(c.writes);
  work.multiplies = static_cast<double>(c.multiplies);
  work.itemAccesses =
      static_cast<double>(c.fetches + c.writes) / static_cast<double>(items);
  work.groups = launch.totalGroups;
  work.groupItems = launch.wgItems;
  c.itemAccesses = work.itemAccesses;
  c.timeNs = target::launchTimeNs(device.execution, work);
  return c;
}

KernelCost fbl::cost::kernelCost(const KernelShape &k,
                                 const DeviceModel &device) {
  std::vector<ReadCost> reads;
  for (unsigned i = 0; i < k.inputs.size(); ++i)
    reads.push_back(readCost(k, i, device));
  if (k.readsInit)
    reads.push_back(
        readCost(k, static_cast<unsigned>(k.inputs.size()), device));
  return launchCost(k, reads, device);
}

bool TensorAccess::dependsOn(int l) const {
  return l >= 0 &&
         std::find(loopOfDim.begin(), loopOfDim.end(), l) != loopOfDim.end();
}

bool TensorAccess::packedAlong(int l) const {
  int packed = layout.packedDim();
  return l >= 0 && !layout.isBuffer() && packed >= 0 && mul.empty() &&
         loopOfDim[static_cast<size_t>(packed)] == l;
}

void fbl::cost::planReads(KernelShape &k) {
  // A texel's 4 channels are 4 consecutive values of the output's packed
  // loop: the loop of its packed dim.
  int packed = k.output.layout.isBuffer() ? -1 : k.output.layout.packedDim();
  k.channelLoop =
      packed >= 0 ? k.output.loopOfDim[static_cast<size_t>(packed)] : -1;
  // The innermost reduction loop is walked 4 iterations a step when a texel
  // of some input holds 4 of its iterations. Only the innermost: walking an
  // outer loop 4 at a time would reorder the body's applications.
  k.walkLoop = -1;
  bool reduces = false;
  for (size_t l = k.ranges.size(); l-- > 0;) {
    if (!k.reduction[l])
      continue;
    int loop = static_cast<int>(l);
    if (!reduces &&
        std::any_of(k.inputs.begin(), k.inputs.end(),
                    [&](const TensorAccess &a) { return a.packedAlong(loop); }))
      k.walkLoop = loop;
    reduces = true;
  }
  auto decide = [&](TensorAccess &a) {
    a.channelsShareFetch =
        !a.dependsOn(k.channelLoop) || a.packedAlong(k.channelLoop);
    a.stepsShareFetch = k.walkLoop >= 0 &&
                        (!a.dependsOn(k.walkLoop) || a.packedAlong(k.walkLoop));
    a.hoisted = reduces;
    for (size_t l = 0; l < k.ranges.size(); ++l)
      if (k.reduction[l] && a.dependsOn(static_cast<int>(l)))
        a.hoisted = false;
  };
  for (TensorAccess &a : k.inputs)
    decide(a);
  // The initial value: indexed like the output, read before the nest.
  decide(k.output);
  k.output.stepsShareFetch = k.output.hoisted = false;
}

LocalGemmStaging fbl::cost::localGemmStaging(
    const TensorAccess &a, int tileLoop, int kLoop, int rowLoop, int colLoop,
    size_t numLoops, int64_t kBlocks, int64_t sideBlocks, bool swizzleBlocks) {
  int packedLoop = a.layout.packedDim() >= 0
                       ? a.loopOfDim[static_cast<size_t>(a.layout.packedDim())]
                       : colLoop;
  int other = packedLoop == rowLoop ? colLoop : rowLoop;
  // Where a unit step of kblk, o or blk lands from the slice's origin, in
  // (layers, rows, columns) of the image.
  auto position = [&](int dim) {
    std::vector<int64_t> loops(numLoops, 0);
    if (dim == StageK)
      loops[static_cast<size_t>(kLoop)] += 4;
    else if (dim == StageTexel)
      loops[static_cast<size_t>(other)] += 1;
    else if (dim == StageBlock)
      loops[static_cast<size_t>(tileLoop)] += 4;
    std::vector<int64_t> index;
    for (size_t d = 0; d < a.shape.size(); ++d) {
      int l = a.loopOfDim[d];
      index.push_back(l >= 0 && a.shape[d] > loops[static_cast<size_t>(l)]
                          ? loops[static_cast<size_t>(l)]
                          : 0);
    }
    layout::TexelCoord c = a.layout.toTexel(a.shape, index);
    return std::array<int64_t, 3>{c.layer, c.y, c.x};
  };
  std::array<int64_t, 3> origin = position(-1);
  auto stride = [&](int dim) {
    std::array<int64_t, 3> p = position(dim);
    for (int i = 0; i < 3; ++i)
      p[i] = std::abs(p[i] - origin[i]);
    return p;
  };
  std::array<int, 3> order = {StageK, StageTexel, StageBlock};
  // Largest step first; equal steps keep (kblk, o, blk).
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return stride(x) > stride(y); });
  bool whole = packedLoop != tileLoop;
  // Neighbouring work-items would store into one bank: runs of 8 blocks,
  // or, for whole blocks where the tile asks, XOR-permuted rows instead.
  bool bankConflicts = sideBlocks % 8 == 0;
  bool swizzled = whole && swizzleBlocks && bankConflicts;
  int64_t run = bankConflicts && !swizzled ? 8 : 1;
  return {order, whole,    packedLoop,
          run,   swizzled, {kBlocks, whole ? 1 : 4, sideBlocks / run}};
}

LocalGemmStaging fbl::cost::localGemmStaging(const KernelShape &k,
                                             unsigned input) {
  const target::GemmTile &t = k.gemmTile;
  return input == 0 ? localGemmStaging(k.inputs[0], k.mLoop, k.kLoop, k.mLoop,
                                       k.kLoop, k.ranges.size(), t.kBlocks(),
                                       t.tileBlocksM(), t.swizzleBlocks)
                    : localGemmStaging(k.inputs[1], k.nLoop, k.kLoop, k.kLoop,
                                       k.nLoop, k.ranges.size(), t.kBlocks(),
                                       t.tileBlocksN(), t.swizzleBlocks);
}

KernelShape fbl::cost::relayoutKernel(const std::vector<int64_t> &shape,
                                      const fl::Layout &from,
                                      const fl::Layout &to) {
  KernelShape k;
  k.kind = to.isBuffer() ? KernelKind::PerElement : KernelKind::PerTexel;
  k.ranges = shape;
  k.reduction.assign(shape.size(), false);
  std::vector<int> loops(shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    loops[d] = static_cast<int>(d);
  k.output = {shape, loops, to};
  k.inputs.push_back({shape, loops, from});
  int source = from.isBuffer() ? -1 : from.packedDim();
  int dest = to.isBuffer() ? -1 : to.packedDim();
  // Both packed dims in whole 4-blocks, every destination texel in one
  // block (no padding): 4x4 blocks cover the destination.
  if (source >= 0 && dest >= 0 && source != dest &&
      shape[static_cast<size_t>(source)] % 4 == 0 &&
      shape[static_cast<size_t>(dest)] % 4 == 0 &&
      to.extents(shape).texels() * 4 == fl::Layout::product(shape)) {
    k.kind = KernelKind::BlockTranspose;
    k.mLoop = source;
    k.nLoop = dest;
    return k;
  }
  planReads(k);
  return k;
}
