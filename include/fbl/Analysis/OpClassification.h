//===- OpClassification.h - Phases and classes of training ops --*- C++ -*-===//
//
// Finds, for every op of a training function, its phase (forward, backward,
// optimizer) from the data flow, and for backward ops the class I-IV of
// docs/OpClassification.md with the activation-reuse edges behind it: which
// forward tensors the op reads, and how its access compares with the forward
// access. fbl-classify-ops runs the analysis once and records it as
// attributes; the passes after it read those attributes (fromAttributes).
//
//===----------------------------------------------------------------------===//

#ifndef FBL_ANALYSIS_OPCLASSIFICATION_H
#define FBL_ANALYSIS_OPCLASSIFICATION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::fbl {

enum class Phase { Forward, Backward, Optimizer };
StringRef stringifyPhase(Phase phase);

/// Backward op classes; None for forward and optimizer ops.
enum class OpClass { None = 0, I = 1, II = 2, III = 3, IV = 4 };
StringRef stringifyOpClass(OpClass cls);

/// How an op walks one tensor operand.
struct AccessPattern {
  /// Tensor dims indexed by reduction loops, ascending.
  SmallVector<int64_t> reducedDims;
  /// The tensor dim the innermost loop touching the operand walks; -1 when
  /// no loop does (a scalar or a non-structured access).
  int64_t innermostDim = -1;
  bool operator==(const AccessPattern &o) const {
    return reducedDims == o.reducedDims && innermostDim == o.innermostDim;
  }
  bool operator!=(const AccessPattern &o) const { return !(*this == o); }
};

/// A backward op reading a forward value.
struct ReuseEdge {
  unsigned operandNumber = 0;
  Value value;
  AccessPattern access;        ///< in the backward op
  AccessPattern forwardAccess; ///< in the forward pass
  bool conflicting = false;
};

struct OpInfo {
  Phase phase = Phase::Forward;
  OpClass opClass = OpClass::None;
  /// Reads a forward value (activation, weight or input).
  bool readsForward = false;
  /// Some access differs from the forward one, or the op re-indexes its
  /// input (transpose, reshape).
  bool conflicting = false;
  SmallVector<ReuseEdge> reuse;
};

class OpClassification {
public:
  /// Classifies the ops of `func`'s single block. Fails (without a
  /// diagnostic) when `func` is not a training function: its first result
  /// must be a scalar loss.
  static FailureOr<OpClassification> analyze(func::FuncOp func);

  /// Records the classification on the IR, where every later pass reads it:
  /// `fbl.phase` on each classified op, `fbl.class` on backward ops and
  /// `fbl.reuse` (operand, access, forward access, conflict) on backward ops
  /// that read forward values.
  void annotate() const;

  /// The classification fbl-classify-ops recorded on `func`. Fails when no
  /// op of `func` carries a phase (it is no training function, or was never
  /// classified). Ops added since (relayouts, split inits) have no info.
  static FailureOr<OpClassification> fromAttributes(func::FuncOp func);

  /// Info of a top-level op of the function, or null.
  const OpInfo *lookup(Operation *op) const {
    auto it = infos.find(op);
    return it == infos.end() ? nullptr : &it->second;
  }
  /// The classified ops in block order.
  ArrayRef<Operation *> getOps() const { return ops; }

  /// The access pattern of `operand` by its owner (a linalg op or an index
  /// transform), or std::nullopt for accesses that have none.
  static std::optional<AccessPattern> getAccessPattern(OpOperand &operand);

private:
  SmallVector<Operation *> ops;
  llvm::DenseMap<Operation *, OpInfo> infos;
};

} // namespace mlir::fbl

#endif // FBL_ANALYSIS_OPCLASSIFICATION_H
