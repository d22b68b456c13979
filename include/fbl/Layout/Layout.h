//===- Layout.h - Tensor layouts on OpenCL images and buffers ---*- C++ -*-===//
//
// The layout algebra of fbl: where each element of a logical tensor lives in
// an OpenCL image (layer, y, x, RGBA channel) or buffer, the image extents a
// layout needs, packing of dense host arrays into texel arrays, and the
// questions the compiler asks when it turns reshapes and transposes into
// views (does every tile stay whole, and what is the layout of the view).
//
// Header-only and free of MLIR so that the runtime uses the same arithmetic
// as the compiler: this file is the single source of truth for layouts. It
// is longer than the project's other files on purpose: splitting the
// algebra would give the one fact several homes.
//
// Model. Every dimension `d` of size `D` is cut by a tile size `t_d` into a
// tile index `i / t_d` and an element index `i % t_d`. One dimension, the
// packed dimension `p` (t_p % 4 == 0), has its element index split further:
// `(i % t_p) / 4` selects a texel inside the tile and `i % 4` the channel.
// Each of these *factors* is placed on one image axis (x, y or array layer);
// an axis coordinate is the mixed-radix number of the factors placed on it,
// most significant first. Tiles that overhang a dimension are padded.
//
// The named kinds (channel-packed, R-Tile, with batch dims folded into y or
// into layers) are particular placements; views compose into general ones.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_LAYOUT_LAYOUT_H
#define FBL_LAYOUT_LAYOUT_H

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace fbl::layout {

/// A permutation of a rank-r tensor's dims, in the one convention fbl uses
/// everywhere (linalg.transpose, fbl.transpose_view, Layout::transposed):
/// result dim i is source dim perm[i], so result[j] = source[k] with
/// k[perm[i]] = j[i]. Every other direction is derived with the helpers
/// below, never by reading a permutation "the other way".
using Permutation = std::vector<int64_t>;

/// True when `perm` holds each of 0..perm.size()-1 once.
inline bool isPermutation(const Permutation &perm) {
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p])
      return false;
    seen[p] = true;
  }
  return true;
}

/// The permutation that undoes `perm`: inverse[perm[i]] = i.
inline Permutation invertPermutation(const Permutation &perm) {
  Permutation inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inv[perm[i]] = static_cast<int64_t>(i);
  return inv;
}

/// transpose(transpose(x, first), second) as one transpose of x: result
/// dim i is first's result dim second[i], which is x's dim first[second[i]].
inline Permutation composePermutations(const Permutation &first,
                                       const Permutation &second) {
  Permutation out(second.size());
  for (size_t i = 0; i < second.size(); ++i)
    out[i] = first[second[i]];
  return out;
}

/// The shape (or index) of transpose(x, perm) given x's: out[i] = v[perm[i]].
inline std::vector<int64_t> applyPermutation(const Permutation &perm,
                                             const std::vector<int64_t> &v) {
  std::vector<int64_t> out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    out[i] = v[perm[i]];
  return out;
}

/// Channels of an RGBA texel.
inline constexpr unsigned kTexelChannels = 4;

/// Image axes a factor can be placed on.
enum class Axis : uint8_t { X = 0, Y = 1, Layer = 2 };
inline constexpr unsigned kNumAxes = 3;

/// Which part of a tiled dimension a factor carries.
enum class Level : uint8_t {
  Tile,   ///< index of the tile along the dimension: i / t
  Element ///< index inside the tile: i % t (in texels for the packed dim)
};

/// One digit of an axis coordinate.
struct Factor {
  unsigned dim = 0;
  Level level = Level::Tile;
  bool operator==(const Factor &o) const {
    return dim == o.dim && level == o.level;
  }
  bool operator!=(const Factor &o) const { return !(*this == o); }
};

/// The layout families fbl names. `Image` is any other placement (typically
/// the composed layout of a view).
enum class LayoutKind : uint8_t { Buffer, ChannelPacked, RTile, Image };

/// Where the leading ("batch") dims of a rank > 2 tensor go.
enum class BatchFold : uint8_t { Y, Layers };

/// Placement of the texels of one R-Tile.
enum class IntraTileOrder : uint8_t {
  RowsOnY, ///< tile rows go down y, texels of a row along x
  RowsOnX, ///< tile rows go along x, texels of a row down y
  Linear   ///< the whole tile on one image row, row-major
};

/// Placement of the grid of R-Tiles.
enum class InterTileOrder : uint8_t {
  RowMajor, ///< tile rows on y, tile columns on x
  ColMajor  ///< tile rows on x, tile columns on y
};

/// The OpenCL memory object a layout needs.
enum class StorageKind : uint8_t { Buffer, Image2D, Image2DArray };

/// Physical extents. Buffers have width = element count and one channel.
struct Extents {
  int64_t width = 1;
  int64_t height = 1;
  int64_t layers = 1;
  unsigned channels = kTexelChannels;
  int64_t texels() const { return width * height * layers; }
  int64_t elements() const { return texels() * channels; }
  bool operator==(const Extents &o) const {
    return width == o.width && height == o.height && layers == o.layers &&
           channels == o.channels;
  }
};

