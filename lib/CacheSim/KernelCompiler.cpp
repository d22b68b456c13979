//===- KernelCompiler.cpp - fbl.dispatch bodies as flat programs ----------===//
//
// Two steps. First, which ops matter: the memory accesses and barriers,
// then (to a fixed point) every op whose value an address, a loop bound, a
// branch condition or a kept local-memory access needs; float arithmetic
// only ever feeds stored data and drops out. Second, those ops become
// instructions over registers (a value of N lanes gets N registers),
// structured control flow becomes jumps.
//
//===----------------------------------------------------------------------===//

#include "fbl/CacheSim/KernelCompiler.h"

#include "fbl/Dialect/FBL/IR/FBLAttrs.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;
using namespace mlir::fbl;
namespace cs = ::fbl::cachesim;
namespace fl = ::fbl::layout;
using cs::Opcode;

namespace {

bool isFloatLike(Type type) {
  return isa<FloatType>(getElementTypeOrSelf(type));
}

/// Bits of a scalar integer as the kernels compute it: `index` is OpenCL's
/// `int` (what fbl-translate prints it as).
unsigned widthOf(Type type) {
  if (type.isIndex())
    return 32;
  if (auto i = dyn_cast<IntegerType>(type))
    return std::min(i.getWidth(), 64u);
  return 64;
}

/// Integer ops over scalars that map to one instruction.
std::optional<Opcode> binaryOpcode(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<Opcode>>(op)
      .Case<arith::AddIOp>([](auto) { return Opcode::Add; })
      .Case<arith::SubIOp>([](auto) { return Opcode::Sub; })
      .Case<arith::MulIOp>([](auto) { return Opcode::Mul; })
      .Case<arith::DivUIOp>([](auto) { return Opcode::DivU; })
      .Case<arith::RemUIOp>([](auto) { return Opcode::RemU; })
      .Case<arith::DivSIOp>([](auto) { return Opcode::DivS; })
      .Case<arith::RemSIOp>([](auto) { return Opcode::RemS; })
      .Case<arith::CeilDivSIOp>([](auto) { return Opcode::CeilDivS; })
      .Case<arith::CeilDivUIOp>([](auto) { return Opcode::CeilDivU; })
      .Case<arith::FloorDivSIOp>([](auto) { return Opcode::FloorDivS; })
      .Case<arith::MinSIOp>([](auto) { return Opcode::MinS; })
      .Case<arith::MaxSIOp>([](auto) { return Opcode::MaxS; })
      .Case<arith::MinUIOp>([](auto) { return Opcode::MinU; })
      .Case<arith::MaxUIOp>([](auto) { return Opcode::MaxU; })
      .Case<arith::AndIOp>([](auto) { return Opcode::And; })
      .Case<arith::OrIOp>([](auto) { return Opcode::Or; })
      .Case<arith::XOrIOp>([](auto) { return Opcode::Xor; })
      .Case<arith::ShLIOp>([](auto) { return Opcode::Shl; })
      .Case<arith::ShRUIOp>([](auto) { return Opcode::ShrU; })
      .Case<arith::ShRSIOp>([](auto) { return Opcode::ShrS; })
      .Default([](Operation *) { return std::nullopt; });
}

Opcode compareOpcode(arith::CmpIPredicate p) {
  using P = arith::CmpIPredicate;
  switch (p) {
  case P::eq:
    return Opcode::CmpEq;
  case P::ne:
    return Opcode::CmpNe;
  case P::slt:
    return Opcode::CmpSlt;
  case P::sle:
    return Opcode::CmpSle;
  case P::sgt:
    return Opcode::CmpSgt;
  case P::sge:
    return Opcode::CmpSge;
  case P::ult:
    return Opcode::CmpUlt;
  case P::ule:
    return Opcode::CmpUle;
  case P::ugt:
    return Opcode::CmpUgt;
  case P::uge:
    return Opcode::CmpUge;
  }
  return Opcode::CmpEq;
}

/// Ops whose results are integers the interpreter computes.
bool isIntegerOp(Operation *op) {
  bool scalar = llvm::all_of(op->getResultTypes(),
                             [](Type t) { return t.isIntOrIndex(); });
  if (!scalar)
    return false;
  if (binaryOpcode(op))
    return true;
  if (auto c = dyn_cast<arith::ConstantOp>(op))
    return isa<IntegerAttr>(c.getValue());
  return isa<arith::CmpIOp, arith::SelectOp, arith::IndexCastOp,
             arith::IndexCastUIOp, arith::ExtSIOp, arith::ExtUIOp,
             arith::TruncIOp, WorkItemIdOp, LocalIdOp, GroupIdOp>(op);
}

/// Ops that compute only data (floats, or integers from floats): skipped,
/// and an error where an address would need their value.
bool isDataOp(Operation *op) {
  if (isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
          arith::RemFOp, arith::NegFOp, arith::MaximumFOp, arith::MinimumFOp,
          arith::MaxNumFOp, arith::MinNumFOp, arith::CmpFOp, arith::ExtFOp,
          arith::TruncFOp, arith::SIToFPOp, arith::UIToFPOp, arith::FPToSIOp,
          arith::FPToUIOp>(op))
    return true;
  bool floatResults = op->getNumResults() > 0 &&
                      llvm::all_of(op->getResultTypes(), isFloatLike);
  if (isa<arith::ConstantOp, arith::SelectOp>(op))
    return floatResults;
  if (isa<math::MathDialect>(op->getDialect()))
    return floatResults;
  // Texels are float vectors; their lanes are data.
  if (isa<vector::FromElementsOp, vector::ExtractOp, vector::BroadcastOp>(op))
    return floatResults;
  return false;
}

/// The tensor whose memory `v` addresses: through views, which move
/// nothing.
Value memoryRoot(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<TransposeViewOp, ReshapeViewOp, tensor::CastOp>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

struct ValueRange64 {
  int64_t min, max;
};

/// The range the elements of integer tensor `v` lie in: the
/// `fbl.input_range` of the function argument they come from, through
/// views and kernels that only copy integer elements. None when unknown.
std::optional<ValueRange64> valueRange(Value v, unsigned depth = 0) {
  v = memoryRoot(v);
  if (depth > 16)
    return std::nullopt;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto func = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
    if (!func)
      return std::nullopt;
    auto range = func.getArgAttrOfType<DictionaryAttr>(arg.getArgNumber(),
                                                       "fbl.input_range");
    if (!range)
      return std::nullopt;
    auto min = range.getAs<IntegerAttr>("min");
    auto max = range.getAs<IntegerAttr>("max");
    if (!min || !max)
      return std::nullopt;
    return ValueRange64{min.getInt(), max.getInt()};
  }
  // A kernel that stores into this output only elements it loaded from
  // integer inputs.
  auto dispatch = v.getDefiningOp<DispatchOp>();
  if (!dispatch)
    return std::nullopt;
  unsigned out = cast<OpResult>(v).getResultNumber();
  Block &body = dispatch.getBody().front();
  Value handle = body.getArgument(dispatch.getIns().size() + out);
  std::optional<ValueRange64> result;
  bool copiesOnly = true;
  for (Operation *user : handle.getUsers()) {
    auto store = dyn_cast<StoreElementOp>(user);
    if (!store)
      continue;
    Value stored = store.getValue();
    while (Operation *def = stored.getDefiningOp()) {
      if (!isa<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp>(def))
        break;
      stored = def->getOperand(0);
    }
    auto load = stored.getDefiningOp<LoadElementOp>();
    auto source = load ? dyn_cast<BlockArgument>(load.getBuffer()) : nullptr;
    if (!source || source.getArgNumber() >= dispatch.getIns().size()) {
      copiesOnly = false;
      break;
    }
    std::optional<ValueRange64> r =
        valueRange(dispatch.getIns()[source.getArgNumber()], depth + 1);
    if (!r) {
      copiesOnly = false;
      break;
    }
    result = result ? ValueRange64{std::min(result->min, r->min),
                                   std::max(result->max, r->max)}
                    : *r;
  }
  if (!copiesOnly)
    return std::nullopt;
  return result;
}

class KernelCompiler {
public:
  explicit KernelCompiler(DispatchOp dispatch) : dispatch(dispatch) {}

