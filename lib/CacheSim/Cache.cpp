//===- Cache.cpp - Set-associative LRU caches for fbl-cachesim ------------===//

#include "fbl/CacheSim/Cache.h"

#include <algorithm>

using namespace fbl::cachesim;

/// A salt for a memory object (and layer): constant per image layer, so it
/// permutes the sets of its lines without changing which collide.
static uint64_t salt(uint64_t object, uint64_t layer, unsigned bits) {
  if (bits == 0)
    return 0;
  return ((object + 1) * 0xbf58476d1ce4e5b9ULL +
          layer * 0x94d049bb133111ebULL) >>
         (64 - bits);
}

unsigned fbl::cachesim::setIndexBits(uint64_t sets) {
  unsigned bits = 0;
  while ((uint64_t(1) << bits) < sets)
    ++bits;
  return bits;
}

uint64_t fbl::cachesim::interleaveBits(uint32_t x, uint32_t y) {
  auto spread = [](uint64_t v) {
    v = (v | (v << 16)) & 0x0000ffff0000ffffULL;
    v = (v | (v << 8)) & 0x00ff00ff00ff00ffULL;
    v = (v | (v << 4)) & 0x0f0f0f0f0f0f0f0fULL;
    v = (v | (v << 2)) & 0x3333333333333333ULL;
    v = (v | (v << 1)) & 0x5555555555555555ULL;
    return v;
  };
  return spread(x) | (spread(y) << 1);
}

SetAssociativeCache::SetAssociativeCache(uint64_t sets, unsigned ways)
    : numSets(std::max<uint64_t>(sets, 1)), numWays(std::max(ways, 1u)),
      tags(numSets * numWays), filled(numSets, 0) {}

bool SetAssociativeCache::access(uint64_t set, uint64_t tag) {
  uint64_t *ways = &tags[set * numWays];
  unsigned &n = filled[set];
  unsigned i = 0;
  while (i < n && ways[i] != tag)
    ++i;
  bool hit = i < n;
  if (!hit) {
    // Bring the line in: the least recently used one (last) falls out.
    if (n < numWays)
      ++n;
    i = n - 1;
  }
  // Move to the front: ways[0] is the most recently used.
  std::copy_backward(ways, ways + i, ways + i + 1);
  ways[0] = tag;
  return hit;
}

void SetAssociativeCache::clear() {
  std::fill(filled.begin(), filled.end(), 0);
}

static uint64_t texelCacheSets(std::array<int64_t, 2> line, int64_t bytes,
                               unsigned ways) {
  int64_t lineBytes = std::max<int64_t>(line[0] * line[1], 1) * kTexelBytes;
  return uint64_t(std::max<int64_t>(bytes / (lineBytes * ways), 1));
}

TextureCache::TextureCache(std::array<int64_t, 2> lineTexels, int64_t bytes,
                           unsigned ways)
    : lineTexels({std::max<int64_t>(lineTexels[0], 1),
                  std::max<int64_t>(lineTexels[1], 1)}),
      lineShift({-1, -1}), cache(texelCacheSets(lineTexels, bytes, ways), ways),
      bits(setIndexBits(cache.sets())) {
  auto log2 = [](int64_t v) {
    int s = 0;
    while ((int64_t(1) << s) < v)
      ++s;
    return (int64_t(1) << s) == v ? s : -1;
  };
  int w = log2(this->lineTexels[0]), h = log2(this->lineTexels[1]);
  if (w >= 0 && h >= 0)
    lineShift = {w, h};
}

uint64_t TextureCache::setOf(const TexelAddress &a,
                             std::array<uint64_t, 2> line) const {
  uint64_t set =
      hashSetIndex(interleaveBits(uint32_t(line[0]), uint32_t(line[1])),
                   cache.sets(), bits) ^
      salt(a.image, uint64_t(a.layer), bits);
  return set < cache.sets() ? set : set % cache.sets();
}

uint64_t TextureCache::setOf(const TexelAddress &a) const {
  return setOf(a, lineOf(a));
}

bool TextureCache::access(const TexelAddress &a) {
  std::array<uint64_t, 2> line = lineOf(a);
  // Image (8 bits), layer (12), line row (22), line column (22): wider
  // than any target's image limits in lines.
  uint64_t tag = (uint64_t(a.image & 0xff) << 56) |
                 (uint64_t(a.layer & 0xfff) << 44) |
                 ((line[1] & 0x3fffff) << 22) | (line[0] & 0x3fffff);
  return cache.access(setOf(a, line), tag);
}

BufferCache::BufferCache(int64_t bytes, unsigned ways)
    : cache(uint64_t(std::max<int64_t>(
                bytes / (kBufferLineBytes * std::max(ways, 1u)), 1)),
            ways),
      bits(setIndexBits(cache.sets())) {}

uint64_t BufferCache::setOf(uint32_t buffer, int64_t byteOffset) const {
  uint64_t line = uint64_t(byteOffset / kBufferLineBytes);
  uint64_t set = hashSetIndex(line, cache.sets(), bits) ^ salt(buffer, 0, bits);
  return set < cache.sets() ? set : set % cache.sets();
}

bool BufferCache::access(uint32_t buffer, int64_t byteOffset) {
  uint64_t line = uint64_t(byteOffset / kBufferLineBytes);
  return cache.access(setOf(buffer, byteOffset),
                      (uint64_t(buffer & 0xff) << 56) |
                          (line & 0x00ffffffffffffffULL));
}