/// A physical position: texel (layer, y, x) and channel.
struct TexelCoord {
  int64_t layer = 0;
  int64_t y = 0;
  int64_t x = 0;
  unsigned channel = 0;
  bool operator==(const TexelCoord &o) const {
    return layer == o.layer && y == o.y && x == o.x && channel == o.channel;
  }
};

/// Limits of an OpenCL device that decide whether an image can be created.
struct DeviceLimits {
  int64_t maxImageWidth = 0;
  int64_t maxImageHeight = 0;
  int64_t maxImageLayers = 0;
  int64_t maxBufferBytes = 0; ///< 0: unlimited
};

/// One factor with its arithmetic resolved for a shape: the factor's value
/// for index `i` of `dim` is `(i / divisor) % modulus` where modulus is
/// `extent` for element factors and unbounded for tile factors.
struct FactorTerm {
  Factor factor;
  int64_t divisor = 1; ///< t for tiles, 4 for packed elements, 1 otherwise
  int64_t modulus = 0; ///< t (or t / 4 * 4 / 4) for elements; 0: none
  int64_t extent = 1;  ///< number of values the factor takes
  int64_t stride = 1;  ///< weight of the factor in its axis coordinate
};

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// A layout for tensors of one rank. Value type; cheap to copy.
class Layout {
public:
  using AxisFactors = std::array<std::vector<Factor>, kNumAxes>;

  Layout() = default;

  //===--------------------------------------------------------------------===//
  // Construction
  //===--------------------------------------------------------------------===//

  /// Plain row-major buffer.
  static Layout buffer(unsigned rank) {
    Layout l;
    l.kind_ = LayoutKind::Buffer;
    l.rank_ = rank;
    l.tile_.assign(rank, 1);
    return l;
  }

  /// A general placement. Check `verify()` before use.
  static Layout image(std::vector<int64_t> tile, int packedDim,
                      AxisFactors axes) {
    Layout l;
    l.kind_ = LayoutKind::Image;
    l.rank_ = static_cast<unsigned>(tile.size());
    l.tile_ = std::move(tile);
    l.packedDim_ = packedDim;
    l.axes_ = std::move(axes);
    return l;
  }

  /// MNN/TFLite-style image: `packedDim` (one of the last two dims) packed by
  /// 4 into RGBA; columns on x, rows on y, batch dims folded per `fold`.
  static Layout channelPacked(unsigned rank, int packedDim,
                              BatchFold fold = BatchFold::Y) {
    std::vector<int64_t> tile(rank, 1);
    if (packedDim >= 0 && static_cast<unsigned>(packedDim) < rank)
      tile[packedDim] = kTexelChannels;
    Layout l = image(std::move(tile), rank == 0 ? -1 : packedDim,
                     placeMatrix(rank, IntraTileOrder::RowsOnY,
                                 InterTileOrder::RowMajor, fold));
    l.kind_ = LayoutKind::ChannelPacked;
    l.dropUnitElementFactors();
    return l;
  }

  /// R-Tile: the last two dims cut into `tileRows` x `tileCols` tiles, the
  /// packed dim (one of the last two) packed by 4, texels of a tile placed
  /// by `intra`, the tile grid by `inter`, batch dims folded per `fold`.
  static Layout rtile(unsigned rank, int64_t tileRows, int64_t tileCols,
                      int packedDim, IntraTileOrder intra, InterTileOrder inter,
                      BatchFold fold = BatchFold::Y) {
    std::vector<int64_t> tile(rank, 1);
    if (rank >= 2) {
      tile[rank - 2] = tileRows;
      tile[rank - 1] = tileCols;
    }
    Layout l = image(std::move(tile), packedDim,
                     placeMatrix(rank, intra, inter, fold));
    l.kind_ = LayoutKind::RTile;
    // Element factors of extent one are left out (canonical form).
    l.dropUnitElementFactors();
    return l;
  }

  //===--------------------------------------------------------------------===//
  // Accessors
  //===--------------------------------------------------------------------===//

  LayoutKind kind() const { return kind_; }
  unsigned rank() const { return rank_; }
  const std::vector<int64_t> &tile() const { return tile_; }
  int packedDim() const { return packedDim_; }
  const AxisFactors &axes() const { return axes_; }
  const std::vector<Factor> &factors(Axis a) const {
    return axes_[static_cast<unsigned>(a)];
  }
  bool isBuffer() const { return kind_ == LayoutKind::Buffer; }

  /// Same placement (the kind tag is ignored: a channel-packed layout equals
  /// the general image layout with the same factors).
  bool samePlacement(const Layout &o) const {
    if (isBuffer() || o.isBuffer())
      return isBuffer() == o.isBuffer() && rank_ == o.rank_;
    return rank_ == o.rank_ && tile_ == o.tile_ && packedDim_ == o.packedDim_ &&
           axes_ == o.axes_;
  }

  /// Same addressing for tensors of `shape`: equal extents and every element
  /// at the same position. Layouts with different tiles can agree on a shape
  /// (a 4x4 R-Tile with rows down y is channel-packed when rows % 4 == 0).
  bool sameAddressing(const Layout &o,
                      const std::vector<int64_t> &shape) const {
    if (samePlacement(o))
      return true;
    if (rank_ != o.rank_ || storage() != o.storage() ||
        !(extents(shape) == o.extents(shape)))
      return false;
    // Offsets are sums of per-dim terms, so equal tables mean equal maps.
    return offsetTables(shape) == o.offsetTables(shape);
  }

