//===- ManifestWriter.cpp - The manifest.json of an fbl bundle ------------===//
//
// Describes a lowered training function for the runtime: memory objects are
// assigned once per function argument and per kernel output (outputs that
// fbl-plan-memory put in one slot share one); views and kernel results name
// the memory they address. The schema lives in fbl/Layout/BundleManifest.h.
//
//===----------------------------------------------------------------------===//

#include "fbl/Dialect/FBL/IR/FBLOps.h"
#include "fbl/Layout/BundleManifest.h"
#include "fbl/Target/OpenCL/OpenCLEmitter.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::fbl;
namespace fl = ::fbl::layout;
namespace manifest = ::fbl::manifest;

namespace {
/// Memory objects and tensor ids of a function.
struct BundlePlan {
  llvm::DenseMap<Value, int64_t> tensorId;
  llvm::DenseMap<Value, int64_t> memoryOf; ///< tensor value -> memory id
  SmallVector<Value> tensors;
  SmallVector<Value> memories; ///< the value that defines each memory
};

/// The manifest's name for the element type `t`.
const char *dtypeName(Type t) {
  using manifest::ElementType;
  if (t.isF32())
    return manifest::elementTypeName(ElementType::F32);
  if (t.isF16())
    return manifest::elementTypeName(ElementType::F16);
  if (t.isInteger(64))
    return manifest::elementTypeName(ElementType::I64);
  if (t.isInteger(32))
    return manifest::elementTypeName(ElementType::I32);
  return manifest::kUnknownElementType;
}

manifest::Json layoutJson(RankedTensorType type) {
  std::string encoding;
  llvm::raw_string_ostream es(encoding);
  es << type.getEncoding();
  return manifest::layoutToJson(
      getLayoutEncoding(type).getLayout(type.getRank()), encoding);
}
} // namespace

