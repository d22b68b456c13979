/*===- layouts.c - fbl C API test -----------------------------------------===*\
|*                                                                            *|
|* Builds, parses and queries fbl attributes through the C API only.          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

// RUN: fbl-capi-test 2>&1 | FileCheck %s

#include "fbl/CAPI/FBL.h"

#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/IR.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static void printToStdout(MlirStringRef s, void *userData) {
  (void)userData;
  fwrite(s.data, 1, s.length, stdout);
}

static void printAttr(const char *label, MlirAttribute attr) {
  printf("%s: ", label);
  if (mlirAttributeIsNull(attr))
    printf("<null>");
  else
    mlirAttributePrint(attr, printToStdout, NULL);
  printf("\n");
}

int main(void) {
  MlirContext ctx = mlirContextCreate();
  MlirDialectHandle fbl = mlirGetDialectHandle__fbl__();
  mlirDialectHandleRegisterDialect(fbl, ctx);
  mlirDialectHandleLoadDialect(fbl, ctx);

  // CHECK: buffer: #fbl.buffer
  MlirAttribute buffer = fblBufferLayoutAttrGet(ctx);
  printAttr("buffer", buffer);
  // CHECK: packed: #fbl.channel_packed<packed = 2, batch = layers>
  MlirAttribute packed =
      fblChannelPackedLayoutAttrGet(ctx, 2, FblBatchFoldLayers);
  printAttr("packed", packed);
  // CHECK: rtile: #fbl.rtile<tile = [4, 8], packed = 1, intra = rows_on_x,
  // inter = col_major>
  MlirAttribute rtile = fblRTileLayoutAttrGet(
      ctx, 4, 8, 1, FblIntraTileRowsOnX, FblInterTileColMajor, FblBatchFoldY);
  printAttr("rtile", rtile);

  // A parsed attribute is the same uniqued attribute.
  MlirAttribute parsed = mlirAttributeParseGet(
      ctx, mlirStringRefCreateFromCString(
               "#fbl.rtile<tile = [4, 8], packed = 1, intra = rows_on_x, "
               "inter = col_major>"));
  // CHECK: parsed equal: 1
  printf("parsed equal: %d\n", mlirAttributeEqual(parsed, rtile));

  // CHECK: isa: 1 1 1 0 1 0
  printf("isa: %d %d %d %d %d %d\n", fblAttributeIsALayoutEncoding(rtile),
         fblAttributeIsARTileLayout(rtile),
         fblAttributeIsAChannelPackedLayout(packed),
         fblAttributeIsARTileLayout(packed),
         fblAttributeIsABufferLayout(buffer), fblAttributeIsATarget(buffer));

  // 64 x 64 in 4x8 tiles, rows along x inside a tile, tile grid column-major:
  // x = [row tile (16), row in tile (4)], y = [col tile (8), col texel (2)].
  int64_t shape[] = {64, 64};
  FblExtents e;
  // CHECK: extents: ok 64 16 1 4
  bool ok = fblLayoutEncodingGetExtents(rtile, 2, shape, &e);
  printf("extents: %s %lld %lld %lld %lld\n", ok ? "ok" : "fail",
         (long long)e.width, (long long)e.height, (long long)e.layers,
         (long long)e.channels);
  // CHECK: storage: 1 2
  int64_t shape3[] = {3, 5, 8};
  printf("storage: %d %d\n", fblLayoutEncodingGetStorageKind(rtile, 2),
         fblLayoutEncodingGetStorageKind(packed, 3));
  // CHECK: extents3: ok 2 5 3
  ok = fblLayoutEncodingGetExtents(packed, 3, shape3, &e);
  printf("extents3: %s %lld %lld %lld\n", ok ? "ok" : "fail",
         (long long)e.width, (long long)e.height, (long long)e.layers);
  // A rank that does not fit the layout is refused, not guessed.
  // CHECK: bad rank: fail
  printf("bad rank: %s\n",
         fblLayoutEncodingGetExtents(packed, 2, shape, &e) ? "ok" : "fail");

  // CHECK: map: (d0, d1) -> (0, (d1 floordiv 8) * 2 + (d1 floordiv 4) mod 2,
  // (d0 floordiv 4) * 4 + d0 mod 4, d1 mod 4)
  MlirAffineMap map = fblLayoutEncodingGetTexelMap(rtile, 2, shape);
  printf("map: ");
  mlirAffineMapPrint(map, printToStdout, NULL);
  printf("\n");

  // CHECK: preset: #fbl.target<"mali-g710">
  printAttr("preset", fblTargetAttrGetPreset(
                          ctx, mlirStringRefCreateFromCString("mali-g710")));
  // CHECK: unknown preset: <null>
  printAttr("unknown preset",
            fblTargetAttrGetPreset(
                ctx, mlirStringRefCreateFromCString("no-such-gpu")));
  // Invalid parameters give a null attribute and a diagnostic.
  // CHECK: error: tile sizes must be positive
  // CHECK-NEXT: bad tile: <null>
  fflush(stdout);
  MlirAttribute bad = fblRTileLayoutAttrGet(
      ctx, 0, 4, 1, FblIntraTileRowsOnY, FblInterTileRowMajor, FblBatchFoldY);
  fflush(stderr);
  printAttr("bad tile", bad);
  mlirContextDestroy(ctx);
  return 0;
}
