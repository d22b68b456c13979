//===- DecomposeConvolution.cpp - Window loops as strided slices ----------===//
//
// A convolution reads its input through index maps such as
// (n, oh, kh, c) -> (n, 2 * oh + kh, c): a window loop (kh, a reduction)
// added to an output position. Such maps are not projected permutations, so
// neither the gradient rules nor the kernels take them. This rewrite fixes
// each combination of window loop values k and reads, for it, the strided
// slice input[n, 2 * oh + k, c] (offset k, stride 2): the op becomes a chain
// of generics over the remaining loops, each with projected-permutation maps
// and each accumulating into the previous one's result. Any body works (a
// reduction is folded in no particular order anyway): convolutions of every
// layout, dilations (k enters with its coefficient), strides, shifted reads
// (i + 1: no window loop, one generic) and pooling.
//
// A convolution proper (two inputs, body acc + a * b, every loop indexing
// the output or both inputs) becomes one matmul instead (im2col): each
// window position's slices are transposed into [M, K] and [K, N] matrices,
// joined along K by tensor.concat, multiplied once, and the [M, N] product
// reshaped and transposed into the output. Its gradients are then matmuls
// too (GEMM kernels), where the chain's per-position contractions over
// four or more loops took generic kernels.
//
// Where the stride equals the window (non-overlapping patches, as ViT's
// 16x16 stride-16 embedding), the index s * o + k is a reshape instead:
// the input dim is expanded into [O, s] and read at (o, k), one op and no
// chain (PatchesAsReshape, tried first).
//
// Refused (left as they are, for the index-map check to report): negative
// coefficients (reversed reads), two output positions in one index,
// div/mod, window loops that are not reductions, and more than
// kMaxWindowPoints window positions.
//
//===----------------------------------------------------------------------===//

#include "fbl/Autodiff/ImporterForms.h"

#include "mlir/Analysis/FlatLinearValueConstraints.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace {

/// Window positions one op may be split into (a 16x16 patch is 256).
constexpr int64_t kMaxWindowPoints = 1024;

/// An index-map result as coefficients of the loop dims plus a constant.
struct LinearIndex {
  SmallVector<int64_t> coeffs;
  int64_t constant = 0;
};

std::optional<LinearIndex> linearIndex(AffineExpr e, unsigned numDims) {
  SmallVector<int64_t> flat;
  if (failed(getFlattenedAffineExpr(e, numDims, 0, &flat)) ||
      flat.size() != numDims + 1)
    return std::nullopt;
  LinearIndex l;
  l.coeffs.assign(flat.begin(), flat.begin() + numDims);
  l.constant = flat.back();
  return l;
}

/// A map result the rest of fbl reads as it is: a loop dim or a constant.
bool isPlainIndex(AffineExpr e) {
  return isa<AffineDimExpr, AffineConstantExpr>(e);
}

/// What both rewrites take: the compound results of `op`'s input maps
/// (s * o + k, ...), where `op` is a static tensor op with one body whose
/// outputs are indexed by projected permutations; empty for any other op.
SmallVector<AffineExpr> compoundIndices(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op->getNumRegions() != 1 ||
      op.hasDynamicShape())
    return {};
  for (OpOperand &init : op.getDpsInitsMutable())
    if (!op.getMatchingIndexingMap(&init).isProjectedPermutation())
      return {};
  SmallVector<AffineExpr> compound;
  for (OpOperand *in : op.getDpsInputOperands())
    for (AffineExpr e : op.getMatchingIndexingMap(in).getResults())
      if (!isPlainIndex(e))
        compound.push_back(e);
  return compound;
}

/// The compound index s * o + k with k a reduction loop of extent s
/// (dilation 1, no offset): (position loop o, window loop k).
std::optional<std::pair<unsigned, unsigned>>
patchIndex(AffineExpr e, unsigned numLoops,
           ArrayRef<utils::IteratorType> iterators, ArrayRef<int64_t> ranges) {
  std::optional<LinearIndex> l = linearIndex(e, numLoops);
  if (!l || l->constant != 0)
    return std::nullopt;
  std::optional<unsigned> o, k;
  for (unsigned d = 0; d < numLoops; ++d) {
    if (l->coeffs[d] == 0)
      continue;
    if (l->coeffs[d] == 1 && iterators[d] == utils::IteratorType::reduction &&
        !k)
      k = d;
    else if (!o)
      o = d;
    else
      return std::nullopt;
  }
  if (!o || !k || l->coeffs[*o] != ranges[*k])
    return std::nullopt;
  return std::make_pair(*o, *k);
}

