//===- CostModelTest.cpp - Tests of the texture-cache cost model ----------===//
//
// Counts the model must get exactly on small kernels (fetches of whole and
// strided texels, writes, compulsory misses), and the orderings the layout
// passes rely on: strided reads cost more than whole-texel reads, a cache
// too small for a work-group's footprint misses more, relayouts cost a read
// and a write of the tensor.
//
//===----------------------------------------------------------------------===//

#include "fbl/CostModel/CostModel.h"

#include <gtest/gtest.h>

using namespace fbl;
using namespace fbl::cost;
using layout::Layout;

namespace {

/// C[m, n] += A[m, k] * B[k, n] over loops (m, n, k).
struct Matmul {
  int64_t m, n, k;
  LoopNest nest() const {
    return makeLoopNest({m, n, k}, {false, false, true}, {0, 1});
  }
  TensorAccess a(Layout l) const { return {{m, k}, {0, 2}, l}; }
  TensorAccess b(Layout l) const { return {{k, n}, {2, 1}, l}; }
  TensorAccess c(Layout l) const { return {{m, n}, {0, 1}, l}; }
};

CacheGeometry bigCache() { return {4, 2, 1 << 20, 8, 16}; }

TEST(CostModelTest, LoopNestBlocksTheOutputsLastTwoDims) {
  LoopNest nest = Matmul{64, 32, 16}.nest();
  EXPECT_EQ(nest.blockX, 1);
  EXPECT_EQ(nest.blockY, 0);
  EXPECT_EQ(nest.unrolled, 2);
  // 32 / 4 = 8 blocks along n in groups of 8, 64 / 4 = 16 along m in 8s.
  EXPECT_EQ(numWorkGroups(nest, 8, 8), 1 * 2);
}

TEST(CostModelTest, WholeTexelReadsOfAMatmul) {
  Matmul mm{32, 32, 32};
  // A packed along k: a work-item reads 4 rows x 1 texel per k-step of 4.
  AccessCost a =
      readCost(mm.nest(), mm.a(Layout::channelPacked(2, 1)), 8, 8, bigCache());
  // 64 work-items x 8 k-steps x 4 texels, one work-group.
  EXPECT_EQ(a.fetches, 64 * 8 * 4);
  EXPECT_EQ(a.elements, 64 * 8 * 16);
  // Packed along m instead: still whole texels (transposed in registers).
  AccessCost at =
      readCost(mm.nest(), mm.a(Layout::channelPacked(2, 0)), 8, 8, bigCache());
  EXPECT_EQ(at.fetches, a.fetches);
  // Compulsory misses: every line of A once (32 x 8 texels in 4x2 lines).
  EXPECT_EQ(a.misses, 32 * 8 / 8);
}

TEST(CostModelTest, StridedReadsFetchOneUsefulElementPerTexel) {
  // An elementwise kernel over [8, 64] reading x through a broadcast of its
  // rows: x[m] read per output row. Packed along m, 4 rows share a texel
  // but each work-item row block covers them: whole. Against a batch loop
  // that is not blocked, packing along it wastes 3 of 4 channels.
  LoopNest nest = makeLoopNest({3, 8, 16}, {false, false, false}, {0, 1, 2});
  // Tensor [3, 16] indexed by (loop 0, loop 2); loop 0 is not blocked.
  TensorAccess packedBatch{{3, 16}, {0, 2}, Layout::channelPacked(2, 0)};
  TensorAccess packedCols{{3, 16}, {0, 2}, Layout::channelPacked(2, 1)};
  AccessCost strided = readCost(nest, packedBatch, 8, 8, bigCache());
  AccessCost whole = readCost(nest, packedCols, 8, 8, bigCache());
  EXPECT_EQ(strided.elements, whole.elements);
  EXPECT_EQ(strided.fetches, 4 * whole.fetches);
  EXPECT_GT(strided.cost, whole.cost);
}

TEST(CostModelTest, SmallCachesMissMore) {
  Matmul mm{128, 128, 256};
  Layout cp = Layout::channelPacked(2, 1);
  CacheGeometry tiny{4, 2, 4 * 2 * 16 * 2 * 2, 2, 16}; // 4 lines
  AccessCost big = readCost(mm.nest(), mm.a(cp), 8, 8, bigCache());
  AccessCost small = readCost(mm.nest(), mm.a(cp), 8, 8, tiny);
  EXPECT_EQ(big.fetches, small.fetches);
  EXPECT_GT(small.misses, big.misses);
}

TEST(CostModelTest, FootprintShapeMatters) {
  // Reading A's 4 rows x 1 texel per step: lines 1 texel wide and 8 tall fit
  // the footprint; lines 8 wide and 1 tall waste 7/8 of each fill unless the
  // next steps reuse them before eviction.
  Matmul mm{64, 64, 512};
  Layout cp = Layout::channelPacked(2, 1);
  CacheGeometry tall{1, 8, 8 * 16 * 4, 4, 16}; // 4 lines
  CacheGeometry wide{8, 1, 8 * 16 * 4, 4, 16};
  AccessCost t = readCost(mm.nest(), mm.a(cp), 8, 8, tall);
  AccessCost w = readCost(mm.nest(), mm.a(cp), 8, 8, wide);
  EXPECT_LT(t.misses, w.misses);
}

TEST(CostModelTest, WritesCountTexels) {
  Matmul mm{6, 10, 4};
  AccessCost w = writeCost(mm.c(Layout::channelPacked(2, 1)));
  EXPECT_EQ(w.fetches, 6 * 3);
  AccessCost wb = writeCost(mm.c(Layout::buffer(2)));
  EXPECT_EQ(wb.fetches, 15); // 60 floats as float4 stores
}

TEST(CostModelTest, RelayoutReadsAndWritesTheTensor) {
  std::vector<int64_t> shape = {64, 64};
  Layout cp = Layout::channelPacked(2, 1), cpt = Layout::channelPacked(2, 0);
  AccessCost c = relayoutCost(shape, cp, cpt, 8, 8, bigCache());
  // 1024 texels read once (whole texels, transposed in registers) and 1024
  // written.
  EXPECT_EQ(c.fetches, 1024 + 1024);
  EXPECT_EQ(c.misses, 1024 / 8);
  EXPECT_GT(c.cost, 2048);
}

TEST(CostModelTest, LongReductionsAreScaled) {
  Matmul shortK{32, 32, 64}, longK{32, 32, 64 * 1024};
  Layout cp = Layout::channelPacked(2, 1);
  AccessCost s = readCost(shortK.nest(), shortK.a(cp), 8, 8, bigCache());
  AccessCost l = readCost(longK.nest(), longK.a(cp), 8, 8, bigCache());
  EXPECT_EQ(l.fetches, s.fetches * 1024);
}

} // namespace
