//===- KernelPrinter.cpp - fbl kernels as OpenCL C ------------------------===//
//
// An emitter object walks each fbl.dispatch body and prints one statement
// per op (TypeSwitch dispatch, scoped value names), modelled on upstream's
// C++ emitter. Structured control flow becomes C loops and branches whose
// results are variables declared before them.
//
//===----------------------------------------------------------------------===//

#include "fbl/Dialect/FBL/IR/FBLOps.h"
#include "fbl/Target/OpenCL/OpenCLEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::fbl;
namespace fl = ::fbl::layout;

namespace {

bool isArrayImage(Type type) {
  auto enc = getLayoutEncoding(type);
  return enc && enc.getStorageKind(cast<RankedTensorType>(type).getRank()) ==
                    fl::StorageKind::Image2DArray;
}

class KernelEmitter {
public:
  explicit KernelEmitter(llvm::raw_ostream &os) : os(os) {}

  /// Prints `dispatch`'s kernel as the function `function`.
  /// Prints `body`, the dispatch's body or one of its variants, as the
  /// function `function`.
  LogicalResult emitKernel(DispatchOp dispatch, Region &body,
                           StringRef function);

private:
  LogicalResult emitOp(Operation &op);
  LogicalResult emitBlock(Block &block);
  LogicalResult emitConstantTables(Region &body, StringRef function);
  FailureOr<std::string> typeName(Type type);
  std::string name(Value v);
  std::string fresh(Value v);
  LogicalResult declare(Value v, StringRef expr);

