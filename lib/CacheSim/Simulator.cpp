//===- Simulator.cpp - Replaying a kernel through the texture cache -------===//
//
// A work-item is a program counter and a register file. The scheduler
// gives each wave of each resident work-group a turn in which every one of
// its items runs to its next memory access and issues it; barriers hold a
// group until all its items arrive.
//
//===----------------------------------------------------------------------===//

#include "fbl/CacheSim/Simulator.h"
#include "fbl/CacheSim/Cache.h"

#include <algorithm>
#include <deque>
#include <memory>

using namespace fbl;
using namespace fbl::cachesim;

AccessCounts &AccessCounts::operator+=(const AccessCounts &o) {
  texelFetches += o.texelFetches;
  texelMisses += o.texelMisses;
  texelWrites += o.texelWrites;
  bufferReads += o.bufferReads;
  bufferMisses += o.bufferMisses;
  bufferWrites += o.bufferWrites;
  multiplies += o.multiplies;
  return *this;
}

namespace {

/// `v` as a `width`-bit signed integer.
inline int64_t normalize(int64_t v, unsigned width) {
  if (width >= 64)
    return v;
  unsigned s = 64 - width;
  return int64_t(uint64_t(v) << s) >> s;
}

/// `v`'s low `width` bits, unsigned.
inline uint64_t unsignedBits(int64_t v, unsigned width) {
  return width >= 64 ? uint64_t(v) : uint64_t(v) & ((uint64_t(1) << width) - 1);
}

/// A value read from an integer buffer: deterministic per element, spread
/// over [min, max].
inline int64_t elementValue(const Operand &o, int64_t element) {
  uint64_t z = (uint64_t(o.memory) << 40) ^ uint64_t(element);
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  uint64_t span = uint64_t(o.maxValue - o.minValue) + 1;
  return o.minValue + int64_t(span ? z % span : z);
}

enum class ItemState : uint8_t { Running, AtBarrier, Done };

/// A resident work-group: its items' states and registers, its local
/// memory.
struct Group {
  int64_t linear = -1;
  std::array<int64_t, 3> id = {0, 0, 0};
  std::vector<int32_t> pc;
  std::vector<ItemState> state;
  /// Memory accesses each item has made.
  std::vector<int64_t> accesses;
  std::vector<int64_t> registers;
  std::vector<std::vector<int64_t>> locals;
  int64_t arrived = 0, done = 0;
};

class Machine {
public:
  Machine(const Program &p, const target::TargetDescription &t,
          const SimulationOptions &o, KernelResult &r, std::string &e)
      : p(p), options(o), result(r), error(e),
        textures(t.cacheLineTexels, t.cacheBytes, unsigned(t.cacheWays)),
        buffers(t.cacheBytes, unsigned(t.cacheWays)),
        numRegisters(int64_t(p.initialRegisters.size())) {}

  void start(Group &g, int64_t linear);
  /// Runs item `i` of `g` to its next access (issuing it), a barrier or
  /// its end. False on a fault (error set).
  bool step(Group &g, int64_t i);

private:
  bool fail(const std::string &what);
  std::array<int64_t, 3> localId(int64_t i) const {
    return {i % p.workgroup[0], (i / p.workgroup[0]) % p.workgroup[1],
            i / (p.workgroup[0] * p.workgroup[1])};
  }
  std::array<int64_t, 3> globalId(const Group &g, int64_t i) const {
    std::array<int64_t, 3> l = localId(i);
    return {g.id[0] * p.workgroup[0] + l[0], g.id[1] * p.workgroup[1] + l[1],
            g.id[2] * p.workgroup[2] + l[2]};
  }

