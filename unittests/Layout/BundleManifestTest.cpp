//===- BundleManifestTest.cpp - Tests of the bundle manifest schema -------===//
//
// Every layout kind survives its manifest form (written, printed, parsed,
// read back), unknown storage kinds, element types and layout kinds are
// rejected, and the format version check names both versions.
//
//===----------------------------------------------------------------------===//

#include "LayoutTestUtil.h"

#include "fbl/Layout/BundleManifest.h"

#include <gtest/gtest.h>

using namespace fbl::layout;
using namespace fbl::layout::testing;
namespace manifest = fbl::manifest;
using manifest::Json;

namespace {

/// `l` through its manifest form and back, as the runtime reads it.
std::optional<Layout> roundTrip(const Layout &l, std::string &error) {
  Json written = manifest::layoutToJson(l, "#fbl.test");
  Json read = Json::parse(written.dump(2));
  EXPECT_EQ(read.at(manifest::key::encoding), "#fbl.test");
  return manifest::layoutFromJson(read, l.rank(), error);
}

class ManifestLayoutSweep : public ::testing::TestWithParam<unsigned> {};

TEST_P(ManifestLayoutSweep, EveryLayoutKindRoundTrips) {
  unsigned rank = GetParam();
  for (const NamedLayout &nl : allLayouts(rank)) {
    std::string error;
    std::optional<Layout> back = roundTrip(nl.layout, error);
    ASSERT_TRUE(back) << nl.name << ": " << error;
    EXPECT_TRUE(back->samePlacement(nl.layout))
        << nl.name << ": " << nl.layout.str() << " came back as "
        << back->str();
    EXPECT_EQ(back->storage(), nl.layout.storage()) << nl.name;
    for (const auto &shape : sweepShapes(rank))
      EXPECT_TRUE(back->sameAddressing(nl.layout, shape)) << nl.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, ManifestLayoutSweep,
                         ::testing::Values(0u, 1u, 2u, 3u, 4u));

TEST(BundleManifest, GeneralImageLayoutRoundTrips) {
  // A placement no named kind produces, as views compose them: the last
  // dim on x before the packed dim's texels, the first on layers (an
  // image2d_array).
  Layout::AxisFactors axes;
  axes[0] = {{2, Level::Tile}, {1, Level::Element}};
  axes[1] = {{1, Level::Tile}};
  axes[2] = {{0, Level::Tile}};
  Layout l = Layout::image({1, 8, 1}, 1, axes);
  ASSERT_EQ(l.verify(), "");
  ASSERT_EQ(l.storage(), StorageKind::Image2DArray);
  std::string error;
  std::optional<Layout> back = roundTrip(l, error);
  ASSERT_TRUE(back) << error;
  EXPECT_TRUE(back->samePlacement(l));
}

TEST(BundleManifest, ManifestFormOfALayout) {
  Json j = manifest::layoutToJson(Layout::channelPacked(2, 1), "#enc");
  EXPECT_EQ(j.dump(), R"({"encoding":"#enc","kind":"image","tile":[1,4],)"
                      R"("packed":1,"x":[[1,0]],"y":[[0,0]],"layers":[]})");
  EXPECT_EQ(manifest::layoutToJson(Layout::buffer(1), "#fbl.buffer").dump(),
            R"({"encoding":"#fbl.buffer","kind":"buffer","tile":[1],)"
            R"("packed":-1,"x":[],"y":[],"layers":[]})");
}

TEST(BundleManifest, InvalidLayoutsAreRejected) {
  Json j = manifest::layoutToJson(Layout::channelPacked(2, 1), "#enc");
  std::string error;

  Json unknownKind = j;
  unknownKind[manifest::key::kind] = "texture";
  EXPECT_FALSE(manifest::layoutFromJson(unknownKind, 2, error));
  EXPECT_EQ(error, "unknown layout kind 'texture'");

  EXPECT_FALSE(manifest::layoutFromJson(j, 3, error));
  EXPECT_EQ(error, "layout of rank 2 for a tensor of rank 3");

  Json notPlaced = j;
  notPlaced[manifest::key::x] = Json::array();
  EXPECT_FALSE(manifest::layoutFromJson(notPlaced, 2, error));
  EXPECT_NE(error, "");

  // Checked before narrowing: 2^32 + 1 would read as dim 1, 2^32 + 1 as
  // packed dim 1.
  Json wideDim = j;
  wideDim[manifest::key::x][0][0] = (int64_t(1) << 32) + 1;
  EXPECT_FALSE(manifest::layoutFromJson(wideDim, 2, error));
  EXPECT_EQ(error, "factor [4294967297,0] is no [dim, level] of a rank-2 "
                   "layout");
  Json widePacked = j;
  widePacked[manifest::key::packed] = (int64_t(1) << 32) + 1;
  EXPECT_FALSE(manifest::layoutFromJson(widePacked, 2, error));
  EXPECT_EQ(error, "packed dim 4294967297 is out of range for rank 2");
}

TEST(BundleManifest, OnlyIntegersOf64Bits) {
  Json m = {{"memory", {{{"width", 4}, {"bytes", 64}}}}, {"entry", "f"}};
  EXPECT_EQ(manifest::checkIntegers(m), "");
  Json fraction = m;
  fraction["memory"][0]["width"] = 1e11;
  EXPECT_EQ(manifest::checkIntegers(fraction),
            "manifest.json: 100000000000.0 is not an integer of 64 bits");
  Json huge = m;
  huge["memory"][0]["bytes"] = ~uint64_t(0);
  EXPECT_EQ(manifest::checkIntegers(huge),
            "manifest.json: 18446744073709551615 is not an integer of 64 bits");
  // Deep nesting is walked without recursion.
  Json deep = 1.5;
  for (int i = 0; i < 100000; ++i)
    deep = Json::array({std::move(deep)});
  EXPECT_NE(manifest::checkIntegers(deep), "");
}

TEST(BundleManifest, StorageKindNames) {
  for (StorageKind kind :
       {StorageKind::Buffer, StorageKind::Image2D, StorageKind::Image2DArray})
    EXPECT_EQ(manifest::parseStorageKind(manifest::storageKindName(kind)),
              kind);
  EXPECT_STREQ(manifest::storageKindName(StorageKind::Image2DArray),
               "image2d_array");
  EXPECT_EQ(manifest::parseStorageKind("image3d"), std::nullopt);
  EXPECT_EQ(manifest::parseStorageKind(""), std::nullopt);
  EXPECT_EQ(manifest::parseStorageKind("Buffer"), std::nullopt);
}

TEST(BundleManifest, ElementTypes) {
  using manifest::ElementType;
  for (ElementType type :
       {ElementType::F32, ElementType::F16, ElementType::I32, ElementType::I64})
    EXPECT_EQ(manifest::parseElementType(manifest::elementTypeName(type)),
              type);
  EXPECT_EQ(manifest::elementTypeBytes(ElementType::F16), 2u);
  EXPECT_EQ(manifest::elementTypeBytes(ElementType::I64), 8u);
  EXPECT_EQ(manifest::parseElementType(manifest::kUnknownElementType),
            std::nullopt);
}

TEST(BundleManifest, FormatVersion) {
  Json current = {{manifest::key::format, manifest::kFormatName},
                  {manifest::key::version, manifest::kFormatVersion}};
  EXPECT_EQ(manifest::checkFormatVersion(current), "");

  Json unversioned = {{manifest::key::format, manifest::kFormatName}};
  EXPECT_EQ(manifest::checkFormatVersion(unversioned),
            "manifest.json: bundle format version 0, this runtime reads "
            "version 1; recompile the bundle with fbl-translate");

  Json newer = current;
  newer[manifest::key::version] = manifest::kFormatVersion + 1;
  EXPECT_NE(manifest::checkFormatVersion(newer).find("format version 2"),
            std::string::npos);
}

TEST(BundleManifest, InitSpecs) {
  using Kind = manifest::InitSpec::Kind;
  std::string error;
  auto parse = [&](const char *s) { return manifest::parseInitSpec(s, error); };
  EXPECT_EQ(parse("zeros")->kind, Kind::Zeros);
  EXPECT_EQ(parse("ones")->kind, Kind::Ones);
  std::optional<manifest::InitSpec> normal = parse("normal:0.02");
  ASSERT_TRUE(normal);
  EXPECT_EQ(normal->kind, Kind::Normal);
  EXPECT_DOUBLE_EQ(normal->scale, 0.02);
  std::optional<manifest::InitSpec> uniform = parse("uniform:6.25e-2");
  ASSERT_TRUE(uniform);
  EXPECT_EQ(uniform->kind, Kind::Uniform);
  EXPECT_DOUBLE_EQ(uniform->scale, 0.0625);
  for (const char *bad :
       {"", "zero", "normal", "normal:", "normal:0", "normal:-1", "normal:inf",
        "normal:nan", "normal:0.1x", "uniform: 1", "gaussian:1", "ones:1"}) {
    error.clear();
    EXPECT_FALSE(parse(bad)) << bad;
    EXPECT_EQ(error, "initializer '" + std::string(bad) +
                         "' is none of zeros, ones, normal:<std>, "
                         "uniform:<bound> (with a finite positive number)");
  }
}

} // namespace
