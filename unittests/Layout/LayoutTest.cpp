//===- LayoutTest.cpp - Tests of the layout algebra -----------------------===//
//
// Exhaustive checks over every named layout kind and many shapes: the
// logical->texel map is injective and inverted by toLogical, padding is
// never aliased, pack/unpack round-trip, offsets agree with coordinates,
// and extents are checked against device limits. Plus hand-computed cases.
//
//===----------------------------------------------------------------------===//

#include "LayoutTestUtil.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <tuple>

using namespace fbl::layout;
using namespace fbl::layout::testing;

namespace {

/// Checks that `l` maps the elements of `shape` one to one onto positions
/// inside its extents, and back.
void expectBijective(const Layout &l, const std::vector<int64_t> &shape) {
  Extents e = l.extents(shape);
  std::set<int64_t> seen;
  bool ok = true;
  forEachIndex(shape, [&](const std::vector<int64_t> &idx) {
    TexelCoord c = l.toTexel(shape, idx);
    ok &= c.x >= 0 && c.x < e.width && c.y >= 0 && c.y < e.height &&
          c.layer >= 0 && c.layer < e.layers && c.channel < e.channels;
    ok &= seen.insert(Layout::flatOffset(e, c)).second;
    auto back = l.toLogical(shape, c);
    ok &= back.has_value() && *back == idx;
  });
  EXPECT_TRUE(ok);
  EXPECT_EQ(static_cast<int64_t>(seen.size()), Layout::product(shape));
}

class LayoutSweep : public ::testing::TestWithParam<unsigned> {};

TEST_P(LayoutSweep, EveryNamedLayoutIsValid) {
  unsigned rank = GetParam();
  for (const NamedLayout &nl : allLayouts(rank)) {
    EXPECT_EQ(nl.layout.verify(), "") << nl.name << " " << nl.layout.str();
    for (const auto &shape : sweepShapes(rank))
      EXPECT_EQ(nl.layout.verifyShape(shape), "") << nl.name;
  }
}

TEST_P(LayoutSweep, MapIsBijectiveOntoNonPaddingPositions) {
  unsigned rank = GetParam();
  for (const NamedLayout &nl : allLayouts(rank))
    for (const auto &shape : sweepShapes(rank)) {
      const Layout &l = nl.layout;
      SCOPED_TRACE(nl.name + " shape " + shapeStr(shape) + " " + l.str());
      expectBijective(l, shape);
      Extents e = l.extents(shape);
      // Every physical position is either an element (and maps back to the
      // same position) or padding.
      int64_t elements = 0;
      for (int64_t layer = 0; layer < e.layers; ++layer)
        for (int64_t y = 0; y < e.height; ++y)
          for (int64_t x = 0; x < e.width; ++x)
            for (unsigned ch = 0; ch < e.channels; ++ch) {
              TexelCoord c{layer, y, x, ch};
              if (auto idx = l.toLogical(shape, c)) {
                ++elements;
                EXPECT_EQ(l.toTexel(shape, *idx), c);
              }
            }
      EXPECT_EQ(elements, Layout::product(shape));
    }
}

TEST_P(LayoutSweep, OffsetTablesMatchCoordinates) {
  unsigned rank = GetParam();
  for (const NamedLayout &nl : allLayouts(rank))
    for (const auto &shape : sweepShapes(rank)) {
      SCOPED_TRACE(nl.name + " shape " + shapeStr(shape));
      const Layout &l = nl.layout;
      Extents e = l.extents(shape);
      auto tables = l.offsetTables(shape);
      bool ok = true;
      forEachIndex(shape, [&](const std::vector<int64_t> &idx) {
        int64_t off = 0;
        for (unsigned d = 0; d < rank; ++d)
          off += tables[d][idx[d]];
        ok &= off == Layout::flatOffset(e, l.toTexel(shape, idx));
      });
      EXPECT_TRUE(ok);
    }
}

TEST_P(LayoutSweep, PackUnpackRoundTrip) {
  unsigned rank = GetParam();
  std::mt19937 rng(42 + rank);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const NamedLayout &nl : allLayouts(rank))
    for (const auto &shape : sweepShapes(rank)) {
      SCOPED_TRACE(nl.name + " shape " + shapeStr(shape));
      const Layout &l = nl.layout;
      int64_t n = Layout::product(shape);
      Extents e = l.extents(shape);
      std::vector<float> src(n), packed(e.elements()), back(n, 0.0f);
      for (float &v : src)
        v = dist(rng);
      const float pad = -7.0f;
      l.pack(shape, src.data(), packed.data(), pad);
      l.unpack(shape, packed.data(), back.data());
      EXPECT_EQ(src, back);
      // The packed array holds each element at its coordinate, and the
      // padding value everywhere else.
      int64_t padding = 0;
      for (float v : packed)
        padding += v == pad;
      EXPECT_EQ(padding, e.elements() - n);
      int64_t lin = 0;
      bool ok = true;
      forEachIndex(shape, [&](const std::vector<int64_t> &idx) {
        ok &=
            packed[Layout::flatOffset(e, l.toTexel(shape, idx))] == src[lin++];
      });
      EXPECT_TRUE(ok);
    }
}

