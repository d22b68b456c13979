//===- TrainingReport.cpp - The fbl-training-report pass ------------------===//
//
// The JSON report of a compiled training step (docs/UserGuide.md): totals over
// the module's training functions at the top, one entry per function below.
// Relayout bytes count what each relayout reads and writes.
//
//===----------------------------------------------------------------------===//

#include "fbl/Analysis/LayoutSelection.h"
#include "fbl/Dialect/FBL/IR/FBLOps.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::fbl {
#define GEN_PASS_DEF_FBLTRAININGREPORTPASS
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"
} // namespace mlir::fbl

using namespace mlir;
using namespace mlir::fbl;

namespace {

struct FunctionReport {
  std::string name;
  int64_t classes[5] = {0, 0, 0, 0, 0};
  int64_t phases[3] = {0, 0, 0};
  int64_t relayouts = 0, relayoutBytes = 0, views = 0;
  llvm::StringMap<int64_t> tensorsByLayout;
  double cost = 0.0;
};

StringRef layoutKind(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t || !t.getEncoding())
    return "none";
  return llvm::TypeSwitch<Attribute, StringRef>(t.getEncoding())
      .Case<RTileLayoutAttr>([](auto) { return "rtile"; })
      .Case<ChannelPackedLayoutAttr>([](auto) { return "channel_packed"; })
      .Case<ImageLayoutAttr>([](auto) { return "image"; })
      .Case<BufferLayoutAttr>([](auto) { return "buffer"; })
      .Default([](Attribute) { return "other"; });
}

struct TrainingReportPass
    : public mlir::fbl::impl::FBLTrainingReportPassBase<TrainingReportPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TargetAttr targetAttr = TargetAttr::lookupOrEmitError(module);
    if (!targetAttr)
      return signalPassFailure();
    OpCostModel costs(targetAttr);
    SmallVector<FunctionReport> reports;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      FunctionReport r;
      r.name = func.getSymName().str();
      bool training = false;
      func.walk([&](Operation *op) {
        if (auto phase =
                op->getAttrOfType<StringAttr>(FBLDialect::getPhaseAttrName())) {
          int p = phase.getValue() == "forward"    ? 0
                  : phase.getValue() == "backward" ? 1
                                                   : 2;
          ++r.phases[p];
          training |= p != 0;
        }
        if (auto cls =
                op->getAttrOfType<IntegerAttr>(FBLDialect::getClassAttrName()))
          ++r.classes[cls.getInt()];
        if (auto relayout = dyn_cast<RelayoutOp>(op)) {
          ++r.relayouts;
          r.relayoutBytes += getDeviceBytes(relayout.getSource().getType()) +
                             getDeviceBytes(relayout.getType());
        }
        // A view counts as folded unless a relayout made only for it (the
        // copy an index transform still needs) feeds it.
        if (isa<TransposeViewOp, ReshapeViewOp>(op)) {
          auto copy = op->getOperand(0).getDefiningOp<RelayoutOp>();
          if (!copy || !copy->hasOneUse())
            ++r.views;
        }
        for (Value v : op->getResults())
          if (isa<RankedTensorType>(v.getType()))
            ++r.tensorsByLayout[layoutKind(v.getType())];
      });
      if (!training)
        continue;
      for (BlockArgument arg : func.getArguments())
        if (isa<RankedTensorType>(arg.getType()))
          ++r.tensorsByLayout[layoutKind(arg.getType())];
      r.cost = estimateCost(func, costs);
      reports.push_back(std::move(r));
    }

    std::string errorMessage;
    auto out = openOutputFile(file, &errorMessage);
    if (!out) {
      mlir::emitError(module.getLoc(), "fbl-training-report: ") << errorMessage;
      return signalPassFailure();
    }
    llvm::json::OStream j(out->os(), 2);
    auto writeBody = [&](const FunctionReport &r) {
      j.attributeObject("ops_by_class", [&] {
        j.attribute("I", r.classes[1]);
        j.attribute("II", r.classes[2]);
        j.attribute("III", r.classes[3]);
        j.attribute("IV", r.classes[4]);
      });
      j.attributeObject("ops_by_phase", [&] {
        j.attribute("forward", r.phases[0]);
        j.attribute("backward", r.phases[1]);
        j.attribute("optimizer", r.phases[2]);
      });
      j.attribute("relayouts", r.relayouts);
      j.attribute("relayout_bytes", r.relayoutBytes);
      j.attribute("views_folded", r.views);
      j.attributeObject("tensors_by_layout", [&] {
        SmallVector<StringRef> keys;
        for (auto &e : r.tensorsByLayout)
          keys.push_back(e.getKey());
        llvm::sort(keys);
        for (StringRef k : keys)
          j.attribute(k, r.tensorsByLayout.lookup(k));
      });
      j.attribute("estimated_cost", r.cost);
    };
    FunctionReport total;
    total.name = "total";
    for (const FunctionReport &r : reports) {
      for (int i = 0; i < 5; ++i)
        total.classes[i] += r.classes[i];
      for (int i = 0; i < 3; ++i)
        total.phases[i] += r.phases[i];
      total.relayouts += r.relayouts;
      total.relayoutBytes += r.relayoutBytes;
      total.views += r.views;
      for (auto &e : r.tensorsByLayout)
        total.tensorsByLayout[e.getKey()] += e.getValue();
      total.cost += r.cost;
    }
    j.object([&] {
      j.attribute("policy", policy);
      j.attribute("target", targetAttr.getName());
      writeBody(total);
      j.attributeArray("functions", [&] {
        for (const FunctionReport &r : reports)
          j.object([&] {
            j.attribute("name", r.name);
            writeBody(r);
          });
      });
    });
    out->os() << "\n";
    // A full disk shows at the flush; unchecked, the stream's destructor
    // would abort with "LLVM ERROR: IO failure".
    out->os().flush();
    if (std::error_code ec = out->os().error()) {
      out->os().clear_error();
      // Only a partial regular file is removed, never a device.
      if (!llvm::sys::fs::is_regular_file(file))
        out->keep();
      mlir::emitError(module.getLoc(), "fbl-training-report: cannot write ")
          << file << ": " << ec.message();
      return signalPassFailure();
    }
    out->keep();
  }
};
} // namespace
