//===- CostModelTest.cpp - Tests of the kernel cost model -----------------===//
//
// Counts the model must get exactly (fetches and writes of each kernel
// family and read form, misses of a copy whose lines are all used once),
// and the
// orderings selection relies on: a cache too small for the footprint misses
// more, more compute units take less time, the sample does not grow with
// the tensors; reads with equal keys cost the same.
//
//===----------------------------------------------------------------------===//

#include "fbl/CostModel/CostModel.h"

#include <gtest/gtest.h>

#include <random>

using namespace fbl;
using namespace fbl::cost;
using layout::Layout;

namespace {

/// One compute unit with a cache big enough for anything here, 8x8
/// work-groups, all of them resident.
DeviceModel bigDevice() {
  DeviceModel d;
  d.cache = {4, 2, 1 << 20, 8, 16};
  d.execution = target::kDefaultExecution;
  d.execution.computeUnits = 1;
  d.execution.residentItems = 1 << 20;
  d.preferredWorkgroup = {8, 8};
  return d;
}

/// C[m, n] (+)= A[m, k] * B[k, n] over loops (m, n, k).
KernelShape matmul(int64_t m, int64_t n, int64_t k, Layout a, Layout b,
                   Layout c, KernelKind kind) {
  KernelShape s;
  s.kind = kind;
  s.ranges = {m, n, k};
  s.reduction = {false, false, true};
  s.output = {{m, n}, {0, 1}, c};
  s.inputs = {{{m, k}, {0, 2}, a}, {{k, n}, {2, 1}, b}};
  s.mLoop = 0;
  s.nLoop = 1;
  s.kLoop = 2;
  return s;
}

/// out[i, j] = x[i, j] (+ y[i, j]) over loops (i, j): a per-texel kernel.
KernelShape elementwise(int64_t rows, int64_t cols, Layout out,
                        std::vector<Layout> ins) {
  KernelShape s;
  s.ranges = {rows, cols};
  s.reduction = {false, false};
  s.output = {{rows, cols}, {0, 1}, out};
  for (const Layout &l : ins)
    s.inputs.push_back({{rows, cols}, {0, 1}, l});
  return s;
}

TEST(CostModelTest, RegisterTiledGemmCountsAreExact) {
  Layout packedK = Layout::channelPacked(2, 1);
  KernelShape s = matmul(32, 32, 32, packedK, packedK, packedK,
                         KernelKind::RegisterTiledGemm);
  EXPECT_EQ(gridOf(s), (std::array<int64_t, 3>{8, 8, 1}));
  KernelCost c = kernelCost(s, bigDevice());
  // 64 work-items x 8 k-steps x (4 texels of A + 4 of B).
  EXPECT_EQ(c.fetches, 64 * 8 * 8);
  // C's 32 x 32 elements as texels.
  EXPECT_EQ(c.writes, 32 * 32 / 4);
  EXPECT_EQ(c.launches, 1);
  // Reading C's initial value adds its 4 texels per work-item.
  s.readsInit = true;
  EXPECT_EQ(kernelCost(s, bigDevice()).fetches, 64 * 8 * 8 + 64 * 4);
}

TEST(CostModelTest, LocalTiledGemmReadsEachTexelOncePerGroup) {
  Layout packedK = Layout::channelPacked(2, 1);
  KernelShape s = matmul(128, 128, 64, packedK, packedK, packedK,
                         KernelKind::LocalTiledGemm);
  EXPECT_EQ(gridOf(s), (std::array<int64_t, 3>{16, 16, 1}));
  KernelCost c = kernelCost(s, bigDevice());
  // 4 groups; each stages its 64-row slice of A and 64-column slice of B
  // once: (64 x 64 / 4) texels of each.
  EXPECT_EQ(c.fetches, 4 * 2 * (64 * 64 / 4));
  // Every texel the sample reads lies in a line no one read before, or in
  // one that a neighbour in the same line did: at most one miss per line.
  EXPECT_LE(c.misses, c.fetches / 8 + 1);

  // Work-items of 2 x 4 blocks ([8, 2, 16, 8, 1, 0, 4], 64 x 128 tiles):
  // 2 x 1 groups of 8x8, each staging a 64-row slice of A and the whole
  // 128 columns of B.
  s.gemmTile = {8, 2, 16, 8, true, 0, 4};
  EXPECT_EQ(gridOf(s), (std::array<int64_t, 3>{8, 16, 1}));
  EXPECT_EQ(kernelCost(s, bigDevice()).fetches,
            2 * (64 * 64 / 4 + 128 * 64 / 4));
}

TEST(CostModelTest, GemmTilesCoverSizesWithinAnEighth) {
  // 64x64 tiles in 16-deep slices.
  target::GemmTile t{8, 2, 16};
  EXPECT_EQ(t.tilesAlongM(6304), 99);
  EXPECT_EQ(t.slicesAlong(36), 3);
  // 8 x 16 work-items: 128 x 64 tiles.
  target::GemmTile tall{8, 2, 16, 16};
  EXPECT_EQ(tall.tileM(), 128);
  EXPECT_EQ(tall.tileN(), 64);
  EXPECT_EQ(tall.tilesAlongM(6304), 50);
  EXPECT_EQ(tall.tilesAlongN(768), 12);
  EXPECT_TRUE(tall.covers(6304, 768, 768));
  EXPECT_FALSE(tall.covers(64, 64, 16));
  // ViT's 6304 tokens: 6336 is 0.5% more.
  EXPECT_TRUE(t.covers(6304, 768, 768));
  // 60 of 64 rows and k 48 of 48: within an eighth.
  EXPECT_TRUE(t.covers(60, 64, 48));
  // 56 rows would take 64 (8 more: 1/7), k 36 would take 48 (12 more).
  EXPECT_FALSE(t.covers(56, 64, 48));
  EXPECT_FALSE(t.covers(64, 64, 36));
  // A LoRA rank of 8 is far from a tile.
  EXPECT_FALSE(t.covers(6304, 8, 768));
  // Exact multiples always fit.
  for (int64_t q = 1; q < 5; ++q)
    EXPECT_TRUE(t.covers(64 * q, 64 * q, 16 * q));
  // Work-items of 2 x 4 blocks in 16x16 groups: 128 x 256 tiles, the
  // local tiles of 32 and 64 blocks in 8-deep slices, twice.
  target::GemmTile oblong{16, 2, 8, 16, true, 0, 4};
  EXPECT_EQ(oblong.tileM(), 128);
  EXPECT_EQ(oblong.tileN(), 256);
  EXPECT_EQ(oblong.localBytes(), 2 * (32 + 64) * 8 * 16);
  EXPECT_TRUE(oblong.covers(2048, 2048, 2048));
  EXPECT_FALSE(oblong.covers(2048, 200, 2048));
  // item_blocks_n equal to item_blocks (or 0) is the square tile.
  EXPECT_EQ((target::GemmTile{8, 2, 16, 0, true, 0, 2}), t);
  EXPECT_EQ(target::tileText({8, 2, 16, 0, true, 0, 2}), "[8, 2, 16]");
  EXPECT_EQ(target::tileText(oblong), "[16, 2, 8, 16, 1, 0, 4]");
}

TEST(CostModelTest, LargerClassTilesTakeOnlySizesTheyPadNoMore) {
  // The H200 preset's ladder: 32x32 below 1M elements of C, 64x64 from 1M
  // (XOR-staged), 128x128 in launches of their own from 4M, 64x64 staged
  // in runs from 4.5M, 96x96 from ViT's 6304x768.
  const target::TargetDescription *h200 = target::findPreset("nvidia-h200");
  ASSERT_NE(h200, nullptr);
  auto tileFor = [&](int64_t batch, int64_t m, int64_t n) {
    return target::gemmTileFor(h200->gemmTile, h200->gemmTileClasses, batch, m,
                               n);
  };
  const target::GemmTile small{8, 1, 16}, mid{8, 2, 16},
      large{16, 2, 16, 16, false}, runs{8, 2, 16, 0, false},
      wide{8, 3, 8, 0, false};
  EXPECT_EQ(tileFor(1, 1024, 768), small);
  EXPECT_EQ(tileFor(1, 1024, 2048), mid);
  target::GemmTileClass square = target::gemmTileClassFor(
      h200->gemmTile, h200->gemmTileClasses, 1, 2048, 2048);
  EXPECT_EQ(square.tile, large);
  EXPECT_TRUE(square.ownLaunch);
  // 2000 rows: 128x128 tiles pad them to 2048, 64x64 to 2048 too; 1984
  // rows 64x64 tiles divide.
  EXPECT_EQ(tileFor(1, 2000, 2304), large);
  EXPECT_EQ(tileFor(1, 1984, 2304), mid);
  EXPECT_FALSE(target::gemmTileClassFor(h200->gemmTile, h200->gemmTileClasses,
                                        1, 1984, 2304)
                   .ownLaunch);
  // 6304 rows: 64x64 and 96x96 tiles both pad them to 6336.
  EXPECT_EQ(tileFor(1, 6304, 768), wide);
  EXPECT_EQ(tileFor(1, 6304, 3072), wide);
  // 64 divides these and 96 pads them: the 4.5M class's tile stays.
  EXPECT_EQ(tileFor(1, 2048, 3072), runs);
  EXPECT_EQ(tileFor(1, 512, 51865), runs);
  EXPECT_EQ(tileFor(1, 256, 128256), runs);
  // Batches count towards the class, not towards the padding: 384 heads of
  // 197x64 reach the 96x96 class and pad 197 to 288 where 64x64 pads it
  // to 256.
  EXPECT_EQ(tileFor(384, 197, 64), runs);
  // Where neither pads, the larger class wins.
  EXPECT_EQ(tileFor(1, 6144, 1536), wide);
  // A ladder whose larger tile pads less takes it.
  const target::GemmTileClass ladder[] = {{1000, mid}, {2000, wide}};
  EXPECT_EQ(target::gemmTileFor(small, ladder, 1, 96, 96), wide);
  EXPECT_EQ(target::gemmTileFor(small, ladder, 1, 128, 128), mid);
  EXPECT_EQ(target::gemmTileFor(small, ladder, 1, 30, 30), small);
}

TEST(CostModelTest, LargerClassTilesTakeOnlyShapesTheyAreNoSlowerAt) {
  const target::GemmTile small{8, 1, 16}, mid{8, 2, 16},
      large{16, 2, 16, 16, false}, wide{8, 3, 8, 0, false};
  const target::GemmTileClass ladder[] = {
      {1000, mid}, {2000, large, true}, {4000, wide}};
  // Asked once per class reached that pads C no more, larger tile first.
  std::vector<std::pair<target::GemmTile, target::GemmTile>> asked;
  auto slowerThan = [&](const target::GemmTile &slow) {
    return [&asked, slow](const target::GemmTile &larger,
                          const target::GemmTile &chosen) {
      asked.emplace_back(larger, chosen);
      return !(larger == slow);
    };
  };
  // 128x128: the 128x128 class is vetoed, 64x64 stays, without its own
  // launch; the 96x96 class pads it (to 192) and is not asked about.
  target::GemmTileClass c =
      target::gemmTileClassFor(small, ladder, 1, 128, 128, slowerThan(large));
  EXPECT_EQ(c.tile, mid);
  EXPECT_FALSE(c.ownLaunch);
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_EQ(asked[0], std::make_pair(mid, small));
  EXPECT_EQ(asked[1], std::make_pair(large, mid));
  // 384x384, which all three divide: past the vetoed class, the next is
  // compared with the tile kept, not with the vetoed one.
  asked.clear();
  c = target::gemmTileClassFor(small, ladder, 1, 384, 384, slowerThan(large));
  EXPECT_EQ(c.tile, wide);
  ASSERT_EQ(asked.size(), 3u);
  EXPECT_EQ(asked[2], std::make_pair(wide, mid));
  // The smallest class vetoed: gemm_tile's own.
  c = target::gemmTileClassFor(small, ladder, 1, 40, 40, slowerThan(mid));
  EXPECT_EQ(c.tile, small);
  EXPECT_EQ(c.minOutputs, 0);
  // Without a veto the sizes decide as gemmTileFor does.
  c = target::gemmTileClassFor(small, ladder, 1, 128, 128, slowerThan(small));
  EXPECT_EQ(c.tile, target::gemmTileFor(small, ladder, 1, 128, 128));
  EXPECT_TRUE(c.ownLaunch);
}

TEST(CostModelTest, RaggedLocalTiledGemmsRoundTheGridToWholeGroups) {
  Layout packedK = Layout::channelPacked(2, 1);
  // 124 x 252 over 188 in 64x64 tiles ([8, 2, 8]): 2 x 4 groups of 8x8.
  KernelShape s = matmul(124, 252, 188, packedK, packedK, packedK,
                         KernelKind::LocalTiledGemm);
  s.gemmTile = {8, 2, 8};
  EXPECT_EQ(gridOf(s), (std::array<int64_t, 3>{32, 16, 1}));
  KernelCost c = kernelCost(s, bigDevice());
  // Every work-item stages its share of every slice, the ragged last one
  // (24 slices of 8 cover 188) included. B (packed along n) in texels: 2 a
  // work-item. A (packed along k) in whole 4x4 blocks: its 16 x 2 blocks a
  // slice leave half the 64 work-items reading a block again (4 texels)
  // and storing nothing.
  EXPECT_EQ(c.fetches, 512 * 24 * (4 + 2));
  // Only C's 124 x 252 elements are written.
  EXPECT_EQ(c.writes, 124 * 252 / 4);
}

TEST(CostModelTest, UnplannedPerTexelReadsLoadOneElementPerChannel) {
  // Without planReads (slices and inserts): a fetch per element.
  Layout l = Layout::channelPacked(2, 1);
  KernelCost c = kernelCost(elementwise(8, 64, l, {l, l}), bigDevice());
  EXPECT_EQ(c.fetches, 2 * 8 * 64);
  EXPECT_EQ(c.writes, 8 * 64 / 4);
}

TEST(CostModelTest, InputsPackedLikeTheOutputServeFourChannels) {
  Layout l = Layout::channelPacked(2, 1), t = Layout::channelPacked(2, 0);
  KernelShape s = elementwise(8, 64, l, {l, t});
  planReads(s);
  EXPECT_EQ(s.channelLoop, 1);
  EXPECT_TRUE(s.inputs[0].channelsShareFetch);
  // Packed along the rows while the channels run along the columns: each
  // channel fetches its own texel.
  EXPECT_FALSE(s.inputs[1].channelsShareFetch);
  EXPECT_EQ(kernelCost(s, bigDevice()).fetches, 8 * 64 / 4 + 8 * 64);
}

TEST(CostModelTest, PaddingChannelsFetchNothingOfTheirOwn) {
  // 6 columns: 2 texels per row, the second with 2 elements.
  Layout l = Layout::channelPacked(2, 1), t = Layout::channelPacked(2, 0);
  KernelShape s = elementwise(4, 6, l, {l, t});
  planReads(s);
  EXPECT_EQ(kernelCost(s, bigDevice()).fetches, 4 * 2 + 4 * 6);
}

/// y[i] (+)= x[i, k] over loops (i, k), y in `out`, x in `in`.
KernelShape rowReduction(int64_t rows, int64_t cols, Layout out, Layout in) {
  KernelShape s;
  s.ranges = {rows, cols};
  s.reduction = {false, true};
  s.output = {{rows}, {0}, out};
  s.inputs = {{{rows, cols}, {0, 1}, in}};
  return s;
}

TEST(CostModelTest, UnplannedReductionsLoadEveryIteration) {
  // y[i] = sum_k x[i, k], one work-item per texel of y (4 rows).
  KernelShape s = rowReduction(8, 64, Layout::channelPacked(1, 0),
                               Layout::channelPacked(2, 1));
  KernelCost c = kernelCost(s, bigDevice());
  EXPECT_EQ(c.fetches, 8 * 64);
  EXPECT_EQ(c.writes, 2);
}

TEST(CostModelTest, ReductionsAlongThePackedDimWalkFourIterationsAFetch) {
  // x packed along k: k is walked 4 at a time, each row's texel fetched once
  // per step; 6 columns take a step and a tail of 2.
  KernelShape s = rowReduction(8, 64, Layout::channelPacked(1, 0),
                               Layout::channelPacked(2, 1));
  s.readsInit = true;
  planReads(s);
  EXPECT_EQ(s.walkLoop, 1);
  EXPECT_TRUE(s.inputs[0].stepsShareFetch);
  EXPECT_FALSE(s.inputs[0].channelsShareFetch);
  // 8 rows x 16 steps, and the initial value one texel per work-item.
  EXPECT_EQ(kernelCost(s, bigDevice()).fetches, 8 * 16 + 2);
  KernelShape tail = rowReduction(8, 6, Layout::channelPacked(1, 0),
                                  Layout::channelPacked(2, 1));
  planReads(tail);
  EXPECT_EQ(kernelCost(tail, bigDevice()).fetches, 8 * 2);
}

TEST(CostModelTest, ReductionsAlongTheOtherDimReadFourKeptIndicesAFetch) {
  // x packed along i, the kept dim whose 4 values are y's channels: each
  // fetch serves the 4 channels, no walk.
  KernelShape s = rowReduction(8, 64, Layout::channelPacked(1, 0),
                               Layout::channelPacked(2, 0));
  planReads(s);
  EXPECT_EQ(s.walkLoop, -1);
  EXPECT_TRUE(s.inputs[0].channelsShareFetch);
  EXPECT_EQ(kernelCost(s, bigDevice()).fetches, 2 * 64);
}

TEST(CostModelTest, InputsNoReductionLoopIndexesAreReadOnce) {
  // y[i] = sum_k x[i, k] - m[i]: m is fetched before the loop, once per
  // texel of y.
  KernelShape s = rowReduction(8, 64, Layout::channelPacked(1, 0),
                               Layout::channelPacked(2, 1));
  s.inputs.push_back({{8}, {0}, Layout::channelPacked(1, 0)});
  planReads(s);
  EXPECT_TRUE(s.inputs[1].hoisted);
  EXPECT_EQ(readCost(s, 1, bigDevice()).fetches, 2);
}

TEST(CostModelTest, CopyMissesOncePerLine) {
  // A 64 x 64 copy in one layout: one fetch of the input's texel serves the
  // output texel's 4 channels, and 4x2-texel lines are each filled once.
  Layout l = Layout::channelPacked(2, 1);
  KernelCost c = kernelCost(relayoutKernel({64, 64}, l, l), bigDevice());
  EXPECT_EQ(c.fetches, 64 * 16);
  EXPECT_EQ(c.writes, 64 * 16);
  EXPECT_EQ(c.misses, 64 * 16 / 8);
}

TEST(CostModelTest, RelayoutsBetweenPackingsAreBlockTransposes) {
  Layout rows = Layout::channelPacked(2, 1), cols = Layout::channelPacked(2, 0);
  KernelShape s = relayoutKernel({16, 32}, rows, cols);
  EXPECT_EQ(s.kind, KernelKind::BlockTranspose);
  // Blocks along x walk the destination's packed dim (0), along y the
  // source's (1).
  EXPECT_EQ(gridOf(s), (std::array<int64_t, 3>{4, 8, 1}));
  KernelCost c = kernelCost(s, bigDevice());
  EXPECT_EQ(c.fetches, 16 * 32 / 4);
  EXPECT_EQ(c.writes, 16 * 32 / 4);
  // A packed dim that ends inside a texel: the per-texel copy, a fetch per
  // element.
  KernelShape partial = relayoutKernel({16, 30}, rows, cols);
  EXPECT_EQ(partial.kind, KernelKind::PerTexel);
  EXPECT_EQ(kernelCost(partial, bigDevice()).fetches, 16 * 30);
}

TEST(CostModelTest, ASmallCacheMissesMore) {
  Layout rows = Layout::channelPacked(2, 1), cols = Layout::channelPacked(2, 0);
  KernelShape s = relayoutKernel({256, 256}, cols, rows);
  DeviceModel big = bigDevice(), small = bigDevice();
  small.cache = {4, 2, 4 * 8 * 16 * 2, 2, 16}; // 4 lines
  EXPECT_GT(kernelCost(s, small).misses, kernelCost(s, big).misses);
}

TEST(CostModelTest, ComputeUnitsShareTheWork) {
  Layout l = Layout::channelPacked(2, 1);
  KernelShape s = elementwise(256, 256, l, {l});
  DeviceModel one = bigDevice(), many = bigDevice();
  many.execution.computeUnits = 8;
  double launch = static_cast<double>(one.execution.launchNs);
  EXPECT_NEAR(kernelCost(s, many).timeNs - launch,
              (kernelCost(s, one).timeNs - launch) / 8, 1.0);
}

TEST(CostModelTest, TheSampleDoesNotGrowWithTheTensor) {
  // The same kernel at two sizes: fetches scale with the tensor, the miss
  // rate comes from the same fixed sample.
  Layout l = Layout::channelPacked(2, 1);
  KernelCost small = kernelCost(elementwise(512, 512, l, {l}), bigDevice());
  KernelCost large = kernelCost(elementwise(4096, 4096, l, {l}), bigDevice());
  EXPECT_EQ(large.fetches, small.fetches * 64);
  EXPECT_NEAR(static_cast<double>(large.misses) / large.fetches,
              static_cast<double>(small.misses) / small.fetches, 1e-6);
}

TEST(CostModelTest, WorkgroupsClampToTheGrid) {
  // One compute unit: nothing to spread over.
  target::ExecutionModel one = target::kDefaultExecution;
  one.computeUnits = 1;
  EXPECT_EQ(workgroupFor({3, 100, 2}, {16, 8}, one),
            (std::array<int64_t, 3>{4, 8, 1}));
  EXPECT_EQ(workgroupFor({64, 64, 1}, {16, 8}, one),
            (std::array<int64_t, 3>{16, 8, 1}));
  // One row: the whole preferred group along x.
  EXPECT_EQ(workgroupFor({100000, 1, 1}, {16, 8}, one),
            (std::array<int64_t, 3>{128, 1, 1}));
  EXPECT_EQ(workgroupFor({20, 1, 1}, {16, 8}, one),
            (std::array<int64_t, 3>{32, 1, 1}));
}

TEST(CostModelTest, SmallGridsSpreadOverComputeUnits) {
  target::ExecutionModel gpu = target::kDefaultExecution;
  gpu.computeUnits = 132;
  gpu.waveSize = 32;
  // A split sum's second stage, 192 texels: one group of 256 would sit on
  // one unit; groups of a wave give 6.
  EXPECT_EQ(workgroupFor({192, 1, 1}, {16, 16}, gpu),
            (std::array<int64_t, 3>{32, 1, 1}));
  // Two-dimensional: the larger side halves first, down to a wave.
  EXPECT_EQ(workgroupFor({192, 4, 1}, {16, 16}, gpu),
            (std::array<int64_t, 3>{8, 4, 1}));
  EXPECT_EQ(workgroupFor({64, 64, 1}, {16, 16}, gpu),
            (std::array<int64_t, 3>{4, 8, 1}));
  // Enough groups already: the preferred group.
  EXPECT_EQ(workgroupFor({1024, 1024, 1}, {16, 16}, gpu),
            (std::array<int64_t, 3>{16, 16, 1}));
  // Batches count as groups.
  EXPECT_EQ(workgroupFor({16, 16, 132}, {16, 16}, gpu),
            (std::array<int64_t, 3>{16, 16, 1}));
  // No group below a wave, nor below one work-item.
  EXPECT_EQ(workgroupFor({8, 1, 1}, {16, 16}, gpu),
            (std::array<int64_t, 3>{8, 1, 1}));
  gpu.waveSize = 1;
  EXPECT_EQ(workgroupFor({4, 1, 1}, {16, 16}, gpu),
            (std::array<int64_t, 3>{1, 1, 1}));
}

} // namespace

