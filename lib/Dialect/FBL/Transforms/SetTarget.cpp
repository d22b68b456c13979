//===- SetTarget.cpp - The fbl-set-target pass ----------------------------===//
//
// Puts `fbl.target` on the module. Every other pass reads the target from
// there (TargetAttr::lookup), so this is the only place a target name turns
// into an attribute.
//
//===----------------------------------------------------------------------===//

#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/AsmParser/AsmParser.h"

namespace mlir::fbl {
#define GEN_PASS_DEF_FBLSETTARGETPASS
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"
} // namespace mlir::fbl

using namespace mlir;
using namespace mlir::fbl;

/// The target `spec` names: a preset, or `#fbl.target<...>` text.
static TargetAttr parseTarget(ModuleOp module, StringRef spec) {
  MLIRContext *ctx = module.getContext();
  if (!spec.starts_with("#")) {
    TargetAttr t = TargetAttr::getPreset(ctx, spec);
    if (!t)
      mlir::emitError(module.getLoc(), "unknown target '")
          << spec
          << "'; presets: " << llvm::join(TargetAttr::getPresetNames(), ", ");
    return t;
  }
  // Parse errors go to the module, not to stderr through the source manager.
  std::string message;
  TargetAttr t;
  {
    ScopedDiagnosticHandler capture(ctx, [&](Diagnostic &d) {
      message = d.str();
      return success();
    });
    t = dyn_cast_or_null<TargetAttr>(parseAttribute(spec, ctx));
  }
  if (!t)
    mlir::emitError(module.getLoc(), "invalid target attribute '")
        << spec << "'" << (message.empty() ? "" : ": " + message);
  return t;
}

namespace {
struct SetTargetPass
    : public mlir::fbl::impl::FBLSetTargetPassBase<SetTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    StringRef spec = target;
    if (spec.empty()) {
      if (module->hasAttr(FBLDialect::getTargetAttrName()))
        return;
      spec = fallback;
    }
    if (spec.empty())
      return;
    TargetAttr t = parseTarget(module, spec);
    if (!t)
      return signalPassFailure();
    module->setAttr(FBLDialect::getTargetAttrName(), t);
  }
};
} // namespace
