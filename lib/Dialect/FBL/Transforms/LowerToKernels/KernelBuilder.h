//===- KernelBuilder.h - Building fbl.dispatch kernels ----------*- C++ -*-===//
//
// Private to fbl-lower-to-kernels. What every kernel family lowering uses:
// address arithmetic through a layout's factor terms (Addressing), the
// construction of one fbl.dispatch with its inputs, work sizes and
// per-output-texel loop (KernelBuilder), and the recomputation of scalar
// chains inside a kernel.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_LIB_DIALECT_FBL_TRANSFORMS_LOWERTOKERNELS_KERNELBUILDER_H
#define FBL_LIB_DIALECT_FBL_TRANSFORMS_LOWERTOKERNELS_KERNELBUILDER_H

#include "fbl/CostModel/CostModel.h"
#include "fbl/Dialect/FBL/IR/FBLOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <array>

namespace mlir::fbl::kernels {

/// Emits index arithmetic for layouts. Every call creates new ops (no
/// folding or reuse): the kernels' IR is exactly what the calls spell. C++
/// leaves the order of a call's arguments unspecified: where two arguments
/// both create ops, callers create them in statements of their own, so the
/// IR does not depend on the compiler fbl is built with.
struct Addressing {
  OpBuilder &b;
  Location loc;

  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, int64_t k) {
    return k == 1 ? x : Value(arith::MulIOp::create(b, loc, x, c(k)));
  }
  Value div(Value x, int64_t k) {
    return k == 1 ? x : Value(arith::DivUIOp::create(b, loc, x, c(k)));
  }
  Value rem(Value x, int64_t k) {
    return arith::RemUIOp::create(b, loc, x, c(k));
  }
  Value lt(Value x, int64_t k) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, c(k));
  }
  /// `x && y`, where a null `x` stands for true.
  Value andi(Value x, Value y) {
    return x ? Value(arith::AndIOp::create(b, loc, x, y)) : y;
  }

  /// (layer, y, x, channel) of logical index `idx` in `type`'s layout.
  std::array<Value, 4> texelOf(RankedTensorType type, ValueRange idx);

  /// The logical index held by channel `channel` of texel (layer, y, x),
  /// and whether it is an element (not padding).
  std::pair<SmallVector<Value>, Value> logicalOf(RankedTensorType type,
                                                 Value layer, Value y, Value x,
                                                 int64_t channel);

  /// Zero of a scalar or vector `type` (vectors from their elements: the
  /// OpenCL printer takes scalar constants only).
  Value zero(Type type);

  /// Row-major offset of `idx` in `type`.
  Value linear(RankedTensorType type, ValueRange idx);

  /// Loads the element at `idx` of the kernel argument `handle`.
  Value load(Value handle, ValueRange idx);
};

/// Builds one fbl.dispatch: collect its inputs with `addInput`, create it
/// with `begin`, fill its body, and leave it with `end`.
class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, TargetAttr target)
      : b(b), loc(loc), target(target) {}

  /// Adds a tensor input (once); returns its position, for `inputHandle`.
  unsigned addInput(Value v);

  /// Creates the dispatch writing a fresh `resultType` over `items`
  /// work-items and positions the builder in its body. The work-group is
  /// the target's preferred one (clamped to the grid) unless `workgroup` is
  /// given.
  void begin(StringRef name, RankedTensorType resultType,
             ArrayRef<int64_t> items, ArrayRef<int64_t> workgroup = {}) {
    begin(name, ArrayRef<RankedTensorType>(resultType), items, workgroup);
  }
  /// The same for a kernel writing several fresh tensors (of one type at the
  /// same places, forEachOutputTexel stores each texel to all of them).
  void begin(StringRef name, ArrayRef<RankedTensorType> resultTypes,
             ArrayRef<int64_t> items, ArrayRef<int64_t> workgroup = {});

  /// Input `i`'s and output `r`'s arguments inside the body (after `begin`).
  Value inputHandle(unsigned i) { return dispatch.getBody().getArgument(i); }
  Value outputHandle(unsigned r = 0) {
    return dispatch.getBody().getArgument(ins.size() + r);
  }
  unsigned numOutputs() { return dispatch.getOuts().size(); }
  /// The work-item's global id along `d`.
  Value workItem(unsigned d);

  /// Restores the insertion point `begin` found; returns the dispatch.
  DispatchOp end();
  /// Moves the builder to the kernel's top level, before the loop or branch
  /// it is in: what is built there is seen by every later part of the
  /// kernel (values computed once for all its loops).
  void setInsertionPointToTopLevel();

  /// Emits the per-texel (or per-element) body: `compute(idx)` gives the
  /// output element at logical index `idx`.
  void forEachOutputElement(function_ref<Value(ValueRange idx)> compute);

  /// One channel of an output texel: its logical index, and whether it is
  /// an element (null: always, given that channel 0 is).
  struct Lane {
    SmallVector<Value> idx;
    Value valid;
  };
  /// Emits the per-texel (or per-element) body computing a texel's channels
  /// together: `compute(lanes)` gives one value per lane and output (lane
  /// by lane: lane c's value of output r at c * numOutputs() + r), and runs
  /// only where lane 0 is an element (other texels are written as zero). An
  /// image packed along some dim has 4 lanes, anything else one.
  void forEachOutputTexel(
      function_ref<SmallVector<Value>(ArrayRef<Lane> lanes)> compute);

  /// The per-element loop over a buffer output: one work-item per element,
  /// `body(idx, offset)` emitted with the element's logical index and its
  /// row-major offset (every output has the same).
  void
  forEachBufferElement(function_ref<void(ValueRange idx, Value offset)> body);

  OpBuilder &b;
  Location loc;
  TargetAttr target;
  SmallVector<Value> ins;
  DispatchOp dispatch;
  OpBuilder::InsertPoint saved;
};