  FailureOr<cs::Program> compile();

private:
  LogicalResult checkOps();
  LogicalResult describeOperands();
  LogicalResult findNeeded();
  void keep(Operation *op);
  void need(Value v);
  LogicalResult processOp(Operation *op);
  LogicalResult processValue(Value v);

  LogicalResult emitBlock(Block &block);
  LogicalResult emitOp(Operation *op);
  LogicalResult emitLocalAccess(Operation *op, Value memref,
                                ValueRange indices);
  int32_t reg(Value v);
  int32_t fresh(int64_t lanes = 1);
  int32_t constant(int64_t value);
  size_t emit(cs::Instruction in);
  void copyLanes(Value to, Value from);
  unsigned operandIndex(Value tensor);

  DispatchOp dispatch;
  cs::Program program;
  Operation *origin = nullptr;

  llvm::DenseSet<Operation *> kept;
  llvm::DenseSet<Value> needed;
  llvm::DenseSet<Operation *> neededData;
  llvm::DenseSet<Value> neededLocals;
  SmallVector<Operation *> opWork;
  SmallVector<Value> valueWork;

  llvm::DenseMap<Value, int32_t> registers;
  llvm::DenseMap<int64_t, int32_t> constants;
  llvm::DenseMap<Value, unsigned> localSlots;
};

} // namespace

