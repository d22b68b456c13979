//===- ViewTest.cpp - Tests of transposes and reshapes as views -----------===//
//
// A view's layout must address exactly the source's texels: for every
// index of the source, the view's coordinate of the corresponding index is
// the source's coordinate, and the extents are the same image. Swept over
// every named layout, every permutation and every reshape grouping of small
// shapes; plus the cases that must (head split/merge) or must not (a texel
// cut in two) become views.
//
//===----------------------------------------------------------------------===//

#include "LayoutTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

using namespace fbl::layout;
using namespace fbl::layout::testing;

namespace {

/// Checks that `view` (on `viewShape`) addresses the texels `source` (on
/// `shape`) holds, with `mapIndex` giving the view index of a source index.
void expectSameMemory(
    const Layout &source, const std::vector<int64_t> &shape, const Layout &view,
    const std::vector<int64_t> &viewShape,
    const std::function<std::vector<int64_t>(const std::vector<int64_t> &)>
        &mapIndex) {
  ASSERT_EQ(view.verifyShape(viewShape), "") << view.str();
  EXPECT_EQ(source.extents(shape), view.extents(viewShape))
      << source.str() << " vs " << view.str();
  bool ok = true;
  forEachIndex(shape, [&](const std::vector<int64_t> &idx) {
    ok &= source.toTexel(shape, idx) == view.toTexel(viewShape, mapIndex(idx));
  });
  EXPECT_TRUE(ok) << source.str() << " vs " << view.str();
}

std::vector<std::vector<std::vector<int64_t>>> allGroupings(unsigned rank) {
  std::vector<std::vector<std::vector<int64_t>>> out;
  for (unsigned mask = 0; mask < (1u << (rank - 1)); ++mask) {
    std::vector<std::vector<int64_t>> groups = {{0}};
    for (unsigned d = 1; d < rank; ++d) {
      if (mask & (1u << (d - 1)))
        groups.back().push_back(d);
      else
        groups.push_back({static_cast<int64_t>(d)});
    }
    out.push_back(groups);
  }
  return out;
}

std::vector<int64_t>
collapsedShape(const std::vector<int64_t> &shape,
               const std::vector<std::vector<int64_t>> &g) {
  std::vector<int64_t> out;
  for (const auto &group : g) {
    int64_t p = 1;
    for (int64_t d : group)
      p *= shape[d];
    out.push_back(p);
  }
  return out;
}

std::vector<int64_t> collapseIndex(const std::vector<int64_t> &shape,
                                   const std::vector<std::vector<int64_t>> &g,
                                   const std::vector<int64_t> &idx) {
  std::vector<int64_t> out;
  for (const auto &group : g) {
    int64_t v = 0;
    for (int64_t d : group)
      v = v * shape[d] + idx[d];
    out.push_back(v);
  }
  return out;
}

TEST(ViewTest, TransposesAreViewsOfEveryImageLayout) {
  for (unsigned rank = 1; rank <= 4; ++rank)
    for (const NamedLayout &nl : allLayouts(rank)) {
      if (nl.layout.isBuffer())
        continue;
      std::vector<int64_t> perm(rank);
      std::iota(perm.begin(), perm.end(), 0);
      do {
        auto view = nl.layout.transposed(perm);
        ASSERT_TRUE(view.has_value()) << nl.name;
        for (const auto &shape : sweepShapes(rank)) {
          SCOPED_TRACE(nl.name + " shape " + shapeStr(shape));
          std::vector<int64_t> viewShape(rank);
          for (unsigned k = 0; k < rank; ++k)
            viewShape[k] = shape[perm[k]];
          expectSameMemory(nl.layout, shape, *view, viewShape,
                           [&](const std::vector<int64_t> &idx) {
                             std::vector<int64_t> j(rank);
                             for (unsigned k = 0; k < rank; ++k)
                               j[k] = idx[perm[k]];
                             return j;
                           });
        }
        // Transposing back gives the original placement.
        std::vector<int64_t> inv(rank);
        for (unsigned k = 0; k < rank; ++k)
          inv[perm[k]] = k;
        EXPECT_TRUE(view->transposed(inv)->samePlacement(nl.layout));
      } while (std::next_permutation(perm.begin(), perm.end()));
    }
}

/// Random permutations (non-involutions included, which the exhaustive sweep
/// above only meets on its fixed shapes) on random layouts and shapes with
/// distinct odd, even and multiple-of-4 sizes: the view addresses the
/// source element it names (result index j names source index k with
/// k[perm[i]] = j[i]), transposing back by the inverse restores the source
/// addressing, and a chain of two views equals the composed permutation.
TEST(ViewTest, RandomPermutationsAgreeWithTheOracle) {
  std::mt19937 rng(20240611);
  const std::vector<int64_t> sizes = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16};
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    unsigned rank = 2 + rng() % 3;
    std::vector<NamedLayout> layouts = allLayouts(rank);
    const NamedLayout &nl = layouts[rng() % layouts.size()];
    if (nl.layout.isBuffer())
      continue;
    std::vector<int64_t> shape(rank);
    for (int64_t &d : shape)
      d = sizes[rng() % sizes.size()];
    Permutation perm(rank), second(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::iota(second.begin(), second.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::shuffle(second.begin(), second.end(), rng);
    SCOPED_TRACE(nl.name + " shape " + shapeStr(shape) + " perm " +
                 shapeStr(perm) + " then " + shapeStr(second));
    if (nl.layout.verifyShape(shape) != "")
      continue;

    std::optional<Layout> view = nl.layout.transposed(perm);
    ASSERT_TRUE(view.has_value());
    std::vector<int64_t> viewShape = applyPermutation(perm, shape);
    // The oracle, written independently of the helpers: view index j of
    // source index k has j[i] = k[perm[i]].
    auto viewIndex = [&](const Permutation &p, const std::vector<int64_t> &k) {
      std::vector<int64_t> j(p.size());
      for (size_t i = 0; i < p.size(); ++i)
        j[i] = k[p[i]];
      return j;
    };
    expectSameMemory(
        nl.layout, shape, *view, viewShape,
        [&](const std::vector<int64_t> &k) { return viewIndex(perm, k); });
    for (unsigned i = 0; i < rank; ++i)
      EXPECT_EQ(viewShape[i], shape[perm[i]]);

    // By p then by inverse(p): the source's addressing again.
    Permutation inv = invertPermutation(perm);
    Permutation identity(rank);
    std::iota(identity.begin(), identity.end(), 0);
    EXPECT_EQ(composePermutations(perm, inv), identity);
    std::optional<Layout> back = view->transposed(inv);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(applyPermutation(inv, viewShape), shape);
    expectSameMemory(nl.layout, shape, *back, shape,
                     [](const std::vector<int64_t> &k) { return k; });
    EXPECT_TRUE(back->samePlacement(nl.layout));

    // A view of a view (fbl.transpose_view's fold) is the composition.
    std::optional<Layout> chained = view->transposed(second);
    std::optional<Layout> direct =
        nl.layout.transposed(composePermutations(perm, second));
    ASSERT_TRUE(chained && direct);
    EXPECT_TRUE(chained->samePlacement(*direct));
    expectSameMemory(nl.layout, shape, *chained,
                     applyPermutation(second, viewShape),
                     [&](const std::vector<int64_t> &k) {
                       return viewIndex(second, viewIndex(perm, k));
                     });
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

TEST(ViewTest, BufferTransposeIsNotAView) {
  EXPECT_FALSE(Layout::buffer(2).transposed({1, 0}).has_value());
  EXPECT_TRUE(Layout::buffer(2).transposed({0, 1}).has_value());
  EXPECT_FALSE(Layout::channelPacked(2, 1).transposed({0, 0}).has_value());
}

TEST(ViewTest, CollapsesThatSucceedAddressTheSameTexels) {
  int succeeded = 0, refused = 0;
  for (unsigned rank = 2; rank <= 4; ++rank)
    for (const NamedLayout &nl : allLayouts(rank))
      for (const auto &shape : sweepShapes(rank))
        for (const auto &groups : allGroupings(rank)) {
          auto view = nl.layout.collapsed(shape, groups);
          if (!view) {
            ++refused;
            continue;
          }
          ++succeeded;
          SCOPED_TRACE(nl.name + " shape " + shapeStr(shape));
          expectSameMemory(nl.layout, shape, *view,
                           collapsedShape(shape, groups),
                           [&](const std::vector<int64_t> &idx) {
                             return collapseIndex(shape, groups, idx);
                           });
          // Expanding the view back recovers the source placement.
          auto back =
              view->expanded(collapsedShape(shape, groups), shape, groups);
          ASSERT_TRUE(back.has_value()) << view->str();
          expectSameMemory(nl.layout, shape, *back, shape,
                           [](const std::vector<int64_t> &idx) { return idx; });
        }
  // Both outcomes occur in the sweep.
  EXPECT_GT(succeeded, 100);
  EXPECT_GT(refused, 100);
}

TEST(ViewTest, ExpansionsThatSucceedAddressTheSameTexels) {
  // Split every dim of 2-D tensors into every factor pair.
  int succeeded = 0, refused = 0;
  for (const NamedLayout &nl : allLayouts(2))
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{8, 16}, {12, 8}, {6, 32}, {16, 24}})
      for (unsigned dim = 0; dim < 2; ++dim)
        for (int64_t a = 1; a <= shape[dim]; ++a) {
          if (shape[dim] % a)
            continue;
          std::vector<int64_t> result;
          std::vector<std::vector<int64_t>> groups;
          for (unsigned d = 0; d < 2; ++d) {
            std::vector<int64_t> g;
            if (d == dim) {
              g = {int64_t(result.size()), int64_t(result.size()) + 1};
              result.push_back(a);
              result.push_back(shape[d] / a);
            } else {
              g = {int64_t(result.size())};
              result.push_back(shape[d]);
            }
            groups.push_back(g);
          }
          auto view = nl.layout.expanded(shape, result, groups);
          if (!view) {
            ++refused;
            continue;
          }
          ++succeeded;
          SCOPED_TRACE(nl.name + " " + shapeStr(shape) + " -> " +
                       shapeStr(result));
          // The view's index maps to the source index by collapsing.
          bool ok = true;
          forEachIndex(result, [&](const std::vector<int64_t> &j) {
            ok &= view->toTexel(result, j) ==
                  nl.layout.toTexel(shape, collapseIndex(result, groups, j));
          });
          EXPECT_TRUE(ok) << view->str();
          EXPECT_EQ(view->extents(result), nl.layout.extents(shape));
        }
  EXPECT_GT(succeeded, 100);
  EXPECT_GT(refused, 10);
}

TEST(ViewTest, HeadSplitAndMergeAreViews) {
  // hidden = heads * head_dim with head_dim % 4 == 0, on the layouts
  // attention uses: channel-packed and 4x4 R-Tiles over [S, hidden].
  const std::vector<int64_t> shape = {128, 512}, split = {128, 8, 64};
  const std::vector<std::vector<int64_t>> groups = {{0}, {1, 2}};
  for (const Layout &l : {Layout::channelPacked(2, 1),
                          Layout::rtile(2, 4, 4, 1, IntraTileOrder::RowsOnX,
                                        InterTileOrder::RowMajor),
                          Layout::rtile(2, 4, 4, 1, IntraTileOrder::RowsOnY,
                                        InterTileOrder::ColMajor)}) {
    auto heads = l.expanded(shape, split, groups);
    ASSERT_TRUE(heads.has_value()) << l.str();
    // [S, H, D] -> [H, S, D] is a view too, and merging back is one.
    auto headsMajor = heads->transposed({1, 0, 2});
    ASSERT_TRUE(headsMajor.has_value());
    auto merged = heads->collapsed(split, groups);
    ASSERT_TRUE(merged.has_value());
    EXPECT_TRUE(merged->samePlacement(l)) << merged->str();
  }
}

TEST(ViewTest, SplittingATexelIsRefused) {
  // head_dim = 2 cuts RGBA texels of the packed hidden dim in two.
  Layout cp = Layout::channelPacked(2, 1);
  EXPECT_FALSE(cp.expanded({16, 64}, {16, 32, 2}, {{0}, {1, 2}}).has_value());
  // Merging a padded packed dim into a larger one shifts channels.
  Layout cp3 = Layout::channelPacked(3, 2);
  EXPECT_FALSE(cp3.collapsed({4, 3, 6}, {{0}, {1, 2}}).has_value());
  // Merging two dims whose tile factors sit on different axes.
  EXPECT_FALSE(cp.collapsed({8, 8}, {{0, 1}}).has_value());
  // 12 rows in 4-row tiles split as 4 x 3: every tile spans two groups.
  Layout rt = Layout::rtile(2, 4, 4, 1, IntraTileOrder::RowsOnY,
                            InterTileOrder::RowMajor);
  EXPECT_FALSE(rt.expanded({12, 8}, {4, 3, 8}, {{0, 1}, {2}}).has_value());
  // 6 rows split as 3 x 2 keep the tiles whole (2 divides 4).
  EXPECT_TRUE(rt.expanded({6, 8}, {3, 2, 8}, {{0, 1}, {2}}).has_value());
}

TEST(ViewTest, BufferReshapesAreViews) {
  Layout b = Layout::buffer(2);
  auto c = b.collapsed({3, 5}, {{0, 1}});
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(c->isBuffer());
  EXPECT_EQ(c->rank(), 1u);
}

// A batch-1 loss collapses tensor<1x1xf32> to tensor<f32> (no groups):
// a buffer of unit dims is a scalar buffer, and back.
TEST(ViewTest, UnitDimsToAScalarAreBufferViews) {
  auto scalar = Layout::buffer(2).collapsed({1, 1}, {});
  ASSERT_TRUE(scalar.has_value());
  EXPECT_TRUE(scalar->isBuffer());
  EXPECT_EQ(scalar->rank(), 0u);
  auto unit = Layout::buffer(0).expanded({}, {1, 1, 1}, {});
  ASSERT_TRUE(unit.has_value());
  EXPECT_TRUE(unit->isBuffer());
  EXPECT_EQ(unit->rank(), 3u);
  // Not unit dims: no scalar.
  EXPECT_FALSE(Layout::buffer(2).collapsed({1, 2}, {}).has_value());
  EXPECT_FALSE(Layout::buffer(0).expanded({}, {1, 2}, {}).has_value());
}

} // namespace
