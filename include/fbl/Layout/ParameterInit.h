//===- ParameterInit.h - How a parameter starts -----------------*- C++ -*-===//
//
// The `fbl.init` argument attribute (and the manifest's `init` field) says
// how to initialize a parameter that no weights file provides:
//   zeros | ones | normal:STD | uniform:BOUND
// Parsed here once, for the dialect verifier, the runtime and the tools.
// MLIR-free.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_LAYOUT_PARAMETERINIT_H
#define FBL_LAYOUT_PARAMETERINIT_H

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

namespace fbl::layout {

struct ParameterInit {
  enum class Kind { Zeros, Ones, Normal, Uniform };
  Kind kind = Kind::Zeros;
  double scale = 0; ///< the standard deviation or the bound

  /// Parses the attribute text; nullopt when it is malformed.
  static std::optional<ParameterInit> parse(const std::string &text) {
    if (text == "zeros")
      return ParameterInit{Kind::Zeros, 0};
    if (text == "ones")
      return ParameterInit{Kind::Ones, 0};
    size_t colon = text.find(':');
    if (colon == std::string::npos)
      return std::nullopt;
    std::string kind = text.substr(0, colon), value = text.substr(colon + 1);
    if (kind != "normal" && kind != "uniform")
      return std::nullopt;
    char *end = nullptr;
    double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !std::isfinite(v) || v < 0)
      return std::nullopt;
    return ParameterInit{kind == "normal" ? Kind::Normal : Kind::Uniform, v};
  }

  static constexpr const char *kSyntax =
      "zeros, ones, normal:STD or uniform:BOUND (STD, BOUND >= 0)";
};

} // namespace fbl::layout

#endif // FBL_LAYOUT_PARAMETERINIT_H