/// The remaining loops of a convolution proper, by role: M (first input
/// and output), N (second input and output), K (both inputs, reduced).
struct MatmulLoops {
  SmallVector<unsigned> m, n, k;
};

/// The loops by role when `op` is acc + a * b over two inputs whose maps,
/// once the window loops are fixed, leave every loop in exactly two of
/// the three operands; none otherwise (pooling, depthwise and grouped
/// convolutions keep the chain).
std::optional<MatmulLoops>
matmulLoops(linalg::LinalgOp op, const llvm::SmallBitVector &window,
            ArrayRef<int64_t> newDim,
            ArrayRef<utils::IteratorType> newIterators) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1)
    return std::nullopt;
  auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!resultType || !resultType.getElementType().isF32())
    return std::nullopt;
  Block &body = *op.getBlock();
  if (body.getOperations().size() != 3)
    return std::nullopt;
  auto add = dyn_cast<arith::AddFOp>(
      body.getTerminator()->getOperand(0).getDefiningOp());
  Value acc = body.getArgument(2);
  if (!add || (add.getLhs() != acc && add.getRhs() != acc))
    return std::nullopt;
  auto mul = (add.getLhs() == acc ? add.getRhs() : add.getLhs())
                 .getDefiningOp<arith::MulFOp>();
  if (!mul ||
      !llvm::is_contained(ArrayRef<Value>{mul.getLhs(), mul.getRhs()},
                          body.getArgument(0)) ||
      !llvm::is_contained(ArrayRef<Value>{mul.getLhs(), mul.getRhs()},
                          body.getArgument(1)))
    return std::nullopt;
  // Which operands each remaining loop indexes (bit 0: first input, 1:
  // second, 2: output), from the original maps: a compound index counts
  // for its non-window loop.
  SmallVector<unsigned> uses(newIterators.size(), 0);
  for (auto [i, map] : llvm::enumerate(op.getIndexingMapsArray()))
    for (AffineExpr e : map.getResults()) {
      std::optional<LinearIndex> l = linearIndex(e, op.getNumLoops());
      if (!l || isa<AffineConstantExpr>(e))
        return std::nullopt;
      for (unsigned d = 0; d < l->coeffs.size(); ++d)
        if (l->coeffs[d] && !window.test(d))
          uses[newDim[d]] |= 1u << i;
    }
  MatmulLoops loops;
  for (auto [d, use] : llvm::enumerate(uses)) {
    bool reduction = newIterators[d] == utils::IteratorType::reduction;
    if (use == 0b011 && reduction)
      loops.k.push_back(d);
    else if (use == 0b101 && !reduction)
      loops.m.push_back(d);
    else if (use == 0b110 && !reduction)
      loops.n.push_back(d);
    else
      return std::nullopt;
  }
  if (loops.m.empty() || loops.n.empty() || loops.k.empty())
    return std::nullopt;
  return loops;
}

/// `value` with its dims permuted by `perm` (result dim i is dim perm[i])
/// and collapsed to a matrix of the first `numRows` dims by the rest.
Value permutedMatrix(PatternRewriter &rewriter, Location loc, Value value,
                     ArrayRef<int64_t> perm, size_t numRows) {
  auto type = cast<RankedTensorType>(value.getType());
  if (!llvm::equal(perm, llvm::seq<int64_t>(0, perm.size()))) {
    SmallVector<int64_t> shape;
    for (int64_t dim : perm)
      shape.push_back(type.getDimSize(dim));
    value = linalg::TransposeOp::create(
                rewriter, loc, value,
                tensor::EmptyOp::create(rewriter, loc, shape,
                                        type.getElementType()),
                perm)
                .getResult()[0];
  }
  ReassociationIndices rowGroup, colGroup;
  for (size_t i = 0; i < perm.size(); ++i)
    (i < numRows ? rowGroup : colGroup).push_back(i);
  if (rowGroup.size() == 1 && colGroup.size() == 1)
    return value;
  return tensor::CollapseShapeOp::create(
      rewriter, loc, value, ArrayRef<ReassociationIndices>{rowGroup, colGroup});
}

