/*===- FBL.h - C API of the fbl dialect ---------------------------*- C -*-===*\
|*                                                                            *|
|* Registers the fbl dialect and builds and queries its layout encodings and  *|
|* targets from C, in the style of MLIR's own C API (mlir-c).                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef FBL_CAPI_FBL_H
#define FBL_CAPI_FBL_H

#include "mlir-c/AffineMap.h"
#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(FBL, fbl);

/// Where the leading (batch/head) dims of a tensor go.
typedef enum FblBatchFold {
  FblBatchFoldY = 0,
  FblBatchFoldLayers = 1
} FblBatchFold;

/// Placement of the texels of one R-Tile.
typedef enum FblIntraTileOrder {
  FblIntraTileRowsOnY = 0,
  FblIntraTileRowsOnX = 1,
  FblIntraTileLinear = 2
} FblIntraTileOrder;

/// Placement of the grid of R-Tiles.
typedef enum FblInterTileOrder {
  FblInterTileRowMajor = 0,
  FblInterTileColMajor = 1
} FblInterTileOrder;

/// The OpenCL memory object of a layout.
typedef enum FblStorageKind {
  FblStorageBuffer = 0,
  FblStorageImage2D = 1,
  FblStorageImage2DArray = 2
} FblStorageKind;

/// Physical extents of a tensor in its layout.
typedef struct FblExtents {
  int64_t width, height, layers, channels;
} FblExtents;

/// `#fbl.buffer`.
MLIR_CAPI_EXPORTED MlirAttribute fblBufferLayoutAttrGet(MlirContext ctx);

/// `#fbl.channel_packed<packed = ..., batch = ...>`; null on invalid input
/// (the reason goes to the context's diagnostic handlers).
MLIR_CAPI_EXPORTED MlirAttribute fblChannelPackedLayoutAttrGet(
    MlirContext ctx, int64_t packed, FblBatchFold batch);

/// `#fbl.rtile<tile = [rows, cols], packed = ..., ...>`; null on invalid
/// input.
MLIR_CAPI_EXPORTED MlirAttribute fblRTileLayoutAttrGet(
    MlirContext ctx, int64_t tileRows, int64_t tileCols, int64_t packed,
    FblIntraTileOrder intra, FblInterTileOrder inter, FblBatchFold batch);

/// The target preset `name` (`adreno-a740`, `mali-g710`, `pocl-cpu`,
/// `nvidia-h200`), or null.
MLIR_CAPI_EXPORTED MlirAttribute fblTargetAttrGetPreset(MlirContext ctx,
                                                        MlirStringRef name);

MLIR_CAPI_EXPORTED bool fblAttributeIsALayoutEncoding(MlirAttribute attr);
MLIR_CAPI_EXPORTED bool fblAttributeIsABufferLayout(MlirAttribute attr);
MLIR_CAPI_EXPORTED bool fblAttributeIsAChannelPackedLayout(MlirAttribute attr);
MLIR_CAPI_EXPORTED bool fblAttributeIsARTileLayout(MlirAttribute attr);
MLIR_CAPI_EXPORTED bool fblAttributeIsAImageLayout(MlirAttribute attr);
MLIR_CAPI_EXPORTED bool fblAttributeIsATarget(MlirAttribute attr);

/// Storage of a `rank`-dim tensor in layout `encoding`.
MLIR_CAPI_EXPORTED FblStorageKind
fblLayoutEncodingGetStorageKind(MlirAttribute encoding, intptr_t rank);

/// Extents of a tensor of `shape` in layout `encoding`. Returns false when
/// `encoding` is not a layout or cannot hold the shape.
MLIR_CAPI_EXPORTED bool fblLayoutEncodingGetExtents(MlirAttribute encoding,
                                                    intptr_t rank,
                                                    const int64_t *shape,
                                                    FblExtents *extents);

/// The map (d0, ..., dn-1) -> (layer, y, x, channel); null on bad input.
MLIR_CAPI_EXPORTED MlirAffineMap fblLayoutEncodingGetTexelMap(
    MlirAttribute encoding, intptr_t rank, const int64_t *shape);

#ifdef __cplusplus
}
#endif

#endif /* FBL_CAPI_FBL_H */
