//===- KernelPlan.h - The kernel fbl emits for an op ------------*- C++ -*-===//
//
// The one home of the decisions fbl-lower-to-kernels takes about an op's
// kernel: whether a contraction runs as a GEMM kernel (register- or
// local-tiled) or as the generic per-texel kernel, its grid and work-group,
// and what each work-item reads in which order. The lowering asks here
// before it emits; the cost model asks here, for any candidate layouts,
// before layouts are chosen. So the model costs the kernel that is emitted.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_COSTMODEL_KERNELPLAN_H
#define FBL_COSTMODEL_KERNELPLAN_H

#include "fbl/CostModel/CostModel.h"
#include "fbl/Dialect/FBL/IR/FBLAttrs.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"

#include <optional>

namespace mlir::fbl {

/// How a GEMM kernel reads one operand: as 4x4 blocks over (rowLoop,
/// colLoop), each block 4 texels packed along loop `packed`.
struct GemmOperand {
  Value value;
  AffineMap map;
  unsigned packed;
  unsigned rowLoop, colLoop;
  /// Its operand number in the op.
  unsigned operandNumber;
  /// Its position among the kernel's inputs (set by the kernel builder).
  unsigned input = 0;
  /// Indexed by only one of rowLoop and colLoop, the packed one (an
  /// epilogue's bias): a block's rows, or columns, are one texel.
  bool broadcast = false;
};

/// A contraction C[b, m, n] (+)= A * B that the GEMM kernels handle.
struct GemmMatch {
  RankedTensorType resultType;
  SmallVector<int64_t> ranges;
  unsigned mLoop, nLoop, kLoop;
  /// The other (batch) loops, and the product of their ranges.
  SmallVector<unsigned> batchLoops;
  int64_t batch;
  /// A over (m, k), B over (k, n), C's init over (m, n).
  GemmOperand a, b, c;
  /// Whether the body multiplies a * b (rather than b * a): kept so the
  /// kernel rounds as the op does.
  bool aFirst;
  bool readsInit;
  /// The constant the accumulators start from when the init is not read
  /// (initConstant); null: zero.
  TypedAttr initValue;
};

/// An elementwise op that a GEMM kernel applies to its results before it
/// stores them (its epilogue) instead of writing the GEMM's result for a
/// kernel of its own to read back: an optimizer update `W - lr * dW`, an
/// activation's backward `dA * gelu'(H)`, a residual add. Where the GEMM's
/// result has other readers too (a forward activation's input, re-read by
/// its backward), the kernel stores both.
struct GemmEpilogue {
  linalg::LinalgOp op;
  /// Whether the kernel also stores the GEMM's result (C) for its other
  /// readers.
  bool keepsResult = false;
  /// The operand of `op` that the GEMM's result is.
  unsigned resultInput;
  /// Its other tensor inputs, read as 4x4 blocks over the GEMM's (m, n), as
  /// C's init is.
  SmallVector<GemmOperand> inputs;
  /// How its result is written, as C would be.
  GemmOperand output;
};

/// Which elementwise readers of a GEMM's result its kernel may compute
/// (fbl-lower-to-kernels' `gemm-epilogues`; every kind by default). Leaving
/// a kind out measures what it gains on a device.
struct GemmEpilogueKinds {
  /// Any epilogue at all.
  bool any = true;
  /// A reader beside others, whose kernel stores C too (keepsResult).
  bool besideOtherReaders = true;
  /// Inputs that drop m or n (a bias, a scale), one texel per block.
  bool broadcastInputs = true;

