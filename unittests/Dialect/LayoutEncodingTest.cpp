//===- LayoutEncodingTest.cpp - Tests of the layout encoding interface ----===//
//
// The dialect must say exactly what the algebra says: the printed texel map
// evaluates to the algebra's coordinates, every algebra layout has an
// attribute that gives it back, and views get the attributes passes expect.
//
//===----------------------------------------------------------------------===//

#include "LayoutTestUtil.h"

#include "fbl/Dialect/FBL/IR/FBLAttrs.h"
#include "fbl/Dialect/FBL/IR/FBLDialect.h"
#include "fbl/Layout/TargetDescription.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <random>

using namespace mlir;
using namespace mlir::fbl;
using namespace ::fbl::layout::testing;
namespace fl = ::fbl::layout;

namespace {

class LayoutEncodingTest : public ::testing::Test {
protected:
  LayoutEncodingTest() { context.loadDialect<FBLDialect>(); }

  LayoutEncodingAttrInterface parse(StringRef text) {
    Attribute attr = parseAttribute(text, &context);
    EXPECT_TRUE(attr) << text.str();
    return dyn_cast_or_null<LayoutEncodingAttrInterface>(attr);
  }

  static std::string str(Attribute attr) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << attr;
    return s;
  }

  MLIRContext context;
};

TEST_F(LayoutEncodingTest, TexelMapEvaluatesToTheAlgebra) {
  for (unsigned rank = 0; rank <= 4; ++rank)
    for (const NamedLayout &nl : allLayouts(rank)) {
      Attribute attr = getEncodingForLayout(nl.layout, &context);
      auto encoding = cast<LayoutEncodingAttrInterface>(attr);
      for (const auto &shape : sweepShapes(rank)) {
        SCOPED_TRACE(nl.name + " " + shapeStr(shape) + " " + str(attr));
        AffineMap map = encoding.getTexelMap(shape);
        ASSERT_EQ(map.getNumDims(), rank);
        ASSERT_EQ(map.getNumResults(), 4u);
        bool ok = true;
        forEachIndex(shape, [&](const std::vector<int64_t> &idx) {
          SmallVector<int64_t> v = map.compose(idx);
          fl::TexelCoord c = nl.layout.toTexel(shape, idx);
          if (nl.layout.isBuffer())
            ok &= v[2] == c.x;
          else
            ok &= v[0] == c.layer && v[1] == c.y && v[2] == c.x &&
                  v[3] == static_cast<int64_t>(c.channel);
        });
        EXPECT_TRUE(ok);
        fl::Extents e = encoding.getExtents(shape);
        EXPECT_EQ(e, nl.layout.extents(shape));
      }
    }
}

TEST_F(LayoutEncodingTest, EveryLayoutHasAnAttributeThatGivesItBack) {
  for (unsigned rank = 0; rank <= 4; ++rank)
    for (const NamedLayout &nl : allLayouts(rank)) {
      Attribute attr = getEncodingForLayout(nl.layout, &context);
      SCOPED_TRACE(nl.name + " " + str(attr));
      auto encoding = cast<LayoutEncodingAttrInterface>(attr);
      EXPECT_TRUE(encoding.getLayout(rank).samePlacement(nl.layout));
      // Named layouts get named attributes, not the general form.
      EXPECT_FALSE(isa<ImageLayoutAttr>(attr));
      // The printed attribute parses back to the same attribute.
      EXPECT_EQ(parseAttribute(str(attr), &context), attr);
    }
}

TEST_F(LayoutEncodingTest, TransposedRTileIsAnRTile) {
  auto rt = parse("#fbl.rtile<tile = [4, 8], packed = 1, intra = rows_on_x>");
  FailureOr<Attribute> t = rt.getTransposedEncoding({1, 0});
  ASSERT_TRUE(succeeded(t));
  EXPECT_EQ(str(*t),
            "#fbl.rtile<tile = [8, 4], packed = 0, inter = col_major>");
  // A buffer cannot be transposed in place.
  EXPECT_TRUE(failed(parse("#fbl.buffer").getTransposedEncoding({1, 0})));
}

TEST_F(LayoutEncodingTest, HeadSplitAndMerge) {
  auto cp = parse("#fbl.channel_packed<packed = 1>");
  SmallVector<ReassociationIndices> groups = {{0}, {1, 2}};
  FailureOr<Attribute> split =
      cp.getReshapedEncoding({128, 512}, {128, 8, 64}, groups);
  ASSERT_TRUE(succeeded(split));
  EXPECT_EQ(str(*split), "#fbl.image<tile = [1, 1, 4], packed = 2, x = [d1, "
                         "d2], y = [d0], layers = []>");
  FailureOr<Attribute> merged =
      cast<LayoutEncodingAttrInterface>(*split).getReshapedEncoding(
          {128, 8, 64}, {128, 512}, groups);
  ASSERT_TRUE(succeeded(merged));
  EXPECT_EQ(*merged, Attribute(cp));
  // head_dim 2 splits texels.
  EXPECT_TRUE(
      failed(cp.getReshapedEncoding({128, 512}, {128, 256, 2}, groups)));
}

TEST_F(LayoutEncodingTest, BatchIntoLayersIsAnImageArray) {
  auto cp = parse("#fbl.channel_packed<packed = 2, batch = layers>");
  EXPECT_EQ(cp.getStorageKind(3), fl::StorageKind::Image2DArray);
  EXPECT_EQ(cp.getStorageKind(2), fl::StorageKind::Image2D);
  EXPECT_EQ(cp.getExtents({12, 7, 9}), (fl::Extents{3, 7, 12, 4}));
}

