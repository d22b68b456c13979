//===- LayoutReport.cpp - Layout report of a module -----------------------===//
//
// One JSON object per encoded tensor value (function arguments and op
// results), grouped by function, with the totals a memory planner and a
// reader of compiled IR want first: image count, bytes, tensors per layout.
// Views (fbl.transpose_view / fbl.reshape_view) name the value whose memory
// they address and add no bytes.
//
//===----------------------------------------------------------------------===//

#include "fbl/Target/LayoutReport/LayoutReport.h"
#include "fbl/Dialect/FBL/IR/FBLAttrs.h"
#include "fbl/Dialect/FBL/IR/FBLDialect.h"
#include "fbl/Dialect/FBL/IR/FBLOps.h"
#include "fbl/Layout/BundleManifest.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::fbl;
namespace fl = ::fbl::layout;

template <typename T> static std::string printed(T thing) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << thing;
  return s;
}

LogicalResult mlir::fbl::writeLayoutReport(ModuleOp module,
                                           llvm::raw_ostream &os) {
  auto target =
      module->getAttrOfType<TargetAttr>(FBLDialect::getTargetAttrName());
  AsmState asmState(module);
  llvm::json::OStream j(os, /*IndentSize=*/2);
  int64_t totalBytes = 0, images = 0, buffers = 0, views = 0, overLimit = 0;
  llvm::StringMap<int64_t> byLayout;

  auto describe = [&](Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    LayoutEncodingAttrInterface encoding = getLayoutEncoding(value.getType());
    if (!encoding || !type.hasStaticShape())
      return;
    std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
    fl::Layout layout = encoding.getLayout(type.getRank());
    fl::Extents e = layout.extents(shape);
    unsigned elemBytes = getElementBytes(type.getElementType());
    int64_t bytes =
        encoding.getDeviceBytes(type.getShape(), type.getElementType());
    // Views alias the memory of the value they view; count memory once.
    Value viewed = viewedValue(value);
    bool isView = viewed != value;
    if (isView) {
      ++views;
    } else {
      totalBytes += bytes;
      ++(layout.isBuffer() ? buffers : images);
    }
    std::string layoutName =
        printed(type.getEncoding())
            .substr(0, printed(type.getEncoding()).find('<'));
    ++byLayout[layoutName];
    std::string fits;
    if (target)
      fits = layout.checkLimits(shape, target.getLimits(), elemBytes);
    if (!fits.empty())
      ++overLimit;
    std::string name;
    llvm::raw_string_ostream nameOs(name);
    value.printAsOperand(nameOs, asmState);
    j.object([&] {
      j.attribute("value", name);
      if (isView) {
        std::string viewedName;
        llvm::raw_string_ostream viewedOs(viewedName);
        viewed.printAsOperand(viewedOs, asmState);
        j.attribute("view_of", viewedName);
      }
      j.attribute("type", printed(type));
      j.attribute("storage",
                  ::fbl::manifest::storageKindName(layout.storage()));
      j.attributeArray("extents", [&] {
        j.value(e.width);
        j.value(e.height);
        j.value(e.layers);
      });
      j.attribute("channels", static_cast<int64_t>(e.channels));
      j.attribute("bytes", bytes);
      j.attribute("padding_bytes",
                  bytes - type.getNumElements() * int64_t(elemBytes));
      j.attribute("texel_map", printed(encoding.getTexelMap(type.getShape())));
      if (target)
        j.attribute("fits_target", fits.empty());
    });
  };

  j.object([&] {
    if (target)
      j.attribute("target", target.getName());
    j.attributeArray("functions", [&] {
      module.walk([&](func::FuncOp func) {
        j.object([&] {
          j.attribute("name", func.getSymName());
          j.attributeArray("tensors", [&] {
            for (BlockArgument arg : func.getArguments())
              describe(arg);
            func.walk([&](Operation *op) {
              for (Value result : op->getResults())
                describe(result);
            });
          });
        });
      });
    });
    j.attribute("images", images);
    j.attribute("buffers", buffers);
    j.attribute("views", views);
    j.attribute("total_bytes", totalBytes);
    j.attribute("over_target_limits", overLimit);
    j.attributeObject("tensors_by_layout", [&] {
      SmallVector<StringRef> keys;
      for (auto &entry : byLayout)
        keys.push_back(entry.getKey());
      llvm::sort(keys);
      for (StringRef k : keys)
        j.attribute(k, byLayout.lookup(k));
    });
  });
  os << "\n";
  return success();
}

void mlir::fbl::registerToLayoutReportTranslation() {
  TranslateFromMLIRRegistration registration(
      "fbl-to-layout-json",
      "describe every encoded tensor (layout, image extents, bytes) as JSON",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        return writeLayoutReport(module, os);
      },
      [](DialectRegistry &registry) {
        registerAllDialects(registry);
        registry.insert<FBLDialect>();
      });
}
