//===- PrintOpClasses.cpp - The fbl-print-op-classes pass -----------------===//
//
// Prints the operator classification of each training function as a table:
// one row per op with its phase and class, the forward values it reuses and
// how (reduced dims and innermost dim, then those of the forward access),
// and the op counts per phase and class.
//
//===----------------------------------------------------------------------===//

#include "fbl/Analysis/OpClassification.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/IR/AsmState.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::fbl {
#define GEN_PASS_DEF_FBLPRINTOPCLASSESPASS
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"
} // namespace mlir::fbl

using namespace mlir;
using namespace mlir::fbl;

static std::string formatAccess(const AccessPattern &a) {
  std::string s = "reduce {";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(a.reducedDims, os);
  os << "} inner " << a.innermostDim;
  return s;
}

namespace {
struct PrintOpClassesPass
    : public mlir::fbl::impl::FBLPrintOpClassesPassBase<PrintOpClassesPass> {
  void runOnOperation() override {
    llvm::raw_ostream &os = llvm::outs();
    AsmState asmState(getOperation());
    getOperation().walk([&](func::FuncOp func) {
      FailureOr<OpClassification> classes = OpClassification::analyze(func);
      if (failed(classes))
        return;
      os << "fbl-print-op-classes: @" << func.getSymName() << "\n";
      os << llvm::formatv("  {0,-4} {1,-14} {2,-24} {3,-10} {4,-6} {5}\n", "#",
                          "value", "op", "phase", "class", "reuse");
      unsigned counts[3] = {0, 0, 0}, classCounts[5] = {0, 0, 0, 0, 0};
      for (auto [index, op] : llvm::enumerate(classes->getOps())) {
        const OpInfo *info = classes->lookup(op);
        ++counts[static_cast<int>(info->phase)];
        ++classCounts[static_cast<int>(info->opClass)];
        std::string name = "-";
        if (op->getNumResults()) {
          name.clear();
          llvm::raw_string_ostream nameOs(name);
          op->getResult(0).printAsOperand(nameOs, asmState);
        }
        std::string reuse;
        llvm::raw_string_ostream reuseOs(reuse);
        llvm::interleave(
            info->reuse, reuseOs,
            [&](const ReuseEdge &e) {
              reuseOs << "op" << e.operandNumber << "=";
              e.value.printAsOperand(reuseOs, asmState);
              reuseOs << " [" << formatAccess(e.access) << " | fwd "
                      << formatAccess(e.forwardAccess) << "]"
                      << (e.conflicting ? " conflict" : "");
            },
            "; ");
        os << llvm::formatv("  {0,-4} {1,-14} {2,-24} {3,-10} {4,-6} {5}\n",
                            index, name, op->getName().getStringRef(),
                            stringifyPhase(info->phase),
                            stringifyOpClass(info->opClass), reuse);
      }
      os << llvm::formatv("  forward {0}, backward {1} (I {2}, II {3}, III "
                          "{4}, IV {5}), optimizer {6}\n",
                          counts[0], counts[1], classCounts[1], classCounts[2],
                          classCounts[3], classCounts[4], counts[2]);
    });
  }
};
} // namespace
