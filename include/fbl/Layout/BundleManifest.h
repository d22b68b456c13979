//===- BundleManifest.h - The manifest.json of fbl bundles ------*- C++ -*-===//
//
// The one description of a bundle's manifest.json, shared by the writer
// (fbl-translate's OpenCL emitter) and the reader (libfbl_runtime): the
// format name and version, every field name, the names of storage kinds,
// element types and kernel argument accesses, and a layout's manifest form.
//
// Header-only and free of MLIR like Layout.h. Nothing here throws: readers
// report invalid content through an error string; nlohmann-json itself
// throws on malformed JSON (a missing field, a wrong type) where exceptions
// are enabled.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_LAYOUT_BUNDLEMANIFEST_H
#define FBL_LAYOUT_BUNDLEMANIFEST_H

#include "fbl/Layout/Layout.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fbl::manifest {

/// Keys keep the order they are written in, so manifests diff well.
using Json = nlohmann::ordered_json;

/// The value of the `format` field.
inline constexpr const char kFormatName[] = "fbl-bundle";

/// The bundle format this code writes and reads. Bump it whenever a reader
/// of the previous version would misread a bundle.
inline constexpr int64_t kFormatVersion = 1;

/// Field names. Fields of different objects that mean the same thing share
/// one name (e.g. `dtype` of memory objects and of tensors).
namespace key {
// Top level.
inline constexpr const char format[] = "format";
inline constexpr const char version[] = "version";
inline constexpr const char entry[] = "entry";
inline constexpr const char target[] = "target";
inline constexpr const char memory[] = "memory"; ///< also: a memory id
inline constexpr const char tensors[] = "tensors";
inline constexpr const char inputs[] = "inputs";
inline constexpr const char outputs[] = "outputs";
inline constexpr const char kernels[] = "kernels";
// Memory objects and tensors.
inline constexpr const char id[] = "id";
inline constexpr const char storage[] = "storage";
inline constexpr const char dtype[] = "dtype";
inline constexpr const char width[] = "width";
inline constexpr const char height[] = "height";
inline constexpr const char layers[] = "layers"; ///< also: a layout axis
inline constexpr const char channels[] = "channels";
inline constexpr const char bytes[] = "bytes";
inline constexpr const char shape[] = "shape";
inline constexpr const char layout[] = "layout";
// Layouts.
inline constexpr const char encoding[] = "encoding";
inline constexpr const char kind[] = "kind";
inline constexpr const char tile[] = "tile";
inline constexpr const char packed[] = "packed";
inline constexpr const char x[] = "x";
inline constexpr const char y[] = "y";
// Inputs and outputs.
inline constexpr const char arg[] = "arg";
inline constexpr const char tensor[] = "tensor";
inline constexpr const char param[] = "param";
inline constexpr const char stepCount[] = "step_count";
inline constexpr const char result[] = "result";
inline constexpr const char updates[] = "updates";
/// An integer input's valid elements, {min, max, message}: both bounds
/// inclusive; `message` is the model's own (its cf.assert) or the compiler's
/// reason. Optional: readers check no range when it is missing.
inline constexpr const char range[] = "range";
inline constexpr const char min[] = "min";
inline constexpr const char max[] = "max";
inline constexpr const char message[] = "message";
/// Optional, inputs and outputs: `name` (below, under Kernels) is the
/// argument's `fbl.name` (a Hugging Face tensor name such as
/// "model.norm.weight", or "input_ids"); a result's is its `fbl.name`, which
/// for a training step's updates is the name of the input it updates.
/// Names are unique among the inputs. `init` is an input's `fbl.init`: how a
/// parameter that no weights file sets starts (see InitSpec).
inline constexpr const char init[] = "init";
// Kernels (and inputs and outputs, see `init`).
inline constexpr const char name[] = "name";
/// Optional: the `__kernel` function of kernels.cl a launch runs, when it is
/// not `name` (launches whose kernels print the same code share one
/// function; `name` stays unique per launch, for profiles).
inline constexpr const char function[] = "function";
/// Optional: other `__kernel` functions of kernels.cl the launch may run
/// instead of `function`. Each takes the same arguments and computes the
/// same results (the same sums in the same order) at the same grid and
/// work-group; they differ in what the device's compiler makes of them, so
/// the runtime measures them on the device and runs the fastest.
inline constexpr const char variants[] = "variants";
/// Optional: the GEMMs a launch computes, six numbers each (batch, m, n, k,
/// and the rows and columns of C one work-group computes), for profiles to
/// give rates by shape; a merged launch lists its members'. Readers that
/// run bundles need it not.
inline constexpr const char gemms[] = "gemms";
inline constexpr const char args[] = "args";
inline constexpr const char access[] = "access";
inline constexpr const char grid[] = "grid";
inline constexpr const char workgroup[] = "workgroup";
} // namespace key

