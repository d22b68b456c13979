//===- StatisticsTest.cpp - Spearman rank correlation ---------------------===//

#include "fbl/CacheSim/Statistics.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace fbl::cachesim;

TEST(Statistics, TiesGetTheMeanRank) {
  std::vector<double> r = averageRanks({30, 10, 20, 20, 20});
  EXPECT_EQ(r, (std::vector<double>{5, 1, 3, 3, 3}));
}

TEST(Statistics, SpearmanOfMonotoneAndReversedOrders) {
  EXPECT_DOUBLE_EQ(*spearman({1, 2, 3, 4}, {10, 100, 1000, 10000}), 1.0);
  EXPECT_DOUBLE_EQ(*spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
}

TEST(Statistics, SpearmanWithTies) {
  // Ranks a = (1, 2.5, 2.5, 4), b = (1, 2, 3, 4); summed products of the
  // deviations from the mean rank: 4.5, squares 4.5 and 5.
  EXPECT_NEAR(*spearman({1, 2, 2, 3}, {1, 2, 3, 4}), 4.5 / std::sqrt(22.5),
              1e-12);
}

TEST(Statistics, SpearmanUndefined) {
  EXPECT_FALSE(spearman({1}, {2}).has_value());
  EXPECT_FALSE(spearman({1, 1, 1}, {1, 2, 3}).has_value());
  EXPECT_FALSE(spearman({1, 2}, {1, 2, 3}).has_value());
}