LogicalResult mlir::fbl::emitManifest(func::FuncOp func,
                                      const KernelFunctions &functions,
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

  namespace key = manifest::key;
  manifest::Json j = manifest::Json::object();
  j[key::format] = manifest::kFormatName;
  j[key::version] = manifest::kFormatVersion;
  j[key::entry] = func.getSymName().str();
  if (TargetAttr target = TargetAttr::lookup(func))
    j[key::target] = target.getName().str();

  manifest::Json &memory = j[key::memory] = manifest::Json::array();
  for (auto [id, v] : llvm::enumerate(plan.memories)) {
    auto type = cast<RankedTensorType>(v.getType());
    auto enc = getLayoutEncoding(type);
    fl::Extents e = enc.getExtents(type.getShape());
    // fbl-plan-memory's choice where the memory stores another type.
    Type storage = type.getElementType();
    TypeAttr storageAttr;
    if (auto arg = dyn_cast<BlockArgument>(v))
      storageAttr = func.getArgAttrOfType<TypeAttr>(
          arg.getArgNumber(), FBLDialect::getStorageAttrName());
    else if (Operation *def = v.getDefiningOp())
      storageAttr =
          def->getAttrOfType<TypeAttr>(FBLDialect::getStorageAttrName());
    if (storageAttr)
      storage = storageAttr.getValue();
    manifest::Json &m = memory.emplace_back(manifest::Json::object());
    m[key::id] = static_cast<int64_t>(id);
    m[key::storage] =
        manifest::storageKindName(enc.getStorageKind(type.getRank()));
    m[key::dtype] = dtypeName(storage);
    m[key::width] = e.width;
    m[key::height] = e.height;
    m[key::layers] = e.layers;
    m[key::channels] = static_cast<int64_t>(e.channels);
    m[key::bytes] = enc.getDeviceBytes(type.getShape(), storage);
  }

  manifest::Json &tensors = j[key::tensors] = manifest::Json::array();
  for (auto [id, v] : llvm::enumerate(plan.tensors)) {
    auto type = cast<RankedTensorType>(v.getType());
    manifest::Json &t = tensors.emplace_back(manifest::Json::object());
    t[key::id] = static_cast<int64_t>(id);
    t[key::shape] = std::vector<int64_t>(type.getShape());
    t[key::dtype] = dtypeName(type.getElementType());
    t[key::memory] = plan.memoryOf.lookup(v);
    t[key::layout] = layoutJson(type);
  }

  manifest::Json &inputs = j[key::inputs] = manifest::Json::array();
  for (BlockArgument arg : block.getArguments()) {
    manifest::Json &in = inputs.emplace_back(manifest::Json::object());
    in[key::arg] = static_cast<int64_t>(arg.getArgNumber());
    in[key::tensor] = plan.tensorId.lookup(arg);
    if (auto name = func.getArgAttrOfType<StringAttr>(
            arg.getArgNumber(), FBLDialect::getNameAttrName()))
      in[key::name] = name.str();
    in[key::param] = bool(func.getArgAttr(arg.getArgNumber(), "fbl.param"));
    if (auto init = func.getArgAttrOfType<StringAttr>(
            arg.getArgNumber(), FBLDialect::getInitAttrName()))
      in[key::init] = init.str();
    if (func.getArgAttr(arg.getArgNumber(), "fbl.step_count"))
      in[key::stepCount] = true;
    // fbl-lower-to-kernels records what kernels will not check.
    if (auto range = func.getArgAttrOfType<DictionaryAttr>(arg.getArgNumber(),
                                                           "fbl.input_range")) {
      manifest::Json &r = in[key::range] = manifest::Json::object();
      r[key::min] = cast<IntegerAttr>(range.get("min")).getInt();
      r[key::max] = cast<IntegerAttr>(range.get("max")).getInt();
      r[key::message] = cast<StringAttr>(range.get("message")).str();
    }
  }

  auto updates = func->getAttrOfType<DenseI64ArrayAttr>("fbl.updates");
  manifest::Json &outputs = j[key::outputs] = manifest::Json::array();
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    manifest::Json &out = outputs.emplace_back(manifest::Json::object());
    out[key::result] = static_cast<int64_t>(i);
    if (auto name = func.getResultAttrOfType<StringAttr>(
            i, FBLDialect::getNameAttrName()))
      out[key::name] = name.str();
    out[key::tensor] = plan.tensorId.lookup(v);
    if (updates && updates[i] >= 0)
      out[key::updates] = updates[i];
  }

  manifest::Json &kernels = j[key::kernels] = manifest::Json::array();
  for (DispatchOp d : func.getOps<DispatchOp>()) {
    manifest::Json &k = kernels.emplace_back(manifest::Json::object());
    k[key::name] = d.getKernel().str();
    if (std::string function = functions.functionOf.lookup(d);
        !function.empty() && function != d.getKernel())
      k[key::function] = function;
    if (auto it = functions.variantsOf.find(d);
        it != functions.variantsOf.end())
      k[key::variants] = it->second;
    manifest::Json &args = k[key::args] = manifest::Json::array();
    auto addArg = [&](Value v, const char *access) {
      manifest::Json &a = args.emplace_back(manifest::Json::object());
      a[key::memory] = plan.memoryOf.lookup(v);
      a[key::access] = access;
    };
    for (Value v : d.getIns())
      addArg(v, manifest::kAccessRead);
    for (Value v : d.getResults())
      addArg(v, manifest::kAccessWrite);
    k[key::grid] = std::vector<int64_t>(d.getGrid());
    k[key::workgroup] = std::vector<int64_t>(d.getWorkgroup());
    if (auto gemm = d->getAttrOfType<DenseI64ArrayAttr>(
            FBLDialect::getGemmAttrName())) {
      manifest::Json &list = k[key::gemms] = manifest::Json::array();
      for (size_t i = 0; i < gemm.size(); i += manifest::kGemmFields)
        list.push_back(std::vector<int64_t>(
            gemm.asArrayRef().slice(i, manifest::kGemmFields)));
    }
  }
  os << j.dump(2);
  os << "\n";
  return success();
}