/// Numbers a GEMM of `gemms` (and of the `fbl.gemm` attribute it comes
/// from): batch, m, n, k, tile rows, tile columns.
inline constexpr size_t kGemmFields = 6;

/// Values of a kernel argument's `access`.
inline constexpr const char kAccessRead[] = "read";
inline constexpr const char kAccessWrite[] = "write";

//===----------------------------------------------------------------------===//
// Format version
//===----------------------------------------------------------------------===//

/// Empty when `manifest` has this code's format version, else the one line
/// to show. A manifest without a version predates versioning: version 0.
/// Expects `manifest` to be an object.
inline std::string checkFormatVersion(const Json &manifest) {
  auto it = manifest.find(key::version);
  int64_t version =
      it != manifest.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
  if (version == kFormatVersion)
    return {};
  return "manifest.json: bundle format version " + std::to_string(version) +
         ", this runtime reads version " + std::to_string(kFormatVersion) +
         "; recompile the bundle with fbl-translate";
}

/// Empty when every number in `manifest` is an integer in int64_t's range,
/// the only numbers a manifest holds; else which number is not. Reading a
/// fraction or a larger number into an integer field is undefined behaviour
/// or silently another value. Iterative: nesting depth is the input's.
inline std::string checkIntegers(const Json &manifest) {
  std::vector<const Json *> pending = {&manifest};
  while (!pending.empty()) {
    const Json &j = *pending.back();
    pending.pop_back();
    if (j.is_number_float() ||
        (j.is_number_unsigned() &&
         j.get<uint64_t>() >
             static_cast<uint64_t>(std::numeric_limits<int64_t>::max())))
      return "manifest.json: " + j.dump() + " is not an integer of 64 bits";
    if (j.is_structured())
      for (const Json &v : j)
        pending.push_back(&v);
  }
  return {};
}

//===----------------------------------------------------------------------===//
// Storage kinds and element types
//===----------------------------------------------------------------------===//

inline const char *storageKindName(layout::StorageKind kind) {
  switch (kind) {
  case layout::StorageKind::Buffer:
    return "buffer";
  case layout::StorageKind::Image2D:
    return "image2d";
  case layout::StorageKind::Image2DArray:
    return "image2d_array";
  }
  return "";
}

inline std::optional<layout::StorageKind> parseStorageKind(std::string_view s) {
  for (layout::StorageKind kind :
       {layout::StorageKind::Buffer, layout::StorageKind::Image2D,
        layout::StorageKind::Image2DArray})
    if (s == storageKindName(kind))
      return kind;
  return std::nullopt;
}

/// Element types of tensors and memory objects.
enum class ElementType : uint8_t { F32, F16, I32, I64 };

inline const char *elementTypeName(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "f32";
  case ElementType::F16:
    return "f16";
  case ElementType::I32:
    return "i32";
  case ElementType::I64:
    return "i64";
  }
  return "";
}

/// What the writer puts in `dtype` for a type no reader handles.
inline constexpr const char kUnknownElementType[] = "unknown";

inline std::optional<ElementType> parseElementType(std::string_view s) {
  for (ElementType type :
       {ElementType::F32, ElementType::F16, ElementType::I32, ElementType::I64})
    if (s == elementTypeName(type))
      return type;
  return std::nullopt;
}