TEST(CostModelTest, GemmsCountTheirMultiplyAdds) {
  Layout packedK = Layout::channelPacked(2, 1);
  KernelShape s = matmul(32, 16, 8, packedK, packedK, packedK,
                         KernelKind::RegisterTiledGemm);
  s.multipliesPerApplication = 1;
  EXPECT_EQ(kernelCost(s, bigDevice()).multiplies, 32 * 16 * 8);
  // Multiplies take time at multiply_fs each.
  DeviceModel slow = bigDevice();
  slow.execution.multiplyFs *= 100;
  EXPECT_GT(kernelCost(s, slow).timeNs, kernelCost(s, bigDevice()).timeNs);
}

TEST(CostModelTest, FewWorkItemsWithLongLoopsAreLatencyBound) {
  // A row sum over 4096 columns of 4 rows: one work-item computes the 4
  // rows (its texel's channels), walking each row 4 columns per fetch, so
  // it waits for 4 x 1024 fetches and a write one after another, however
  // fast the device's throughput.
  Layout rows = Layout::channelPacked(2, 1);
  KernelShape s;
  s.ranges = {4, 4096};
  s.reduction = {false, true};
  s.output = {{4}, {0}, Layout::channelPacked(1, 0)};
  s.inputs = {{{4, 4096}, {0, 1}, rows}};
  planReads(s);
  DeviceModel d = bigDevice();
  d.execution.fetchPs = d.execution.missPs = d.execution.writePs = 10;
  d.execution.stepPs = 100000;
  KernelCost c = kernelCost(s, d);
  EXPECT_NEAR(c.itemAccesses, 4 * 1024 + 1, 1e-9);
  EXPECT_NEAR(c.timeNs, d.execution.launchNs + 4097 * 100.0, 1e-6);
  // Without the latency bound the same kernel is throughput bound.
  d.execution.stepPs = 1;
  EXPECT_LT(kernelCost(s, d).timeNs, d.execution.launchNs + 4097 * 100.0);
}