/// Items of the kernel grid for an output of `type`: texels or elements.
SmallVector<int64_t> gridFor(RankedTensorType type);

/// A lane's next accumulators of a planned kernel, one per output: the op's
/// body at loop values `ivs`, with `inputs` the values of the plan's inputs
/// there and `acc` the accumulators. Values from above that the body
/// recomputes go into `shared`, which lives for one step of the nest (all of
/// its lanes).
using LaneBody = function_ref<FailureOr<SmallVector<Value>>(
    ValueRange ivs, ValueRange inputs, ValueRange acc, IRMapping &shared)>;

/// Emits, after `kb.begin`, the body of the per-texel (or per-element)
/// kernel `plan` describes (::fbl::cost::planReads decided its reads): the
/// reduction nest runs once for all lanes, the walked loop 4 iterations a
/// step, and each input is fetched once per group of lanes and iterations
/// that its plan says share a fetch. Plan input i is kernel input
/// `inputs[i]`; the initial value (plan.readsInit) is kernel input `init`,
/// else the constant `initValue` (null: zero). A kernel with several outputs
/// has no reduction loop and reads no initial value.
LogicalResult emitPlannedKernel(KernelBuilder &kb,
                                const ::fbl::cost::KernelShape &plan,
                                ArrayRef<unsigned> inputs,
                                std::optional<unsigned> init,
                                TypedAttr initValue, LaneBody body);

/// Makes the tensors the scalar chain of `v` reads kernel inputs.
void collectScalarInputs(Value v, KernelBuilder &kb,
                         llvm::DenseSet<Value> &seen);

/// Makes the tensors `region` reads from above, and those its captured
/// scalars read, kernel inputs; returns the captured values.
llvm::SetVector<Value> addCapturedInputs(Region &region, KernelBuilder &kb,
                                         llvm::DenseSet<Value> &seen);

/// Clones the scalar chain of `v` into the kernel; element reads of tensors
/// become loads from the kernel's inputs. Fails on ops that cannot run in a
/// kernel (with regions or side effects).
FailureOr<Value> cloneScalar(Value v, KernelBuilder &kb, IRMapping &mapping);

/// The values `op`'s body yields at loop values `ivs`, inlined at the
/// builder: tensor inputs are `tensorInput(operand)`, inits the
/// accumulators `acc` (one per init, where the body reads them), values
/// from above cloned once into `shared` (cloneScalar), and element reads of
/// the captured tensors in `gathers` (mapped to their kernel arguments)
/// loads at their computed index. Fails, with a diagnostic, on a value the
/// kernel cannot compute.
FailureOr<SmallVector<Value>>
inlineBody(linalg::LinalgOp op, KernelBuilder &kb, ValueRange ivs,
           function_ref<Value(OpOperand &)> tensorInput, ValueRange acc,
           const IRMapping &gathers, IRMapping &shared);

} // namespace mlir::fbl::kernels

#endif // FBL_LIB_DIALECT_FBL_TRANSFORMS_LOWERTOKERNELS_KERNELBUILDER_H