  StorageKind storage() const {
    if (isBuffer())
      return StorageKind::Buffer;
    return factors(Axis::Layer).empty() ? StorageKind::Image2D
                                        : StorageKind::Image2DArray;
  }

  /// Number of values the element factor of `dim` takes.
  int64_t elementExtent(unsigned dim) const {
    if (static_cast<int>(dim) == packedDim_)
      return tile_[dim] / kTexelChannels;
    return tile_[dim];
  }

  //===--------------------------------------------------------------------===//
  // Verification
  //===--------------------------------------------------------------------===//

  /// Structural check, independent of a shape. Empty string when valid.
  std::string verify() const {
    if (tile_.size() != rank_)
      return "tile has " + std::to_string(tile_.size()) + " sizes for rank " +
             std::to_string(rank_);
    if (isBuffer())
      return {};
    for (unsigned d = 0; d < rank_; ++d)
      if (tile_[d] < 1)
        return "tile size of dim " + std::to_string(d) + " must be >= 1";
    if (rank_ == 0) {
      if (packedDim_ != -1)
        return "a rank-0 layout has no packed dim";
    } else {
      if (packedDim_ < 0 || packedDim_ >= static_cast<int>(rank_))
        return "packed dim " + std::to_string(packedDim_) +
               " is out of range for rank " + std::to_string(rank_);
      if (tile_[packedDim_] % kTexelChannels != 0)
        return "tile size " + std::to_string(tile_[packedDim_]) +
               " of packed dim " + std::to_string(packedDim_) +
               " is not a multiple of 4";
    }
    std::vector<int> seenTile(rank_, 0), seenElem(rank_, 0);
    for (const auto &axis : axes_)
      for (const Factor &f : axis) {
        if (f.dim >= rank_)
          return "factor names dim " + std::to_string(f.dim) + " of a rank-" +
                 std::to_string(rank_) + " layout";
        ++(f.level == Level::Tile ? seenTile : seenElem)[f.dim];
      }
    for (unsigned d = 0; d < rank_; ++d) {
      if (seenTile[d] != 1)
        return "tile index of dim " + std::to_string(d) + " is placed " +
               std::to_string(seenTile[d]) + " times, expected once";
      int64_t want = elementExtent(d) > 1 ? 1 : 0;
      if (seenElem[d] > 1 || (want == 1 && seenElem[d] == 0))
        return "element index of dim " + std::to_string(d) + " is placed " +
               std::to_string(seenElem[d]) + " times, expected " +
               std::to_string(want);
    }
    return {};
  }

  /// Checks that the layout can hold a tensor of `shape`.
  std::string verifyShape(const std::vector<int64_t> &shape) const {
    if (shape.size() != rank_)
      return "layout of rank " + std::to_string(rank_) +
             " cannot hold a tensor of rank " + std::to_string(shape.size());
    for (unsigned d = 0; d < rank_; ++d)
      if (shape[d] < 0)
        return "dim " + std::to_string(d) + " must have a static size";
    return verify();
  }

  /// Checks the extents for `shape` against `limits`. Empty when they fit.
  std::string checkLimits(const std::vector<int64_t> &shape,
                          const DeviceLimits &limits,
                          unsigned bytesPerElement = 4) const {
    Extents e = extents(shape);
    auto over = [](const char *what, int64_t v, int64_t max) {
      return std::string(what) + " " + std::to_string(v) +
             " exceeds the device limit " + std::to_string(max);
    };
    if (isBuffer()) {
      int64_t bytes = e.elements() * bytesPerElement;
      if (limits.maxBufferBytes > 0 && bytes > limits.maxBufferBytes)
        return over("buffer size", bytes, limits.maxBufferBytes);
      return {};
    }
    if (e.width > limits.maxImageWidth)
      return over("image width", e.width, limits.maxImageWidth);
    if (e.height > limits.maxImageHeight)
      return over("image height", e.height, limits.maxImageHeight);
    if (e.layers > limits.maxImageLayers)
      return over("image array size", e.layers, limits.maxImageLayers);
    return {};
  }