TEST(CostModelTest, LaunchTimeIsTheLargerBound) {
  target::ExecutionModel e = target::kDefaultExecution;
  e.computeUnits = 2;
  e.residentItems = 256;
  target::LaunchWork w;
  w.fetches = 2000;
  w.groups = 8;
  w.groupItems = 64;
  w.itemAccesses = 10;
  // Throughput: 2000 fetches over 2 units; latency: 10 accesses in one
  // round (4 groups resident per unit).
  double throughput = 2000.0 * e.fetchPs / 1000.0 / 2;
  double latency = 10.0 * e.stepPs / 1000.0;
  EXPECT_DOUBLE_EQ(target::launchTimeNs(e, w),
                   e.launchNs + std::max(throughput, latency));
  // Twice the groups: two rounds.
  w.groups = 16;
  w.fetches = 4000;
  EXPECT_DOUBLE_EQ(target::launchTimeNs(e, w),
                   e.launchNs + std::max(2 * throughput, 2 * latency));
}

// The throughput bound is the busiest unit's: groups that do not fill the
// last wave leave the other units idle (ViT's 768x768 weight gradients in
// 288 groups on 132 SMs; split 8 ways, 1152 groups ran 1.5x faster).
TEST(CostModelTest, LastWaveEndsTheLaunch) {
  target::ExecutionModel e = target::kDefaultExecution;
  e.computeUnits = 4;
  e.stepPs = 1; // throughput bound
  target::LaunchWork w;
  w.groupItems = 64;
  w.itemAccesses = 1;
  // 4 groups of 100 fetches: one each.
  w.groups = 4;
  w.fetches = 400;
  double oneWave = target::launchTimeNs(e, w) - e.launchNs;
  EXPECT_DOUBLE_EQ(oneWave, 100.0 * e.fetchPs / 1000.0);
  // One group more: a unit takes two.
  w.groups = 5;
  w.fetches = 500;
  EXPECT_DOUBLE_EQ(target::launchTimeNs(e, w) - e.launchNs, 2 * oneWave);
  // The same work in 8 groups of 62.5 fetches: two each.
  w.groups = 8;
  EXPECT_DOUBLE_EQ(target::launchTimeNs(e, w) - e.launchNs, 1.25 * oneWave);
}

