//===- FBLOps.cpp - fbl operations ----------------------------------------===//
//
// Verifiers check views against the layout algebra: a view's result
// encoding must be exactly the composed layout of its source, so a view
// never moves data and never lies about where an element lives.
//
//===----------------------------------------------------------------------===//

#include "fbl/Dialect/FBL/IR/FBLOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fbl;

#define GET_OP_CLASSES
#include "fbl/Dialect/FBL/IR/FBLOps.cpp.inc"

/// True when `a` and `b` place every element of a tensor of `shape` alike.
static bool sameLayout(LayoutEncodingAttrInterface a,
                       LayoutEncodingAttrInterface b, ArrayRef<int64_t> shape) {
  if (a == b)
    return true;
  return a.getLayout(shape.size())
      .sameAddressing(b.getLayout(shape.size()),
                      std::vector<int64_t>(shape.begin(), shape.end()));
}

/// Both ends of a view must carry fbl layouts.
static LogicalResult verifyViewEncodings(Operation *op, RankedTensorType src,
                                         RankedTensorType dst) {
  if (!getLayoutEncoding(src))
    return op->emitOpError("source must carry an fbl layout encoding, got ")
           << src;
  if (!getLayoutEncoding(dst))
    return op->emitOpError("result must carry an fbl layout encoding, got ")
           << dst;
  if (src.getElementType() != dst.getElementType())
    return op->emitOpError("source and result element types differ: ")
           << src.getElementType() << " vs " << dst.getElementType();
  return success();
}

//===----------------------------------------------------------------------===//
// RelayoutOp
//===----------------------------------------------------------------------===//

LogicalResult RelayoutOp::verify() {
  RankedTensorType src = getSource().getType();
  if (src.getShape() != getType().getShape() ||
      src.getElementType() != getType().getElementType())
    return emitOpError("source ")
           << src << " and result " << getType()
           << " must have the same shape and element type";
  if (!getLayoutEncoding(getType()))
    return emitOpError("result must carry an fbl layout encoding, got ")
           << getType();
  if (src.getEncoding() && !getLayoutEncoding(src))
    return emitOpError("source encoding ")
           << src.getEncoding() << " is not an fbl layout";
  return success();
}

OpFoldResult RelayoutOp::fold(FoldAdaptor) {
  if (getSource().getType() == getType())
    return getSource();
  // A relayout of a relayout reads the original tensor.
  if (auto inner = getSource().getDefiningOp<RelayoutOp>()) {
    getSourceMutable().assign(inner.getSource());
    return getResult();
  }
  return {};
}

namespace {
/// An op that only moves elements (a relayout, a view) of a constant fill of
/// a fresh tensor is that fill in its result's type: there is nothing to
/// move or address. A keepdim's [N, 1] zeros reshaped to [N] and relayouted
/// were the init of BERT-base's LayerNorm statistics: a fill kernel and a
/// relayout kernel ran, and the statistics, whose init was no longer a
/// constant when they were lowered, read it and formed no row kernel.
template <typename OpTy> struct MovedFill : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto fill = op.getSource().template getDefiningOp<linalg::FillOp>();
    if (!fill || !fill.getDpsInitOperand(0)
                      ->get()
                      .template getDefiningOp<tensor::EmptyOp>())
      return rewriter.notifyMatchFailure(op, "not a fill of a fresh tensor");
    RankedTensorType type = op.getType();
    Value empty =
        tensor::EmptyOp::create(rewriter, op.getLoc(), type.getShape(),
                                type.getElementType(), type.getEncoding());
    auto refill = rewriter.template replaceOpWithNewOp<linalg::FillOp>(
        op, ValueRange{fill.value()}, ValueRange{empty});
    // The fill's phase and class (fbl-classify-ops) stay with it.
    refill->setDiscardableAttrs(fill->getDiscardableAttrDictionary());
    return success();
  }
};
} // namespace

void RelayoutOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                             MLIRContext *context) {
  results.add<MovedFill<RelayoutOp>>(context);
}

//===----------------------------------------------------------------------===//
// TransposeViewOp
//===----------------------------------------------------------------------===//

void TransposeViewOp::build(OpBuilder &builder, OperationState &state,
                            Value source, ArrayRef<int64_t> permutation) {
  auto srcType = cast<RankedTensorType>(source.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : permutation)
    shape.push_back(srcType.getDimSize(p));
  Attribute encoding;
  if (LayoutEncodingAttrInterface layout = getLayoutEncoding(srcType)) {
    FailureOr<Attribute> composed = layout.getTransposedEncoding(permutation);
    if (succeeded(composed))
      encoding = *composed;
  }
  build(builder, state,
        RankedTensorType::get(shape, srcType.getElementType(), encoding),
        source, builder.getDenseI64ArrayAttr(permutation));
}