TEST_P(LayoutSweep, NamedLayoutsAreRecognised) {
  unsigned rank = GetParam();
  for (const NamedLayout &nl : allLayouts(rank)) {
    SCOPED_TRACE(nl.name);
    const Layout &l = nl.layout;
    if (l.isBuffer())
      continue;
    auto cp = l.asChannelPacked();
    auto rt = l.asRTile();
    ASSERT_TRUE(cp || rt);
    if (cp) {
      EXPECT_TRUE(l.samePlacement(
          Layout::channelPacked(rank, cp->packedDim, cp->fold)));
    }
    if (rt) {
      EXPECT_TRUE(l.samePlacement(
          Layout::rtile(rank, rt->tileRows, rt->tileCols, rt->packedDim,
                        rt->intra, rt->inter, rt->fold)));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, LayoutSweep, ::testing::Values(0, 1, 2, 3, 4));

//===----------------------------------------------------------------------===//
// Hand-computed cases
//===----------------------------------------------------------------------===//

TEST(LayoutTest, ChannelPackedMatrix) {
  Layout l = Layout::channelPacked(2, /*packedDim=*/1);
  std::vector<int64_t> shape = {5, 10};
  Extents e = l.extents(shape);
  EXPECT_EQ(e.width, 3); // ceil(10 / 4)
  EXPECT_EQ(e.height, 5);
  EXPECT_EQ(e.layers, 1);
  EXPECT_EQ(l.storage(), StorageKind::Image2D);
  TexelCoord c = l.toTexel(shape, {3, 9});
  EXPECT_EQ(c, (TexelCoord{0, 3, 2, 1}));
  // Channels 2 and 3 of the last texel column are padding.
  EXPECT_FALSE(l.toLogical(shape, TexelCoord{0, 0, 2, 2}).has_value());
  EXPECT_FALSE(l.toLogical(shape, TexelCoord{0, 0, 3, 0}).has_value());
}

TEST(LayoutTest, ChannelPackedRowsPacked) {
  Layout l = Layout::channelPacked(2, /*packedDim=*/0);
  std::vector<int64_t> shape = {6, 3};
  EXPECT_EQ(l.extents(shape), (Extents{3, 2, 1, 4}));
  EXPECT_EQ(l.toTexel(shape, {5, 2}), (TexelCoord{0, 1, 2, 1}));
}

TEST(LayoutTest, RTileRowsOnX) {
  // 8x16 matrix, 4x4 tiles, columns packed: a tile is 4 texels (one per
  // row), laid along x; the tile grid is 2 x 4.
  Layout l = Layout::rtile(2, 4, 4, 1, IntraTileOrder::RowsOnX,
                           InterTileOrder::RowMajor);
  std::vector<int64_t> shape = {8, 16};
  EXPECT_EQ(l.extents(shape), (Extents{16, 2, 1, 4}));
  // (5, 6): tile (1, 1), row 1 inside the tile, channel 6 % 4 = 2.
  EXPECT_EQ(l.toTexel(shape, {5, 6}), (TexelCoord{0, 1, 5, 2}));
  // The four rows of a tile sit on consecutive texels of one image row.
  for (int64_t r = 0; r < 4; ++r)
    EXPECT_EQ(l.toTexel(shape, {4 + r, 4}), (TexelCoord{0, 1, 4 + r, 0}));
}

TEST(LayoutTest, RTileLinearAndColMajor) {
  // 8x8 tiles on a 16x16 matrix, rows packed, tiles column-major: a tile is
  // 2 (row texels) x 8 (cols) = 16 texels on one image row.
  Layout l = Layout::rtile(2, 8, 8, 0, IntraTileOrder::Linear,
                           InterTileOrder::ColMajor);
  std::vector<int64_t> shape = {16, 16};
  // x = [row tile, row texel, col element], y = [col tile].
  EXPECT_EQ(l.extents(shape), (Extents{32, 2, 1, 4}));
  // (13, 9): row tile 1, row texel (13 % 8) / 4 = 1, channel 1; col tile 1,
  // col element 1.
  EXPECT_EQ(l.toTexel(shape, {13, 9}), (TexelCoord{0, 1, 16 + 8 + 1, 1}));
}

TEST(LayoutTest, RTilePadsPartialTiles) {
  Layout l = Layout::rtile(2, 4, 8, 1, IntraTileOrder::RowsOnY,
                           InterTileOrder::RowMajor);
  std::vector<int64_t> shape = {5, 9};
  // 2 x 2 tiles of 4 rows x 2 texels.
  EXPECT_EQ(l.extents(shape), (Extents{4, 8, 1, 4}));
  EXPECT_FALSE(l.toLogical(shape, TexelCoord{0, 5, 0, 0}).has_value());
  EXPECT_FALSE(l.toLogical(shape, TexelCoord{0, 0, 3, 0}).has_value());
  EXPECT_TRUE(l.toLogical(shape, TexelCoord{0, 4, 2, 0}).has_value());
}

TEST(LayoutTest, BatchFoldIntoLayers) {
  Layout l = Layout::channelPacked(3, 2, BatchFold::Layers);
  std::vector<int64_t> shape = {3, 7, 8};
  EXPECT_EQ(l.storage(), StorageKind::Image2DArray);
  EXPECT_EQ(l.extents(shape), (Extents{2, 7, 3, 4}));
  EXPECT_EQ(l.toTexel(shape, {2, 6, 5}), (TexelCoord{2, 6, 1, 1}));
}

TEST(LayoutTest, BatchFoldIntoY) {
  Layout l = Layout::channelPacked(4, 3, BatchFold::Y);
  std::vector<int64_t> shape = {2, 3, 5, 8};
  EXPECT_EQ(l.storage(), StorageKind::Image2D);
  EXPECT_EQ(l.extents(shape), (Extents{2, 30, 1, 4}));
  EXPECT_EQ(l.toTexel(shape, {1, 2, 4, 7}),
            (TexelCoord{0, (1 * 3 + 2) * 5 + 4, 1, 3}));
}

TEST(LayoutTest, BufferIsRowMajor) {
  Layout l = Layout::buffer(3);
  std::vector<int64_t> shape = {2, 3, 5};
  EXPECT_EQ(l.extents(shape), (Extents{30, 1, 1, 1}));
  EXPECT_EQ(l.storage(), StorageKind::Buffer);
  EXPECT_EQ(l.toTexel(shape, {1, 2, 3}).x, 1 * 15 + 2 * 5 + 3);
}

TEST(LayoutTest, ScalarTakesOneTexel) {
  Layout l = Layout::channelPacked(0, -1);
  EXPECT_EQ(l.extents({}), (Extents{1, 1, 1, 4}));
  EXPECT_EQ(l.toTexel({}, {}), (TexelCoord{0, 0, 0, 0}));
}

TEST(LayoutTest, SameAddressingDependsOnTheShape) {
  Layout rt = Layout::rtile(2, 4, 4, 1, IntraTileOrder::RowsOnY,
                            InterTileOrder::RowMajor);
  Layout cp = Layout::channelPacked(2, 1);
  EXPECT_FALSE(rt.samePlacement(cp));
  // With rows a multiple of the tile, both put (i, j) at (y = i, x = j / 4).
  EXPECT_TRUE(rt.sameAddressing(cp, {16, 8}));
  // With 5 rows the R-Tile pads to 8 rows: a different image.
  EXPECT_FALSE(rt.sameAddressing(cp, {5, 8}));
  EXPECT_FALSE(cp.sameAddressing(Layout::channelPacked(2, 0), {8, 8}));
}

//===----------------------------------------------------------------------===//
// Verification and limits
//===----------------------------------------------------------------------===//

TEST(LayoutTest, VerifyRejectsBadLayouts) {
  // Packed tile not a multiple of a texel.
  EXPECT_NE(Layout::rtile(2, 4, 6, 1, IntraTileOrder::RowsOnY,
                          InterTileOrder::RowMajor)
                .verify(),
            "");
  // Packed dim out of range.
  EXPECT_NE(Layout::channelPacked(2, 2).verify(), "");
  // Tile index placed twice / missing.
  Layout::AxisFactors twice = {
      {{{0, Level::Tile}, {1, Level::Tile}}, {{0, Level::Tile}}, {}}};
  EXPECT_NE(Layout::image({1, 4}, 1, twice).verify(), "");
  Layout::AxisFactors missing = {{{{1, Level::Tile}}, {}, {}}};
  EXPECT_NE(Layout::image({1, 4}, 1, missing).verify(), "");
  // Element index of extent > 1 not placed.
  Layout::AxisFactors noElem = {{{{1, Level::Tile}}, {{0, Level::Tile}}, {}}};
  EXPECT_NE(Layout::image({4, 4}, 1, noElem).verify(), "");
  // Rank mismatch with a shape.
  EXPECT_NE(Layout::channelPacked(2, 1).verifyShape({4, 4, 4}), "");
  EXPECT_NE(Layout::channelPacked(2, 1).verifyShape({4, -1}), "");
}

TEST(LayoutTest, LimitsAreChecked) {
  DeviceLimits adreno{16384, 16384, 2048, int64_t(1) << 30};
  Layout cp = Layout::channelPacked(2, 1);
  EXPECT_EQ(cp.checkLimits({4096, 4096}, adreno), "");
  // 70000 / 4 texels wide: too wide.
  EXPECT_NE(cp.checkLimits({16, 70000}, adreno).find("image width"),
            std::string::npos);
  EXPECT_NE(cp.checkLimits({20000, 16}, adreno).find("image height"),
            std::string::npos);
  // The same tensor with its batch dim in layers fits, in y does not.
  Layout layers = Layout::channelPacked(3, 2, BatchFold::Layers);
  Layout inY = Layout::channelPacked(3, 2, BatchFold::Y);
  EXPECT_EQ(layers.checkLimits({32, 1024, 64}, adreno), "");
  EXPECT_NE(inY.checkLimits({32, 1024, 64}, adreno), "");
  EXPECT_NE(layers.checkLimits({4096, 4, 4}, adreno).find("image array size"),
            std::string::npos);
  // Buffers are bounded by bytes only.
  EXPECT_EQ(Layout::buffer(1).checkLimits({1 << 20}, adreno), "");
  EXPECT_NE(Layout::buffer(1).checkLimits({int64_t(1) << 29}, adreno), "");
}

TEST(LayoutTest, SplitAcrossLayersFitsTheLimits) {
  // Property: for every named layout and shapes longer than small limits,
  // a split layout fits, maps one to one, packs and unpacks the same array,
  // and keeps 4-aligned groups of 4 indices of every dim on one layer.
  unsigned splits = 0;
  for (unsigned rank = 1; rank <= 3; ++rank) {
    std::vector<std::vector<int64_t>> shapes;
    if (rank == 1)
      shapes = {{70}, {301}};
    else if (rank == 2)
      shapes = {{70, 5}, {3, 70}, {301, 8}, {37, 41}};
    else
      shapes = {{2, 50, 9}, {3, 7, 70}};
    for (const NamedLayout &nl : allLayouts(rank)) {
      if (nl.layout.isBuffer())
        continue;
      for (const auto &shape : shapes)
        for (int64_t side : {8, 12, 16, 20}) {
          DeviceLimits limits{side, side, 64, 0};
          std::optional<Layout> split =
              nl.layout.splitAcrossLayers(shape, limits);
          if (!split)
            continue;
          SCOPED_TRACE(nl.name + " shape " + shapeStr(shape) + " side " +
                       std::to_string(side) + " " + split->str());
          ++splits;
          EXPECT_EQ(split->verify(), "");
          EXPECT_EQ(split->checkLimits(shape, limits), "");
          expectBijective(*split, shape);
          int64_t n = Layout::product(shape);
          std::vector<float> src(n), packed(split->extents(shape).elements()),
              back(n);
          for (int64_t i = 0; i < n; ++i)
            src[i] = float(i);
          split->pack(shape, src.data(), packed.data(), -1.0f);
          split->unpack(shape, packed.data(), back.data());
          EXPECT_EQ(src, back);
          // A dim spread over layers has its tile index on the layers and
          // its element index on x or y; 4 of its rows (or 4 texels, 16
          // elements, of the packed dim) share a layer.
          bool grouped = true;
          for (Factor f : split->factors(Axis::Layer)) {
            if (split->elementExtent(f.dim) <= 1)
              continue; // a batch dim folded into layers, one per index
            int64_t group =
                int(f.dim) == split->packedDim() ? 4 * kTexelChannels : 4;
            forEachIndex(shape, [&](const std::vector<int64_t> &idx) {
              std::vector<int64_t> first = idx;
              first[f.dim] -= idx[f.dim] % group;
              grouped &= split->toTexel(shape, idx).layer ==
                         split->toTexel(shape, first).layer;
            });
          }
          EXPECT_TRUE(grouped);
        }
    }
  }
  // Channel-packed layouts split wherever they overflow.
  EXPECT_GT(splits, 100u);
}

TEST(LayoutTest, SplitAcrossLayersOfAVocabulary) {
  // Llama-3.2-1B's embedding table on an Adreno-class image side.
  DeviceLimits adreno{16384, 16384, 2048, int64_t(1) << 30};
  std::vector<int64_t> shape = {128256, 2048};
  Layout cp = Layout::channelPacked(2, 1);
  EXPECT_NE(cp.checkLimits(shape, adreno), "");
  std::optional<Layout> split = cp.splitAcrossLayers(shape, adreno);
  ASSERT_TRUE(split);
  Extents e = split->extents(shape);
  EXPECT_EQ(e.width, 512);
  EXPECT_EQ(e.height, 16032);
  EXPECT_EQ(e.layers, 8);
  EXPECT_EQ(split->storage(), StorageKind::Image2DArray);
  // Row 16032 starts the second layer.
  EXPECT_EQ(split->toTexel(shape, {16031, 0}).layer, 0);
  EXPECT_EQ(split->toTexel(shape, {16032, 0}).layer, 1);
  EXPECT_EQ(split->toTexel(shape, {16032, 0}).y, 0);
  // Packed along the vocabulary (the logits' layout), x is split instead.
  Layout rows = Layout::channelPacked(2, 1);
  std::optional<Layout> wide = rows.splitAcrossLayers({128, 128256}, adreno);
  ASSERT_TRUE(wide);
  EXPECT_EQ(wide->extents({128, 128256}).width, 16032);
  EXPECT_EQ(wide->extents({128, 128256}).layers, 2);
  // A layout that already fits is returned as it is; one that cannot be
  // split (every dim of the long axis cut into tiles) is refused.
  EXPECT_TRUE(cp.splitAcrossLayers({64, 64}, adreno)->samePlacement(cp));
  Layout tiled = Layout::rtile(2, 4, 4, 1, IntraTileOrder::RowsOnY,
                               InterTileOrder::RowMajor);
  EXPECT_FALSE(tiled.splitAcrossLayers({70000, 4}, adreno));
  EXPECT_FALSE(cp.splitAcrossLayers({int64_t(1) << 26, 4}, adreno));
}

TEST(LayoutTest, HalfPrecisionPacking) {
  Layout l = Layout::rtile(2, 4, 4, 0, IntraTileOrder::RowsOnX,
                           InterTileOrder::ColMajor);
  std::vector<int64_t> shape = {6, 5};
  std::vector<uint16_t> src(30), packed(l.extents(shape).elements()), back(30);
  for (int i = 0; i < 30; ++i)
    src[i] = static_cast<uint16_t>(0x3c00 + i);
  l.pack<uint16_t>(shape, src.data(), packed.data());
  l.unpack<uint16_t>(shape, packed.data(), back.data());
  EXPECT_EQ(src, back);
}

} // namespace