  /// This layout with one dimension spread over image-array layers so that
  /// a tensor of `shape` fits `limits`, or nullopt when no such split does.
  ///
  /// For an image axis longer than its limit, the longest dim whose tile
  /// index sits on that axis and whose element index is placed nowhere (a
  /// dim not cut into tiles, or the packed dim cut into single texels) is
  /// cut into chunks of `k` tiles: its tile grows k-fold, the element index
  /// (k values: rows, or texels of the packed dim) takes the tile index's
  /// place on the axis, and the new tile index becomes the most significant
  /// layer digit. k is a multiple of 4, so blocks of 4 rows or texels that
  /// kernels read together never straddle two layers, and the chunks are
  /// balanced so the last layer is nearly full. This is how a vocabulary of
  /// 128256 rows fits images whose side is 16384 texels.
  std::optional<Layout> splitAcrossLayers(const std::vector<int64_t> &shape,
                                          const DeviceLimits &limits) const {
    if (isBuffer() || !verifyShape(shape).empty())
      return std::nullopt;
    Layout l = *this;
    for (unsigned round = 0; round < 2; ++round) {
      Extents e = l.extents(shape);
      Axis over;
      int64_t extent, limit;
      if (e.width > limits.maxImageWidth) {
        over = Axis::X;
        extent = e.width;
        limit = limits.maxImageWidth;
      } else if (e.height > limits.maxImageHeight) {
        over = Axis::Y;
        extent = e.height;
        limit = limits.maxImageHeight;
      } else {
        break;
      }
      std::vector<Factor> &axis = l.axes_[static_cast<unsigned>(over)];
      auto best = axis.end();
      int64_t tiles = 1;
      for (auto it = axis.begin(); it != axis.end(); ++it)
        if (it->level == Level::Tile && l.elementExtent(it->dim) == 1 &&
            l.factorExtent(shape, *it) > tiles) {
          best = it;
          tiles = l.factorExtent(shape, *it);
        }
      if (best == axis.end())
        return std::nullopt;
      int64_t rest = extent / tiles;
      int64_t kMax = limit / rest;
      kMax -= kMax % 4;
      if (kMax < 4)
        return std::nullopt;
      int64_t chunks = ceilDiv(tiles, kMax);
      int64_t k = ceilDiv(ceilDiv(tiles, chunks), 4) * 4;
      unsigned dim = best->dim;
      *best = {dim, Level::Element};
      auto &layers = l.axes_[static_cast<unsigned>(Axis::Layer)];
      layers.insert(layers.begin(), {dim, Level::Tile});
      l.tile_[dim] *= k;
      l.kind_ = LayoutKind::Image;
    }
    if (!l.verify().empty() || !l.checkLimits(shape, limits).empty())
      return std::nullopt;
    return l;
  }

  //===--------------------------------------------------------------------===//
  // Arithmetic
  //===--------------------------------------------------------------------===//

  /// Number of values factor `f` takes for `shape`.
  int64_t factorExtent(const std::vector<int64_t> &shape, Factor f) const {
    if (f.level == Level::Tile)
      return ceilDiv(shape[f.dim], tile_[f.dim]);
    return elementExtent(f.dim);
  }

  /// Factors of one axis with divisor, modulus, extent and stride resolved.
  std::vector<FactorTerm> terms(const std::vector<int64_t> &shape,
                                Axis a) const {
    const std::vector<Factor> &fs = factors(a);
    std::vector<FactorTerm> out(fs.size());
    int64_t stride = 1;
    for (size_t k = fs.size(); k-- > 0;) {
      Factor f = fs[k];
      FactorTerm &t = out[k];
      t.factor = f;
      t.extent = factorExtent(shape, f);
      t.stride = stride;
      bool packed = static_cast<int>(f.dim) == packedDim_;
      if (f.level == Level::Tile) {
        t.divisor = tile_[f.dim];
      } else {
        t.divisor = packed ? kTexelChannels : 1;
        t.modulus = elementExtent(f.dim);
      }
      stride *= t.extent;
    }
    return out;
  }

  /// Physical extents for a logical shape, padding included.
  Extents extents(const std::vector<int64_t> &shape) const {
    Extents e;
    if (isBuffer()) {
      e.width = product(shape);
      e.channels = 1;
      return e;
    }
    int64_t ext[kNumAxes] = {1, 1, 1};
    for (unsigned a = 0; a < kNumAxes; ++a)
      for (const Factor &f : axes_[a])
        ext[a] *= factorExtent(shape, f);
    e.width = ext[0];
    e.height = ext[1];
    e.layers = ext[2];
    return e;
  }

  /// Logical index -> physical position.
  TexelCoord toTexel(const std::vector<int64_t> &shape,
                     const std::vector<int64_t> &index) const {
    TexelCoord c;
    if (isBuffer()) {
      c.x = linearize(shape, index);
      return c;
    }
    int64_t coord[kNumAxes] = {0, 0, 0};
    for (unsigned a = 0; a < kNumAxes; ++a)
      for (const Factor &f : axes_[a])
        coord[a] = coord[a] * factorExtent(shape, f) + factorValue(f, index);
    c.x = coord[0];
    c.y = coord[1];
    c.layer = coord[2];
    c.channel = packedDim_ < 0
                    ? 0
                    : static_cast<unsigned>(index[packedDim_] % kTexelChannels);
    return c;
  }

  /// Physical position -> logical index; nullopt for padding or positions
  /// outside the extents.
  std::optional<std::vector<int64_t>>
  toLogical(const std::vector<int64_t> &shape, const TexelCoord &c) const {
    Extents e = extents(shape);
    if (c.x < 0 || c.y < 0 || c.layer < 0 || c.x >= e.width ||
        c.y >= e.height || c.layer >= e.layers || c.channel >= e.channels)
      return std::nullopt;
    std::vector<int64_t> index(rank_, 0);
    if (isBuffer()) {
      int64_t lin = c.x;
      for (unsigned d = rank_; d-- > 0;) {
        index[d] = lin % shape[d];
        lin /= shape[d];
      }
      return index;
    }
    std::vector<int64_t> tileIdx(rank_, 0), elemIdx(rank_, 0);
    int64_t coord[kNumAxes] = {c.x, c.y, c.layer};
    for (unsigned a = 0; a < kNumAxes; ++a)
      for (size_t k = axes_[a].size(); k-- > 0;) {
        Factor f = axes_[a][k];
        int64_t ext = factorExtent(shape, f);
        int64_t v = coord[a] % ext;
        coord[a] /= ext;
        (f.level == Level::Tile ? tileIdx : elemIdx)[f.dim] = v;
      }
    for (unsigned d = 0; d < rank_; ++d) {
      int64_t i = tileIdx[d] * tile_[d];
      if (static_cast<int>(d) == packedDim_)
        i += elemIdx[d] * kTexelChannels + c.channel;
      else
        i += elemIdx[d];
      if (i >= shape[d])
        return std::nullopt;
      index[d] = i;
    }
    if (packedDim_ < 0 && c.channel != 0)
      return std::nullopt;
    return index;
  }

