//===- Cache.h - Set-associative LRU caches for fbl-cachesim ----*- C++ -*-===//
//
// The caches fbl-cachesim replays kernels' accesses through, without MLIR:
// a set-associative LRU cache of line tags, the texture cache whose lines
// cover a 2D block of texels of one image layer, and the linear cache for
// buffer reads. docs/CacheSim.md explains the geometry and the set hash.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_CACHESIM_CACHE_H
#define FBL_CACHESIM_CACHE_H

#include <array>
#include <cstdint>
#include <vector>

namespace fbl::cachesim {

/// Bytes of one texel: images hold RGBA32F texels (the target's line
/// footprints are counted in them, docs/Targets.md).
inline constexpr int64_t kTexelBytes = 16;
/// Bytes of one line of the buffer cache.
inline constexpr int64_t kBufferLineBytes = 64;

/// Bits of a set index below `sets`: ceil(log2 sets).
unsigned setIndexBits(uint64_t sets);

/// The set of `key` among `sets` (`bits` = setIndexBits(sets)): its low
/// `bits` bits XOR a multiplicative hash of the bits above. Keys that
/// differ only in their low bits get different sets (when `sets` is a
/// power of two), and the high bits still decide the set, so strides of a
/// power of two spread over the sets instead of landing in one.
inline uint64_t hashSetIndex(uint64_t key, uint64_t sets, unsigned bits) {
  if (bits == 0)
    return 0;
  uint64_t low = key & ((uint64_t(1) << bits) - 1);
  uint64_t high = ((key >> bits) * 0x9e3779b97f4a7c15ULL) >> (64 - bits);
  uint64_t set = low ^ high;
  return set < sets ? set : set % sets;
}

/// Interleaves the bits of x and y (x in the even bits): the Morton (Z)
/// order of a 2D position.
uint64_t interleaveBits(uint32_t x, uint32_t y);

/// A set-associative cache of 64-bit line tags with LRU replacement. Tags
/// are whole line identities; the caller picks the set.
class SetAssociativeCache {
public:
  SetAssociativeCache(uint64_t sets, unsigned ways);

  /// Looks `tag` up in `set`, making it the most recently used line; brings
  /// it in (evicting the least recently used line) on a miss. True on a
  /// hit.
  bool access(uint64_t set, uint64_t tag);

  /// Empties every set.
  void clear();

  uint64_t sets() const { return numSets; }
  unsigned ways() const { return numWays; }

private:
  uint64_t numSets;
  unsigned numWays;
  /// Per set, its ways' tags from most to least recently used; `filled`
  /// counts the valid ones.
  std::vector<uint64_t> tags;
  std::vector<unsigned> filled;
};

/// Where one texel sits: an image (a memory object id), layer, y, x.
struct TexelAddress {
  uint32_t image;
  int64_t layer, y, x;
};

/// A texture cache: lines of `lineTexels` = (w, h) texels of one image
/// layer, 2D-blocked ((x / w, y / h) names the line), `bytes` of capacity
/// in `ways`-way sets. The set of a line is hashSetIndex of its Morton code
/// (so an aligned 2D neighbourhood of lines spreads over all sets) XOR a
/// salt of the image and layer.
class TextureCache {
public:
  TextureCache(std::array<int64_t, 2> lineTexels, int64_t bytes, unsigned ways);

  /// True on a hit.
  bool access(const TexelAddress &a);
  void clear() { cache.clear(); }

  /// The set a texel's line maps to (for tests and traces).
  uint64_t setOf(const TexelAddress &a) const;
  const SetAssociativeCache &lines() const { return cache; }

private:
  /// The line column and row of a texel.
  std::array<uint64_t, 2> lineOf(const TexelAddress &a) const {
    if (lineShift[0] >= 0)
      return {uint64_t(a.x) >> lineShift[0], uint64_t(a.y) >> lineShift[1]};
    return {uint64_t(a.x / lineTexels[0]), uint64_t(a.y / lineTexels[1])};
  }
  uint64_t setOf(const TexelAddress &a, std::array<uint64_t, 2> line) const;

  std::array<int64_t, 2> lineTexels;
  /// log2 of the line's width and height when both are powers of two.
  std::array<int, 2> lineShift;
  SetAssociativeCache cache;
  unsigned bits;
};

/// A linear cache of 64-byte lines over buffers, `bytes` of capacity in
/// `ways`-way sets; a line's set is hashSetIndex of its line number XOR a
/// salt of the buffer.
class BufferCache {
public:
  BufferCache(int64_t bytes, unsigned ways);

  /// True on a hit.
  bool access(uint32_t buffer, int64_t byteOffset);
  void clear() { cache.clear(); }

  uint64_t setOf(uint32_t buffer, int64_t byteOffset) const;
  const SetAssociativeCache &lines() const { return cache; }

private:
  SetAssociativeCache cache;
  unsigned bits;
};

} // namespace fbl::cachesim

#endif // FBL_CACHESIM_CACHE_H