inline size_t elementTypeBytes(ElementType type) {
  switch (type) {
  case ElementType::F16:
    return 2;
  case ElementType::F32:
  case ElementType::I32:
    return 4;
  case ElementType::I64:
    return 8;
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Layouts
//===----------------------------------------------------------------------===//

// The manifest form of a layout: `kind` is "buffer" or "image" (the named
// kinds are particular image placements), then the algebra's tile sizes,
// packed dim, and the factors on each axis as [dim, level] pairs with level
// 1 for an element factor and 0 for a tile factor. `encoding` is the
// compiler's attribute, for people reading the manifest.
inline constexpr const char kLayoutKindBuffer[] = "buffer";
inline constexpr const char kLayoutKindImage[] = "image";
/// The key of each image axis, in `layout::Axis` order.
inline constexpr const char *kAxisKeys[layout::kNumAxes] = {key::x, key::y,
                                                            key::layers};

inline Json layoutToJson(const layout::Layout &l, const std::string &encoding) {
  Json j = Json::object();
  j[key::encoding] = encoding;
  j[key::kind] = l.isBuffer() ? kLayoutKindBuffer : kLayoutKindImage;
  j[key::tile] = l.tile();
  j[key::packed] = static_cast<int64_t>(l.packedDim());
  for (unsigned a = 0; a < layout::kNumAxes; ++a) {
    Json factors = Json::array();
    for (layout::Factor f : l.axes()[a])
      factors.push_back({static_cast<int64_t>(f.dim),
                         f.level == layout::Level::Element ? 1 : 0});
    j[kAxisKeys[a]] = std::move(factors);
  }
  return j;
}

/// The layout of a tensor of `rank` that `j` describes; std::nullopt and
/// `error` set when it is not a valid layout.
inline std::optional<layout::Layout>
layoutFromJson(const Json &j, unsigned rank, std::string &error) {
  const std::string kind = j.at(key::kind).get<std::string>();
  if (kind == kLayoutKindBuffer)
    return layout::Layout::buffer(rank);
  if (kind != kLayoutKindImage) {
    error = "unknown layout kind '" + kind + "'";
    return std::nullopt;
  }
  std::vector<int64_t> tile = j.at(key::tile).get<std::vector<int64_t>>();
  if (tile.size() != rank) {
    error = "layout of rank " + std::to_string(tile.size()) +
            " for a tensor of rank " + std::to_string(rank);
    return std::nullopt;
  }
  // Dims and levels are range-checked as int64_t: narrowed first, a dim of
  // 2^32 would read as dim 0.
  layout::Layout::AxisFactors axes;
  for (unsigned a = 0; a < layout::kNumAxes; ++a)
    for (const Json &f : j.at(kAxisKeys[a])) {
      int64_t dim = f.at(0).get<int64_t>(), level = f.at(1).get<int64_t>();
      if (dim < 0 || dim >= static_cast<int64_t>(rank) ||
          (level != 0 && level != 1)) {
        error = "factor " + f.dump() + " is no [dim, level] of a rank-" +
                std::to_string(rank) + " layout";
        return std::nullopt;
      }
      axes[a].push_back({static_cast<unsigned>(dim),
                         level ? layout::Level::Element : layout::Level::Tile});
    }
  int64_t packed = j.at(key::packed).get<int64_t>();
  if (packed < -1 || packed >= static_cast<int64_t>(rank)) {
    error = "packed dim " + std::to_string(packed) +
            " is out of range for rank " + std::to_string(rank);
    return std::nullopt;
  }
  layout::Layout l = layout::Layout::image(
      std::move(tile), static_cast<int>(packed), std::move(axes));
  error = l.verify();
  if (!error.empty())
    return std::nullopt;
  return l;
}

//===----------------------------------------------------------------------===//
// Initializers
//===----------------------------------------------------------------------===//

/// How a parameter starts when no weights file sets it: an argument's
/// `fbl.init` in the IR and an input's `init` in the manifest, spelled
/// "zeros", "ones", "normal:<std>" (mean 0) or "uniform:<bound>" (in
/// [-bound, bound]), with a finite positive number.
struct InitSpec {
  enum class Kind : uint8_t { Zeros, Ones, Normal, Uniform };
  Kind kind = Kind::Zeros;
  double scale = 0.0; ///< The standard deviation or the bound.
};

/// The initializer `s` spells; std::nullopt and `error` set when it spells
/// none.
inline std::optional<InitSpec> parseInitSpec(std::string_view s,
                                             std::string &error) {
  if (s == "zeros")
    return InitSpec{InitSpec::Kind::Zeros, 0.0};
  if (s == "ones")
    return InitSpec{InitSpec::Kind::Ones, 0.0};
  size_t colon = s.find(':');
  std::string_view kind = s.substr(0, colon);
  if (colon != std::string_view::npos &&
      (kind == "normal" || kind == "uniform")) {
    std::string_view number = s.substr(colon + 1);
    double scale = 0.0;
    auto [end, ec] =
        std::from_chars(number.data(), number.data() + number.size(), scale);
    if (ec == std::errc() && end == number.data() + number.size() &&
        !number.empty() && std::isfinite(scale) && scale > 0.0)
      return InitSpec{kind == "normal" ? InitSpec::Kind::Normal
                                       : InitSpec::Kind::Uniform,
                      scale};
  }
  error = "initializer '" + std::string(s) +
          "' is none of zeros, ones, normal:<std>, uniform:<bound> (with a "
          "finite positive number)";
  return std::nullopt;
}

} // namespace fbl::manifest

#endif // FBL_LAYOUT_BUNDLEMANIFEST_H