  /// Offset of a physical position in the dense texel array
  /// ((layer * height + y) * width + x) * channels + channel.
  static int64_t flatOffset(const Extents &e, const TexelCoord &c) {
    return ((c.layer * e.height + c.y) * e.width + c.x) * e.channels +
           c.channel;
  }

  /// Per-dim offset tables: the flat texel-array offset of index `i` is the
  /// sum over dims `d` of `tables[d][i[d]]` (every factor depends on one dim
  /// only). Packing and unpacking use these to stay O(elements).
  std::vector<std::vector<int64_t>>
  offsetTables(const std::vector<int64_t> &shape) const {
    Extents e = extents(shape);
    std::vector<std::vector<int64_t>> tables(rank_);
    for (unsigned d = 0; d < rank_; ++d)
      tables[d].assign(shape[d], 0);
    if (isBuffer()) {
      int64_t stride = 1;
      for (unsigned d = rank_; d-- > 0;) {
        for (int64_t i = 0; i < shape[d]; ++i)
          tables[d][i] = i * stride;
        stride *= shape[d];
      }
      return tables;
    }
    const int64_t axisStride[kNumAxes] = {static_cast<int64_t>(e.channels),
                                          e.width * e.channels,
                                          e.width * e.height * e.channels};
    for (unsigned a = 0; a < kNumAxes; ++a)
      for (const FactorTerm &t : terms(shape, static_cast<Axis>(a))) {
        std::vector<int64_t> &tab = tables[t.factor.dim];
        for (int64_t i = 0; i < shape[t.factor.dim]; ++i) {
          int64_t v = i / t.divisor;
          if (t.modulus)
            v %= t.modulus;
          tab[i] += v * t.stride * axisStride[a];
        }
      }
    if (packedDim_ >= 0)
      for (int64_t i = 0; i < shape[packedDim_]; ++i)
        tables[packedDim_][i] += i % kTexelChannels;
    return tables;
  }

  /// Packs a dense row-major host array into the texel array (size
  /// `extents(shape).elements()`); padding gets `pad`.
  template <typename T>
  void pack(const std::vector<int64_t> &shape, const T *src, T *dst,
            T pad = T()) const {
    std::fill(dst, dst + extents(shape).elements(), pad);
    forEachOffset(shape,
                  [&](int64_t lin, int64_t off) { dst[off] = src[lin]; });
  }

  /// Inverse of `pack`.
  template <typename T>
  void unpack(const std::vector<int64_t> &shape, const T *src, T *dst) const {
    forEachOffset(shape,
                  [&](int64_t lin, int64_t off) { dst[lin] = src[off]; });
  }

  //===--------------------------------------------------------------------===//
  // Views
  //===--------------------------------------------------------------------===//

  /// Layout of `transpose(x, perm)` addressing x's memory (see Permutation).
  /// Renaming dims keeps every tile whole, so this always exists; nullopt
  /// only for an invalid permutation.
  std::optional<Layout> transposed(const Permutation &perm) const {
    if (perm.size() != rank_ || !isPermutation(perm))
      return std::nullopt;
    // Source dim d is result dim inv[d].
    Permutation inv = invertPermutation(perm);
    if (isBuffer()) {
      // A row-major buffer stays row-major only under the identity.
      for (unsigned i = 0; i < rank_; ++i)
        if (perm[i] != static_cast<int64_t>(i))
          return std::nullopt;
      return *this;
    }
    std::vector<int64_t> tile = applyPermutation(perm, tile_);
    AxisFactors axes = axes_;
    for (auto &axis : axes)
      for (Factor &f : axis)
        f.dim = static_cast<unsigned>(inv[f.dim]);
    return image(std::move(tile), packedDim_ < 0 ? -1 : inv[packedDim_],
                 std::move(axes));
  }

