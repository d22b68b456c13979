//===- InputRanges.cpp - Valid ranges of integer inputs -------------------===//
//
// Kernels do not check the indices they gather with, so the valid range of
// each integer input is recorded on its argument (fbl.input_range), which
// the manifest carries to the runtime's host-side check before upload. The
// ranges come from `cf.assert`s comparing an element with constants (with
// the model's message) and from the dims an element indexes.
//
//===----------------------------------------------------------------------===//

#include "KernelLowerings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

#include <limits>

using namespace mlir;
using namespace mlir::fbl;

/// The argument of `func` whose elements `tensor` holds (through relayouts
/// and views, which move elements but change none), or null.
static BlockArgument elementSource(Value tensor, func::FuncOp func) {
  while (Operation *def = tensor.getDefiningOp()) {
    if (!isa<RelayoutOp, TransposeViewOp, ReshapeViewOp, tensor::CastOp>(def))
      return nullptr;
    tensor = def->getOperand(0);
  }
  auto arg = dyn_cast<BlockArgument>(tensor);
  if (!arg || arg.getOwner() != &func.getBody().front())
    return nullptr;
  return arg;
}

/// The argument of `func` an integer scalar `v` is an element of, through
/// integer casts: a tensor.extract of it, or a linalg body argument bound to
/// it. Null when `v` is computed otherwise.
static BlockArgument scalarSource(Value v, func::FuncOp func) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto extract = dyn_cast<tensor::ExtractOp>(def))
      return elementSource(extract.getTensor(), func);
    if (!isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp>(def))
      return nullptr;
    v = def->getOperand(0);
  }
  auto bodyArg = dyn_cast<BlockArgument>(v);
  if (!bodyArg)
    return nullptr;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(bodyArg.getOwner()->getParentOp());
  if (!linalgOp || bodyArg.getOwner() != linalgOp.getBlock() ||
      bodyArg.getArgNumber() >= linalgOp.getNumDpsInputs())
    return nullptr;
  return elementSource(linalgOp.getDpsInputs()[bodyArg.getArgNumber()], func);
}

namespace {
/// A range [min, max] an integer input's elements must lie in.
struct InputRange {
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();
  std::string message;
};
} // namespace

/// Records on each integer argument of `func` the range its elements must
/// lie in, as fbl.input_range = {min, max, message}: from `cf.assert`s that
/// compare an element with constants (their message), and from the dims an
/// element indexes (a gather index into N rows must lie in [0, N)). Kernels
/// do not check indices; the runtime checks inputs against this range.
void mlir::fbl::kernels::recordInputRanges(func::FuncOp func) {
  llvm::DenseMap<BlockArgument, InputRange> ranges;
  auto narrow = [&](BlockArgument arg, std::optional<int64_t> min,
                    std::optional<int64_t> max, StringRef message) {
    if (!isa<IntegerType>(getElementTypeOrSelf(arg.getType())))
      return;
    InputRange &r = ranges[arg];
    bool narrowed = false;
    if (min && *min > r.min) {
      r.min = *min;
      narrowed = true;
    }
    if (max && *max < r.max) {
      r.max = *max;
      narrowed = true;
    }
    // The model's own message wins over a derived one.
    if (narrowed && (r.message.empty() || !message.starts_with("index ")))
      r.message = message.str();
  };
  // Asserts: conjunctions of `cmpi element, constant`.
  func.walk([&](cf::AssertOp assertOp) {
    SmallVector<Value> conds = {assertOp.getArg()};
    while (!conds.empty()) {
      Value c = conds.pop_back_val();
      if (auto andOp = c.getDefiningOp<arith::AndIOp>()) {
        conds.append({andOp.getLhs(), andOp.getRhs()});
        continue;
      }
      auto cmp = c.getDefiningOp<arith::CmpIOp>();
      if (!cmp)
        continue;
      arith::CmpIPredicate pred = cmp.getPredicate();
      Value element = cmp.getLhs();
      APInt bound;
      if (!matchPattern(cmp.getRhs(), m_ConstantInt(&bound))) {
        element = cmp.getRhs();
        if (!matchPattern(cmp.getLhs(), m_ConstantInt(&bound)))
          continue;
        // `c < x` is `x > c`: swap the predicate's sides.
        switch (cmp.getPredicate()) {
        case arith::CmpIPredicate::slt:
          pred = arith::CmpIPredicate::sgt;
          break;
        case arith::CmpIPredicate::sle:
          pred = arith::CmpIPredicate::sge;
          break;
        case arith::CmpIPredicate::sgt:
          pred = arith::CmpIPredicate::slt;
          break;
        case arith::CmpIPredicate::sge:
          pred = arith::CmpIPredicate::sle;
          break;
        case arith::CmpIPredicate::ult:
          pred = arith::CmpIPredicate::ugt;
          break;
        case arith::CmpIPredicate::ule:
          pred = arith::CmpIPredicate::uge;
          break;
        case arith::CmpIPredicate::ugt:
          pred = arith::CmpIPredicate::ult;
          break;
        case arith::CmpIPredicate::uge:
          pred = arith::CmpIPredicate::ule;
          break;
        default:
          pred = cmp.getPredicate();
        }
      }
      BlockArgument arg = scalarSource(element, func);
      if (!arg || bound.getBitWidth() > 64)
        continue;
      int64_t b = bound.getSExtValue();
      StringRef msg = assertOp.getMsg();
      constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
      constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
      switch (pred) {
      case arith::CmpIPredicate::slt:
        if (b != kMin)
          narrow(arg, std::nullopt, b - 1, msg);
        break;
      case arith::CmpIPredicate::sle:
        narrow(arg, std::nullopt, b, msg);
        break;
      case arith::CmpIPredicate::sgt:
        if (b != kMax)
          narrow(arg, b + 1, std::nullopt, msg);
        break;
      case arith::CmpIPredicate::sge:
        narrow(arg, b, std::nullopt, msg);
        break;
      // Unsigned bounds below 2^63 also exclude negative elements.
      case arith::CmpIPredicate::ult:
        if (b > 0)
          narrow(arg, 0, b - 1, msg);
        break;
      case arith::CmpIPredicate::ule:
        if (b >= 0)
          narrow(arg, 0, b, msg);
        break;
      default:
        break;
      }
    }
  });
  // Indices: an element used as an index into a static dim of N.
  auto indexBound = [&](Value tensor, ValueRange indices) {
    auto type = dyn_cast<RankedTensorType>(tensor.getType());
    if (!type)
      return;
    for (auto [d, i] : llvm::enumerate(indices)) {
      BlockArgument arg = scalarSource(i, func);
      if (!arg || type.isDynamicDim(d))
        continue;
      narrow(arg, 0, type.getDimSize(d) - 1,
             "index out of range for a dimension of " +
                 std::to_string(type.getDimSize(d)));
    }
  };
  func.walk([&](Operation *op) {
    if (auto extract = dyn_cast<tensor::ExtractOp>(op))
      indexBound(extract.getTensor(), extract.getIndices());
    else if (auto insert = dyn_cast<tensor::InsertOp>(op))
      indexBound(insert.getDest(), insert.getIndices());
  });
  Builder b(func.getContext());
  for (auto &[arg, r] : ranges)
    func.setArgAttr(
        arg.getArgNumber(), "fbl.input_range",
        b.getDictionaryAttr(
            {b.getNamedAttr("min", b.getI64IntegerAttr(r.min)),
             b.getNamedAttr("max", b.getI64IntegerAttr(r.max)),
             b.getNamedAttr("message", b.getStringAttr(r.message))}));
}