  /// The kinds a pass's `gemm-epilogues` option `name` selects: "all",
  /// "none", "sole-reader" (no reader beside others), "same-shape" (no
  /// broadcast inputs), "sole-same-shape" (neither: the epilogues of fbl
  /// before 2026-12-07). Any other name is an error on `op`, which `pass`
  /// reports.
  static FailureOr<GemmEpilogueKinds> fromOption(StringRef name, Operation *op,
                                                 StringRef pass);
};

/// The epilogue of GEMM `g` (`op`'s): a user of its result that is a
/// `linalg.generic` over the result's shape with parallel loops, a scalar
/// body that does not read its init, identity maps (or, for inputs, maps
/// that drop m or n: a bias), and f32 images packed along m or n with
/// aligned tiles (blocks, as C). The only user, or, where `kinds` takes
/// readers beside others and there are several users, the first in the
/// block that qualifies (keepsResult). fbl-lower-to-kernels emits one
/// kernel for both; the cost model costs it with planGemmWithEpilogue.
std::optional<GemmEpilogue> matchGemmEpilogue(linalg::LinalgOp op,
                                              const GemmMatch &g,
                                              GemmEpilogueKinds kinds = {});

/// Whether `op` is the epilogue of `kinds` of the GEMM that computes one
/// of its inputs.
bool isGemmEpilogue(linalg::LinalgOp op, GemmEpilogueKinds kinds = {});

/// Whether one per-texel kernel writes all of `op`'s results, each texel to
/// every output at the same place: parallel loops, results of one type,
/// inits the body does not read, each written through the first's map.
/// The generic kernel's condition for several results
/// (fbl-fuse-multi-output makes such ops).
bool writesResultsTogether(linalg::LinalgOp op);

/// The kernel of GEMM `op` with `epilogue` fused: its plan, with the
/// epilogue's inputs read as blocks at the output and its result written
/// instead of C (KernelShape::inputs beyond A and B).
std::optional<::fbl::cost::KernelShape>
planGemmWithEpilogue(linalg::LinalgOp op, const GemmMatch &g,
                     const GemmEpilogue &epilogue, TargetAttr target);

/// Whether `op` moves its operand's elements without changing them (a
/// view, a reshape, a relayout): a fill seen through it fills all the same.
bool movesElementsOnly(Operation *op);

/// The constant that `op`'s kernel starts its accumulators from instead of
/// reading its init: the value of the `linalg.fill` of an `arith.constant`
/// that produces the init, also through ops that move elements only (a
/// zero fill shared by reductions of several layouts reaches some through
/// a relayout). A zero-filled init is how linalg spells a fresh
/// accumulator (`linalg.matmul outs(fill(0))`, sums); the kernel starts at
/// the constant, reads no init and needs no fill kernel. Null when the init
/// is anything else, or `op` is itself a fill.
TypedAttr initConstant(linalg::LinalgOp op);

/// Whether `fill` needs no kernel: every use is the init of an op whose
/// kernel starts from its constant (initConstant).
bool isAbsorbedFill(Operation *fill);

/// The reduction of a single-init `op`: its body yields `combine(acc, x)`
/// with an associative, commutative `combine` (addf, mulf, maximumf, ...)
/// that is the only reader of the accumulator. Partial results combine with
/// it in any order: fbl-split-reductions sums partials with it, the row
/// kernels reduce a work-group's partials with it.
struct ReductionCombiner {
  Operation *op;
  TypedAttr neutral;
  /// The accumulator's position among `op`'s two operands.
  unsigned accPos;

  /// Builds `combine(acc, x)`: the combiner's op, each value at its place.
  Value build(OpBuilder &b, Location loc, Value acc, Value x) const;
};
std::optional<ReductionCombiner> matchReductionCombiner(linalg::LinalgOp op);

/// A row kernel's work-group: at most this many work-items, each a texel of
/// the row at a time.
constexpr int64_t kRowKernelMaxGroupSize = 128;
/// The most turns (texels of its row per pass) a work-item of a row kernel
/// takes: longer rows are split by fbl-split-reductions (takenByRowKernel).
constexpr int64_t kRowKernelMaxTurns = 16;
/// The most texels of one tensor a work-item of a row kernel holds in
/// registers (its turns times the texels it reads a turn): a row kernel
/// within it reads each tensor once, its later passes over the row take
/// the texels from registers (RowGroup::holdsRows).
constexpr int64_t kRowKernelHeldTexels = 8;

/// Ops that one row kernel computes: reductions over the last loop of a row
/// (a softmax's maximum and sum, a norm's statistics, a backward's sum of
/// dy * y), the elementwise ops over the same rows that read them broadcast
/// along the row (the sinks), and per-row scalar ops between them. A
/// work-group runs 4 neighbouring rows where a tensor the kernel stores
/// packs 4 rows into a texel, else 2 where it holds both (pairedRow), else
/// one; its work-items stride along
/// the row a texel at a time and reduce in local memory. The sinks' results
/// are stored; a row value is stored too where something outside the
/// group reads it (a norm's statistics for its weight's gradient).
struct RowGroup {
  /// In block order. A reduction two groups read is a member of both (each
  /// kernel computes it; the first stores it where it is stored).
  SmallVector<linalg::LinalgOp> members;
  /// The reductions and per-row ops whose results this kernel stores.
  SmallVector<linalg::LinalgOp> storedRowValues;
  /// Where the kernel goes: its first sink.
  Operation *place;
  /// The ranges of the row loops (every loop but the last: the row).
  SmallVector<int64_t> rows;
  int64_t length;
  /// The row loop along which a work-group takes 4 neighbouring rows (a
  /// stored tensor packs 4 rows into a texel along it); -1: none.
  int packedRow = -1;
  /// Else the row loop along which a work-group takes 2 neighbouring rows
  /// that no texel shares (the last row loop, where its work-items still
  /// hold their rows): each image tile fetched serves both, and the
  /// reductions' halvings and barriers serve two rows; -1: one row.
  int pairedRow = -1;