/// `value`, indexed by `map` over the remaining loops, as the matrix
/// [rows..., cols...] collapsed to 2-D.
Value asMatrix(PatternRewriter &rewriter, Location loc, Value value,
               AffineMap map, ArrayRef<unsigned> rows,
               ArrayRef<unsigned> cols) {
  SmallVector<int64_t> perm;
  for (unsigned loop : llvm::concat<const unsigned>(rows, cols))
    perm.push_back(
        *map.getResultPosition(getAffineDimExpr(loop, rewriter.getContext())));
  return permutedMatrix(rewriter, loc, value, perm, rows.size());
}

/// Input `in` of a convolution proper as one matrix when its map reads
/// every window loop as a plain dim (a filter): transposed to [rows...,
/// cols...] with the window loops (first slowest) leading K, which is the
/// rows when `windowInRows` and the columns otherwise, then collapsed to
/// 2-D. That is the order in which the window positions' slices are joined
/// along K. Null for an input with a compound index or other loops.
Value windowMatrix(PatternRewriter &rewriter, linalg::LinalgOp op,
                   OpOperand *in, ArrayRef<unsigned> windowLoops,
                   ArrayRef<int64_t> newDim, ArrayRef<unsigned> rows,
                   ArrayRef<unsigned> cols, bool windowInRows) {
  AffineMap map = op.getMatchingIndexingMap(in);
  auto type = dyn_cast<RankedTensorType>(in->get().getType());
  if (!type || !llvm::all_of(map.getResults(), llvm::IsaPred<AffineDimExpr>))
    return {};
  // The operand's loops in matrix order, as loops of `op`.
  SmallVector<unsigned> order;
  auto addRemaining = [&](ArrayRef<unsigned> loops) {
    for (unsigned l : loops)
      order.push_back(llvm::find(newDim, int64_t(l)) - newDim.begin());
  };
  addRemaining(rows);
  if (windowInRows)
    order.insert(order.begin(), windowLoops.begin(), windowLoops.end());
  else
    order.append(windowLoops.begin(), windowLoops.end());
  addRemaining(cols);
  if (order.size() != map.getNumResults())
    return {};
  SmallVector<int64_t> perm;
  for (unsigned loop : order) {
    std::optional<unsigned> dim =
        map.getResultPosition(getAffineDimExpr(loop, op.getContext()));
    if (!dim)
      return {};
    perm.push_back(*dim);
  }
  return permutedMatrix(rewriter, op.getLoc(), in->get(), perm,
                        rows.size() + (windowInRows ? windowLoops.size() : 0));
}

