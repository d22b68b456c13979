//===- OpenCLEmitter.cpp - fbl kernels as an OpenCL bundle ----------------===//
//
// An emitter object walks each fbl.dispatch body and prints one statement
// per op (TypeSwitch dispatch, scoped value names), modelled on upstream's
// C++ emitter. Structured control flow becomes C loops and branches whose
// results are variables declared before them. Memory objects are assigned
// once per function argument and per kernel output; views and kernel
// results name the memory they address.
//
//===----------------------------------------------------------------------===//

#include "fbl/Target/OpenCL/OpenCLEmitter.h"
#include "fbl/Dialect/FBL/IR/FBLOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/ScopedHashTable.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::fbl;
namespace fl = ::fbl::layout;

FailureOr<func::FuncOp> mlir::fbl::findBundleEntry(ModuleOp module,
                                                   StringRef entry) {
  SmallVector<func::FuncOp> withKernels;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.getOps<DispatchOp>().empty())
      withKernels.push_back(func);
  if (!entry.empty()) {
    auto func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func)
      return module.emitError("fbl-to-opencl: no function @") << entry;
    return func;
  }
  for (StringRef suffix : {"_step", "_grad"})
    for (func::FuncOp f : withKernels)
      if (f.getSymName().ends_with(suffix))
        return f;
  if (withKernels.size() == 1)
    return withKernels.front();
  return module.emitError(
      "fbl-to-opencl: no function with fbl.dispatch kernels to emit; run "
      "fbl-opt --fbl-training-pipeline (or pick one with --fbl-entry)");
}

//===----------------------------------------------------------------------===//
// Kernel source
//===----------------------------------------------------------------------===//

namespace {

bool isArrayImage(Type type) {
  auto enc = getLayoutEncoding(type);
  return enc && enc.getStorageKind(cast<RankedTensorType>(type).getRank()) ==
                    fl::StorageKind::Image2DArray;
}

bool isBuffer(Type type) {
  return isa<BufferLayoutAttr>(cast<RankedTensorType>(type).getEncoding());
}

class KernelEmitter {
public:
  explicit KernelEmitter(llvm::raw_ostream &os) : os(os) {}