//===----------------------------------------------------------------------===//
// Which ops are needed
//===----------------------------------------------------------------------===//

LogicalResult KernelCompiler::checkOps() {
  WalkResult r = dispatch.getBody().walk([&](Operation *op) {
    if (isIntegerOp(op) || isDataOp(op) ||
        isa<scf::ForOp, scf::IfOp, scf::YieldOp, KernelReturnOp, BarrierOp,
            LoadTexelOp, StoreTexelOp, LoadElementOp, StoreElementOp,
            memref::LoadOp, memref::StoreOp>(op))
      return WalkResult::advance();
    if (auto alloca = dyn_cast<memref::AllocaOp>(op)) {
      MemRefType type = alloca.getType();
      auto space = dyn_cast_or_null<IntegerAttr>(type.getMemorySpace());
      if (space && space.getInt() == 3 && type.hasStaticShape())
        return WalkResult::advance();
      op->emitError("fbl-cachesim: kernel @")
          << dispatch.getKernel()
          << ": only static local-memory (memory space 3) arrays";
      return WalkResult::interrupt();
    }
    // Vectors of integers: lanes of registers.
    if (isa<vector::FromElementsOp, vector::ExtractOp, vector::BroadcastOp>(
            op)) {
      auto vec = dyn_cast<VectorType>(op->getOperand(0).getType());
      if (isa<vector::FromElementsOp, vector::BroadcastOp>(op))
        vec = cast<VectorType>(op->getResult(0).getType());
      if (vec.getRank() == 1 && !vec.isScalable())
        return WalkResult::advance();
    }
    op->emitError("fbl-cachesim: kernel @")
        << dispatch.getKernel() << ": cannot interpret '" << op->getName()
        << "'";
    return WalkResult::interrupt();
  });
  return failure(r.wasInterrupted());
}

void KernelCompiler::keep(Operation *op) {
  if (kept.insert(op).second)
    opWork.push_back(op);
}

void KernelCompiler::need(Value v) {
  if (needed.insert(v).second)
    valueWork.push_back(v);
}