/// The product of the points' matrices joined along K, as the op's
/// result: reshaped to [M loops..., N loops...], transposed into the
/// output's order and added to the output's initial value unless that is
/// a zero fill.
Value multiply(PatternRewriter &rewriter, linalg::LinalgOp op,
               const MatmulLoops &loops, ArrayRef<Value> lhs,
               ArrayRef<Value> rhs, ArrayRef<int64_t> newDim,
               ArrayRef<int64_t> ranges) {
  Location loc = op.getLoc();
  Value a = lhs.size() == 1
                ? lhs.front()
                : tensor::ConcatOp::create(rewriter, loc, 1, lhs).getResult();
  Value b = rhs.size() == 1
                ? rhs.front()
                : tensor::ConcatOp::create(rewriter, loc, 0, rhs).getResult();
  auto aType = cast<RankedTensorType>(a.getType());
  auto bType = cast<RankedTensorType>(b.getType());
  Type f32 = aType.getElementType();
  int64_t rows = aType.getDimSize(0), cols = bType.getDimSize(1);
  Value zero =
      arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(f32));
  Value init = linalg::FillOp::create(
                   rewriter, loc, zero,
                   tensor::EmptyOp::create(rewriter, loc,
                                           ArrayRef<int64_t>{rows, cols}, f32)
                       .getResult())
                   .getResult(0);
  Value product =
      linalg::MatmulOp::create(rewriter, loc, ValueRange{a, b}, init)
          .getResult(0);
  // The remaining loops' extents in [M..., N...] order, and where each
  // output dim's loop sits in it.
  SmallVector<unsigned> order(loops.m);
  order.append(loops.n.begin(), loops.n.end());
  SmallVector<int64_t> extents(order.size());
  for (unsigned d = 0; d < ranges.size(); ++d)
    if (newDim[d] >= 0)
      if (auto *it = llvm::find(order, unsigned(newDim[d])); it != order.end())
        extents[it - order.begin()] = ranges[d];
  if (order.size() > 2) {
    ReassociationIndices rowGroup, colGroup;
    for (unsigned i = 0; i < order.size(); ++i)
      (i < loops.m.size() ? rowGroup : colGroup).push_back(i);
    product = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(extents, f32), product,
        ArrayRef<ReassociationIndices>{rowGroup, colGroup});
  }
  OpOperand *out = op.getDpsInitOperand(0);
  AffineMap outMap = op.getMatchingIndexingMap(out);
  SmallVector<int64_t> perm;
  for (AffineExpr e : outMap.getResults())
    perm.push_back(
        llvm::find(order, newDim[cast<AffineDimExpr>(e).getPosition()]) -
        order.begin());
  auto outType = cast<RankedTensorType>(out->get().getType());
  if (!llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    product =
        linalg::TransposeOp::create(
            rewriter, loc, product,
            tensor::EmptyOp::create(rewriter, loc, outType.getShape(), f32),
            perm)
            .getResult()[0];
  auto fill = out->get().getDefiningOp<linalg::FillOp>();
  if (fill && matchPattern(fill.value(), m_AnyZeroFloat()))
    return product;
  unsigned rank = outType.getRank();
  SmallVector<AffineMap> maps(3, rewriter.getMultiDimIdentityMap(rank));
  return linalg::GenericOp::create(
             rewriter, loc, TypeRange{outType}, ValueRange{out->get(), product},
             ValueRange{tensor::EmptyOp::create(rewriter, loc,
                                                outType.getShape(), f32)},
             maps,
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &b, Location l, ValueRange args) {
               linalg::YieldOp::create(
                   b, l,
                   ValueRange{arith::AddFOp::create(b, l, args[0], args[1])});
             })
      .getResult(0);
}