  llvm::raw_ostream &os;
  llvm::DenseMap<Value, std::string> names;
  unsigned next = 0;
  unsigned indent = 1;
};

std::string KernelEmitter::name(Value v) {
  auto it = names.find(v);
  return it == names.end() ? "<unnamed>" : it->second;
}

std::string KernelEmitter::fresh(Value v) {
  std::string n = "v" + std::to_string(next++);
  names[v] = n;
  return n;
}

FailureOr<std::string> KernelEmitter::typeName(Type type) {
  if (type.isF32())
    return std::string("float");
  if (type.isF16())
    return std::string("half");
  if (type.isIndex() || type.isInteger(32))
    return std::string("int");
  if (type.isInteger(64))
    return std::string("long");
  if (type.isInteger(1))
    return std::string("bool");
  if (auto v = dyn_cast<VectorType>(type);
      v && v.getShape() == ArrayRef<int64_t>{4} && v.getElementType().isF32())
    return std::string("float4");
  return failure();
}

LogicalResult KernelEmitter::declare(Value v, StringRef expr) {
  FailureOr<std::string> t = typeName(v.getType());
  if (failed(t))
    return emitError(v.getLoc(), "fbl-to-opencl: no OpenCL type for ")
           << v.getType();
  os.indent(indent * 2) << *t << " " << fresh(v) << " = " << expr << ";\n";
  return success();
}

static std::string floatLiteral(APFloat value) {
  if (value.isInfinity())
    return value.isNegative() ? "(-INFINITY)" : "INFINITY";
  if (value.isNaN())
    return "NAN";
  bool lost;
  value.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
  std::string s = llvm::formatv("{0:e9}", value.convertToFloat()).str();
  return "(" + s + "f)";
}

/// A float4 texel of OpenCL C from its four channels, each written by
/// `print`.
template <typename Channels, typename Print>
static std::string texelLiteral(Channels &&channels, Print &&print) {
  std::string args;
  llvm::raw_string_ostream a(args);
  llvm::interleaveComma(channels, a, [&](const auto &x) { a << print(x); });
  return "((float4)(" + args + "))";
}

/// An integer literal of OpenCL C (int or long) for `value`.
static std::string integerLiteral(const APInt &value) {
  // -2^63 has no literal: its magnitude overflows long.
  if (value.getBitWidth() == 64 && value.isMinSignedValue())
    return "(-9223372036854775807L - 1)";
  return std::to_string(value.getSExtValue()) +
         (value.getBitWidth() == 64 ? "L" : "");
}

static StringRef cmpfOp(arith::CmpFPredicate p) {
  using P = arith::CmpFPredicate;
  switch (p) {
  case P::OEQ:
  case P::UEQ:
    return "==";
  case P::ONE:
  case P::UNE:
    return "!=";
  case P::OLT:
  case P::ULT:
    return "<";
  case P::OLE:
  case P::ULE:
    return "<=";
  case P::OGT:
  case P::UGT:
    return ">";
  case P::OGE:
  case P::UGE:
    return ">=";
  default:
    return "";
  }
}

static StringRef cmpiOp(arith::CmpIPredicate p, bool &isUnsigned) {
  using P = arith::CmpIPredicate;
  isUnsigned = p == P::ult || p == P::ule || p == P::ugt || p == P::uge;
  switch (p) {
  case P::eq:
    return "==";
  case P::ne:
    return "!=";
  case P::slt:
  case P::ult:
    return "<";
  case P::sle:
  case P::ule:
    return "<=";
  case P::sgt:
  case P::ugt:
    return ">";
  case P::sge:
  case P::uge:
    return ">=";
  }
  return "";
}

LogicalResult KernelEmitter::emitBlock(Block &block) {
  for (Operation &op : block.without_terminator())
    if (failed(emitOp(op)))
      return failure();
  return success();
}

LogicalResult KernelEmitter::emitOp(Operation &op) {
  auto bin = [&](StringRef sym) {
    return declare(op.getResult(0), "(" + name(op.getOperand(0)) + " " +
                                        sym.str() + " " +
                                        name(op.getOperand(1)) + ")");
  };
  auto call = [&](StringRef fn) {
    std::string args;
    llvm::raw_string_ostream a(args);
    llvm::interleaveComma(op.getOperands(), a, [&](Value v) { a << name(v); });
    return declare(op.getResult(0), (fn + "(" + args + ")").str());
  };
  auto castTo = [&](Type to) -> LogicalResult {
    FailureOr<std::string> t = typeName(to);
    if (failed(t))
      return op.emitError("fbl-to-opencl: no OpenCL type for ") << to;
    return declare(op.getResult(0),
                   "((" + *t + ")" + name(op.getOperand(0)) + ")");
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case<arith::ConstantOp>([&](arith::ConstantOp c) -> LogicalResult {
        // A constant tensor is a __constant array, declared before the
        // kernel (emitConstantTables).
        if (isa<RankedTensorType>(c.getType()) && names.count(c))
          return success();
        if (auto f = dyn_cast<FloatAttr>(c.getValue()))
          return declare(c, floatLiteral(f.getValue()));
        if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
          return declare(c, c.getType().isInteger(1)
                                ? (i.getInt() ? "true" : "false")
                                : std::to_string(i.getInt()));
        // A texel of constants (folding leaves them, e.g. a zeroed texel);
        // declare refuses vectors that are not texels.
        if (auto texel = dyn_cast<DenseFPElementsAttr>(c.getValue());
            texel && isa<VectorType>(c.getType()))
          return declare(
              c, texelLiteral(texel.getValues<APFloat>(), floatLiteral));
        return c.emitError("fbl-to-opencl: unsupported constant");
      })
      .Case<tensor::ExtractOp>([&](tensor::ExtractOp e) -> LogicalResult {
        if (!names.count(e.getTensor()) || e.getIndices().size() != 1)
          return e.emitError("fbl-to-opencl: a kernel reads elements only "
                             "of a one-dimensional constant tensor");
        return declare(e, name(e.getTensor()) + "[" + name(e.getIndices()[0]) +
                              "]");
      })
      .Case<arith::AddFOp, arith::AddIOp>([&](auto) { return bin("+"); })
      .Case<arith::SubFOp, arith::SubIOp>([&](auto) { return bin("-"); })
      .Case<arith::MulFOp, arith::MulIOp>([&](auto) { return bin("*"); })
      .Case<arith::DivFOp, arith::DivSIOp>([&](auto) { return bin("/"); })
      .Case<arith::RemSIOp>([&](auto) { return bin("%"); })
      .Case<arith::DivUIOp>([&](auto) {
        return declare(op.getResult(0),
                       "(int)((uint)" + name(op.getOperand(0)) + " / (uint)" +
                           name(op.getOperand(1)) + ")");
      })
      .Case<arith::RemUIOp>([&](auto) {
        return declare(op.getResult(0),
                       "(int)((uint)" + name(op.getOperand(0)) + " % (uint)" +
                           name(op.getOperand(1)) + ")");
      })
      .Case<arith::AndIOp>([&](auto) { return bin("&"); })
      .Case<arith::OrIOp>([&](auto) { return bin("|"); })
      .Case<arith::XOrIOp>([&](auto) { return bin("^"); })
      .Case<arith::RemFOp>([&](auto) { return call("fmod"); })
      .Case<arith::NegFOp>([&](auto) {
        return declare(op.getResult(0), "(-" + name(op.getOperand(0)) + ")");
      })
      .Case<arith::MaximumFOp, arith::MaxNumFOp>(
          [&](auto) { return call("fmax"); })
      .Case<arith::MinimumFOp, arith::MinNumFOp>(
          [&](auto) { return call("fmin"); })
      .Case<arith::CmpFOp>([&](arith::CmpFOp c) -> LogicalResult {
        StringRef sym = cmpfOp(c.getPredicate());
        if (sym.empty())
          return c.emitError("fbl-to-opencl: unsupported cmpf predicate");
        return bin(sym);
      })
      .Case<arith::CmpIOp>([&](arith::CmpIOp c) {
        bool u;
        StringRef sym = cmpiOp(c.getPredicate(), u);
        std::string l = name(c.getLhs()), r = name(c.getRhs());
        if (u) {
          l = "(uint)" + l;
          r = "(uint)" + r;
        }
        return declare(c, "(" + l + " " + sym.str() + " " + r + ")");
      })
      .Case<arith::SelectOp>([&](arith::SelectOp s) {
        return declare(s, "(" + name(s.getCondition()) + " ? " +
                              name(s.getTrueValue()) + " : " +
                              name(s.getFalseValue()) + ")");
      })
      .Case<arith::ExtFOp, arith::TruncFOp, arith::IndexCastOp, arith::SIToFPOp,
            arith::UIToFPOp, arith::FPToSIOp, arith::FPToUIOp, arith::ExtSIOp,
            arith::TruncIOp>(
          [&](auto) { return castTo(op.getResult(0).getType()); })
      .Case<math::ExpOp>([&](auto) { return call("exp"); })
      .Case<math::Exp2Op>([&](auto) { return call("exp2"); })
      .Case<math::ExpM1Op>([&](auto) { return call("expm1"); })
      .Case<math::LogOp>([&](auto) { return call("log"); })
      .Case<math::Log2Op>([&](auto) { return call("log2"); })
      .Case<math::Log10Op>([&](auto) { return call("log10"); })
      .Case<math::Log1pOp>([&](auto) { return call("log1p"); })
      .Case<math::TanhOp>([&](auto) { return call("tanh"); })
      .Case<math::SqrtOp>([&](auto) { return call("sqrt"); })
      .Case<math::RsqrtOp>([&](auto) { return call("rsqrt"); })
      .Case<math::PowFOp>([&](auto) { return call("pow"); })
      .Case<math::ErfOp>([&](auto) { return call("erf"); })
      .Case<math::AbsFOp>([&](auto) { return call("fabs"); })
      .Case<math::SinOp>([&](auto) { return call("sin"); })
      .Case<math::CosOp>([&](auto) { return call("cos"); })
      .Case<math::FmaOp>([&](auto) { return call("fma"); })
      .Case<math::FloorOp>([&](auto) { return call("floor"); })
      .Case<math::CeilOp>([&](auto) { return call("ceil"); })
      .Case<vector::FromElementsOp>([&](vector::FromElementsOp f) {
        return declare(
            f, texelLiteral(f.getElements(), [&](Value v) { return name(v); }));
      })
      .Case<vector::ExtractOp>([&](vector::ExtractOp e) -> LogicalResult {
        SmallVector<OpFoldResult> pos = e.getMixedPosition();
        if (pos.size() != 1)
          return e.emitError("fbl-to-opencl: unsupported vector.extract");
        std::string idx;
        if (auto v = dyn_cast<Value>(pos[0]))
          idx = name(v);
        else
          idx = std::to_string(
              cast<IntegerAttr>(cast<Attribute>(pos[0])).getInt());
        return declare(e,
                       "fbl_channel(" + name(e.getSource()) + ", " + idx + ")");
      })
      .Case<WorkItemIdOp>([&](WorkItemIdOp w) {
        return declare(w, "(int)get_global_id(" + std::to_string(w.getDim()) +
                              ")");
      })
      .Case<LocalIdOp>([&](LocalIdOp w) {
        return declare(w,
                       "(int)get_local_id(" + std::to_string(w.getDim()) + ")");
      })
      .Case<GroupIdOp>([&](GroupIdOp w) {
        return declare(w,
                       "(int)get_group_id(" + std::to_string(w.getDim()) + ")");
      })
      .Case<BarrierOp>([&](BarrierOp) {
        os.indent(indent * 2) << "barrier(CLK_LOCAL_MEM_FENCE);\n";
        return success();
      })
      .Case<memref::AllocaOp>([&](memref::AllocaOp a) -> LogicalResult {
        MemRefType type = a.getType();
        auto space = dyn_cast_or_null<IntegerAttr>(type.getMemorySpace());
        FailureOr<std::string> t = typeName(type.getElementType());
        if (!space || space.getInt() != 3 || !type.hasStaticShape() ||
            failed(t) || a->getParentOp() != a->getParentOfType<DispatchOp>())
          return a.emitError("fbl-to-opencl: only static local-memory "
                             "(memory space 3) arrays at the top of a kernel");
        std::string n = fresh(a);
        os.indent(indent * 2) << "__local " << *t << " " << n;
        for (int64_t d : type.getShape())
          os << "[" << d << "]";
        os << ";\n";
        return success();
      })
      .Case<memref::LoadOp>([&](memref::LoadOp l) {
        std::string e = name(l.getMemRef());
        for (Value i : l.getIndices())
          e += "[" + name(i) + "]";
        return declare(l, e);
      })
      .Case<memref::StoreOp>([&](memref::StoreOp st) {
        os.indent(indent * 2) << name(st.getMemRef());
        for (Value i : st.getIndices())
          os << "[" << name(i) << "]";
        os << " = " << name(st.getValueToStore()) << ";\n";
        return success();
      })
      .Case<LoadTexelOp>([&](LoadTexelOp l) {
        std::string coord =
            isArrayImage(l.getImage().getType())
                ? "(int4)(" + name(l.getX()) + ", " + name(l.getY()) + ", " +
                      name(l.getLayer()) + ", 0)"
                : "(int2)(" + name(l.getX()) + ", " + name(l.getY()) + ")";
        return declare(l, "read_imagef(" + name(l.getImage()) +
                              (l.getClampToEdge() ? ", fbl_edge_sampler, "
                                                  : ", fbl_sampler, ") +
                              coord + ")");
      })
      .Case<StoreTexelOp>([&](StoreTexelOp s) {
        std::string coord =
            isArrayImage(s.getImage().getType())
                ? "(int4)(" + name(s.getX()) + ", " + name(s.getY()) + ", " +
                      name(s.getLayer()) + ", 0)"
                : "(int2)(" + name(s.getX()) + ", " + name(s.getY()) + ")";
        os.indent(indent * 2) << "write_imagef(" << name(s.getImage()) << ", "
                              << coord << ", " << name(s.getTexel()) << ");\n";
        return success();
      })
      .Case<LoadElementOp>([&](LoadElementOp l) {
        return declare(l,
                       name(l.getBuffer()) + "[" + name(l.getOffset()) + "]");
      })
      .Case<StoreElementOp>([&](StoreElementOp s) {
        os.indent(indent * 2)
            << name(s.getBuffer()) << "[" << name(s.getOffset())
            << "] = " << name(s.getValue()) << ";\n";
        return success();
      })
      .Case<scf::IfOp>([&](scf::IfOp i) -> LogicalResult {
        for (Value r : i.getResults()) {
          FailureOr<std::string> t = typeName(r.getType());
          if (failed(t))
            return i.emitError("fbl-to-opencl: no OpenCL type for ")
                   << r.getType();
          os.indent(indent * 2) << *t << " " << fresh(r) << ";\n";
        }
        os.indent(indent * 2) << "if (" << name(i.getCondition()) << ") {\n";
        auto branch = [&](Region &region) -> LogicalResult {
          ++indent;
          if (failed(emitBlock(region.front())))
            return failure();
          auto yield = cast<scf::YieldOp>(region.front().getTerminator());
          for (auto [r, v] : llvm::zip(i.getResults(), yield.getOperands()))
            os.indent(indent * 2) << name(r) << " = " << name(v) << ";\n";
          --indent;
          return success();
        };
        if (failed(branch(i.getThenRegion())))
          return failure();
        if (!i.getElseRegion().empty()) {
          os.indent(indent * 2) << "} else {\n";
          if (failed(branch(i.getElseRegion())))
            return failure();
        }
        os.indent(indent * 2) << "}\n";
        return success();
      })
      .Case<scf::ForOp>([&](scf::ForOp f) -> LogicalResult {
        for (auto [r, init, arg] : llvm::zip(f.getResults(), f.getInitArgs(),
                                             f.getRegionIterArgs())) {
          FailureOr<std::string> t = typeName(r.getType());
          if (failed(t))
            return f.emitError("fbl-to-opencl: no OpenCL type for ")
                   << r.getType();
          std::string n = fresh(r);
          names[arg] = n;
          os.indent(indent * 2)
              << *t << " " << n << " = " << name(init) << ";\n";
        }
        std::string iv = fresh(f.getInductionVar());
        os.indent(indent * 2)
            << "for (int " << iv << " = " << name(f.getLowerBound()) << "; "
            << iv << " < " << name(f.getUpperBound()) << "; " << iv
            << " += " << name(f.getStep()) << ") {\n";
        ++indent;
        if (failed(emitBlock(*f.getBody())))
          return failure();
        auto yield = cast<scf::YieldOp>(f.getBody()->getTerminator());
        // Yielded values may read iteration arguments: copy through
        // temporaries.
        SmallVector<std::string> temps;
        for (Value v : yield.getOperands()) {
          std::string t = "y" + std::to_string(next++);
          os.indent(indent * 2) << *typeName(v.getType()) << " " << t << " = "
                                << name(v) << ";\n";
          temps.push_back(t);
        }
        for (auto [r, t] : llvm::zip(f.getResults(), temps))
          os.indent(indent * 2) << name(r) << " = " << t << ";\n";
        --indent;
        os.indent(indent * 2) << "}\n";
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitError("fbl-to-opencl: cannot print '")
               << other->getName() << "' in a kernel";
      });
}

LogicalResult KernelEmitter::emitConstantTables(Region &body,
                                                StringRef function) {
  unsigned count = 0;
  WalkResult walk = body.walk([&](arith::ConstantOp c) -> WalkResult {
    auto type = dyn_cast<RankedTensorType>(c.getType());
    if (!type)
      return WalkResult::advance();
    auto data = dyn_cast<DenseElementsAttr>(c.getValue());
    FailureOr<std::string> t = typeName(type.getElementType());
    if (!data || type.getRank() != 1 || failed(t)) {
      c.emitError("fbl-to-opencl: a kernel's constant tensor must be "
                  "one-dimensional f32, i32 or i64 data");
      return WalkResult::interrupt();
    }
    std::string n = llvm::formatv("{0}_c{1}", function, count++).str();
    names[c] = n;
    os << "__constant " << *t << " " << n << "[" << type.getNumElements()
       << "] = {";
    int64_t i = 0;
    auto item = [&](const std::string &literal) {
      os << (i % 8 ? " " : "\n    ") << literal
         << (i + 1 < type.getNumElements() ? "," : "");
      ++i;
    };
    if (isa<FloatType>(type.getElementType()))
      for (APFloat v : data.getValues<APFloat>())
        item(floatLiteral(v));
    else
      for (APInt v : data.getValues<APInt>())
        item(integerLiteral(v));
    os << "};\n\n";
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult KernelEmitter::emitKernel(DispatchOp dispatch, Region &region,
                                        StringRef function) {
  names.clear();
  next = 0;
  indent = 1;
  if (failed(emitConstantTables(region, function)))
    return failure();
  Block &body = region.front();
  unsigned numIns = dispatch.getIns().size();
  os << "__kernel void " << function << "(";
  for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
    bool out = i >= numIns;
    std::string n = (out ? "o" : "a") + std::to_string(out ? i - numIns : i);
    names[arg] = n;
    auto type = cast<RankedTensorType>(arg.getType());
    if (i)
      os << ", ";
    if (DispatchOp::isBufferArgument(type)) {
      FailureOr<std::string> t = typeName(type.getElementType());
      if (failed(t))
        return dispatch.emitError("fbl-to-opencl: no OpenCL type for ")
               << type.getElementType();
      os << "__global " << (out ? "" : "const ") << *t << " *restrict " << n;
    } else {
      os << (out ? "__write_only " : "__read_only ")
         << (isArrayImage(type) ? "image2d_array_t " : "image2d_t ") << n;
    }
  }
  os << ") {\n";
  if (failed(emitBlock(body)))
    return failure();
  os << "}\n\n";
  return success();
}

} // namespace

FailureOr<KernelFunctions>
mlir::fbl::collectKernelFunctions(func::FuncOp func) {
  // Each kernel is printed under one placeholder name, so equal text (of
  // the body and every variant) is the same code; a new one is printed again
  // under its own name, its variants as NAME_v1, NAME_v2, ...
  static constexpr llvm::StringLiteral placeholder = "fbl_kernel";
  KernelFunctions out;
  llvm::StringMap<std::pair<std::string, std::vector<std::string>>> byText;
  // Variants are named apart from every kernel (IR from elsewhere may name
  // a kernel NAME_v1).
  llvm::StringSet<> taken;
  for (DispatchOp dispatch : func.getOps<DispatchOp>())
    taken.insert(dispatch.getKernel());
  // A kernel past the target's argument limits may still build, and fault
  // the device when it runs.
  TargetAttr target = TargetAttr::lookup(func);
  ::fbl::target::KernelArgumentLimits limits =
      TargetAttr::lookupKernelArguments(func);
  for (DispatchOp dispatch : func.getOps<DispatchOp>()) {
    if (std::string over = ::fbl::target::exceededArguments(
            dispatch.getKernelArguments(), limits);
        !over.empty())
      return dispatch.emitError("fbl-to-opencl: kernel ")
             << dispatch.getKernel() << " takes " << over << " on target '"
             << (target ? target.getName() : StringRef("OpenCL 1.2")) << "'";
    std::string text;
    llvm::raw_string_ostream os(text);
    KernelEmitter emitter(os);
    for (Region &region : dispatch->getRegions())
      if (failed(emitter.emitKernel(dispatch, region, placeholder)))
        return failure();
    auto [it, inserted] = byText.try_emplace(text);
    auto &[function, variants] = it->second;
    if (inserted) {
      function = dispatch.getKernel().str();
      for (auto [i, region] : llvm::enumerate(dispatch->getRegions())) {
        std::string name = function;
        if (i) {
          name += "_v" + std::to_string(i);
          while (!taken.insert(name).second)
            name += "_";
        }
        std::string named;
        llvm::raw_string_ostream namedOs(named);
        (void)KernelEmitter(namedOs).emitKernel(dispatch, region, name);
        out.functions.emplace_back(name, std::move(named));
        if (i)
          variants.push_back(name);
      }
    }
    out.functionOf[dispatch] = function;
    if (!variants.empty())
      out.variantsOf[dispatch] = variants;
  }
  return out;
}

void mlir::fbl::emitOpenCLKernels(func::FuncOp func,
                                  const KernelFunctions &kernels,
                                  llvm::raw_ostream &os) {
  os << "// Generated by fbl-translate --fbl-to-opencl from @"
     << func.getSymName() << ". OpenCL C 1.2.\n\n";
  os << "__constant sampler_t fbl_sampler = CLK_NORMALIZED_COORDS_FALSE |\n"
        "    CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;\n\n";
  // Only where some read may lie past an image's edge: the other kernels'
  // source stays as it was.
  bool pastEdges = func.walk([](LoadTexelOp l) {
                         return l.getClampToEdge() ? WalkResult::interrupt()
                                                   : WalkResult::advance();
                       })
                       .wasInterrupted();
  if (pastEdges)
    os << "__constant sampler_t fbl_edge_sampler = "
          "CLK_NORMALIZED_COORDS_FALSE |\n"
          "    CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;\n\n";
  os << "static inline float fbl_channel(float4 t, int c) {\n"
        "  return c == 0 ? t.x : c == 1 ? t.y : c == 2 ? t.z : t.w;\n"
        "}\n\n";
  // libfbl_runtime cuts kernels.cl between these functions to build it as
  // several programs (splitKernelSource): after the preamble, each function
  // starts at the top level with its constant tables or its `__kernel` line.
  for (const auto &[name, text] : kernels.functions)
    os << text;
}

LogicalResult mlir::fbl::emitOpenCLKernels(func::FuncOp func,
                                           llvm::raw_ostream &os) {
  FailureOr<KernelFunctions> kernels = collectKernelFunctions(func);
  if (failed(kernels))
    return failure();
  emitOpenCLKernels(func, *kernels, os);
  return success();
}
