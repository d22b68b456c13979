//===- FBLDialect.cpp - The fbl dialect -----------------------------------===//
//
// Registers the dialect's attributes and ops, and verifies the discardable
// attributes it owns: `fbl.target` on a module (every encoded tensor inside
// must fit the target's image limits), `fbl.param`, `fbl.name` and
// `fbl.init` on arguments, and `fbl.name` on results.
//
//===----------------------------------------------------------------------===//

#include "fbl/Dialect/FBL/IR/FBLDialect.h"
#include "fbl/Dialect/FBL/IR/FBLAttrs.h"
#include "fbl/Dialect/FBL/IR/FBLOps.h"
#include "fbl/Layout/BundleManifest.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::fbl;

#include "fbl/Dialect/FBL/IR/FBLDialect.cpp.inc"

void FBLDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "fbl/Dialect/FBL/IR/FBLOps.cpp.inc"
      >();
}

/// Checks one value's type against the target limits; reports on `op`.
static LogicalResult checkAgainstTarget(Type type, TargetAttr target,
                                        Operation *op, StringRef what) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  LayoutEncodingAttrInterface encoding = getLayoutEncoding(type);
  if (!encoding || !tensor.hasStaticShape())
    return success();
  ::fbl::layout::Layout layout = encoding.getLayout(tensor.getRank());
  std::vector<int64_t> shape(tensor.getShape().begin(),
                             tensor.getShape().end());
  std::string err = layout.checkLimits(
      shape, target.getLimits(), getElementBytes(tensor.getElementType()));
  if (err.empty())
    return success();
  ::fbl::layout::Extents e = layout.extents(shape);
  InFlightDiagnostic diag = op->emitOpError()
                            << what << " of type " << type << " needs ";
  if (layout.isBuffer())
    diag << "a buffer of "
         << encoding.getDeviceBytes(tensor.getShape(), tensor.getElementType())
         << " bytes";
  else
    diag << "an image of " << e.width << "x" << e.height << " texels"
         << (e.layers > 1 ? " x " + std::to_string(e.layers) + " layers" : "");
  diag << ": " << err << " of target '" << target.getName() << "'";
  diag.attachNote(op->getParentOfType<ModuleOp>()->getLoc())
      << "target set here";
  return failure();
}