LogicalResult TransposeViewOp::verify() {
  RankedTensorType src = getSource().getType(), dst = getType();
  ArrayRef<int64_t> perm = getPermutation();
  int64_t rank = src.getRank();
  if (static_cast<int64_t>(perm.size()) != rank || dst.getRank() != rank)
    return emitOpError("permutation of size ")
           << perm.size() << " for a rank-" << rank << " source and rank-"
           << dst.getRank() << " result";
  SmallVector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return emitOpError("permutation [")
             << perm << "] is not a permutation of [0, " << rank << ")";
    seen[p] = true;
  }
  for (int64_t k = 0; k < rank; ++k)
    if (dst.getDimSize(k) != src.getDimSize(perm[k]))
      return emitOpError("result dim ")
             << k << " has size " << dst.getDimSize(k) << " but source dim "
             << perm[k] << " has size " << src.getDimSize(perm[k]);
  if (failed(verifyViewEncodings(*this, src, dst)))
    return failure();
  FailureOr<Attribute> composed =
      getLayoutEncoding(src).getTransposedEncoding(perm);
  if (failed(composed))
    return emitOpError("a transpose of ")
           << src.getEncoding()
           << " moves data and cannot be a view; use fbl.relayout";
  if (!sameLayout(cast<LayoutEncodingAttrInterface>(*composed),
                  getLayoutEncoding(dst), dst.getShape()))
    return emitOpError("result encoding ")
           << dst.getEncoding() << " is not the composed layout " << *composed;
  return success();
}

OpFoldResult TransposeViewOp::fold(FoldAdaptor) {
  ArrayRef<int64_t> perm = getPermutation();
  bool identity = llvm::all_of(llvm::enumerate(perm), [](auto it) {
    return it.value() == static_cast<int64_t>(it.index());
  });
  if (identity && getSource().getType() == getType())
    return getSource();
  // A view of a view: compose the permutations.
  if (auto inner = getSource().getDefiningOp<TransposeViewOp>()) {
    SmallVector<int64_t> composed;
    for (int64_t p : perm)
      composed.push_back(inner.getPermutation()[p]);
    getSourceMutable().assign(inner.getSource());
    setPermutation(composed);
    return getResult();
  }
  return {};
}

void TransposeViewOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                  MLIRContext *context) {
  results.add<MovedFill<TransposeViewOp>>(context);
}

//===----------------------------------------------------------------------===//
// ReshapeViewOp
//===----------------------------------------------------------------------===//

SmallVector<ReassociationIndices> ReshapeViewOp::getReassociationIndices() {
  SmallVector<ReassociationIndices> groups;
  for (Attribute group : getReassociation()) {
    ReassociationIndices indices;
    for (Attribute idx : cast<ArrayAttr>(group))
      indices.push_back(cast<IntegerAttr>(idx).getInt());
    groups.push_back(std::move(indices));
  }
  return groups;
}

LogicalResult ReshapeViewOp::verify() {
  RankedTensorType src = getSource().getType(), dst = getType();
  bool collapse = isCollapse();
  RankedTensorType large = collapse ? src : dst, small = collapse ? dst : src;
  SmallVector<ReassociationIndices> groups = getReassociationIndices();
  if (static_cast<int64_t>(groups.size()) != small.getRank())
    return emitOpError("reassociation has ")
           << groups.size() << " groups for a rank-" << small.getRank()
           << " tensor";
  int64_t next = 0;
  for (auto [i, group] : llvm::enumerate(groups)) {
    if (group.empty())
      return emitOpError("reassociation group ") << i << " is empty";
    int64_t product = 1;
    for (int64_t d : group) {
      if (d != next++)
        return emitOpError("reassociation must group consecutive dims of the "
                           "larger shape in order");
      product *= large.getDimSize(d);
    }
    if (product != small.getDimSize(i))
      return emitOpError("group ")
             << i << " multiplies to " << product
             << " but the dim it forms has size " << small.getDimSize(i);
  }
  // A scalar from (or to) unit dims has no groups, as tensor.collapse_shape
  // allows.
  bool unitToScalar =
      groups.empty() && small.getRank() == 0 &&
      llvm::all_of(large.getShape(), [](int64_t d) { return d == 1; });
  if (next != large.getRank() && !unitToScalar)
    return emitOpError("reassociation covers ")
           << next << " of the " << large.getRank() << " dims";
  if (failed(verifyViewEncodings(*this, src, dst)))
    return failure();
  FailureOr<Attribute> composed = getLayoutEncoding(src).getReshapedEncoding(
      src.getShape(), dst.getShape(), groups);
  if (failed(composed))
    return emitOpError("reshape of ")
           << src << " to [" << dst.getShape()
           << "] splits a tile or a texel and cannot be a view; use "
              "fbl.relayout";
  if (!sameLayout(cast<LayoutEncodingAttrInterface>(*composed),
                  getLayoutEncoding(dst), dst.getShape()))
    return emitOpError("result encoding ")
           << dst.getEncoding() << " is not the composed layout " << *composed;
  return success();
}

OpFoldResult ReshapeViewOp::fold(FoldAdaptor) {
  if (getSource().getType() == getType())
    return getSource();
  return {};
}

void ReshapeViewOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                MLIRContext *context) {
  results.add<MovedFill<ReshapeViewOp>>(context);
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

LogicalResult DispatchOp::verify() {
  if (getGrid().size() != 3 || getWorkgroup().size() != 3)
    return emitOpError("grid and workgroup need 3 sizes each");
  if (llvm::any_of(getGrid(), [](int64_t v) { return v < 1; }) ||
      llvm::any_of(getWorkgroup(), [](int64_t v) { return v < 1; }))
    return emitOpError("grid and workgroup sizes must be positive");
  for (auto [g, w] : llvm::zip(getGrid(), getWorkgroup()))
    if (g % w)
      return emitOpError("grid [")
             << getGrid() << "] is not a multiple of workgroup ["
             << getWorkgroup() << "]";
  if (getResults().size() != getOuts().size() ||
      TypeRange(getResults()) != TypeRange(getOuts()))
    return emitOpError("results must have the types of the outs");
  Block &body = getBody().front();
  SmallVector<Type> expected = llvm::to_vector(getIns().getTypes());
  llvm::append_range(expected, getOuts().getTypes());
  if (TypeRange(body.getArgumentTypes()) != TypeRange(expected))
    return emitOpError("body arguments must have the types of ins and outs");
  for (auto [i, variant] : llvm::enumerate(getVariants()))
    if (TypeRange(variant.front().getArgumentTypes()) != TypeRange(expected))
      return emitOpError("variant #")
             << i << " arguments must have the types of ins and outs";
  for (Value v : getIns())
    if (!getLayoutEncoding(v.getType()))
      return emitOpError("operands must carry fbl layout encodings");
  for (Value v : getOuts())
    if (!getLayoutEncoding(v.getType()))
      return emitOpError("operands must carry fbl layout encodings");
  return success();
}

Value mlir::fbl::viewedValue(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<TransposeViewOp, ReshapeViewOp>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

bool DispatchOp::isBufferArgument(Type type) {
  return isa<BufferLayoutAttr>(cast<RankedTensorType>(type).getEncoding());
}

::fbl::target::KernelArguments DispatchOp::getKernelArguments() {
  ::fbl::target::KernelArguments a;
  for (Value v : getIns())
    ++(isBufferArgument(v.getType()) ? a.buffers : a.readImages);
  for (Value v : getOuts())
    ++(isBufferArgument(v.getType()) ? a.buffers : a.writeImages);
  return a;
}

bool DispatchOp::onlySelects() {
  WalkResult walk = getBody().walk([](Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() == "math")
      return WalkResult::interrupt();
    if (!isa<arith::ArithDialect>(op->getDialect()) ||
        isa<arith::ConstantOp, arith::SelectOp, arith::MaximumFOp,
            arith::MinimumFOp, arith::MaxNumFOp, arith::MinNumFOp,
            arith::BitcastOp, arith::CmpFOp>(op))
      return WalkResult::advance();
    for (Type t : op->getResultTypes())
      if (isa<FloatType>(getElementTypeOrSelf(t)))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !walk.wasInterrupted();
}

LogicalResult BarrierOp::verify() {
  if (!(*this)->getParentOfType<DispatchOp>())
    return emitOpError("must be inside an fbl.dispatch body");
  return success();
}

/// Memory accesses name a tensor argument of their kernel, of the right
/// storage kind.
static LogicalResult verifyKernelAccess(Operation *op, Value handle, bool image,
                                        bool write) {
  auto arg = dyn_cast<BlockArgument>(handle);
  auto dispatch = op->getParentOfType<DispatchOp>();
  // The body's or a variant's arguments: each is its region's entry block.
  if (!arg || !dispatch || arg.getOwner()->getParentOp() != dispatch ||
      !arg.getOwner()->isEntryBlock())
    return op->emitOpError("accesses a value that is not a tensor argument "
                           "of its fbl.dispatch");
  bool isOut = arg.getArgNumber() >= dispatch.getIns().size();
  auto layout = getLayoutEncoding(handle.getType());
  bool isBuffer = isa<BufferLayoutAttr>(layout);
  if (image == isBuffer)
    return op->emitOpError(image ? "needs an image, got a buffer"
                                 : "needs a buffer, got an image");
  if (image && write != isOut)
    return op->emitOpError(write ? "writes an input image"
                                 : "reads an output image");
  return success();
}

LogicalResult LoadTexelOp::verify() {
  return verifyKernelAccess(*this, getImage(), /*image=*/true, /*write=*/false);
}
LogicalResult StoreTexelOp::verify() {
  return verifyKernelAccess(*this, getImage(), /*image=*/true, /*write=*/true);
}
LogicalResult LoadElementOp::verify() {
  if (failed(verifyKernelAccess(*this, getBuffer(), false, false)))
    return failure();
  if (getValue().getType() != getBuffer().getType().getElementType())
    return emitOpError("loads ") << getValue().getType() << " from a buffer of "
                                 << getBuffer().getType().getElementType();
  return success();
}
LogicalResult StoreElementOp::verify() {
  if (failed(verifyKernelAccess(*this, getBuffer(), false, true)))
    return failure();
  if (getValue().getType() != getBuffer().getType().getElementType())
    return emitOpError("stores ")
           << getValue().getType() << " into a buffer of "
           << getBuffer().getType().getElementType();
  return success();
}
