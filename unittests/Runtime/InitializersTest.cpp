//===- InitializersTest.cpp - Counter-based initial values ----------------===//

#include "Initializers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace fbl::runtime;

namespace {

TEST(InitializersTest, NormalHasItsMomentsAndTails) {
  const size_t n = 1 << 22;
  std::vector<float> v(n);
  fillRandomParallel(v.data(), n, 42, /*normal=*/true, 0.02);
  double sum = 0, sq = 0, beyond2 = 0;
  for (float x : v) {
    sum += x;
    sq += double(x) * x;
    beyond2 += std::fabs(x) > 0.04;
  }
  double mean = sum / n, stddev = std::sqrt(sq / n - mean * mean);
  // Sampling error of 4M draws: mean 1e-5, deviation 7e-6; P(|z| > 2) is
  // 4.55%.
  EXPECT_NEAR(mean, 0.0, 1e-4);
  EXPECT_NEAR(stddev, 0.02, 1e-4);
  EXPECT_NEAR(beyond2 / n, 0.0455, 1e-3);
}

TEST(InitializersTest, UniformStaysInItsBoundAndFillsIt) {
  const size_t n = 1 << 21;
  std::vector<float> v(n);
  fillRandomParallel(v.data(), n, 7, /*normal=*/false, 0.25);
  float lo = 1, hi = -1;
  double sum = 0;
  for (float x : v) {
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    sum += x;
  }
  EXPECT_GE(lo, -0.25f);
  EXPECT_LE(hi, 0.25f);
  EXPECT_LT(lo, -0.2499f);
  EXPECT_GT(hi, 0.2499f);
  EXPECT_NEAR(sum / n, 0.0, 1e-3);
}

TEST(InitializersTest, RangesFilledAloneEqualTheWholeFill) {
  // What makes the threads' split invisible: any range drawn on its own
  // holds the same values as the same range of the whole tensor.
  const size_t n = (1 << 21) + 12345;
  std::vector<float> whole(n), parts(n);
  fillRandomParallel(whole.data(), n, 3, true, 1.0);
  for (size_t begin : {size_t(0), size_t(777), n / 3, n - 5})
    fillRandom(parts.data(), begin, std::min(n, begin + 100000), 3, true, 1.0);
  for (size_t begin : {size_t(0), size_t(777), n / 3, n - 5})
    for (size_t i = begin; i < std::min(n, begin + 100000); ++i)
      ASSERT_EQ(whole[i], parts[i]) << i;
}

TEST(InitializersTest, StreamsDiffer) {
  std::vector<float> a(1000), b(1000);
  fillRandom(a.data(), 0, a.size(), 1, true, 1.0);
  fillRandom(b.data(), 0, b.size(), 2, true, 1.0);
  size_t same = 0;
  for (size_t i = 0; i < a.size(); ++i)
    same += a[i] == b[i];
  EXPECT_EQ(same, 0u);
}

} // namespace