  int64_t rowsPerGroup() const {
    return packedRow >= 0 ? 4 : pairedRow >= 0 ? 2 : 1;
  }
  /// The row loop along which a work-group takes its rows (-1: one row).
  int groupedRow() const { return packedRow >= 0 ? packedRow : pairedRow; }
  int64_t numRows() const;
  /// The work-groups: one per row, or per rowsPerGroup() rows along
  /// groupedRow().
  int64_t numGroups() const;
  /// The work-items of a work-group: enough to give each one texel of the
  /// row (a power of two, at most 128; longer rows take turns).
  int64_t groupSize() const;
  /// The turns a work-item takes along the row in each pass.
  int64_t turns() const;
  /// Whether a work-item holds the texels it reads in registers from one
  /// pass over the row to the next (kRowKernelHeldTexels): its turns are
  /// unrolled and each tensor is read once, not once per pass.
  bool holdsRows() const;
  /// The members whose results the kernel stores, in the order of its
  /// outputs: the sinks (elementwise over whole rows), then storedRowValues.
  SmallVector<linalg::LinalgOp> storedMembers() const;
};

/// The row groups among the top-level ops of `block`. `unavailable`
/// excludes ops from groups (GEMMs, ops another kernel computes); a group
/// reads no tensor that is `unreadable` (a copy other kernels read
/// through). Every tensor a group reads is defined before its first sink,
/// where its kernel goes, and everything that reads what it stores comes
/// after. With `pairRows`, a group that can takes two rows a work-group
/// (RowGroup::pairedRow).
SmallVector<RowGroup>
matchRowGroups(Block &block, function_ref<bool(Operation *)> unavailable,
               function_ref<bool(Value)> unreadable, bool pairRows = true);

/// Whether a row kernel will compute `op` whole, asked before layouts
/// (fbl-split-reductions leaves such rows whole): a reduction over its last
/// loop, the others parallel, with at least `rowsPerUnit` rows (`rows`)
/// per compute unit of `target`, rows no longer than kRowKernelMaxTurns
/// turns of a work-group, that an elementwise op over the same loops
/// reads back along the row (through the map it writes), where nothing
/// before the first such reader reads it or what row reductions and
/// per-row scalar ops make of it at its row (the kernel, placed at that
/// reader, stores them there). Split, its row kernel's reductions would be
/// kernels of their own.
bool takenByRowKernel(linalg::GenericOp op, int64_t rows, TargetAttr target,
                      int64_t rowsPerUnit);

/// The layout each operand of an op is read in (null: not a tensor).
using OperandLayouts = ArrayRef<Attribute>;

/// The layout each of `values` carries in its type (null for non-tensors):
/// the layouts of an op whose types the layout search has encoded.
SmallVector<Attribute> encodingsOf(ValueRange values);

/// Matches `op` as a contraction the GEMM kernels handle when its operands
/// are read in `layouts`: the body is acc + a * b, every operand an image
/// packed along a dim that a blocked loop walks, with tiles aligned to the
/// 4-blocks (any sizes: the kernels mask what lies past a range that ends
/// inside a texel).
std::optional<GemmMatch> matchGemm(linalg::LinalgOp op, OperandLayouts layouts);
/// matchGemm with the layouts the operand types carry.
std::optional<GemmMatch> matchGemm(linalg::LinalgOp op);

/// How the local-tiled kernel runs `g`: its work-group tile, and whether
/// it runs in a launch of its own (its shape class's own_launch, where that
/// class's tile is the one used).
struct LocalGemmTile {
  ::fbl::target::GemmTile tile;
  bool ownLaunch = false;
};

/// The local-tiled kernel for `g` on `target`: the first of the tile of
/// `g`'s shape class, the target's gemm_tile, the default tile, and each of
/// those with one block per work-item, that covers `g`'s sizes; none when
/// `target` does not ask for local tiling or none fits (the register-tiled
/// kernel). `gemm` is g's kernel as planLinalgKernel plans it (its reads):
/// a class's tile is taken over the smaller class's unless the cost model
/// times it more than 5% slower there.
std::optional<LocalGemmTile> localGemmTile(const GemmMatch &g,
                                           const ::fbl::cost::KernelShape &gemm,
                                           TargetAttr target);

/// The kernel fbl-lower-to-kernels emits for `op` with its operands read in
/// `operandLayouts` and its results written in `resultLayouts` (one entry
/// per operand/result; null for non-tensors). Nullopt for ops that run no
/// kernel (views, constants, tensor.empty, absorbed fills). Ops the lowering
/// copies element by element (slices, inserts, scatter loops) are planned as
/// the per-texel copies of their results.
std::optional<::fbl::cost::KernelShape>
planKernel(Operation *op, OperandLayouts operandLayouts,
           ArrayRef<Attribute> resultLayouts, TargetAttr target);

/// planKernel for a single-result linalg op with its result written in
/// `resultLayout`; also answers for the index transforms planKernel leaves
/// to views, which fbl-lower-to-kernels runs as generic kernels when they
/// reach it. For a GEMM planned as the local-tiled kernel, `localTile`
/// (when given) receives its tile and launch as localGemmTile chose them.
std::optional<::fbl::cost::KernelShape>
planLinalgKernel(linalg::LinalgOp op, OperandLayouts operandLayouts,
                 Attribute resultLayout, TargetAttr target,
                 std::optional<LocalGemmTile> *localTile = nullptr);

/// The layout algebra's layout of `type` under `encoding`.
::fbl::layout::Layout layoutOf(RankedTensorType type, Attribute encoding);

} // namespace mlir::fbl

#endif // FBL_COSTMODEL_KERNELPLAN_H