  const Program &p;
  const SimulationOptions &options;
  KernelResult &result;
  std::string &error;
  TextureCache textures;
  BufferCache buffers;
  int64_t numRegisters;
  size_t current = 0;
};

void Machine::start(Group &g, int64_t linear) {
  int64_t n = p.groupItems();
  int64_t nx = p.groupCount(0), ny = p.groupCount(1);
  g.linear = linear;
  g.id = {linear % nx, (linear / nx) % ny, linear / (nx * ny)};
  g.pc.assign(n, 0);
  g.state.assign(n, ItemState::Running);
  g.accesses.assign(n, 0);
  g.registers.resize(n * numRegisters);
  for (int64_t i = 0; i < n; ++i)
    std::copy(p.initialRegisters.begin(), p.initialRegisters.end(),
              g.registers.begin() + i * numRegisters);
  g.locals.resize(p.locals.size());
  for (size_t a = 0; a < p.locals.size(); ++a)
    g.locals[a].assign(p.locals[a].elements * p.locals[a].lanes, 0);
  g.arrived = g.done = 0;
  result.workItems += n;
}

bool Machine::fail(const std::string &what) {
  error = p.origins[current] + ": " + what;
  return false;
}

bool Machine::step(Group &g, int64_t i) {
  int64_t *r = &g.registers[i * numRegisters];
  int32_t pc = g.pc[i];
  const Instruction *code = p.code.data();
  int64_t executed = 0;
  auto texel = [&](const Instruction &in, AccessEvent::Kind kind) {
    const Operand &o = p.operands[in.aux];
    int64_t layer = r[in.a], y = r[in.b], x = r[in.c];
    // A read with clamp_to_edge (imm 1) reads the edge's texel, as the
    // device's sampler does.
    if (in.op == Opcode::LoadTexel && in.imm) {
      layer = std::clamp<int64_t>(layer, 0, o.layers - 1);
      y = std::clamp<int64_t>(y, 0, o.height - 1);
      x = std::clamp<int64_t>(x, 0, o.width - 1);
    }
    if (layer < 0 || layer >= o.layers || y < 0 || y >= o.height || x < 0 ||
        x >= o.width) {
      std::array<int64_t, 3> id = globalId(g, i);
      return fail("work-item (" + std::to_string(id[0]) + ", " +
                  std::to_string(id[1]) + ", " + std::to_string(id[2]) +
                  ") accesses texel [" + std::to_string(layer) + ", " +
                  std::to_string(y) + ", " + std::to_string(x) + "] outside " +
                  o.name + " (" + std::to_string(o.layers) + " x " +
                  std::to_string(o.height) + " x " + std::to_string(o.width) +
                  " texels)");
    }
    bool hit = false;
    if (kind == AccessEvent::TexelRead) {
      hit = textures.access({o.memory, layer, y, x});
      ++result.simulated.texelFetches;
      result.simulated.texelMisses += !hit;
    } else {
      ++result.simulated.texelWrites;
    }
    if (options.trace)
      options.trace({kind, in.aux, layer, y, x, globalId(g, i), hit});
    return true;
  };
  auto element = [&](const Instruction &in, AccessEvent::Kind kind) {
    const Operand &o = p.operands[in.aux];
    int64_t e = r[in.a];
    if (e < 0 || e >= o.width) {
      std::array<int64_t, 3> id = globalId(g, i);
      return fail("work-item (" + std::to_string(id[0]) + ", " +
                  std::to_string(id[1]) + ", " + std::to_string(id[2]) +
                  ") accesses element " + std::to_string(e) + " outside " +
                  o.name + " (" + std::to_string(o.width) + " elements)");
    }
    bool hit = false;
    if (kind == AccessEvent::BufferRead) {
      hit = buffers.access(o.memory, e * o.elementBytes);
      ++result.simulated.bufferReads;
      result.simulated.bufferMisses += !hit;
      if (in.dst >= 0)
        r[in.dst] = normalize(elementValue(o, e), in.width);
    } else {
      ++result.simulated.bufferWrites;
    }
    if (options.trace)
      options.trace({kind, in.aux, 0, 0, e, globalId(g, i), hit});
    return true;
  };
  for (;;) {
    const Instruction &in = code[pc];
    current = size_t(pc);
    ++pc;
    ++executed;
    unsigned w = in.width;
    switch (in.op) {
    case Opcode::Add:
      r[in.dst] = normalize(int64_t(uint64_t(r[in.a]) + uint64_t(r[in.b])), w);
      break;
    case Opcode::Sub:
      r[in.dst] = normalize(int64_t(uint64_t(r[in.a]) - uint64_t(r[in.b])), w);
      break;
    case Opcode::Mul:
      r[in.dst] = normalize(int64_t(uint64_t(r[in.a]) * uint64_t(r[in.b])), w);
      break;
    case Opcode::DivU:
    case Opcode::RemU:
    case Opcode::CeilDivU: {
      uint64_t a = unsignedBits(r[in.a], w), b = unsignedBits(r[in.b], w);
      if (b == 0)
        return fail("division by zero");
      uint64_t v = in.op == Opcode::DivU   ? a / b
                   : in.op == Opcode::RemU ? a % b
                                           : a / b + (a % b != 0);
      r[in.dst] = normalize(int64_t(v), w);
      break;
    }
    case Opcode::DivS:
    case Opcode::RemS:
    case Opcode::CeilDivS:
    case Opcode::FloorDivS: {
      int64_t a = r[in.a], b = r[in.b];
      if (b == 0)
        return fail("division by zero");
      if (b == -1) {
        // a / -1 cannot trap here: normalize wraps as the device does.
        r[in.dst] =
            in.op == Opcode::RemS ? 0 : normalize(int64_t(0 - uint64_t(a)), w);
        break;
      }
      int64_t q = a / b, m = a % b, v;
      if (in.op == Opcode::DivS)
        v = q;
      else if (in.op == Opcode::RemS)
        v = m;
      else if (in.op == Opcode::CeilDivS)
        v = q + (m != 0 && ((a < 0) == (b < 0)));
      else
        v = q - (m != 0 && ((a < 0) != (b < 0)));
      r[in.dst] = normalize(v, w);
      break;
    }
    case Opcode::MinS:
      r[in.dst] = std::min(r[in.a], r[in.b]);
      break;
    case Opcode::MaxS:
      r[in.dst] = std::max(r[in.a], r[in.b]);
      break;
    case Opcode::MinU:
      r[in.dst] = unsignedBits(r[in.a], w) < unsignedBits(r[in.b], w) ? r[in.a]
                                                                      : r[in.b];
      break;
    case Opcode::MaxU:
      r[in.dst] = unsignedBits(r[in.a], w) > unsignedBits(r[in.b], w) ? r[in.a]
                                                                      : r[in.b];
      break;
    case Opcode::And:
      r[in.dst] = r[in.a] & r[in.b];
      break;
    case Opcode::Or:
      r[in.dst] = r[in.a] | r[in.b];
      break;
    case Opcode::Xor:
      r[in.dst] = r[in.a] ^ r[in.b];
      break;
    case Opcode::Shl:
    case Opcode::ShrU:
    case Opcode::ShrS: {
      uint64_t s = unsignedBits(r[in.b], w);
      if (s >= w) {
        // Undefined in MLIR (poison); a device shifts everything out.
        r[in.dst] = in.op == Opcode::ShrS && r[in.a] < 0 ? -1 : 0;
        break;
      }
      if (in.op == Opcode::Shl)
        r[in.dst] = normalize(int64_t(uint64_t(r[in.a]) << s), w);
      else if (in.op == Opcode::ShrU)
        r[in.dst] = normalize(int64_t(unsignedBits(r[in.a], w) >> s), w);
      else
        r[in.dst] = r[in.a] >> s;
      break;
    }
    case Opcode::CmpEq:
      r[in.dst] = -int64_t(r[in.a] == r[in.b]);
      break;
    case Opcode::CmpNe:
      r[in.dst] = -int64_t(r[in.a] != r[in.b]);
      break;
    case Opcode::CmpSlt:
      r[in.dst] = -int64_t(r[in.a] < r[in.b]);
      break;
    case Opcode::CmpSle:
      r[in.dst] = -int64_t(r[in.a] <= r[in.b]);
      break;
    case Opcode::CmpSgt:
      r[in.dst] = -int64_t(r[in.a] > r[in.b]);
      break;
    case Opcode::CmpSge:
      r[in.dst] = -int64_t(r[in.a] >= r[in.b]);
      break;
    case Opcode::CmpUlt:
      r[in.dst] = -int64_t(unsignedBits(r[in.a], w) < unsignedBits(r[in.b], w));
      break;
    case Opcode::CmpUle:
      r[in.dst] =
          -int64_t(unsignedBits(r[in.a], w) <= unsignedBits(r[in.b], w));
      break;
    case Opcode::CmpUgt:
      r[in.dst] = -int64_t(unsignedBits(r[in.a], w) > unsignedBits(r[in.b], w));
      break;
    case Opcode::CmpUge:
      r[in.dst] =
          -int64_t(unsignedBits(r[in.a], w) >= unsignedBits(r[in.b], w));
      break;
    case Opcode::Select:
      r[in.dst] = r[in.a] ? r[in.b] : r[in.c];
      break;
    case Opcode::Copy:
      r[in.dst] = normalize(r[in.a], w);
      break;
    case Opcode::SignExtend:
      r[in.dst] = normalize(normalize(r[in.a], in.aux), w);
      break;
    case Opcode::ZeroExtend:
      r[in.dst] = normalize(int64_t(unsignedBits(r[in.a], in.aux)), w);
      break;
    case Opcode::CopyLane: {
      int64_t lane = r[in.b];
      if (lane < 0 || lane >= in.imm)
        return fail("vector lane " + std::to_string(lane) + " out of range");
      r[in.dst] = r[in.a + lane];
      break;
    }
    case Opcode::WorkItemId:
      r[in.dst] = globalId(g, i)[in.aux];
      break;
    case Opcode::LocalId:
      r[in.dst] = localId(i)[in.aux];
      break;
    case Opcode::GroupId:
      r[in.dst] = g.id[in.aux];
      break;
    case Opcode::Jump:
      pc = int32_t(in.imm);
      break;
    case Opcode::JumpIfZero:
      if (!r[in.a])
        pc = int32_t(in.imm);
      break;
    case Opcode::JumpIfNotLess:
      if (in.aux ? !(unsignedBits(r[in.a], w) < unsignedBits(r[in.b], w))
                 : !(r[in.a] < r[in.b]))
        pc = int32_t(in.imm);
      break;
    case Opcode::LocalLoad:
    case Opcode::LocalStore: {
      int64_t e = r[in.a];
      if (e < 0 || e >= in.imm)
        return fail("local memory index " + std::to_string(e) +
                    " out of range");
      int64_t *slot = &g.locals[in.aux][e * in.c];
      if (in.op == Opcode::LocalLoad)
        std::copy(slot, slot + in.c, r + in.dst);
      else
        std::copy(r + in.b, r + in.b + in.c, slot);
      break;
    }
    case Opcode::Barrier:
      g.state[i] = ItemState::AtBarrier;
      ++g.arrived;
      g.pc[i] = pc;
      result.instructions += executed;
      return true;
    case Opcode::Multiplies:
      result.simulated.multiplies += in.imm;
      break;
    case Opcode::LoadTexel:
    case Opcode::StoreTexel:
    case Opcode::LoadElement:
    case Opcode::StoreElement: {
      ++g.accesses[i];
      bool ok = in.op == Opcode::LoadTexel ? texel(in, AccessEvent::TexelRead)
                : in.op == Opcode::StoreTexel
                    ? texel(in, AccessEvent::TexelWrite)
                : in.op == Opcode::LoadElement
                    ? element(in, AccessEvent::BufferRead)
                    : element(in, AccessEvent::BufferWrite);
      g.pc[i] = pc;
      result.instructions += executed;
      return ok;
    }
    case Opcode::Return:
      result.itemAccesses = std::max(result.itemAccesses, g.accesses[i]);
      g.state[i] = ItemState::Done;
      ++g.done;
      g.pc[i] = pc - 1;
      result.instructions += executed;
      return true;
    }
  }
}

} // namespace

