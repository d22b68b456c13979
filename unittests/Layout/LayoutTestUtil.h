//===- LayoutTestUtil.h - Layout sweeps for tests ---------------*- C++ -*-===//
//
// The layouts and shapes the layout tests sweep, and index iteration.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_UNITTESTS_LAYOUT_LAYOUTTESTUTIL_H
#define FBL_UNITTESTS_LAYOUT_LAYOUTTESTUTIL_H

#include "fbl/Layout/Layout.h"

#include <functional>
#include <string>
#include <vector>

namespace fbl::layout::testing {

struct NamedLayout {
  std::string name;
  Layout layout;
};

/// Every named layout of rank `rank` over a range of parameters.
inline std::vector<NamedLayout> allLayouts(unsigned rank) {
  std::vector<NamedLayout> out;
  out.push_back({"buffer", Layout::buffer(rank)});
  if (rank == 0) {
    out.push_back({"channel_packed", Layout::channelPacked(0, -1)});
    return out;
  }
  for (unsigned p = 0; p < rank; ++p)
    for (BatchFold f : {BatchFold::Y, BatchFold::Layers})
      out.push_back({"channel_packed(p=" + std::to_string(p) +
                         ",fold=" + std::to_string(int(f)) + ")",
                     Layout::channelPacked(rank, p, f)});
  if (rank < 2)
    return out;
  const std::vector<std::pair<int64_t, int64_t>> tiles = {
      {4, 4}, {4, 8}, {8, 4}, {8, 8}, {1, 4}, {2, 4}, {4, 12}, {16, 4}};
  for (auto [tr, tc] : tiles)
    for (int p : {int(rank) - 2, int(rank) - 1}) {
      int64_t tp = p == int(rank) - 1 ? tc : tr;
      if (tp % 4)
        continue;
      for (IntraTileOrder intra :
           {IntraTileOrder::RowsOnY, IntraTileOrder::RowsOnX,
            IntraTileOrder::Linear})
        for (InterTileOrder inter :
             {InterTileOrder::RowMajor, InterTileOrder::ColMajor})
          for (BatchFold f : {BatchFold::Y, BatchFold::Layers})
            out.push_back({"rtile(" + std::to_string(tr) + "x" +
                               std::to_string(tc) + ",p=" + std::to_string(p) +
                               ",intra=" + std::to_string(int(intra)) +
                               ",inter=" + std::to_string(int(inter)) +
                               ",fold=" + std::to_string(int(f)) + ")",
                           Layout::rtile(rank, tr, tc, p, intra, inter, f)});
    }
  return out;
}

/// Shapes of `rank` mixing multiples and non-multiples of 4 and 8.
inline std::vector<std::vector<int64_t>> sweepShapes(unsigned rank) {
  switch (rank) {
  case 0:
    return {{}};
  case 1:
    return {{1}, {3}, {4}, {9}, {16}};
  case 2:
    return {{1, 1}, {3, 5}, {4, 4}, {8, 12}, {5, 17}, {16, 8}};
  case 3:
    return {{2, 3, 5}, {3, 8, 4}, {1, 9, 8}};
  default:
    return {{2, 2, 3, 5}, {2, 1, 8, 4}};
  }
}

/// Calls fn(index) for every index of `shape` in row-major order.
inline void
forEachIndex(const std::vector<int64_t> &shape,
             const std::function<void(const std::vector<int64_t> &)> &fn) {
  int64_t n = Layout::product(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t lin = 0; lin < n; ++lin) {
    fn(idx);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
}

inline std::string shapeStr(const std::vector<int64_t> &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

} // namespace fbl::layout::testing

#endif // FBL_UNITTESTS_LAYOUT_LAYOUTTESTUTIL_H