  /// Layout of `collapse_shape(x, groups)` (groups of consecutive source
  /// dims, row-major) addressing x's memory, or nullopt when the collapse
  /// splits a tile or a texel.
  std::optional<Layout>
  collapsed(const std::vector<int64_t> &shape,
            const std::vector<std::vector<int64_t>> &groups) const {
    // Unit dims collapsed to a scalar (no groups): a buffer's one element.
    if (groups.empty() && isBuffer() && shape.size() == rank_ &&
        std::all_of(shape.begin(), shape.end(),
                    [](int64_t s) { return s == 1; }))
      return buffer(0);
    if (!validGroups(groups, rank_))
      return std::nullopt;
    unsigned newRank = static_cast<unsigned>(groups.size());
    if (isBuffer())
      return buffer(newRank);
    std::vector<int64_t> newTile(newRank, 1);
    int newPacked = -1;
    for (int64_t s : shape)
      if (s <= 0)
        return std::nullopt;
    AxisFactors axes = axes_;
    // Merged factors are named by dim ~0u - j until all groups are done;
    // their extents are kept for the adjacency checks of later groups.
    std::vector<int64_t> mergedTileExt(newRank, 1), mergedElemExt(newRank, 1);
    auto extentOf = [&](Factor f) -> int64_t {
      if (f.dim < rank_)
        return factorExtent(shape, f);
      unsigned j = ~0u - f.dim;
      return f.level == Level::Tile ? mergedTileExt[j] : mergedElemExt[j];
    };
    for (unsigned j = 0; j < newRank; ++j) {
      const std::vector<int64_t> &g = groups[j];
      unsigned k = static_cast<unsigned>(g.size());
      // m: first position after which every dim is one full tile.
      unsigned m = k - 1;
      while (m > 0 && tile_[g[m]] == shape[g[m]])
        --m;
      for (unsigned q = 0; q < m; ++q)
        if (tile_[g[q]] != 1)
          return std::nullopt;
      int64_t prefix = 1;
      for (unsigned q = 0; q < m; ++q)
        prefix *= shape[g[q]];
      unsigned dm = static_cast<unsigned>(g[m]);
      if (prefix > 1 && shape[dm] % tile_[dm] != 0)
        return std::nullopt;
      for (unsigned q = 0; q < k; ++q)
        if (g[q] == packedDim_) {
          if (q != k - 1)
            return std::nullopt; // channels would mix dims
          newPacked = static_cast<int>(j);
        }
      int64_t t = tile_[dm];
      for (unsigned q = m + 1; q < k; ++q)
        t *= shape[g[q]];
      newTile[j] = t;
      // Tile factors: prefix dims and dm, most significant first.
      std::vector<Factor> tileSeq, elemSeq;
      for (unsigned q = 0; q < k; ++q)
        tileSeq.push_back({static_cast<unsigned>(g[q]), Level::Tile});
      for (unsigned q = m; q < k; ++q)
        if (elementExtent(static_cast<unsigned>(g[q])) > 1)
          elemSeq.push_back({static_cast<unsigned>(g[q]), Level::Element});
      for (Factor f : tileSeq)
        mergedTileExt[j] *= extentOf(f);
      for (Factor f : elemSeq)
        mergedElemExt[j] *= extentOf(f);
      if (!mergeFactors(axes, extentOf, tileSeq, {~0u - j, Level::Tile}))
        return std::nullopt;
      if (!elemSeq.empty() &&
          !mergeFactors(axes, extentOf, elemSeq, {~0u - j, Level::Element}))
        return std::nullopt;
    }
    return finishView(std::move(newTile), newPacked, std::move(axes));
  }

  /// Layout of `expand_shape(x, groups) : resultShape` addressing x's memory
  /// (x has `shape`), or nullopt when the expansion splits a tile or texel.
  std::optional<Layout>
  expanded(const std::vector<int64_t> &shape,
           const std::vector<int64_t> &resultShape,
           const std::vector<std::vector<int64_t>> &groups) const {
    unsigned newRank = static_cast<unsigned>(resultShape.size());
    // A scalar expanded to unit dims (no groups): a buffer's one element.
    if (rank_ == 0 && groups.empty() && isBuffer() &&
        std::all_of(resultShape.begin(), resultShape.end(),
                    [](int64_t s) { return s == 1; }))
      return buffer(newRank);
    if (groups.size() != rank_ || !validGroups(groups, newRank))
      return std::nullopt;
    for (int64_t s : resultShape)
      if (s <= 0)
        return std::nullopt;
    for (unsigned j = 0; j < rank_; ++j) {
      int64_t p = 1;
      for (int64_t r : groups[j])
        p *= resultShape[r];
      if (p != shape[j])
        return std::nullopt;
    }
    if (isBuffer())
      return buffer(newRank);
    std::vector<int64_t> newTile(newRank, 1);
    int newPacked = -1;
    AxisFactors axes = axes_;
    // Result dims are encoded as ~0u - r while source dims are still present.
    for (unsigned j = 0; j < rank_; ++j) {
      const std::vector<int64_t> &g = groups[j];
      unsigned k = static_cast<unsigned>(g.size());
      int64_t t = tile_[j];
      bool packed = static_cast<int>(j) == packedDim_;
      // Pick the dim m that takes the tile: the dims after it fit whole into
      // the tile, the dims before it get tile 1. Prefer the longest suffix.
      std::optional<unsigned> chosen;
      for (unsigned m = 0; m < k && !chosen; ++m) {
        int64_t suffix = 1, prefix = 1;
        for (unsigned q = m + 1; q < k; ++q)
          suffix *= resultShape[g[q]];
        for (unsigned q = 0; q < m; ++q)
          prefix *= resultShape[g[q]];
        if (t % suffix != 0)
          continue;
        int64_t tm = t / suffix;
        if (prefix > 1 && resultShape[g[m]] % tm != 0)
          continue;
        // The packed dim's texels must stay inside the last result dim.
        int64_t lastTile = m == k - 1 ? tm : resultShape[g[k - 1]];
        if (packed && lastTile % kTexelChannels != 0)
          continue;
        chosen = m;
      }
      if (!chosen)
        return std::nullopt;
      unsigned m = *chosen;
      int64_t suffix = 1;
      for (unsigned q = m + 1; q < k; ++q)
        suffix *= resultShape[g[q]];
      int64_t tm = t / suffix;
      for (unsigned q = 0; q < k; ++q)
        newTile[g[q]] = q < m ? 1 : (q == m ? tm : resultShape[g[q]]);
      if (packed)
        newPacked = static_cast<int>(g[k - 1]);
      std::vector<Factor> tileSeq, elemSeq;
      for (unsigned q = 0; q < k; ++q)
        tileSeq.push_back({~0u - static_cast<unsigned>(g[q]), Level::Tile});
      for (unsigned q = m; q < k; ++q)
        elemSeq.push_back({~0u - static_cast<unsigned>(g[q]), Level::Element});
      splitFactor(axes, {j, Level::Tile}, tileSeq);
      splitFactor(axes, {j, Level::Element}, elemSeq);
    }
    return finishView(std::move(newTile), newPacked, std::move(axes));
  }