LogicalResult FBLDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  if (attr.getName() == getParamAttrName())
    return op->emitError() << "'" << getParamAttrName()
                           << "' belongs on function arguments, not on ops";
  if (attr.getName() == getPhaseAttrName()) {
    auto phase = dyn_cast<StringAttr>(attr.getValue());
    if (!phase || !llvm::is_contained({"forward", "backward", "optimizer"},
                                      phase.getValue()))
      return op->emitError() << "'" << getPhaseAttrName()
                             << "' must be \"forward\", \"backward\" or "
                                "\"optimizer\"";
    return success();
  }
  if (attr.getName() == getClassAttrName()) {
    auto cls = dyn_cast<IntegerAttr>(attr.getValue());
    if (!cls || cls.getInt() < 1 || cls.getInt() > 4)
      return op->emitError() << "'" << getClassAttrName()
                             << "' must be an integer class from 1 to 4";
    return success();
  }
  if (attr.getName() == getReuseAttrName()) {
    auto edges = dyn_cast<ArrayAttr>(attr.getValue());
    if (!edges || !llvm::all_of(edges, [&](Attribute e) {
          auto dict = dyn_cast<DictionaryAttr>(e);
          auto operand =
              dict ? dict.getAs<IntegerAttr>("operand") : IntegerAttr();
          return operand && operand.getInt() >= 0 &&
                 operand.getInt() < op->getNumOperands();
        }))
      return op->emitError() << "'" << getReuseAttrName()
                             << "' must list dictionaries naming an operand";
    return success();
  }
  if (attr.getName() == getKernelAttrName()) {
    auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
    auto reads = dict ? dict.getAs<ArrayAttr>("reads") : ArrayAttr();
    if (!dict || !dict.getAs<DenseI64ArrayAttr>("register_tile") || !reads ||
        reads.size() != op->getNumOperands())
      return op->emitError() << "'" << getKernelAttrName()
                             << "' must give register_tile and one read "
                                "kind per operand";
    return success();
  }
  if (attr.getName() == getEstimateAttrName()) {
    auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
    bool ok = dict && isa<DispatchOp>(op) && dict.getAs<FloatAttr>("time_ns");
    for (StringRef count : {"fetches", "misses", "writes"})
      ok = ok && dict.getAs<IntegerAttr>(count) &&
           dict.getAs<IntegerAttr>(count).getInt() >= 0;
    if (!ok)
      return op->emitError() << "'" << getEstimateAttrName()
                             << "' belongs on fbl.dispatch and gives "
                                "fetches, misses, writes (non-negative "
                                "integers) and time_ns";
    return success();
  }
  if (attr.getName() == getOwnLaunchAttrName()) {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<DispatchOp>(op))
      return op->emitError() << "'" << getOwnLaunchAttrName()
                             << "' is a unit attribute on fbl.dispatch";
    return success();
  }
  if (attr.getName() == getGemmAttrName()) {
    auto gemm = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!gemm || gemm.empty() || gemm.size() % ::fbl::manifest::kGemmFields ||
        !isa<DispatchOp>(op) ||
        llvm::any_of(gemm.asArrayRef(), [](int64_t v) { return v < 1; }))
      return op->emitError() << "'" << getGemmAttrName()
                             << "' belongs on fbl.dispatch and gives six "
                                "positive numbers a GEMM (batch, m, n, k, "
                                "and a work-group's rows and columns of C)";
    return success();
  }
  if (attr.getName() == getReductionChunksAttrName()) {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<tensor::ExpandShapeOp>(op))
      return op->emitError() << "'" << getReductionChunksAttrName()
                             << "' is a unit attribute on tensor.expand_shape";
    return success();
  }
  if (attr.getName() == getSlotAttrName()) {
    auto slot = dyn_cast<IntegerAttr>(attr.getValue());
    if (!slot || slot.getInt() < 0 || !isa<tensor::EmptyOp>(op))
      return op->emitError() << "'" << getSlotAttrName()
                             << "' is a non-negative integer on tensor.empty";
    return success();
  }
  if (attr.getName() == getStorageAttrName()) {
    auto storage = dyn_cast<TypeAttr>(attr.getValue());
    auto empty = dyn_cast<tensor::EmptyOp>(op);
    if (!storage || !storage.getValue().isF16() || !empty ||
        !empty.getType().getElementType().isF32())
      return op->emitError() << "'" << getStorageAttrName()
                             << "' is f16 on a tensor.empty of f32";
    return success();
  }
  if (attr.getName() == getMemoryPlanAttrName()) {
    auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
    if (!dict || !dict.getAs<IntegerAttr>("peak_bytes"))
      return op->emitError()
             << "'" << getMemoryPlanAttrName() << "' must give peak_bytes";
    return success();
  }
  if (attr.getName() == "fbl.updates") {
    auto func = dyn_cast<FunctionOpInterface>(op);
    auto updates = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!func || !updates ||
        static_cast<unsigned>(updates.size()) != func.getNumResults() ||
        llvm::any_of(updates.asArrayRef(), [&](int64_t a) {
          return a < -1 || a >= static_cast<int64_t>(func.getNumArguments());
        }))
      return op->emitError() << "'fbl.updates' names, per function result, "
                                "the argument it replaces or -1";
    return success();
  }
  if (attr.getName() != getTargetAttrName())
    return op->emitError() << "unknown fbl attribute '"
                           << attr.getName().getValue() << "'";
  auto target = dyn_cast<TargetAttr>(attr.getValue());
  if (!target)
    return op->emitError() << "'" << getTargetAttrName()
                           << "' must be a #fbl.target attribute";
  if (!isa<ModuleOp>(op))
    return op->emitError() << "'" << getTargetAttrName()
                           << "' must be attached to a module";
  // Every value of the module, each distinct type checked once (a module
  // of kernels holds a million values of a few hundred types).
  llvm::DenseSet<Type> fits;
  auto check = [&](Type type, Operation *nested, StringRef kind,
                   unsigned number) {
    if (fits.contains(type))
      return success();
    if (failed(checkAgainstTarget(type, target, nested,
                                  (kind + " #" + Twine(number)).str())))
      return failure();
    fits.insert(type);
    return success();
  };
  WalkResult walk = op->walk<WalkOrder::PreOrder>([&](Operation *nested) {
    for (Region &region : nested->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (failed(check(arg.getType(), nested, "block argument",
                           arg.getArgNumber())))
            return WalkResult::interrupt();
    for (OpResult result : nested->getResults())
      if (failed(check(result.getType(), nested, "result",
                       result.getResultNumber())))
        return WalkResult::interrupt();
    // A kernel body holds scalars and the handles of the dispatch's own
    // tensors (checked above as its block arguments).
    return isa<DispatchOp>(nested) ? WalkResult::skip() : WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// Checks `fbl.name` on argument `argIndex`: a non-empty string that no
/// earlier argument carries (weights files and the runtime find inputs by
/// it) and that safetensors does not reserve.
static LogicalResult verifyArgumentName(Operation *op, unsigned argIndex,
                                        NamedAttribute attr) {
  auto name = dyn_cast<StringAttr>(attr.getValue());
  if (!name || name.getValue().empty())
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' is a non-empty string";
  if (name.getValue() == "__metadata__")
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' cannot be '__metadata__' (safetensors "
                              "reserves it)";
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' names arguments of functions only";
  for (unsigned i = 0; i < argIndex; ++i)
    if (func.getArgAttr(i, attr.getName()) == name)
      return op->emitError() << "arguments #" << i << " and #" << argIndex
                             << " are both named '" << name.getValue() << "'";
  return success();
}

LogicalResult FBLDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                      unsigned,
                                                      NamedAttribute attr) {
  if (attr.getName() != getNameAttrName())
    return op->emitError() << "unknown fbl result attribute '"
                           << attr.getName().getValue() << "'";
  auto name = dyn_cast<StringAttr>(attr.getValue());
  if (!name || name.getValue().empty())
    return op->emitError() << "'" << getNameAttrName()
                           << "' is a non-empty string";
  return success();
}

LogicalResult FBLDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  if (attr.getName() == "fbl.step_count") {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'fbl.step_count' is a unit attribute";
    return success();
  }
  // Written by fbl-lower-to-kernels for the manifest: {min, max, message}.
  if (attr.getName() == "fbl.input_range") {
    auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
    if (!dict || !dict.getAs<IntegerAttr>("min") ||
        !dict.getAs<IntegerAttr>("max") || !dict.getAs<StringAttr>("message"))
      return op->emitError() << "'fbl.input_range' is a dictionary of "
                                "integer min and max and a string message";
    return success();
  }
  if (attr.getName() == getNameAttrName())
    return verifyArgumentName(op, argIndex, attr);
  if (attr.getName() == getStorageAttrName()) {
    auto storage = dyn_cast<TypeAttr>(attr.getValue());
    auto func = dyn_cast<FunctionOpInterface>(op);
    auto type =
        func ? dyn_cast<RankedTensorType>(func.getArgumentTypes()[argIndex])
             : RankedTensorType();
    if (!storage || !storage.getValue().isF16() || !type ||
        !type.getElementType().isF32())
      return op->emitError() << "'" << getStorageAttrName()
                             << "' is f16 on an f32 tensor argument";
    return success();
  }
  if (attr.getName() == getInitAttrName()) {
    auto init = dyn_cast<StringAttr>(attr.getValue());
    if (!init)
      return op->emitError() << "'" << getInitAttrName() << "' is a string";
    std::string error;
    if (!::fbl::manifest::parseInitSpec(init.getValue().str(), error))
      return op->emitError() << "'" << getInitAttrName() << "' of argument #"
                             << argIndex << ": " << error;
    auto func = dyn_cast<FunctionOpInterface>(op);
    auto type =
        func ? dyn_cast<RankedTensorType>(func.getArgumentTypes()[argIndex])
             : RankedTensorType();
    if (!type || !isa<FloatType>(type.getElementType()))
      return op->emitError() << "'" << getInitAttrName() << "' initializes "
                             << "float tensor arguments of functions only";
    return success();
  }
  if (attr.getName() != getParamAttrName())
    return op->emitError() << "unknown fbl argument attribute '"
                           << attr.getName().getValue() << "'";
  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitError() << "'" << getParamAttrName()
                           << "' is a unit attribute";
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return op->emitError() << "'" << getParamAttrName()
                           << "' marks arguments of functions only";
  Type type = func.getArgumentTypes()[argIndex];
  if (!isa<RankedTensorType>(type))
    return op->emitError() << "trainable parameter #" << argIndex
                           << " must be a ranked tensor, got " << type;
  return success();
}