LogicalResult KernelCompiler::processOp(Operation *op) {
  // The structured ops around a kept op run, so their bounds and
  // conditions are needed.
  Operation *parent = op->getParentOp();
  if (parent && parent != dispatch.getOperation())
    keep(parent);
  llvm::TypeSwitch<Operation *>(op)
      .Case<LoadTexelOp>([&](LoadTexelOp l) {
        need(l.getLayer());
        need(l.getY());
        need(l.getX());
      })
      .Case<StoreTexelOp>([&](StoreTexelOp s) {
        need(s.getLayer());
        need(s.getY());
        need(s.getX());
      })
      .Case<LoadElementOp>([&](LoadElementOp l) { need(l.getOffset()); })
      .Case<StoreElementOp>([&](StoreElementOp s) { need(s.getOffset()); })
      .Case<scf::ForOp>([&](scf::ForOp f) {
        need(f.getLowerBound());
        need(f.getUpperBound());
        need(f.getStep());
      })
      .Case<scf::IfOp>([&](scf::IfOp i) { need(i.getCondition()); })
      .Case<memref::LoadOp>([&](memref::LoadOp l) {
        for (Value i : l.getIndices())
          need(i);
        // Every store to the array may be what this load reads.
        if (neededLocals.insert(l.getMemRef()).second)
          for (Operation *user : l.getMemRef().getUsers())
            if (isa<memref::StoreOp>(user))
              keep(user);
      })
      .Case<memref::StoreOp>([&](memref::StoreOp s) {
        for (Value i : s.getIndices())
          need(i);
        need(s.getValueToStore());
      })
      .Default([&](Operation *other) {
        for (Value v : other->getOperands())
          need(v);
      });
  return success();
}

LogicalResult KernelCompiler::processValue(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    Operation *owner = arg.getOwner()->getParentOp();
    if (auto loop = dyn_cast<scf::ForOp>(owner)) {
      keep(loop);
      if (arg == loop.getInductionVar())
        return success();
      unsigned k = arg.getArgNumber() - 1;
      need(loop.getInitArgs()[k]);
      need(cast<scf::YieldOp>(loop.getBody()->getTerminator()).getOperand(k));
      return success();
    }
    return emitError(v.getLoc(), "fbl-cachesim: kernel @")
           << dispatch.getKernel()
           << ": an address depends on a value the interpreter cannot "
              "compute";
  }
  Operation *def = v.getDefiningOp();
  unsigned k = cast<OpResult>(v).getResultNumber();
  if (auto loop = dyn_cast<scf::ForOp>(def)) {
    need(loop.getRegionIterArgs()[k]);
    return success();
  }
  if (auto branch = dyn_cast<scf::IfOp>(def)) {
    keep(branch);
    need(branch.thenYield().getOperand(k));
    need(branch.elseYield().getOperand(k));
    return success();
  }
  if (auto load = dyn_cast<LoadElementOp>(def)) {
    if (!load.getType().isIntOrIndex())
      return def->emitError("fbl-cachesim: kernel @")
             << dispatch.getKernel()
             << ": an address depends on float data read by '" << def->getName()
             << "'";
    neededData.insert(def);
    return success();
  }
  if (isDataOp(def) || isa<LoadTexelOp>(def) ||
      (isa<memref::LoadOp>(def) && isFloatLike(v.getType())))
    return def->emitError("fbl-cachesim: kernel @")
           << dispatch.getKernel()
           << ": an address depends on float data computed by '"
           << def->getName() << "'";
  keep(def);
  return success();
}

