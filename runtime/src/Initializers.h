//===- Initializers.h - Counter-based random initial values -----*- C++ -*-===//
//
// The values of a bundle input's initializer (`normal:<std>`,
// `uniform:<bound>`): element i of a stream is drawn from a hash of the
// stream and i alone, so that any range of a tensor can be filled on its own
// and threads fill a billion-parameter model's ranges in parallel with the
// same values whatever their number.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_RUNTIME_INITIALIZERS_H
#define FBL_RUNTIME_INITIALIZERS_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

namespace fbl::runtime {

/// splitmix64's finalizer: a 64-bit hash whose outputs for consecutive
/// counters are independent enough for initial weights.
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Draw `i` of `stream`, uniform in (0, 1].
inline double counterUniform(uint64_t stream, uint64_t i) {
  return (double(mix64(stream + i * 0x9e3779b97f4a7c15ull) >> 11) + 1.0) *
         0x1.0p-53;
}

/// Draws 2j and 2j + 1 of `stream`, standard normal: Box-Muller on the
/// pair's two uniforms, both of its outputs.
inline void counterNormalPair(uint64_t stream, uint64_t j, double &even,
                              double &odd) {
  double r = std::sqrt(-2.0 * std::log(counterUniform(stream, 2 * j)));
  double t = 6.283185307179586 * counterUniform(stream, 2 * j + 1);
  even = r * std::cos(t);
  odd = r * std::sin(t);
}

/// Draw `i` of `stream`, standard normal.
inline double counterNormal(uint64_t stream, uint64_t i) {
  double even, odd;
  counterNormalPair(stream, i / 2, even, odd);
  return i % 2 ? odd : even;
}

/// Elements [begin, end) of a tensor drawn from `stream`: normal with
/// standard deviation `scale`, or uniform in (-scale, scale].
inline void fillRandom(float *values, size_t begin, size_t end, uint64_t stream,
                       bool normal, double scale) {
  size_t i = begin;
  if (!normal) {
    for (; i < end; ++i)
      values[i] =
          static_cast<float>(scale * (2.0 * counterUniform(stream, i) - 1.0));
    return;
  }
  if (i < end && i % 2)
    values[i] = static_cast<float>(scale * counterNormal(stream, i)), ++i;
  for (; i + 1 < end; i += 2) {
    double even, odd;
    counterNormalPair(stream, i / 2, even, odd);
    values[i] = static_cast<float>(scale * even);
    values[i + 1] = static_cast<float>(scale * odd);
  }
  if (i < end)
    values[i] = static_cast<float>(scale * counterNormal(stream, i));
}

/// All `n` elements, in ranges of at least 1M elements over the machine's
/// threads.
inline void fillRandomParallel(float *values, size_t n, uint64_t stream,
                               bool normal, double scale) {
  size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1,
                                      std::max<size_t>(n >> 20, 1));
  std::vector<std::thread> pool;
  for (size_t w = 1; w < threads; ++w)
    pool.emplace_back(fillRandom, values, n * w / threads,
                      n * (w + 1) / threads, stream, normal, scale);
  fillRandom(values, 0, n / threads, stream, normal, scale);
  for (std::thread &t : pool)
    t.join();
}

} // namespace fbl::runtime

#endif // FBL_RUNTIME_INITIALIZERS_H
