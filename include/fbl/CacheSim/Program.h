//===- Program.h - A kernel body as a flat register program -----*- C++ -*-===//
//
// What fbl-cachesim runs per work-item: an fbl.dispatch body compiled once
// (fbl/CacheSim/KernelCompiler.h) into a flat program over integer
// registers that keeps only what addresses need: index arithmetic, control
// flow, local memory holding addresses, barriers and the memory accesses
// themselves. Float arithmetic is gone. No MLIR here.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_CACHESIM_PROGRAM_H
#define FBL_CACHESIM_PROGRAM_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace fbl::cachesim {

enum class Opcode : uint8_t {
  // dst = a (op) b, the result normalized to `width` bits.
  Add,
  Sub,
  Mul,
  DivU,
  RemU,
  DivS,
  RemS,
  CeilDivS,
  CeilDivU,
  FloorDivS,
  MinS,
  MaxS,
  MinU,
  MaxU,
  And,
  Or,
  Xor,
  Shl,
  ShrU,
  ShrS,
  // dst = (a pred b) ? -1 : 0 (i1 true), operands compared at `width`.
  CmpEq,
  CmpNe,
  CmpSlt,
  CmpSle,
  CmpSgt,
  CmpSge,
  CmpUlt,
  CmpUle,
  CmpUgt,
  CmpUge,
  /// dst = a != 0 ? b : c.
  Select,
  /// dst = a, normalized to `width` (also truncation).
  Copy,
  /// dst = a sign-/zero-extended from `aux` bits, normalized to `width`.
  SignExtend,
  ZeroExtend,
  /// dst = reg[a + reg[b]], reg[b] in [0, imm) (a dynamic vector lane).
  CopyLane,
  /// dst = the work-item's global / local / group id along `aux`.
  WorkItemId,
  LocalId,
  GroupId,
  /// pc = imm.
  Jump,
  /// if reg[a] == 0: pc = imm.
  JumpIfZero,
  /// if !(reg[a] < reg[b]) (signed; unsigned when aux = 1): pc = imm.
  JumpIfNotLess,
  /// Local array `aux`: dst.. (c lanes) = array[reg[a] * c ..]; reg[a] in
  /// [0, imm).
  LocalLoad,
  /// array[reg[a] * c ..] = b.. (c lanes).
  LocalStore,
  /// Waits until every work-item of the group has arrived.
  Barrier,
  /// Texel of operand `aux` at (layer reg[a], y reg[b], x reg[c]); with
  /// imm 1, coordinates past the image are clamped to its edge.
  LoadTexel,
  StoreTexel,
  /// Element reg[a] of buffer operand `aux`; dst (when >= 0) gets a
  /// pseudo-random value in the operand's value range.
  LoadElement,
  StoreElement,
  /// `imm` float multiplies happen here (the float arithmetic itself is
  /// not interpreted; this counts it for the execution model).
  Multiplies,
  /// The work-item is done.
  Return,
};

struct Instruction {
  Opcode op;
  uint8_t width = 64;
  uint16_t aux = 0;
  int32_t dst = -1, a = -1, b = -1, c = -1;
  int64_t imm = 0;
};

/// A tensor a kernel reads or writes: one block argument of the dispatch.
struct Operand {
  bool isImage = true;
  bool isOutput = false;
  /// The memory object: operands that view the same tensor share it.
  uint32_t memory = 0;
  /// Images: texels per axis; buffers: width = elements.
  int64_t width = 1, height = 1, layers = 1;
  /// Buffers: bytes per element.
  int64_t elementBytes = 4;
  /// Integer buffers whose values address something: where they lie.
  bool hasValueRange = false;
  int64_t minValue = 0, maxValue = 0;
  /// Printed in messages and traces (e.g. "in1", "out0").
  std::string name;
};

/// A local-memory array of a work-group: `elements` elements of `lanes`
/// registers each.
struct LocalArray {
  int64_t elements = 0;
  int64_t lanes = 1;
};

/// One kernel, ready to run.
struct Program {
  std::string kernel;
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::array<int64_t, 3> workgroup = {1, 1, 1};
  std::vector<Instruction> code;
  /// Registers every work-item starts with (constants are in place).
  std::vector<int64_t> initialRegisters;
  std::vector<Operand> operands;
  std::vector<LocalArray> locals;
  /// Where each instruction comes from, for run-time errors ("loc: op").
  std::vector<std::string> origins;

  int64_t groupItems() const {
    return workgroup[0] * workgroup[1] * workgroup[2];
  }
  int64_t groupCount(unsigned d) const { return grid[d] / workgroup[d]; }
  int64_t groups() const {
    return groupCount(0) * groupCount(1) * groupCount(2);
  }
};

} // namespace fbl::cachesim

#endif // FBL_CACHESIM_PROGRAM_H