  //===--------------------------------------------------------------------===//
  // Recognition of named kinds
  //===--------------------------------------------------------------------===//

  struct ChannelPackedParams {
    int packedDim;
    BatchFold fold;
  };
  struct RTileParams {
    int64_t tileRows, tileCols;
    int packedDim;
    IntraTileOrder intra;
    InterTileOrder inter;
    BatchFold fold;
  };

  std::optional<ChannelPackedParams> asChannelPacked() const {
    if (isBuffer())
      return std::nullopt;
    std::vector<int> candidates = {-1};
    if (rank_ > 0) {
      candidates.clear();
      for (unsigned d = rank_; d-- > 0;)
        candidates.push_back(static_cast<int>(d));
    }
    for (int p : candidates)
      for (BatchFold f : {BatchFold::Y, BatchFold::Layers})
        if (samePlacement(channelPacked(rank_, p, f)))
          return ChannelPackedParams{p, f};
    return std::nullopt;
  }

  std::optional<RTileParams> asRTile() const {
    if (isBuffer() || rank_ < 2)
      return std::nullopt;
    int64_t tr = tile_[rank_ - 2], tc = tile_[rank_ - 1];
    for (int p : matrixPackedCandidates())
      for (IntraTileOrder intra :
           {IntraTileOrder::RowsOnY, IntraTileOrder::RowsOnX,
            IntraTileOrder::Linear})
        for (InterTileOrder inter :
             {InterTileOrder::RowMajor, InterTileOrder::ColMajor})
          for (BatchFold f : {BatchFold::Y, BatchFold::Layers})
            if (samePlacement(rtile(rank_, tr, tc, p, intra, inter, f)))
              return RTileParams{tr, tc, p, intra, inter, f};
    return std::nullopt;
  }

  /// Human-readable form, e.g. "image<tile=[1,4] packed=1 x=[d1] y=[d0]>".
  std::string str() const {
    std::ostringstream os;
    if (isBuffer()) {
      os << "buffer<rank=" << rank_ << ">";
      return os.str();
    }
    os << "image<tile=[";
    for (unsigned d = 0; d < rank_; ++d)
      os << (d ? "," : "") << tile_[d];
    os << "] packed=" << packedDim_;
    static const char *names[] = {"x", "y", "layers"};
    for (unsigned a = 0; a < kNumAxes; ++a) {
      os << " " << names[a] << "=[";
      for (size_t k = 0; k < axes_[a].size(); ++k)
        os << (k ? "," : "") << "d" << axes_[a][k].dim
           << (axes_[a][k].level == Level::Element ? ".e" : "");
      os << "]";
    }
    os << ">";
    return os.str();
  }

  static int64_t product(const std::vector<int64_t> &v) {
    int64_t p = 1;
    for (int64_t x : v)
      p *= x;
    return p;
  }

  static int64_t linearize(const std::vector<int64_t> &shape,
                           const std::vector<int64_t> &index) {
    int64_t lin = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      lin = lin * shape[d] + index[d];
    return lin;
  }

private:
  int64_t factorValue(Factor f, const std::vector<int64_t> &index) const {
    int64_t i = index[f.dim];
    if (f.level == Level::Tile)
      return i / tile_[f.dim];
    int64_t inTile = i % tile_[f.dim];
    return static_cast<int>(f.dim) == packedDim_ ? inTile / kTexelChannels
                                                 : inTile;
  }

  /// Calls fn(row-major linear index, flat texel offset) for every element.
  template <typename Fn>
  void forEachOffset(const std::vector<int64_t> &shape, Fn fn) const {
    int64_t n = product(shape);
    if (n == 0)
      return;
    auto tables = offsetTables(shape);
    std::vector<int64_t> idx(rank_, 0);
    int64_t off = 0;
    for (unsigned d = 0; d < rank_; ++d)
      off += tables[d][0];
    for (int64_t lin = 0; lin < n; ++lin) {
      fn(lin, off);
      // Increment the row-major index, updating the offset incrementally.
      for (unsigned d = rank_; d-- > 0;) {
        off -= tables[d][idx[d]];
        if (++idx[d] < shape[d]) {
          off += tables[d][idx[d]];
          break;
        }
        idx[d] = 0;
        off += tables[d][0];
      }
    }
  }

