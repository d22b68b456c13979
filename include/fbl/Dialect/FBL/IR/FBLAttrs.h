//===- FBLAttrs.h - fbl layout encodings and target -------------*- C++ -*-===//
//
// Layout encoding attributes, their interface, and the target attribute.
// The helpers below back the interface's shared methods so that every
// encoding answers layout questions through the one algebra.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_DIALECT_FBL_IR_FBLATTRS_H
#define FBL_DIALECT_FBL_IR_FBLATTRS_H

#include "fbl/Layout/Layout.h"
#include "fbl/Layout/TargetDescription.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/TensorEncoding.h"

namespace fbl::target {
/// TargetAttr uniques its execution model by value.
inline llvm::hash_code hash_value(const ExecutionModel &e) {
  return llvm::hash_combine(e.waveSize, e.residentItems, e.computeUnits,
                            e.launchNs, e.fetchPs, e.missPs, e.writePs,
                            e.multiplyFs, e.stepPs);
}
inline llvm::hash_code hash_value(const GemmTile &t) {
  return llvm::hash_combine(t.groupItems, t.itemBlocks, t.blocksN(), t.localK,
                            t.rows());
}
inline llvm::hash_code hash_value(const GemmTileClass &c) {
  return llvm::hash_combine(c.minOutputs, hash_value(c.tile), c.ownLaunch);
}
inline llvm::hash_code hash_value(const KernelArgumentLimits &l) {
  return llvm::hash_combine(l.readImages, l.writeImages, l.parameterBytes,
                            l.sharedLocalMemory);
}
inline llvm::hash_code hash_value(const GemmVariant &v) {
  return llvm::hash_combine(v.storeAfterK, v.fusedMultiplyAdd);
}
} // namespace fbl::target

#include "fbl/Dialect/FBL/IR/FBLEnums.h.inc"

namespace mlir::fbl {

/// The map (d0, ..., dn-1) -> (layer, y, x, channel) of `layout` for `shape`.
AffineMap buildTexelMap(const ::fbl::layout::Layout &layout,
                        ArrayRef<int64_t> shape, MLIRContext *context);

/// The simplest encoding attribute expressing `layout`: a channel-packed or
/// R-Tile attribute when it is one, else the general `#fbl.image`.
Attribute getEncodingForLayout(const ::fbl::layout::Layout &layout,
                               MLIRContext *context);

/// Encoding of a transpose viewing memory laid out by `layout`.
FailureOr<Attribute> getTransposedEncoding(const ::fbl::layout::Layout &layout,
                                           ArrayRef<int64_t> permutation,
                                           MLIRContext *context);

/// Encoding of a collapse or expand viewing memory laid out by `layout`.
FailureOr<Attribute> getReshapedEncoding(
    const ::fbl::layout::Layout &layout, ArrayRef<int64_t> sourceShape,
    ArrayRef<int64_t> resultShape, ArrayRef<ReassociationIndices> reassociation,
    MLIRContext *context);

/// Bytes one element of `elementType` takes in device memory (an i1 takes
/// a byte).
unsigned getElementBytes(Type elementType);

/// Whether tensors of `elementType` live in buffers whatever the layout
/// selection prefers: images hold floats only (labels and token ids are
/// integers).
bool livesInBuffers(Type elementType);

/// `type` with its encoding replaced by `encoding`.
RankedTensorType withEncoding(RankedTensorType type, Attribute encoding);

/// Gives the tensor `value` the encoding `encoding`, keeping what defines it
/// valid: the signature of the function whose argument it is, the data of
/// the constant that produces it (whose type must stay its result type).
/// Fails, changing nothing, for a constant whose data is not at hand (an
/// elided `dense_resource`).
LogicalResult setTensorEncoding(Value value, Attribute encoding);

} // namespace mlir::fbl

#include "fbl/Dialect/FBL/IR/FBLInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "fbl/Dialect/FBL/IR/FBLAttrs.h.inc"

namespace mlir::fbl {
/// The fbl layout of a tensor type, or null when it has none.
LayoutEncodingAttrInterface getLayoutEncoding(Type type);

/// Bytes of device memory a static-shaped tensor takes: in its layout, or
/// as dense row-major elements when it has none.
int64_t getDeviceBytes(RankedTensorType type);

/// `encoding`, or the nearest variant of it, that holds a tensor of `type`
/// within `limits`: as given; with batch dims folded into array layers
/// instead of y; then with one dim spread over array layers
/// (`Layout::splitAcrossLayers`). Null when none fits. Every pass that picks
/// a layout asks here, so a layout that fits nowhere is never chosen.
Attribute fitEncodingToLimits(RankedTensorType type, Attribute encoding,
                              const ::fbl::layout::DeviceLimits &limits);
} // namespace mlir::fbl

#endif // FBL_DIALECT_FBL_IR_FBLATTRS_H
