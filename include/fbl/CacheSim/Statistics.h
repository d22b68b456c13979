//===- Statistics.h - Rank agreement between two estimates ------*- C++ -*-===//

#ifndef FBL_CACHESIM_STATISTICS_H
#define FBL_CACHESIM_STATISTICS_H

#include <optional>
#include <vector>

namespace fbl::cachesim {

/// Ranks of `values` from 1, ties getting the mean of the ranks they span.
std::vector<double> averageRanks(const std::vector<double> &values);

/// Spearman's rank correlation of `a` and `b` (the Pearson correlation of
/// their average ranks). None when there are fewer than two pairs or
/// either side has all its values tied.
std::optional<double> spearman(const std::vector<double> &a,
                               const std::vector<double> &b);

} // namespace fbl::cachesim

#endif // FBL_CACHESIM_STATISTICS_H