struct PatchesAsReshape : OpInterfaceRewritePattern<linalg::LinalgOp> {
  PatchesAsReshape(MLIRContext *ctx)
      : OpInterfaceRewritePattern(ctx, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<AffineExpr> compound = compoundIndices(op);
    if (compound.empty())
      return failure();
    unsigned numLoops = op.getNumLoops();
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    for (AffineExpr e : compound)
      if (!patchIndex(e, numLoops, iterators, ranges))
        return failure();

    MLIRContext *ctx = op.getContext();
    Location loc = op.getLoc();
    SmallVector<Value> ins;
    SmallVector<AffineMap> maps;
    for (OpOperand *in : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(in);
      auto type = dyn_cast<RankedTensorType>(in->get().getType());
      if (!type || llvm::all_of(map.getResults(), isPlainIndex)) {
        ins.push_back(in->get());
        maps.push_back(map);
        continue;
      }
      // Slice each patched dim to O * s, then expand it into [O, s].
      SmallVector<int64_t> sliced(type.getShape()), expanded;
      SmallVector<ReassociationIndices> groups;
      SmallVector<AffineExpr> results;
      for (auto [r, e] : llvm::enumerate(map.getResults())) {
        ReassociationIndices group = {int64_t(expanded.size())};
        if (auto patch = patchIndex(e, numLoops, iterators, ranges)) {
          auto [o, k] = *patch;
          sliced[r] = ranges[o] * ranges[k];
          if (sliced[r] > type.getDimSize(r))
            return failure(); // reads out of bounds
          expanded.push_back(ranges[o]);
          expanded.push_back(ranges[k]);
          group.push_back(group.front() + 1);
          results.push_back(getAffineDimExpr(o, ctx));
          results.push_back(getAffineDimExpr(k, ctx));
        } else {
          expanded.push_back(type.getDimSize(r));
          results.push_back(e);
        }
        groups.push_back(group);
      }
      Value source = in->get();
      if (ArrayRef<int64_t>(sliced) != type.getShape()) {
        SmallVector<OpFoldResult> offsets(type.getRank(),
                                          rewriter.getIndexAttr(0));
        SmallVector<OpFoldResult> sizes,
            strides(type.getRank(), rewriter.getIndexAttr(1));
        for (int64_t v : sliced)
          sizes.push_back(rewriter.getIndexAttr(v));
        source = tensor::ExtractSliceOp::create(
            rewriter, loc, RankedTensorType::get(sliced, type.getElementType()),
            source, offsets, sizes, strides);
      }
      ins.push_back(tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get(expanded, type.getElementType()),
          source, groups));
      maps.push_back(AffineMap::get(numLoops, 0, results, ctx));
    }
    for (OpOperand &init : op.getDpsInitsMutable())
      maps.push_back(op.getMatchingIndexingMap(&init));
    auto generic =
        linalg::GenericOp::create(rewriter, loc, op->getResultTypes(), ins,
                                  op.getDpsInits(), maps, iterators);
    Region &region = generic.getRegion();
    rewriter.cloneRegionBefore(op->getRegion(0), region, region.end());
    // A convolution proper (a 1x1 convolution, ViT's patch embedding) is
    // then one matmul, as the window chain's is (GEMM kernels forward and
    // backward instead of a generic contraction over several loops).
    auto sameLoops = llvm::to_vector(llvm::seq<int64_t>(0, numLoops));
    if (std::optional<MatmulLoops> loops = matmulLoops(
            generic, llvm::SmallBitVector(numLoops), sameLoops, iterators)) {
      Value a = asMatrix(rewriter, loc, ins[0], maps[0], loops->m, loops->k);
      Value b = asMatrix(rewriter, loc, ins[1], maps[1], loops->k, loops->n);
      Value product =
          multiply(rewriter, generic, *loops, a, b, sameLoops, ranges);
      rewriter.replaceOp(op, product);
      rewriter.eraseOp(generic);
      return success();
    }
    rewriter.replaceOp(op, generic->getResults());
    return success();
  }
};