  /// Factor placement shared by the channel-packed and R-Tile kinds.
  static AxisFactors placeMatrix(unsigned rank, IntraTileOrder intra,
                                 InterTileOrder inter, BatchFold fold) {
    AxisFactors axes;
    auto &x = axes[0], &y = axes[1], &layers = axes[2];
    if (rank == 0)
      return axes;
    if (rank == 1) {
      x.push_back({0, Level::Tile});
      x.push_back({0, Level::Element});
      return axes;
    }
    unsigned rows = rank - 2, cols = rank - 1;
    for (unsigned b = 0; b < rows; ++b)
      (fold == BatchFold::Y ? y : layers).push_back({b, Level::Tile});
    bool rowMajor = inter == InterTileOrder::RowMajor;
    (rowMajor ? y : x).push_back({rows, Level::Tile});
    (rowMajor ? x : y).push_back({cols, Level::Tile});
    switch (intra) {
    case IntraTileOrder::RowsOnY:
      y.push_back({rows, Level::Element});
      x.push_back({cols, Level::Element});
      break;
    case IntraTileOrder::RowsOnX:
      x.push_back({rows, Level::Element});
      y.push_back({cols, Level::Element});
      break;
    case IntraTileOrder::Linear:
      x.push_back({rows, Level::Element});
      x.push_back({cols, Level::Element});
      break;
    }
    return axes;
  }

  /// Builds the layout of a reshape view from factors still named by the
  /// placeholder dims `~0u - d`, in canonical form; nullopt if invalid.
  static std::optional<Layout> finishView(std::vector<int64_t> tile,
                                          int packedDim, AxisFactors axes) {
    for (auto &axis : axes)
      for (Factor &f : axis)
        f.dim = ~0u - f.dim;
    Layout l = image(std::move(tile), packedDim, std::move(axes));
    l.dropUnitElementFactors();
    if (!l.verify().empty())
      return std::nullopt;
    return l;
  }

  void dropUnitElementFactors() {
    for (auto &axis : axes_)
      axis.erase(std::remove_if(axis.begin(), axis.end(),
                                [&](const Factor &f) {
                                  return f.level == Level::Element &&
                                         f.dim < rank_ &&
                                         elementExtent(f.dim) <= 1;
                                }),
                 axis.end());
  }

  std::vector<int> matrixPackedCandidates() const {
    if (rank_ == 0)
      return {-1};
    if (rank_ == 1)
      return {0};
    return {static_cast<int>(rank_) - 1, static_cast<int>(rank_) - 2};
  }

  static bool validGroups(const std::vector<std::vector<int64_t>> &groups,
                          unsigned rank) {
    int64_t next = 0;
    for (const auto &g : groups) {
      if (g.empty())
        return false;
      for (int64_t d : g)
        if (d != next++)
          return false;
    }
    return next == static_cast<int64_t>(rank);
  }

  /// Replaces the factors of `seq` (most significant first) by `merged`.
  /// Those with extent > 1 must sit consecutively, in order, on
  /// one axis (ignoring unit-extent factors between them); unit ones may be
  /// anywhere and are dropped.
  template <typename ExtentFn>
  static bool mergeFactors(AxisFactors &axes, ExtentFn extentOf,
                           const std::vector<Factor> &seq, Factor merged) {
    auto inSeq = [&](Factor f) {
      return std::find(seq.begin(), seq.end(), f) != seq.end();
    };
    std::vector<Factor> big;
    for (Factor f : seq)
      if (extentOf(f) > 1)
        big.push_back(f);
    // The anchor: first big factor, else the last factor of seq.
    Factor anchor = big.empty() ? seq.back() : big.front();
    for (auto &axis : axes) {
      auto it = std::find(axis.begin(), axis.end(), anchor);
      if (it == axis.end())
        continue;
      // Check that the big factors follow in order among non-unit factors.
      size_t want = 0;
      for (auto jt = it; jt != axis.end() && want < big.size(); ++jt) {
        if (*jt == big[want]) {
          ++want;
          continue;
        }
        if (extentOf(*jt) > 1)
          return false;
      }
      if (want != big.size())
        return false;
      size_t pos = static_cast<size_t>(it - axis.begin());
      axis[pos] = merged;
      break;
    }
    // Drop the remaining factors of seq everywhere.
    for (auto &axis : axes)
      axis.erase(std::remove_if(
                     axis.begin(), axis.end(),
                     [&](const Factor &f) { return f != merged && inSeq(f); }),
                 axis.end());
    return true;
  }

  /// Replaces factor `f` by `seq` (most significant first), in place. An
  /// absent element factor has extent one, and so have all its pieces: they
  /// are left out like it.
  static void splitFactor(AxisFactors &axes, Factor f,
                          const std::vector<Factor> &seq) {
    for (auto &axis : axes) {
      auto it = std::find(axis.begin(), axis.end(), f);
      if (it == axis.end())
        continue;
      it = axis.erase(it);
      axis.insert(it, seq.begin(), seq.end());
      return;
    }
  }

  LayoutKind kind_ = LayoutKind::Buffer;
  unsigned rank_ = 0;
  std::vector<int64_t> tile_;
  int packedDim_ = -1;
  AxisFactors axes_;
};

} // namespace fbl::layout

#endif // FBL_LAYOUT_LAYOUT_H