  LogicalResult emitKernel(DispatchOp dispatch);

private:
  LogicalResult emitOp(Operation &op);
  LogicalResult emitBlock(Block &block);
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
        if (auto f = dyn_cast<FloatAttr>(c.getValue()))
          return declare(c, floatLiteral(f.getValue()));
        if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
          return declare(c, c.getType().isInteger(1)
                                ? (i.getInt() ? "true" : "false")
                                : std::to_string(i.getInt()));
        return c.emitError("fbl-to-opencl: unsupported constant");
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
        std::string args;
        llvm::raw_string_ostream a(args);
        llvm::interleaveComma(f.getElements(), a,
                              [&](Value v) { a << name(v); });
        return declare(f, "((float4)(" + args + "))");
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
                              ", fbl_sampler, " + coord + ")");
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

LogicalResult KernelEmitter::emitKernel(DispatchOp dispatch) {
  names.clear();
  next = 0;
  indent = 1;
  Block &body = dispatch.getBody().front();
  unsigned numIns = dispatch.getIns().size();
  os << "__kernel void " << dispatch.getKernel() << "(";
  for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
    bool out = i >= numIns;
    std::string n = (out ? "o" : "a") + std::to_string(out ? i - numIns : i);
    names[arg] = n;
    auto type = cast<RankedTensorType>(arg.getType());
    if (i)
      os << ", ";
    if (isBuffer(type)) {
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

LogicalResult mlir::fbl::emitOpenCLKernels(func::FuncOp func,
                                           llvm::raw_ostream &os) {
  os << "// Generated by fbl-translate --fbl-to-opencl from @"
     << func.getSymName() << ". OpenCL C 1.2.\n\n";
  os << "__constant sampler_t fbl_sampler = CLK_NORMALIZED_COORDS_FALSE |\n"
        "    CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;\n\n";
  os << "static inline float fbl_channel(float4 t, int c) {\n"
        "  return c == 0 ? t.x : c == 1 ? t.y : c == 2 ? t.z : t.w;\n"
        "}\n\n";
  KernelEmitter emitter(os);
  for (DispatchOp dispatch : func.getOps<DispatchOp>())
    if (failed(emitter.emitKernel(dispatch)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Manifest
//===----------------------------------------------------------------------===//

namespace {
/// Memory objects and tensor ids of a function.
struct BundlePlan {
  llvm::DenseMap<Value, int64_t> tensorId;
  llvm::DenseMap<Value, int64_t> memoryOf; ///< tensor value -> memory id
  SmallVector<Value> tensors;
  SmallVector<Value> memories; ///< the value that defines each memory
};

std::string dtypeName(Type t) {
  if (t.isF32())
    return "f32";
  if (t.isF16())
    return "f16";
  if (t.isInteger(64))
    return "i64";
  if (t.isInteger(32))
    return "i32";
  return "unknown";
}

void writeLayout(llvm::json::OStream &j, RankedTensorType type) {
  auto enc = getLayoutEncoding(type);
  fl::Layout l = enc.getLayout(type.getRank());
  std::string encoding;
  llvm::raw_string_ostream es(encoding);
  es << type.getEncoding();
  j.attributeObject("layout", [&] {
    j.attribute("encoding", encoding);
    j.attribute("kind", l.isBuffer() ? "buffer" : "image");
    j.attributeArray("tile", [&] {
      for (int64_t t : l.tile())
        j.value(t);
    });
    j.attribute("packed", static_cast<int64_t>(l.packedDim()));
    static const char *axes[] = {"x", "y", "layers"};
    for (unsigned a = 0; a < fl::kNumAxes; ++a)
      j.attributeArray(axes[a], [&] {
        for (fl::Factor f : l.axes()[a])
          j.array([&] {
            j.value(static_cast<int64_t>(f.dim));
            j.value(f.level == fl::Level::Element ? 1 : 0);
          });
      });
  });
}
} // namespace

LogicalResult mlir::fbl::emitManifest(func::FuncOp func,
                                      llvm::raw_ostream &os) {
  BundlePlan plan;
  Block &block = func.getBody().front();
  auto addTensor = [&](Value v, int64_t memory) {
    plan.tensorId[v] = plan.tensors.size();
    plan.tensors.push_back(v);
    plan.memoryOf[v] = memory;
  };
  auto newMemory = [&](Value v) {
    plan.memories.push_back(v);
    return static_cast<int64_t>(plan.memories.size() - 1);
  };
  for (BlockArgument arg : block.getArguments()) {
    if (!getLayoutEncoding(arg.getType()))
      return func.emitError("fbl-to-opencl: argument #")
             << arg.getArgNumber() << " has no layout; compile with "
             << "fbl-training-pipeline first";
    addTensor(arg, newMemory(arg));
  }
  // Kernel outputs fbl-plan-memory put in one slot share a memory object.
  llvm::DenseMap<int64_t, int64_t> slotMemory;
  for (Operation &op : block) {
    if (auto d = dyn_cast<DispatchOp>(op)) {
      for (auto [r, out] : llvm::zip(d.getResults(), d.getOuts())) {
        auto slot = out.getDefiningOp()
                        ? out.getDefiningOp()->getAttrOfType<IntegerAttr>(
                              FBLDialect::getSlotAttrName())
                        : IntegerAttr();
        if (!slot) {
          addTensor(r, newMemory(out));
          continue;
        }
        auto it = slotMemory.find(slot.getInt());
        if (it == slotMemory.end())
          it = slotMemory.insert({slot.getInt(), newMemory(out)}).first;
        addTensor(r, it->second);
      }
    } else if (isa<TransposeViewOp, ReshapeViewOp>(op)) {
      Value src = op.getOperand(0);
      if (!plan.memoryOf.count(src))
        return op.emitError("fbl-to-opencl: view of a value without memory");
      addTensor(op.getResult(0), plan.memoryOf.lookup(src));
    } else if (isa<tensor::EmptyOp, func::ReturnOp>(op)) {
      continue;
    } else {
      return op.emitError("fbl-to-opencl: '")
             << op.getName()
             << "' is left outside kernels; run fbl-lower-to-kernels";
    }
  }
  auto ret = cast<func::ReturnOp>(block.getTerminator());

  llvm::json::OStream j(os, 2);
  j.object([&] {
    j.attribute("format", "fbl-bundle");
    j.attribute("version", 1);
    j.attribute("entry", func.getSymName());
    if (auto target =
            func->getParentOfType<ModuleOp>()->getAttrOfType<TargetAttr>(
                FBLDialect::getTargetAttrName()))
      j.attribute("target", target.getName());
    j.attributeArray("memory", [&] {
      for (auto [id, v] : llvm::enumerate(plan.memories)) {
        auto type = cast<RankedTensorType>(v.getType());
        auto enc = getLayoutEncoding(type);
        fl::Extents e = enc.getExtents(type.getShape());
        fl::StorageKind kind = enc.getStorageKind(type.getRank());
        j.object([&] {
          j.attribute("id", static_cast<int64_t>(id));
          j.attribute("storage", kind == fl::StorageKind::Buffer ? "buffer"
                                 : kind == fl::StorageKind::Image2D
                                     ? "image2d"
                                     : "image2d_array");
          j.attribute("dtype", dtypeName(type.getElementType()));
          j.attribute("width", e.width);
          j.attribute("height", e.height);
          j.attribute("layers", e.layers);
          j.attribute("channels", static_cast<int64_t>(e.channels));
          unsigned bytes =
              std::max(1u, type.getElementType().getIntOrFloatBitWidth() / 8);
          j.attribute("bytes", e.elements() * bytes);
        });
      }
    });
    j.attributeArray("tensors", [&] {
      for (auto [id, v] : llvm::enumerate(plan.tensors)) {
        auto type = cast<RankedTensorType>(v.getType());
        j.object([&] {
          j.attribute("id", static_cast<int64_t>(id));
          j.attributeArray("shape", [&] {
            for (int64_t d : type.getShape())
              j.value(d);
          });
          j.attribute("dtype", dtypeName(type.getElementType()));
          j.attribute("memory", plan.memoryOf.lookup(v));
          writeLayout(j, type);
        });
      }
    });
    j.attributeArray("inputs", [&] {
      for (BlockArgument arg : block.getArguments())
        j.object([&] {
          j.attribute("arg", static_cast<int64_t>(arg.getArgNumber()));
          j.attribute("tensor", plan.tensorId.lookup(arg));
          j.attribute("param",
                      bool(func.getArgAttr(arg.getArgNumber(), "fbl.param")));
          if (func.getArgAttr(arg.getArgNumber(), "fbl.step_count"))
            j.attribute("step_count", true);
        });
    });
    auto updates = func->getAttrOfType<DenseI64ArrayAttr>("fbl.updates");
    j.attributeArray("outputs", [&] {
      for (auto [i, v] : llvm::enumerate(ret.getOperands()))
        j.object([&] {
          j.attribute("result", static_cast<int64_t>(i));
          j.attribute("tensor", plan.tensorId.lookup(v));
          if (updates && updates[i] >= 0)
            j.attribute("updates", updates[i]);
        });
    });
    j.attributeArray("kernels", [&] {
      for (DispatchOp d : func.getOps<DispatchOp>())
        j.object([&] {
          j.attribute("name", d.getKernel());
          j.attributeArray("args", [&] {
            for (Value v : d.getIns())
              j.object([&] {
                j.attribute("memory", plan.memoryOf.lookup(v));
                j.attribute("access", "read");
              });
            for (Value v : d.getResults())
              j.object([&] {
                j.attribute("memory", plan.memoryOf.lookup(v));
                j.attribute("access", "write");
              });
          });
          j.attributeArray("grid", [&] {
            for (int64_t g : d.getGrid())
              j.value(g);
          });
          j.attributeArray("workgroup", [&] {
            for (int64_t w : d.getWorkgroup())
              j.value(w);
          });
        });
    });
  });
  os << "\n";
  return success();
}

//===----------------------------------------------------------------------===//
// Bundles and translations
//===----------------------------------------------------------------------===//

/// Compiles `cl` to SPIR-V with clang's SPIR-V backend.
static LogicalResult compileToSpirv(ModuleOp module, StringRef cl,
                                    StringRef spv) {
  llvm::ErrorOr<std::string> clang =
      llvm::sys::findProgramByName("clang", {"/usr/lib/llvm-22/bin"});
  if (!clang)
    return module.emitError("fbl-to-spirv: clang (LLVM 22) not found");
  std::string err;
  StringRef args[] = {*clang,
                      "-cl-std=CL1.2",
                      "--target=spirv64v1.0",
                      "-Xclang",
                      "-finclude-default-header",
                      "-O2",
                      "-c",
                      cl,
                      "-o",
                      spv};
  int rc =
      llvm::sys::ExecuteAndWait(*clang, args, std::nullopt, {}, 0, 0, &err);
  if (rc != 0)
    return module.emitError("fbl-to-spirv: clang failed (")
           << rc << ") " << err;
  return success();
}

LogicalResult mlir::fbl::writeBundle(ModuleOp module, StringRef dir,
                                     StringRef entry, bool spirv) {
  FailureOr<func::FuncOp> func = findBundleEntry(module, entry);
  if (failed(func))
    return failure();
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return module.emitError("cannot create ") << dir << ": " << ec.message();
  auto write = [&](StringRef file,
                   function_ref<LogicalResult(llvm::raw_ostream &)> fn)
      -> LogicalResult {
    SmallString<256> path(dir);
    llvm::sys::path::append(path, file);
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return module.emitError("cannot write ") << path << ": " << ec.message();
    return fn(os);
  };
  if (failed(write("kernels.cl",
                   [&](llvm::raw_ostream &os) {
                     return emitOpenCLKernels(*func, os);
                   })) ||
      failed(write("manifest.json", [&](llvm::raw_ostream &os) {
        return emitManifest(*func, os);
      })))
    return failure();
  if (spirv) {
    SmallString<256> cl(dir), spv(dir);
    llvm::sys::path::append(cl, "kernels.cl");
    llvm::sys::path::append(spv, "kernels.spv");
    return compileToSpirv(module, cl, spv);
  }
  return success();
}

void mlir::fbl::registerToOpenCLTranslation() {
  auto registerDialects = [](DialectRegistry &registry) {
    registerAllDialects(registry);
    registry.insert<FBLDialect>();
  };
  TranslateFromMLIRRegistration opencl(
      "fbl-to-opencl",
      "print the OpenCL C kernels of a compiled training step (with -o DIR: "
      "write the bundle: kernels.cl, manifest.json)",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        FailureOr<func::FuncOp> func = findBundleEntry(module, "");
        if (failed(func))
          return failure();
        return emitOpenCLKernels(*func, os);
      },
      registerDialects);
  TranslateFromMLIRRegistration spirv(
      "fbl-to-spirv",
      "with -o DIR: write the bundle with its kernels also compiled to "
      "OpenCL SPIR-V (kernels.spv)",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        return op->emitError("fbl-to-spirv writes a bundle directory: use -o "
                             "DIR");
      },
      registerDialects);
}