struct DecomposeWindowLoops : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<AffineExpr> compound = compoundIndices(op);
    if (compound.empty())
      return failure();
    unsigned numLoops = op.getNumLoops();
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();

    // Which loops are window loops: reductions inside a compound index.
    llvm::SmallBitVector window(numLoops);
    SmallVector<LinearIndex> indices;
    for (AffineExpr e : compound) {
      std::optional<LinearIndex> l = linearIndex(e, numLoops);
      if (!l || l->constant < 0 ||
          llvm::any_of(l->coeffs, [](int64_t c) { return c < 0; }))
        return failure();
      for (unsigned d = 0; d < numLoops; ++d)
        if (l->coeffs[d] != 0 &&
            iterators[d] == utils::IteratorType::reduction &&
            !isPositionLoop(op, d))
          window.set(d);
      indices.push_back(std::move(*l));
    }
    // Each compound index keeps exactly one non-window loop.
    for (const LinearIndex &l : indices) {
      int kept = 0;
      for (unsigned d = 0; d < numLoops; ++d)
        kept += l.coeffs[d] != 0 && !window.test(d);
      if (kept != 1)
        return failure();
    }
    int64_t points = 1;
    for (unsigned d : window.set_bits()) {
      points *= ranges[d];
      if (points > kMaxWindowPoints)
        return failure();
    }

    // The loops that stay, renumbered.
    SmallVector<int64_t> newDim(numLoops, -1);
    SmallVector<utils::IteratorType> newIterators;
    for (unsigned d = 0; d < numLoops; ++d)
      if (!window.test(d)) {
        newDim[d] = newIterators.size();
        newIterators.push_back(iterators[d]);
      }
    unsigned newLoops = newIterators.size();
    MLIRContext *ctx = op.getContext();
    Location loc = op.getLoc();
    // Reads stay inside every input at the last window position (indices
    // grow with k): otherwise the op reads out of bounds and is not ours.
    SmallVector<int64_t> last(numLoops, 0);
    for (unsigned d : window.set_bits())
      last[d] = ranges[d] - 1;
    for (OpOperand *in : op.getDpsInputOperands())
      if (!sliceFor(rewriter, op, in, window, last, newDim, ranges, newLoops,
                    /*create=*/false)
               .second)
        return failure();

    std::optional<MatmulLoops> asMatmul =
        matmulLoops(op, window, newDim, newIterators);
    SmallVector<Value> acc(op.getDpsInits());
    SmallVector<Value> lhs, rhs; // the [M, K] and [K, N] matrix of each point
    SmallVector<int64_t> k(numLoops, 0);
    // (A named vector: a range-for keeps only its outermost temporary.)
    SmallVector<unsigned> windowLoops = llvm::to_vector(window.set_bits());
    // A filter (window loops as plain dims) is one matrix, not a slice per
    // window position: one transpose forward, none of the slices' scatters
    // in its gradient.
    Value wholeLhs, wholeRhs;
    if (asMatmul) {
      wholeLhs = windowMatrix(rewriter, op, op.getDpsInputOperand(0),
                              windowLoops, newDim, asMatmul->m, asMatmul->k,
                              /*windowInRows=*/false);
      wholeRhs = windowMatrix(rewriter, op, op.getDpsInputOperand(1),
                              windowLoops, newDim, asMatmul->k, asMatmul->n,
                              /*windowInRows=*/true);
    }
    for (int64_t p = 0; p < points; ++p) {
      // The window position of point p (first window loop slowest).
      int64_t rest = p;
      for (unsigned d : llvm::reverse(windowLoops)) {
        k[d] = rest % ranges[d];
        rest /= ranges[d];
      }
      SmallVector<Value> ins;
      SmallVector<AffineMap> maps;
      for (OpOperand *in : op.getDpsInputOperands()) {
        bool whole =
            in->getOperandNumber() == 0 ? bool(wholeLhs) : bool(wholeRhs);
        auto [value, map] = sliceFor(rewriter, op, in, window, k, newDim,
                                     ranges, newLoops, /*create=*/!whole);
        ins.push_back(value);
        maps.push_back(map);
      }
      if (asMatmul) {
        if (!wholeLhs)
          lhs.push_back(asMatrix(rewriter, loc, ins[0], maps[0], asMatmul->m,
                                 asMatmul->k));
        if (!wholeRhs)
          rhs.push_back(asMatrix(rewriter, loc, ins[1], maps[1], asMatmul->k,
                                 asMatmul->n));
        continue;
      }
      for (OpOperand &init : op.getDpsInitsMutable()) {
        AffineMap m = op.getMatchingIndexingMap(&init);
        SmallVector<AffineExpr> results;
        for (AffineExpr e : m.getResults())
          results.push_back(getAffineDimExpr(
              newDim[cast<AffineDimExpr>(e).getPosition()], ctx));
        maps.push_back(AffineMap::get(newLoops, 0, results, ctx));
      }
      auto generic = linalg::GenericOp::create(
          rewriter, loc, op->getResultTypes(), ins, acc, maps, newIterators);
      // The body, with linalg.index of a window loop its fixed value.
      IRMapping mapping;
      Region &region = generic.getRegion();
      rewriter.cloneRegionBefore(op->getRegion(0), region, region.end(),
                                 mapping);
      for (Operation &bodyOp :
           llvm::make_early_inc_range(region.front().getOperations()))
        if (auto index = dyn_cast<linalg::IndexOp>(bodyOp)) {
          rewriter.setInsertionPoint(index);
          uint64_t dim = index.getDim();
          if (window.test(dim))
            rewriter.replaceOp(index, arith::ConstantIndexOp::create(
                                          rewriter, index.getLoc(), k[dim]));
          else
            rewriter.replaceOpWithNewOp<linalg::IndexOp>(index, newDim[dim]);
        }
      rewriter.setInsertionPointAfter(generic);
      acc.assign(generic->result_begin(), generic->result_end());
    }
    if (asMatmul) {
      if (wholeLhs)
        lhs.assign(1, wholeLhs);
      if (wholeRhs)
        rhs.assign(1, wholeRhs);
      rewriter.replaceOp(
          op, multiply(rewriter, op, *asMatmul, lhs, rhs, newDim, ranges));
      return success();
    }
    rewriter.replaceOp(op, acc);
    return success();
  }