TEST_F(LayoutEncodingTest, TargetPresets) {
  for (StringRef name : TargetAttr::getPresetNames()) {
    TargetAttr t = TargetAttr::getPreset(&context, name);
    ASSERT_TRUE(t) << name.str();
    EXPECT_EQ(t.getName(), name);
    // A preset prints as its name and parses back to itself.
    EXPECT_EQ(str(t), "#fbl.target<\"" + name.str() + "\">");
    EXPECT_EQ(parseAttribute(str(t), &context), Attribute(t));
  }
  EXPECT_FALSE(TargetAttr::getPreset(&context, "no-such-gpu"));
  fl::DeviceLimits pocl =
      TargetAttr::getPreset(&context, "pocl-cpu").getLimits();
  EXPECT_EQ(pocl.maxImageWidth, 8192);
  EXPECT_EQ(pocl.maxImageHeight, 8192);
}

// The runtime prints local devices with TargetDescription: every such text
// must parse to the attribute with the same fields, under any name.
TEST_F(LayoutEncodingTest, DescribedDevicesParseBack) {
  for (const ::fbl::target::TargetDescription &preset :
       ::fbl::target::kPresets) {
    ::fbl::target::TargetDescription d = preset;
    d.name = "local-" + preset.name;
    auto t = dyn_cast_or_null<TargetAttr>(
        parseAttribute(::fbl::target::printAttribute(d), &context));
    ASSERT_TRUE(t) << ::fbl::target::printAttribute(d);
    TargetAttr p = TargetAttr::getPreset(&context, preset.name);
    EXPECT_EQ(t.getName(), d.name);
    EXPECT_EQ(t.getMaxImageWidth(), p.getMaxImageWidth());
    EXPECT_EQ(t.getMaxBufferBytes(), p.getMaxBufferBytes());
    EXPECT_EQ(t.getCacheLineTexels(), p.getCacheLineTexels());
    EXPECT_EQ(t.getPreferredWorkgroup(), p.getPreferredWorkgroup());
    EXPECT_EQ(t.getLocalTiledGemm(), p.getLocalTiledGemm());
    EXPECT_EQ(t.getExecution(), p.getExecution());
    EXPECT_EQ(t.getDescription().execution, preset.execution);
    EXPECT_EQ(t.getGemmTileClasses(), p.getGemmTileClasses());
    EXPECT_EQ(t.getGemmVariants(), p.getGemmVariants());
  }
}

// Random GEMM tiles and variants the verifier takes, as the runtime prints
// them (tileText, variantsText) and as the dialect prints them: both parse
// back to the same tile, classes and variants, every field included.
TEST_F(LayoutEncodingTest, GemmTilesParseBack) {
  std::mt19937 rng(7);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  auto randomTile = [&] {
    for (;;) {
      ::fbl::target::GemmTile t;
      t.groupItems = pick(1, 32);
      t.itemBlocks = pick(1, 4);
      t.localK = 4 * pick(1, 16);
      t.groupRows = pick(0, 1) ? pick(1, 32) : 0;
      t.swizzleBlocks = pick(0, 1);
      t.storeAfterK = pick(0, 1) ? pick(0, t.localK - 1) : 0;
      if (!t.invalidReason() &&
          t.localBytes() <= ::fbl::target::kMinLocalMemoryBytes)
        return t;
    }
  };
  for (int i = 0; i < 200; ++i) {
    ::fbl::target::TargetDescription d = ::fbl::target::kPresets[0];
    d.name = "local-device";
    d.maxWorkgroupSize = 1024;
    d.gemmTile = randomTile();
    d.gemmTileClasses = {{int64_t(1) << 20, randomTile()}};
    d.gemmVariants.clear();
    for (int64_t v = pick(0, 3); v > 0; --v)
      d.gemmVariants.push_back({pick(0, 64), pick(0, 1) == 1});
    std::string text = ::fbl::target::printAttribute(d);
    auto t = dyn_cast_or_null<TargetAttr>(parseAttribute(text, &context));
    ASSERT_TRUE(t) << text;
    EXPECT_EQ(t.getDescription().gemmTile, d.gemmTile) << text;
    EXPECT_EQ(t.getDescription().gemmTileClasses, d.gemmTileClasses) << text;
    EXPECT_EQ(t.getDescription().gemmVariants, d.gemmVariants) << text;
    EXPECT_EQ(parseAttribute(str(t), &context), Attribute(t)) << str(t);
  }
}

TEST_F(LayoutEncodingTest, PresetForDeviceByVendor) {
  using ::fbl::target::presetForDevice;
  EXPECT_EQ(presetForDevice("NVIDIA Corporation", "NVIDIA H200").name,
            "nvidia-h200");
  EXPECT_EQ(presetForDevice("QUALCOMM", "QUALCOMM Adreno(TM) 740").name,
            "adreno-a740");
  EXPECT_EQ(presetForDevice("ARM", "Mali-G710 r0p0").name, "mali-g710");
  EXPECT_EQ(presetForDevice("The pocl project", "cpu-haswell").name,
            "pocl-cpu");
  EXPECT_EQ(presetForDevice("Mesa", "llvmpipe (LLVM 15.0.6, 256 bits)").name,
            "pocl-cpu");
}

} // namespace
