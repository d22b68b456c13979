//===- OpCost.h - Cost of MLIR ops on encoded tensors -----------*- C++ -*-===//
//
// Applies the cost model to ops: the loop nest of a linalg op (or the kernel
// fbl runs for softmax, a relayout, a scatter), the access of each operand,
// and the target's cache and work-group. Results are memoized per (op,
// operand, layout), since layout selection asks the same questions often.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_COSTMODEL_OPCOST_H
#define FBL_COSTMODEL_OPCOST_H

#include "fbl/CostModel/CostModel.h"
#include "fbl/Dialect/FBL/IR/FBLAttrs.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"

#include <map>
#include <string>

namespace mlir::fbl {

class OpCostModel {
public:
  explicit OpCostModel(TargetAttr target);

  /// Cost of `operand`'s owner reading it in `layout`.
  ::fbl::cost::AccessCost readCost(OpOperand &operand,
                                   LayoutEncodingAttrInterface layout);
  /// Cost of reading `value`, captured from above, inside `op` (a gather).
  ::fbl::cost::AccessCost capturedReadCost(Operation *op, Value value,
                                           LayoutEncodingAttrInterface layout);
  /// Cost of writing `result` in `layout`.
  ::fbl::cost::AccessCost writeCost(OpResult result,
                                    LayoutEncodingAttrInterface layout);
  /// Cost of a relayout of a tensor of `type`.
  ::fbl::cost::AccessCost relayoutCost(RankedTensorType type,
                                       LayoutEncodingAttrInterface from,
                                       LayoutEncodingAttrInterface to);

  TargetAttr getTarget() const { return target; }
  const ::fbl::cost::CacheGeometry &getCache() const { return cache; }

private:
  TargetAttr target;
  ::fbl::cost::CacheGeometry cache;
  int64_t wgX, wgY;
  std::map<std::tuple<void *, unsigned, const void *>, ::fbl::cost::AccessCost>
      memo;
  std::map<std::tuple<const void *, const void *, const void *>,
           ::fbl::cost::AccessCost>
      relayoutMemo;
};

/// The layout of `type` under `encoding`, for costing.
::fbl::layout::Layout layoutOf(RankedTensorType type,
                               LayoutEncodingAttrInterface encoding);

} // namespace mlir::fbl

#endif // FBL_COSTMODEL_OPCOST_H