/// A layout of 2-D tensors drawn from the ones selection tries.
static Layout randomLayout(std::mt19937 &rng) {
  int packed = static_cast<int>(rng() % 2);
  switch (rng() % 3) {
  case 0:
    return Layout::channelPacked(2, packed);
  case 1:
    return Layout::rtile(2, 4, 4, packed, layout::IntraTileOrder::RowsOnX,
                         layout::InterTileOrder::RowMajor);
  default:
    return Layout::rtile(2, 4, 4, packed, layout::IntraTileOrder::Linear,
                         layout::InterTileOrder::RowMajor);
  }
}

// The memo of reads trusts readKey: what it leaves out must not change the
// cost. A GEMM's read of A does not depend on B's layout or C's; a
// per-texel kernel's read depends on the output's layout (its grid).
TEST(CostModelTest, ReadsWithEqualKeysCostTheSame) {
  std::mt19937 rng(11);
  DeviceModel d = bigDevice();
  d.cache.bytes = 4096; // small enough for layouts to differ in misses
  for (int trial = 0; trial < 40; ++trial) {
    int64_t m = 4 * (1 + rng() % 12), n = 4 * (1 + rng() % 12),
            k = 4 * (1 + rng() % 12);
    Layout a = randomLayout(rng);
    KernelShape s = matmul(m, n, k, a, randomLayout(rng), randomLayout(rng),
                           KernelKind::RegisterTiledGemm);
    KernelShape t = matmul(m, n, k, a, randomLayout(rng), randomLayout(rng),
                           KernelKind::RegisterTiledGemm);
    ASSERT_EQ(readKey(s, 0), readKey(t, 0));
    ReadCost x = readCost(s, 0, d), y = readCost(t, 0, d);
    EXPECT_EQ(x.fetches, y.fetches);
    EXPECT_EQ(x.misses, y.misses);

    Layout in = randomLayout(rng);
    KernelShape e = elementwise(m, n, randomLayout(rng), {in});
    KernelShape f = elementwise(m, n, randomLayout(rng), {in});
    planReads(e);
    planReads(f);
    bool sameOutput = e.output.layout.str() == f.output.layout.str();
    EXPECT_EQ(readKey(e, 0) == readKey(f, 0), sameOutput);
    if (readKey(e, 0) == readKey(f, 0)) {
      EXPECT_EQ(readCost(e, 0, d).fetches, readCost(f, 0, d).fetches);
      EXPECT_EQ(readCost(e, 0, d).misses, readCost(f, 0, d).misses);
    }
  }
}