LogicalResult KernelCompiler::findNeeded() {
  dispatch.getBody().walk([&](Operation *op) {
    if (isa<LoadTexelOp, StoreTexelOp, LoadElementOp, StoreElementOp,
            BarrierOp>(op))
      keep(op);
  });
  while (!opWork.empty() || !valueWork.empty()) {
    if (!valueWork.empty()) {
      if (failed(processValue(valueWork.pop_back_val())))
        return failure();
      continue;
    }
    if (failed(processOp(opWork.pop_back_val())))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Operands
//===----------------------------------------------------------------------===//

LogicalResult KernelCompiler::describeOperands() {
  Block &body = dispatch.getBody().front();
  unsigned numIns = dispatch.getIns().size();
  llvm::DenseMap<Value, uint32_t> memories;
  for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
    cs::Operand o;
    o.isOutput = i >= numIns;
    o.name = o.isOutput ? "out" + std::to_string(i - numIns)
                        : "in" + std::to_string(i);
    Value tensor = dispatch->getOperand(i);
    o.memory =
        memories.try_emplace(memoryRoot(tensor), memories.size()).first->second;
    auto type = cast<RankedTensorType>(arg.getType());
    auto encoding = getLayoutEncoding(type);
    if (!encoding || !type.hasStaticShape())
      return dispatch.emitError("fbl-cachesim: kernel @")
             << dispatch.getKernel() << ": operand " << o.name
             << " has no static shape with an fbl layout";
    fl::Extents e = encoding.getExtents(type.getShape());
    o.isImage =
        encoding.getStorageKind(type.getRank()) != fl::StorageKind::Buffer;
    o.width = e.width;
    o.height = e.height;
    o.layers = e.layers;
    o.elementBytes = getElementBytes(type.getElementType());
    program.operands.push_back(o);
  }
  // Gather indices: values in the range recorded for their source.
  for (Operation *op : neededData) {
    auto load = cast<LoadElementOp>(op);
    unsigned i = cast<BlockArgument>(load.getBuffer()).getArgNumber();
    cs::Operand &o = program.operands[i];
    if (o.hasValueRange)
      continue;
    std::optional<ValueRange64> range =
        i < numIns ? valueRange(dispatch.getIns()[i]) : std::nullopt;
    if (!range || range->min > range->max ||
        uint64_t(range->max) - uint64_t(range->min) >
            uint64_t(std::numeric_limits<int32_t>::max()))
      return op->emitError("fbl-cachesim: kernel @")
             << dispatch.getKernel() << ": the index read from " << o.name
             << " has no recorded range (fbl.input_range on the function "
                "argument it comes from)";
    o.hasValueRange = true;
    o.minValue = range->min;
    o.maxValue = range->max;
  }
  return success();
}

unsigned KernelCompiler::operandIndex(Value tensor) {
  return cast<BlockArgument>(tensor).getArgNumber();
}

//===----------------------------------------------------------------------===//
// Emission
//===----------------------------------------------------------------------===//

int32_t KernelCompiler::fresh(int64_t lanes) {
  int32_t r = int32_t(program.initialRegisters.size());
  program.initialRegisters.resize(program.initialRegisters.size() + lanes, 0);
  return r;
}

int32_t KernelCompiler::reg(Value v) {
  auto it = registers.find(v);
  if (it != registers.end())
    return it->second;
  int64_t lanes = 1;
  if (auto vec = dyn_cast<VectorType>(v.getType()))
    lanes = vec.getNumElements();
  int32_t r = fresh(lanes);
  registers[v] = r;
  return r;
}

int32_t KernelCompiler::constant(int64_t value) {
  auto [it, inserted] = constants.try_emplace(value, 0);
  if (inserted) {
    it->second = fresh();
    program.initialRegisters[it->second] = value;
  }
  return it->second;
}

size_t KernelCompiler::emit(cs::Instruction in) {
  program.code.push_back(in);
  std::string where = "kernel @" + program.kernel;
  if (origin)
    where += ": '" + origin->getName().getStringRef().str() + "'";
  program.origins.push_back(where);
  return program.code.size() - 1;
}

void KernelCompiler::copyLanes(Value to, Value from) {
  int64_t lanes = 1;
  if (auto vec = dyn_cast<VectorType>(to.getType()))
    lanes = vec.getNumElements();
  unsigned w = widthOf(getElementTypeOrSelf(to.getType()));
  int32_t t = reg(to), f = reg(from);
  for (int64_t l = 0; l < lanes; ++l)
    emit({Opcode::Copy, uint8_t(w), 0, int32_t(t + l), int32_t(f + l)});
}

LogicalResult KernelCompiler::emitBlock(Block &block) {
  // The block's float multiplies, counted where they run.
  int64_t multiplies = 0;
  for (Operation &op : block.without_terminator()) {
    if (isa<arith::MulFOp, math::FmaOp>(op)) {
      auto vec = dyn_cast<VectorType>(op.getResult(0).getType());
      multiplies += vec ? vec.getNumElements() : 1;
    }
  }
  if (multiplies > 0) {
    cs::Instruction in{Opcode::Multiplies};
    in.imm = multiplies;
    emit(in);
  }
  for (Operation &op : block.without_terminator())
    if (kept.contains(&op) && failed(emitOp(&op)))
      return failure();
  return success();
}

LogicalResult KernelCompiler::emitLocalAccess(Operation *op, Value memref,
                                              ValueRange indices) {
  auto type = cast<MemRefType>(memref.getType());
  auto [it, inserted] = localSlots.try_emplace(memref, 0);
  if (inserted) {
    it->second = program.locals.size();
    cs::LocalArray a;
    a.elements = type.getNumElements();
    if (auto vec = dyn_cast<VectorType>(type.getElementType()))
      a.lanes = vec.getNumElements();
    program.locals.push_back(a);
  }
  const cs::LocalArray &array = program.locals[it->second];
  // Row-major flat index.
  int32_t flat = constant(0);
  for (auto [d, i] : llvm::enumerate(indices)) {
    int32_t scaled = fresh(), sum = fresh();
    emit({Opcode::Mul, 64, 0, scaled, flat, constant(type.getDimSize(d))});
    emit({Opcode::Add, 64, 0, sum, scaled, reg(i)});
    flat = sum;
  }
  cs::Instruction in;
  in.aux = uint16_t(it->second);
  in.a = flat;
  in.c = int32_t(array.lanes);
  in.imm = array.elements;
  if (auto load = dyn_cast<memref::LoadOp>(op)) {
    in.op = Opcode::LocalLoad;
    in.dst = reg(load.getResult());
  } else {
    in.op = Opcode::LocalStore;
    in.b = reg(cast<memref::StoreOp>(op).getValueToStore());
  }
  emit(in);
  return success();
}

LogicalResult KernelCompiler::emitOp(Operation *op) {
  origin = op;
  if (std::optional<Opcode> code = binaryOpcode(op)) {
    Value r = op->getResult(0);
    emit({*code, uint8_t(widthOf(r.getType())), 0, reg(r),
          reg(op->getOperand(0)), reg(op->getOperand(1))});
    return success();
  }
  auto unary = [&](Opcode code, unsigned fromWidth) {
    Value r = op->getResult(0);
    emit({code, uint8_t(widthOf(r.getType())), uint16_t(fromWidth), reg(r),
          reg(op->getOperand(0))});
    return success();
  };
  auto texel = [&](Opcode code, Value image, Value layer, Value y, Value x,
                   int64_t imm = 0) {
    emit({code, 64, uint16_t(operandIndex(image)), -1, reg(layer), reg(y),
          reg(x), imm});
    return success();
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<arith::ConstantOp>([&](arith::ConstantOp c) {
        int64_t v = cast<IntegerAttr>(c.getValue()).getValue().getSExtValue();
        unsigned w = widthOf(c.getType());
        int32_t r = reg(c);
        program.initialRegisters[r] =
            w >= 64 ? v : int64_t(uint64_t(v) << (64 - w)) >> (64 - w);
        return success();
      })
      .Case<arith::CmpIOp>([&](arith::CmpIOp c) {
        emit({compareOpcode(c.getPredicate()),
              uint8_t(widthOf(c.getLhs().getType())), 0, reg(c),
              reg(c.getLhs()), reg(c.getRhs())});
        return success();
      })
      .Case<arith::SelectOp>([&](arith::SelectOp s) {
        emit({Opcode::Select, uint8_t(widthOf(s.getType())), 0, reg(s),
              reg(s.getCondition()), reg(s.getTrueValue()),
              reg(s.getFalseValue())});
        return success();
      })
      .Case<arith::IndexCastOp, arith::ExtSIOp>([&](auto) {
        return unary(Opcode::SignExtend, widthOf(op->getOperand(0).getType()));
      })
      .Case<arith::IndexCastUIOp, arith::ExtUIOp>([&](auto) {
        return unary(Opcode::ZeroExtend, widthOf(op->getOperand(0).getType()));
      })
      .Case<arith::TruncIOp>([&](auto) { return unary(Opcode::Copy, 0); })
      .Case<WorkItemIdOp, LocalIdOp, GroupIdOp>([&](auto id) {
        Opcode code = isa<WorkItemIdOp>(op) ? Opcode::WorkItemId
                      : isa<LocalIdOp>(op)  ? Opcode::LocalId
                                            : Opcode::GroupId;
        emit({code, 32, uint16_t(id.getDim()), reg(id.getResult())});
        return success();
      })
      .Case<vector::FromElementsOp>([&](vector::FromElementsOp f) {
        int32_t base = reg(f);
        unsigned w = widthOf(f.getType().getElementType());
        for (auto [l, e] : llvm::enumerate(f.getElements()))
          emit({Opcode::Copy, uint8_t(w), 0, int32_t(base + l), reg(e)});
        return success();
      })
      .Case<vector::BroadcastOp>([&](vector::BroadcastOp b) -> LogicalResult {
        if (isa<VectorType>(b.getSource().getType()))
          return b.emitError("fbl-cachesim: kernel @")
                 << dispatch.getKernel()
                 << ": cannot interpret a vector-to-vector 'vector.broadcast'";
        int32_t base = reg(b);
        unsigned w = widthOf(b.getType().getElementType());
        for (int64_t l = 0; l < b.getType().getNumElements(); ++l)
          emit({Opcode::Copy, uint8_t(w), 0, int32_t(base + l),
                reg(b.getSource())});
        return success();
      })
      .Case<vector::ExtractOp>([&](vector::ExtractOp e) -> LogicalResult {
        SmallVector<OpFoldResult> pos = e.getMixedPosition();
        auto vec = cast<VectorType>(e.getSource().getType());
        if (pos.size() != 1)
          return e.emitError("fbl-cachesim: kernel @")
                 << dispatch.getKernel()
                 << ": cannot interpret a multi-dimensional 'vector.extract'";
        unsigned w = widthOf(vec.getElementType());
        if (auto v = dyn_cast<Value>(pos[0])) {
          cs::Instruction in{Opcode::CopyLane, uint8_t(w),         0,
                             reg(e),           reg(e.getSource()), reg(v)};
          in.imm = vec.getNumElements();
          emit(in);
          return success();
        }
        int64_t lane = cast<IntegerAttr>(cast<Attribute>(pos[0])).getInt();
        if (lane < 0 || lane >= vec.getNumElements())
          return e.emitError("fbl-cachesim: kernel @")
                 << dispatch.getKernel() << ": lane " << lane
                 << " out of range";
        emit({Opcode::Copy, uint8_t(w), 0, reg(e),
              int32_t(reg(e.getSource()) + lane)});
        return success();
      })
      .Case<memref::LoadOp>([&](memref::LoadOp l) {
        return emitLocalAccess(l, l.getMemRef(), l.getIndices());
      })
      .Case<memref::StoreOp>([&](memref::StoreOp s) {
        return emitLocalAccess(s, s.getMemRef(), s.getIndices());
      })
      .Case<BarrierOp>([&](BarrierOp) {
        emit({Opcode::Barrier});
        return success();
      })
      .Case<LoadTexelOp>([&](LoadTexelOp l) {
        return texel(Opcode::LoadTexel, l.getImage(), l.getLayer(), l.getY(),
                     l.getX(), l.getClampToEdge());
      })
      .Case<StoreTexelOp>([&](StoreTexelOp s) {
        return texel(Opcode::StoreTexel, s.getImage(), s.getLayer(), s.getY(),
                     s.getX());
      })
      .Case<LoadElementOp>([&](LoadElementOp l) {
        bool value = neededData.contains(l);
        emit({Opcode::LoadElement, uint8_t(widthOf(l.getType())),
              uint16_t(operandIndex(l.getBuffer())), value ? reg(l) : -1,
              reg(l.getOffset())});
        return success();
      })
      .Case<StoreElementOp>([&](StoreElementOp s) {
        emit({Opcode::StoreElement, 64, uint16_t(operandIndex(s.getBuffer())),
              -1, reg(s.getOffset())});
        return success();
      })
      .Case<scf::IfOp>([&](scf::IfOp i) -> LogicalResult {
        size_t toElse =
            emit({Opcode::JumpIfZero, 64, 0, -1, reg(i.getCondition())});
        auto branch = [&](Region &region) -> LogicalResult {
          if (region.empty())
            return success();
          if (failed(emitBlock(region.front())))
            return failure();
          origin = i;
          auto yield = cast<scf::YieldOp>(region.front().getTerminator());
          for (auto [r, v] : llvm::zip(i.getResults(), yield.getOperands()))
            if (needed.contains(r))
              copyLanes(r, v);
          return success();
        };
        if (failed(branch(i.getThenRegion())))
          return failure();
        size_t toEnd = emit({Opcode::Jump});
        program.code[toElse].imm = int64_t(program.code.size());
        if (failed(branch(i.getElseRegion())))
          return failure();
        program.code[toEnd].imm = int64_t(program.code.size());
        return success();
      })
      .Case<scf::ForOp>([&](scf::ForOp f) -> LogicalResult {
        Value iv = f.getInductionVar();
        unsigned w = widthOf(iv.getType());
        emit({Opcode::Copy, uint8_t(w), 0, reg(iv), reg(f.getLowerBound())});
        for (auto [arg, init] :
             llvm::zip(f.getRegionIterArgs(), f.getInitArgs()))
          if (needed.contains(arg))
            copyLanes(arg, init);
        cs::Instruction test{Opcode::JumpIfNotLess,
                             uint8_t(w),
                             uint16_t(f.getUnsignedCmp() ? 1 : 0),
                             -1,
                             reg(iv),
                             reg(f.getUpperBound())};
        size_t head = emit(test);
        if (failed(emitBlock(*f.getBody())))
          return failure();
        origin = f;
        // Yielded values may read iteration arguments: copy through
        // temporaries.
        auto yield = cast<scf::YieldOp>(f.getBody()->getTerminator());
        SmallVector<std::pair<Value, int32_t>> temps;
        for (auto [arg, v] :
             llvm::zip(f.getRegionIterArgs(), yield.getOperands())) {
          if (!needed.contains(arg))
            continue;
          int64_t lanes = 1;
          if (auto vec = dyn_cast<VectorType>(arg.getType()))
            lanes = vec.getNumElements();
          int32_t t = fresh(lanes);
          for (int64_t l = 0; l < lanes; ++l)
            emit({Opcode::Copy, 64, 0, int32_t(t + l), int32_t(reg(v) + l)});
          temps.push_back({arg, t});
        }
        for (auto [arg, t] : temps) {
          int64_t lanes = 1;
          if (auto vec = dyn_cast<VectorType>(arg.getType()))
            lanes = vec.getNumElements();
          for (int64_t l = 0; l < lanes; ++l)
            emit({Opcode::Copy, 64, 0, int32_t(reg(arg) + l), int32_t(t + l)});
        }
        emit({Opcode::Add, uint8_t(w), 0, reg(iv), reg(iv), reg(f.getStep())});
        cs::Instruction back{Opcode::Jump};
        back.imm = int64_t(head);
        emit(back);
        program.code[head].imm = int64_t(program.code.size());
        // After the loop, its results are the last iteration arguments.
        for (auto [r, arg] : llvm::zip(f.getResults(), f.getRegionIterArgs()))
          if (needed.contains(r))
            registers[r] = reg(arg);
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitError("fbl-cachesim: kernel @")
               << dispatch.getKernel() << ": cannot interpret '"
               << other->getName() << "'";
      });
}

FailureOr<cs::Program> KernelCompiler::compile() {
  program.kernel = dispatch.getKernel().str();
  for (unsigned d = 0; d < 3; ++d) {
    program.grid[d] = dispatch.getGrid()[d];
    program.workgroup[d] = dispatch.getWorkgroup()[d];
  }
  if (failed(checkOps()) || failed(findNeeded()) ||
      failed(describeOperands()) ||
      failed(emitBlock(dispatch.getBody().front())))
    return failure();
  origin = nullptr;
  emit({Opcode::Return});
  return std::move(program);
}

FailureOr<cs::Program> mlir::fbl::compileKernel(DispatchOp dispatch) {
  return KernelCompiler(dispatch).compile();
}
