//===- Statistics.cpp - Rank agreement between two estimates --------------===//

#include "fbl/CacheSim/Statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace fbl::cachesim;

std::vector<double>
fbl::cachesim::averageRanks(const std::vector<double> &values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return values[x] < values[y]; });
  std::vector<double> ranks(values.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]])
      ++j;
    // Positions i..j (ranks i+1..j+1) are tied.
    double mean = double(i + j) / 2.0 + 1.0;
    for (size_t k = i; k <= j; ++k)
      ranks[order[k]] = mean;
    i = j + 1;
  }
  return ranks;
}

std::optional<double> fbl::cachesim::spearman(const std::vector<double> &a,
                                              const std::vector<double> &b) {
  if (a.size() != b.size() || a.size() < 2)
    return std::nullopt;
  std::vector<double> ra = averageRanks(a), rb = averageRanks(b);
  double n = double(a.size());
  double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n;
  double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  if (saa == 0 || sbb == 0)
    return std::nullopt;
  return sab / std::sqrt(saa * sbb);
}