namespace {
/// Compute units that run alike: `units` of them, each running
/// `groupsEach` work-groups; `first` is the one simulated.
struct UnitClass {
  int64_t first, units, groupsEach;
};
} // namespace

/// The units to simulate. Unit u runs groups u, u + units, u + 2 units, ...
/// so units differ only in how many groups they get: ceil(total / units)
/// for the first total % units of them, one fewer for the rest.
static std::vector<UnitClass> unitClasses(int64_t total, int64_t units,
                                          bool everyUnit) {
  int64_t used = std::min(units, total);
  int64_t each = total / units, extra = total % units;
  std::vector<UnitClass> classes;
  if (everyUnit) {
    for (int64_t u = 0; u < used; ++u)
      classes.push_back({u, 1, each + (u < extra)});
  } else if (total <= units || extra == 0) {
    classes.push_back({0, used, (total + units - 1) / units});
  } else {
    classes.push_back({0, extra, each + 1});
    classes.push_back({extra, units - extra, each});
  }
  return classes;
}

bool fbl::cachesim::simulate(const Program &program,
                             const target::TargetDescription &target,
                             const SimulationOptions &options,
                             KernelResult &result, std::string &error) {
  result = KernelResult();
  const target::ExecutionModel &e = target.execution;
  int64_t items = program.groupItems();
  int64_t total = program.groups();
  int64_t units = std::max<int64_t>(e.computeUnits, 1);
  int64_t resident = std::max<int64_t>(1, e.residentItems / items);
  int64_t wave = std::max<int64_t>(e.waveSize, 1);
  result.groupsTotal = total;
  result.computeUnitsUsed = std::min(units, total);
  // A grid of no more groups than the sample runs whole, on every unit: a
  // sample of it would be a handful of groups per unit, too few for the
  // differences between groups to average out.
  bool whole =
      options.everyUnit || (options.groups > 0 && total <= options.groups);
  for (const UnitClass &c : unitClasses(total, units, whole)) {
    int64_t sample = options.groups > 0 && !whole
                         ? std::min(options.groups, c.groupsEach)
                         : c.groupsEach;
    result.groupsSimulated += sample;
    AccessCounts before = result.simulated;
    Machine machine(program, target, options, result, error);
    std::vector<Group> slots(size_t(std::min(resident, sample)));
    int64_t next = 0, running = 0;
    while (next < sample || running > 0) {
      // A new group starts in every slot whose group has finished.
      for (Group &g : slots)
        if (g.linear < 0 && next < sample) {
          machine.start(g, c.first + next++ * units);
          ++running;
        }
      for (Group &g : slots) {
        if (g.linear < 0)
          continue;
        for (int64_t w = 0; w < items; w += wave)
          for (int64_t i = w, end = std::min(w + wave, items); i < end; ++i)
            if (g.state[i] == ItemState::Running && !machine.step(g, i))
              return false;
        if (g.arrived + g.done < items)
          continue;
        if (g.arrived > 0 && g.done > 0) {
          error = "kernel @" + program.kernel + ": " + std::to_string(g.done) +
                  " work-items of a group ended without reaching the "
                  "barrier the others wait at";
          return false;
        }
        if (g.arrived > 0) {
          std::fill(g.state.begin(), g.state.end(), ItemState::Running);
          g.arrived = 0;
          continue;
        }
        g.linear = -1;
        --running;
      }
    }
    // This unit's counts stand for the class's groups.
    const AccessCounts &after = result.simulated;
    double scale = double(c.groupsEach * c.units) / double(sample);
    result.fetches += double(after.fetches() - before.fetches()) * scale;
    result.misses += double(after.misses() - before.misses()) * scale;
    result.writes += double(after.writes() - before.writes()) * scale;
    result.multiplies += double(after.multiplies - before.multiplies) * scale;
  }
  target::LaunchWork work;
  work.fetches = result.fetches;
  work.misses = result.misses;
  work.writes = result.writes;
  work.multiplies = result.multiplies;
  work.itemAccesses = double(result.itemAccesses);
  work.groups = total;
  work.groupItems = items;
  result.timeNs = target::launchTimeNs(e, work);
  return true;
}
