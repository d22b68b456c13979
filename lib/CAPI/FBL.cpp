//===- FBL.cpp - C API of the fbl dialect ---------------------------------===//
//
// Thin wrappers over the dialect's attributes; checked construction reports
// bad parameters through the context instead of asserting.
//
//===----------------------------------------------------------------------===//

#include "fbl/CAPI/FBL.h"
#include "fbl/Dialect/FBL/IR/FBLAttrs.h"
#include "fbl/Dialect/FBL/IR/FBLDialect.h"

#include "mlir/CAPI/AffineMap.h"
#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::fbl;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(FBL, fbl, FBLDialect)

static std::optional<std::vector<int64_t>>
checkedShape(LayoutEncodingAttrInterface layout, intptr_t rank,
             const int64_t *shape) {
  if (!layout || rank < 0 || (rank > 0 && !shape))
    return std::nullopt;
  std::vector<int64_t> dims(shape, shape + rank);
  if (!layout.getLayout(rank).verifyShape(dims).empty())
    return std::nullopt;
  return dims;
}

MlirAttribute fblBufferLayoutAttrGet(MlirContext ctx) {
  return wrap(BufferLayoutAttr::get(unwrap(ctx)));
}

MlirAttribute fblChannelPackedLayoutAttrGet(MlirContext ctx, int64_t packed,
                                            FblBatchFold batch) {
  MLIRContext *c = unwrap(ctx);
  return wrap(ChannelPackedLayoutAttr::getChecked(
      mlir::detail::getDefaultDiagnosticEmitFn(c), c, packed,
      static_cast<BatchFold>(batch)));
}

MlirAttribute fblRTileLayoutAttrGet(MlirContext ctx, int64_t tileRows,
                                    int64_t tileCols, int64_t packed,
                                    FblIntraTileOrder intra,
                                    FblInterTileOrder inter,
                                    FblBatchFold batch) {
  MLIRContext *c = unwrap(ctx);
  SmallVector<int64_t> tile = {tileRows, tileCols};
  return wrap(RTileLayoutAttr::getChecked(
      mlir::detail::getDefaultDiagnosticEmitFn(c), c, ArrayRef<int64_t>(tile),
      packed, static_cast<IntraTileOrder>(intra),
      static_cast<InterTileOrder>(inter), static_cast<BatchFold>(batch)));
}

MlirAttribute fblTargetAttrGetPreset(MlirContext ctx, MlirStringRef name) {
  return wrap(TargetAttr::getPreset(unwrap(ctx), unwrap(name)));
}

bool fblAttributeIsALayoutEncoding(MlirAttribute attr) {
  return isa<LayoutEncodingAttrInterface>(unwrap(attr));
}
bool fblAttributeIsABufferLayout(MlirAttribute attr) {
  return isa<BufferLayoutAttr>(unwrap(attr));
}
bool fblAttributeIsAChannelPackedLayout(MlirAttribute attr) {
  return isa<ChannelPackedLayoutAttr>(unwrap(attr));
}
bool fblAttributeIsARTileLayout(MlirAttribute attr) {
  return isa<RTileLayoutAttr>(unwrap(attr));
}
bool fblAttributeIsAImageLayout(MlirAttribute attr) {
  return isa<ImageLayoutAttr>(unwrap(attr));
}
bool fblAttributeIsATarget(MlirAttribute attr) {
  return isa<TargetAttr>(unwrap(attr));
}

FblStorageKind fblLayoutEncodingGetStorageKind(MlirAttribute encoding,
                                               intptr_t rank) {
  auto layout = cast<LayoutEncodingAttrInterface>(unwrap(encoding));
  return static_cast<FblStorageKind>(layout.getStorageKind(rank));
}

bool fblLayoutEncodingGetExtents(MlirAttribute encoding, intptr_t rank,
                                 const int64_t *shape, FblExtents *extents) {
  auto layout = dyn_cast<LayoutEncodingAttrInterface>(unwrap(encoding));
  auto dims = checkedShape(layout, rank, shape);
  if (!dims || !extents)
    return false;
  ::fbl::layout::Extents e = layout.getLayout(rank).extents(*dims);
  *extents = {e.width, e.height, e.layers, e.channels};
  return true;
}

MlirAffineMap fblLayoutEncodingGetTexelMap(MlirAttribute encoding,
                                           intptr_t rank,
                                           const int64_t *shape) {
  auto layout = dyn_cast<LayoutEncodingAttrInterface>(unwrap(encoding));
  auto dims = checkedShape(layout, rank, shape);
  if (!dims)
    return MlirAffineMap{nullptr};
  return wrap(layout.getTexelMap(*dims));
}
