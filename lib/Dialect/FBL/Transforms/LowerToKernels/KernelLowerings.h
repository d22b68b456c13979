//===- KernelLowerings.h - Kernel family lowerings --------------*- C++ -*-===//
//
// Private to fbl-lower-to-kernels. The entry point of each kernel family,
// called by the pass driver (LowerToKernels.cpp) on the top-level ops of a
// laid-out function. Each takes the target the driver resolved, and
// `counter`, the module-wide kernel count that numbers kernel names (k0,
// k1, ...), incremented once per kernel created.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_LIB_DIALECT_FBL_TRANSFORMS_LOWERTOKERNELS_KERNELLOWERINGS_H
#define FBL_LIB_DIALECT_FBL_TRANSFORMS_LOWERTOKERNELS_KERNELLOWERINGS_H

#include "fbl/CostModel/KernelPlan.h"
#include "fbl/Dialect/FBL/IR/FBLOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace mlir::fbl::kernels {

/// InputRanges.cpp: records on each integer argument of `func` the range
/// its elements must lie in, as fbl.input_range = {min, max, message}.
void recordInputRanges(func::FuncOp func);

/// ContractionKernels.cpp: builds the GEMM kernel (register-tiled, or
/// local-tiled where `target` asks for it and the sizes allow) for a
/// contraction C (+)= A * B on images with sizes multiples of 4. Returns
/// failure, without a diagnostic and without touching the IR, when `op` is
/// not such a contraction (the generic kernel handles it then); on success
/// the caller replaces `op` with the dispatch. A contraction with an
/// epilogue of `epilogues` (matchGemmEpilogue) gets one kernel for both: the
/// epilogue op is replaced and erased here, and `op` is left without uses.
FailureOr<DispatchOp> lowerContraction(linalg::LinalgOp op, TargetAttr target,
                                       unsigned &counter,
                                       GemmEpilogueKinds epilogues);

/// ElementwiseKernels.cpp: replaces any single-result linalg op on encoded
/// tensors (elementwise, broadcast, reduction) by a kernel with one
/// work-item per output texel (per element for buffers).
LogicalResult lowerLinalg(linalg::LinalgOp op, TargetAttr target,
                          unsigned &counter);

/// RowKernels.cpp: replaces the ops of `group` (matchRowGroups) by one
/// kernel with a work-group per row, at its place; returns it. The
/// members stay (another group may compute one of them too), without uses
/// but where a later group reads them.
FailureOr<DispatchOp> lowerRowGroup(const RowGroup &group, TargetAttr target,
                                    unsigned &counter);

/// CopyKernels.cpp: replaces fbl.relayout by a copy kernel.
void lowerRelayout(RelayoutOp op, TargetAttr target, unsigned &counter);

/// The copies that copy kernels read through instead of reading what they
/// would write: static tensor.extract_slice, tensor.insert_slice into zeros
/// (padding) and views, where every reader is a copy kernel's element read
/// (a slice's or an insert's source) or another such copy. A convolution's
/// im2col reads its padded input through one strided slice per window
/// position, and its col2im the product's gradient through as many: each
/// was a kernel writing a tensor only the next copy read.
class ReadThrough {
public:
  /// Finds the copies of `block`'s top level read through.
  explicit ReadThrough(Block &block);

  /// Whether `op` is such a copy: no kernel computes it.
  bool contains(Operation *op) const { return op && copies.contains(op); }
  /// The tensor a kernel reads for the elements of `v`: `v`, or the source
  /// of the copies read through from it.
  Value source(Value v) const;
  /// Emits the element of `v` at logical index `idx`, where `handle` is the
  /// kernel argument of `source(v)`.
  Value load(OpBuilder &b, Location loc, Value v, Value handle,
             ValueRange idx) const;

private:
  llvm::DenseSet<Operation *> copies;
};

/// CopyKernels.cpp: replaces tensor.extract_slice or tensor.insert_slice
/// (static offsets and strides) by a copy kernel that reads sources through
/// `through`. An insert into the result of a chain of inserts that nothing
/// else reads (insertChainOf: the form tensor.concat and im2col take) is one
/// kernel for the whole chain.
LogicalResult lowerSlice(Operation *op, const ReadThrough &through,
                         TargetAttr target, unsigned &counter);

/// The inserts that `op`'s kernel writes, first to last: `op` after the
/// chain of inserts its destination is, each read only by the next.
SmallVector<tensor::InsertSliceOp> insertChainOf(tensor::InsertSliceOp op);

/// Whether `op` is an insert that a later insert's kernel writes (its result
/// is only the next insert's destination, its region static).
bool isChainedInsert(Operation *op);

/// A sum of inserts: an elementwise add of two tensors, its operands added
/// by other adds read only by it, down to leaves of which at least one
/// inserts a slice into zeros (how autodiff sums the gradients of
/// overlapping slices: col2im of a convolution's window reads).
struct InsertSum {
  /// The tensors added, in order, as the operands of the sum's adds that
  /// read them (lowering other ops replaces the values; the adds stay until
  /// the sum's kernel replaces them).
  SmallVector<OpOperand *> leaves;
  /// Per leaf, the insert into zeros it is (null: any other tensor).
  SmallVector<tensor::InsertSliceOp> inserts;
  /// What the sum's kernel computes besides its root: the inner adds and
  /// the inserts.
  SmallVector<Operation *> members;
};

/// CopyKernels.cpp: the sum of inserts rooted at `root`, if it is one (no
/// add a GEMM computes as its epilogue of `epilogues`). Ask before lowering
/// anything: the zeros are recognized by their fill.
std::optional<InsertSum> matchInsertSum(Operation *root,
                                        GemmEpilogueKinds epilogues);

/// CopyKernels.cpp: replaces the sum of inserts rooted at `root` by one
/// kernel adding, per element, each leaf's value (an insert's source, read
/// through `through`, inside its region, zero elsewhere).
void lowerInsertSum(Operation *root, const InsertSum &sum,
                    const ReadThrough &through, TargetAttr target,
                    unsigned &counter);

/// CopyKernels.cpp: replaces a tensor.insert of a scalar by a copy kernel
/// that replaces one element.
LogicalResult lowerInsert(tensor::InsertOp op, TargetAttr target,
                          unsigned &counter);

/// CopyKernels.cpp: replaces a constant tensor (f32, i32, i64; other than a
/// splat at most 64 KiB) by a kernel that writes its values.
LogicalResult lowerConstant(arith::ConstantOp op, TargetAttr target,
                            unsigned &counter);

/// ScatterKernels.cpp: replaces a scatter loop nest (tensor iter_args in
/// buffers) by a kernel that runs it in place.
LogicalResult lowerScatterLoop(scf::ForOp loop, TargetAttr target,
                               unsigned &counter);

} // namespace mlir::fbl::kernels

#endif // FBL_LIB_DIALECT_FBL_TRANSFORMS_LOWERTOKERNELS_KERNELLOWERINGS_H
