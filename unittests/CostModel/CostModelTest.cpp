//===- CostModelTest.cpp - Tests of the kernel cost model -----------------===//
//
// Counts the model must get exactly (fetches and writes of each kernel
// family, misses of a copy whose lines are all used once), and the
// orderings selection relies on: a cache too small for the footprint misses
// more, more compute units take less time, the sample does not grow with
// the tensors.
//
//===----------------------------------------------------------------------===//

#include "fbl/CostModel/CostModel.h"

#include <gtest/gtest.h>

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
}

TEST(CostModelTest, PerTexelKernelsLoadOneElementPerChannel) {
  Layout l = Layout::channelPacked(2, 1);
  KernelCost c = kernelCost(elementwise(8, 64, l, {l, l}), bigDevice());
  EXPECT_EQ(c.fetches, 2 * 8 * 64);
  EXPECT_EQ(c.writes, 8 * 64 / 4);
}

TEST(CostModelTest, ReductionsLoadEveryIteration) {
  // y[i] = sum_k x[i, k], one work-item per texel of y (4 rows).
  KernelShape s;
  s.ranges = {8, 64};
  s.reduction = {false, true};
  s.output = {{8}, {0}, Layout::channelPacked(1, 0)};
  s.inputs = {{{8, 64}, {0, 1}, Layout::channelPacked(2, 1)}};
  KernelCost c = kernelCost(s, bigDevice());
  EXPECT_EQ(c.fetches, 8 * 64);
  EXPECT_EQ(c.writes, 2);
}

TEST(CostModelTest, CopyMissesOncePerLine) {
  // A 64 x 64 copy in one layout: the 4 channels of an output texel read
  // the same input texel, and 4x2-texel lines are each filled once.
  Layout l = Layout::channelPacked(2, 1);
  KernelCost c = kernelCost(relayoutKernel({64, 64}, l, l), bigDevice());
  EXPECT_EQ(c.fetches, 64 * 64);
  EXPECT_EQ(c.writes, 64 * 16);
  EXPECT_EQ(c.misses, 64 * 16 / 8);
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
  EXPECT_EQ(workgroupFor({3, 100, 2}, {16, 8}),
            (std::array<int64_t, 3>{4, 8, 1}));
  EXPECT_EQ(workgroupFor({64, 64, 1}, {16, 8}),
            (std::array<int64_t, 3>{16, 8, 1}));
}

} // namespace
