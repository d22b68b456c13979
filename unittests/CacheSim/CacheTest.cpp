//===- CacheTest.cpp - The caches fbl-cachesim replays accesses through ---===//

#include "fbl/CacheSim/Cache.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

using namespace fbl::cachesim;

TEST(SetAssociativeCache, EvictsTheLeastRecentlyUsedLine) {
  SetAssociativeCache cache(1, 2);
  EXPECT_FALSE(cache.access(0, 10));
  EXPECT_FALSE(cache.access(0, 20));
  EXPECT_TRUE(cache.access(0, 10));  // 20 is now the least recently used
  EXPECT_FALSE(cache.access(0, 30)); // evicts 20
  EXPECT_TRUE(cache.access(0, 10));
  EXPECT_TRUE(cache.access(0, 30));
  EXPECT_FALSE(cache.access(0, 20));
}

TEST(SetAssociativeCache, AWorkingSetLargerThanTheWaysAlwaysMisses) {
  // Cycling through ways + 1 lines of one set under LRU: every access
  // evicts the line needed next.
  SetAssociativeCache cache(1, 4);
  int misses = 0;
  for (int round = 0; round < 3; ++round)
    for (uint64_t tag = 0; tag < 5; ++tag)
      misses += !cache.access(0, tag);
  EXPECT_EQ(misses, 15);
  // Four lines fit: only the first round misses.
  cache.clear();
  misses = 0;
  for (int round = 0; round < 3; ++round)
    for (uint64_t tag = 0; tag < 4; ++tag)
      misses += !cache.access(0, tag);
  EXPECT_EQ(misses, 4);
}

TEST(SetAssociativeCache, SetsAreIndependent) {
  SetAssociativeCache cache(2, 1);
  EXPECT_FALSE(cache.access(0, 1));
  EXPECT_FALSE(cache.access(1, 2));
  EXPECT_TRUE(cache.access(0, 1));
  EXPECT_TRUE(cache.access(1, 2));
  EXPECT_FALSE(cache.access(0, 3)); // direct-mapped: evicts 1 only
  EXPECT_TRUE(cache.access(1, 2));
  EXPECT_FALSE(cache.access(0, 1));
}

TEST(TextureCache, ALineCoversABlockOfTexels) {
  // 4x2-texel lines (the mobile presets'), 16 KiB, 4-way: 32 sets.
  TextureCache cache({4, 2}, 16384, 4);
  EXPECT_EQ(cache.lines().sets(), 32u);
  EXPECT_FALSE(cache.access({0, 0, 0, 0}));
  for (int64_t y = 0; y < 2; ++y)
    for (int64_t x = 0; x < 4; ++x)
      EXPECT_TRUE(cache.access({0, 0, y, x})) << y << ", " << x;
  EXPECT_FALSE(cache.access({0, 0, 0, 4})); // the next line along x
  EXPECT_FALSE(cache.access({0, 0, 2, 0})); // the next line along y
  EXPECT_FALSE(cache.access({0, 1, 0, 0})); // another layer
  EXPECT_FALSE(cache.access({1, 0, 0, 0})); // another image
  EXPECT_TRUE(cache.access({0, 0, 1, 3}));
}

TEST(TextureCache, NeighbouringLinesUseEverySet) {
  // An aligned 8x4 block of 4x2-texel lines (32x8 texels) maps to all 32
  // sets, whatever the image and layer.
  TextureCache cache({4, 2}, 16384, 4);
  for (uint32_t image = 0; image < 3; ++image) {
    std::set<uint64_t> sets;
    for (int64_t ly = 0; ly < 4; ++ly)
      for (int64_t lx = 0; lx < 8; ++lx)
        sets.insert(cache.setOf({image, image, 8 + ly * 2, 32 + lx * 4}));
    EXPECT_EQ(sets.size(), 32u) << "image " << image;
  }
}

TEST(TextureCache, APowerOfTwoPitchDoesNotCollapseIntoOneSet) {
  // Lines 64 line rows apart (a column walk over a tall image): a set index
  // taken from the low bits of the line row would put them all in one set.
  TextureCache cache({4, 2}, 16384, 4);
  std::map<uint64_t, int> perSet;
  for (int64_t k = 0; k < 32; ++k)
    ++perSet[cache.setOf({0, 0, k * 64 * 2, 0})];
  EXPECT_GE(perSet.size(), 16u);
  for (auto [set, lines] : perSet)
    EXPECT_LE(lines, 4) << "set " << set;
  // ...so all 32 lines stay in the cache.
  int misses = 0;
  for (int round = 0; round < 2; ++round)
    for (int64_t k = 0; k < 32; ++k)
      misses += !cache.access({0, 0, k * 64 * 2, 0});
  EXPECT_EQ(misses, 32);
}

TEST(TextureCache, CapacityBoundsWhatStays) {
  // 4x1-texel lines, 4 lines fully associative (one set of 4 ways).
  TextureCache cache({4, 1}, 4 * 4 * kTexelBytes, 4);
  EXPECT_EQ(cache.lines().sets(), 1u);
  int misses = 0;
  for (int round = 0; round < 2; ++round)
    for (int64_t y = 0; y < 4; ++y)
      for (int64_t x = 0; x < 4; ++x)
        misses += !cache.access({0, 0, y, x});
  EXPECT_EQ(misses, 4);
  // A fifth line evicts the least recently used one (row 0).
  EXPECT_FALSE(cache.access({0, 0, 4, 0}));
  EXPECT_FALSE(cache.access({0, 0, 0, 0}));
  EXPECT_TRUE(cache.access({0, 0, 4, 3}));
}

TEST(BufferCache, SixtyFourByteLines) {
  BufferCache cache(1024, 2); // 16 lines: 8 sets of 2
  EXPECT_EQ(cache.lines().sets(), 8u);
  EXPECT_FALSE(cache.access(0, 0));
  EXPECT_TRUE(cache.access(0, 63));
  EXPECT_FALSE(cache.access(0, 64));
  EXPECT_FALSE(cache.access(1, 0)); // another buffer
  // Consecutive lines of one buffer fill distinct sets.
  std::set<uint64_t> sets;
  for (int64_t line = 0; line < 8; ++line)
    sets.insert(cache.setOf(3, line * 64));
  EXPECT_EQ(sets.size(), 8u);
}

TEST(SetIndex, HashAndInterleaving) {
  EXPECT_EQ(interleaveBits(0b11, 0), 0b0101u);
  EXPECT_EQ(interleaveBits(0, 0b11), 0b1010u);
  EXPECT_EQ(setIndexBits(1), 0u);
  EXPECT_EQ(setIndexBits(32), 5u);
  EXPECT_EQ(setIndexBits(33), 6u);
  EXPECT_EQ(hashSetIndex(5, 8, 3), 5u); // no high bits: the low bits
  EXPECT_EQ(hashSetIndex(123456, 1, 0), 0u);
  EXPECT_LT(hashSetIndex(~uint64_t(0), 6, 3), 6u);
  // Keys with equal high bits: a permutation of their low bits.
  std::set<uint64_t> sets;
  for (uint64_t low = 0; low < 8; ++low)
    sets.insert(hashSetIndex((uint64_t(12345) << 3) | low, 8, 3));
  EXPECT_EQ(sets.size(), 8u);
}