private:
  /// Whether loop `d` is indexed as a plain dim by an output (then it is
  /// not a window loop even if marked a reduction).
  static bool isPositionLoop(linalg::LinalgOp op, unsigned d) {
    for (OpOperand &init : op.getDpsInitsMutable())
      if (op.getMatchingIndexingMap(&init).isFunctionOfDim(d))
        return true;
    return false;
  }

  /// The slice of input `in` read at window position `k` (created when
  /// `create`), and its index map over the remaining loops; a null map when
  /// the slice leaves the input.
  static std::pair<Value, AffineMap>
  sliceFor(PatternRewriter &rewriter, linalg::LinalgOp op, OpOperand *in,
           const llvm::SmallBitVector &window, ArrayRef<int64_t> k,
           ArrayRef<int64_t> newDim, ArrayRef<int64_t> ranges,
           unsigned newLoops, bool create) {
    MLIRContext *ctx = op.getContext();
    AffineMap map = op.getMatchingIndexingMap(in);
    auto type = dyn_cast<RankedTensorType>(in->get().getType());
    if (!type) // a scalar operand: read whole
      return {in->get(), AffineMap::get(newLoops, 0, {}, ctx)};
    SmallVector<OpFoldResult> offsets, sizes, strides;
    SmallVector<int64_t> kept;
    SmallVector<AffineExpr> results;
    bool whole = true;
    for (auto [r, e] : llvm::enumerate(map.getResults())) {
      int64_t dimSize = type.getDimSize(r);
      int64_t offset = 0, size = dimSize, stride = 1;
      bool drop = false;
      if (auto dim = dyn_cast<AffineDimExpr>(e)) {
        if (window.test(dim.getPosition())) {
          offset = k[dim.getPosition()];
          size = 1;
          drop = true;
        } else {
          results.push_back(getAffineDimExpr(newDim[dim.getPosition()], ctx));
        }
      } else if (auto c = dyn_cast<AffineConstantExpr>(e)) {
        // Kept as it is: the unit-dim normalization handles it.
        results.push_back(c);
      } else {
        LinearIndex l = *linearIndex(e, op.getNumLoops());
        offset = l.constant;
        for (unsigned d = 0; d < l.coeffs.size(); ++d) {
          if (!l.coeffs[d])
            continue;
          if (window.test(d)) {
            offset += l.coeffs[d] * k[d];
          } else {
            size = ranges[d];
            stride = l.coeffs[d];
            results.push_back(getAffineDimExpr(newDim[d], ctx));
          }
        }
      }
      if (offset < 0 || offset + stride * (size - 1) >= dimSize)
        return {Value(), AffineMap()}; // out of bounds: not ours to fix
      whole &= !drop && offset == 0 && size == dimSize && stride == 1;
      offsets.push_back(rewriter.getIndexAttr(offset));
      sizes.push_back(rewriter.getIndexAttr(size));
      strides.push_back(rewriter.getIndexAttr(stride));
      if (!drop)
        kept.push_back(size);
    }
    AffineMap newMap = AffineMap::get(newLoops, 0, results, ctx);
    if (whole || !create)
      return {in->get(), newMap};
    auto sliceType = RankedTensorType::get(kept, type.getElementType());
    Value slice = tensor::ExtractSliceOp::create(
        rewriter, op.getLoc(), sliceType, in->get(), offsets, sizes, strides);
    return {slice, newMap};
  }
};

} // namespace

void mlir::fbl::populateDecomposeConvolutionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<PatchesAsReshape, DecomposeWindowLoops>(patterns.getContext());
}
