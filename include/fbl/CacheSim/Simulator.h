//===- Simulator.h - Replaying kernels through a texture cache --*- C++ -*-===//
//
// Runs a kernel's program (fbl/CacheSim/Program.h) for a sample of its
// work-groups, scheduled as the target schedules them, and replays every
// texel and buffer access through one compute unit's caches. No MLIR.
// docs/CacheSim.md describes the scheduling, the sample and the scaling.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_CACHESIM_SIMULATOR_H
#define FBL_CACHESIM_SIMULATOR_H

#include "fbl/CacheSim/Program.h"
#include "fbl/Layout/TargetDescription.h"

#include <array>
#include <cstdint>
#include <functional>
#include <string>

namespace fbl::cachesim {

/// One memory access as the compute unit issues it (for traces).
struct AccessEvent {
  enum Kind : uint8_t { TexelRead, TexelWrite, BufferRead, BufferWrite };
  Kind kind;
  unsigned operand;
  /// Texels: (layer, y, x); buffers: the element in `x`.
  int64_t layer, y, x;
  /// The work-item's global id.
  std::array<int64_t, 3> item;
  /// Reads: whether the line was in the cache (writes: false).
  bool hit;
};

struct SimulationOptions {
  /// Work-groups of compute unit 0 to run (0: all of them).
  int64_t groups = 0;
  /// Run every work-group on every compute unit the grid occupies, each
  /// unit with its own caches: no sample, no scaling (what the sample's
  /// error is measured against).
  bool everyUnit = false;
  /// Called for each access in the order the compute unit issues them.
  std::function<void(const AccessEvent &)> trace;
};

/// What a kernel's accesses count.
struct AccessCounts {
  int64_t texelFetches = 0, texelMisses = 0, texelWrites = 0;
  int64_t bufferReads = 0, bufferMisses = 0, bufferWrites = 0;
  int64_t multiplies = 0;

  int64_t fetches() const { return texelFetches + bufferReads; }
  int64_t misses() const { return texelMisses + bufferMisses; }
  int64_t writes() const { return texelWrites + bufferWrites; }
  AccessCounts &operator+=(const AccessCounts &o);
};

struct KernelResult {
  /// Counts over the work-groups that ran.
  AccessCounts simulated;
  /// Work-groups of the grid, those that ran, and the compute units the
  /// grid occupies.
  int64_t groupsTotal = 0, groupsSimulated = 0, computeUnitsUsed = 0;
  /// The whole grid's counts (each simulated unit's counts times the
  /// groups of the units like it over the groups it ran) and estimated
  /// time.
  double fetches = 0, misses = 0, writes = 0, multiplies = 0;
  /// Memory accesses of the simulated work-item that made the most.
  int64_t itemAccesses = 0;
  double timeNs = 0;
  /// Work-items that ran and the instructions they executed.
  int64_t workItems = 0, instructions = 0;
};

/// Runs `program` on compute unit 0 of `target` and, when the grid's
/// work-groups do not divide evenly over the units, on the first unit with
/// one group fewer (on every unit with `everyUnit` or when the grid has at
/// most `options.groups` groups): each unit's work-groups (every
/// compute_units-th of the grid, in order; `options.groups` of them) in
/// resident sets of resident_items /
/// work-group size sharing one texture cache and one buffer cache, waves
/// of wave_size items issuing their accesses round-robin. False with `error`
/// set when an access falls outside its tensor, a barrier is not reached by
/// every item, or an arithmetic fault occurs.
bool simulate(const Program &program, const target::TargetDescription &target,
              const SimulationOptions &options, KernelResult &result,
              std::string &error);

} // namespace fbl::cachesim

#endif // FBL_CACHESIM_SIMULATOR_H
