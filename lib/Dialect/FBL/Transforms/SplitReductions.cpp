//===- SplitReductions.cpp - The fbl-split-reductions pass ----------------===//
//
// A reduction of a whole tensor to a scalar (a loss) lowers to a kernel of
// one work-item that walks every element. This pass splits it in two: a
// reduction over all but the outermost dim, parallel along it, into a
// vector of partial results, then a reduction of that vector into the
// scalar. Likewise a few long rows (a softmax or cross-entropy over a
// vocabulary): the row loop of N iterations becomes C chunks of N / C, the
// inputs it indexes expanded to [..., C, N / C, ...], partial results per
// row and chunk, then a reduction over the chunks; with many rows (a LoRA
// adapter's gradient) only where the target's cost model finds it faster;
// a vector reduced into a scalar (that second stage, or a loss over a
// flattened tensor) is a single row. With a target, the model also picks C. A
// contraction's partial results put the chunk first, so that its first stage is
// a batched GEMM (split-K). The combiner must be associative and commutative
// with a neutral element (add, mul, max, min), so the split changes only the
// summation order.
//
//===----------------------------------------------------------------------===//

#include "fbl/CostModel/CostModel.h"
#include "fbl/CostModel/KernelPlan.h"
#include "fbl/Dialect/FBL/IR/FBLAttrs.h"
#include "fbl/Dialect/FBL/IR/FBLDialect.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "fbl-split-reductions"

namespace mlir::fbl {
#define GEN_PASS_DEF_FBLSPLITREDUCTIONSPASS
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"
} // namespace mlir::fbl

using namespace mlir;
using namespace mlir::fbl;

/// `result = combine(init, partial over its last `reduced` dims)`: the
/// second stage. `out` maps the partial's loops to the init (default: its
/// leading dims, one for one); `in` maps them to the partial (default: the
/// identity; a split contraction's partial has its chunk dim first).
static Value combinePartials(RewriterBase &rewriter, Location loc,
                             Value partial, Value init,
                             const ReductionCombiner &c, unsigned reduced = 1,
                             AffineMap out = {}, AffineMap in = {}) {
  MLIRContext *ctx = rewriter.getContext();
  auto partialType = cast<RankedTensorType>(partial.getType());
  auto initType = cast<RankedTensorType>(init.getType());
  unsigned n = partialType.getRank();
  AffineMap id = AffineMap::getMultiDimIdentityMap(n, ctx);
  if (!out)
    out = AffineMap::get(n, 0, id.getResults().drop_back(reduced), ctx);
  if (!in)
    in = id;
  SmallVector<utils::IteratorType> iters(n - reduced,
                                         utils::IteratorType::parallel);
  iters.append(reduced, utils::IteratorType::reduction);
  auto total = linalg::GenericOp::create(
      rewriter, loc, TypeRange{initType}, ValueRange{partial}, ValueRange{init},
      ArrayRef<AffineMap>{in, out}, iters,
      [&](OpBuilder &b, Location l, ValueRange args) {
        linalg::YieldOp::create(b, l, c.build(b, l, args[1], args[0]));
      });
  return total.getResult(0);
}

/// The number of chunks a row of `n` iterations is cut into without a
/// target (with one, the cost model picks among chunkCandidates): the largest
/// divisor of `n` up to sqrt(n) that leaves chunks of a multiple of 4 (whole
/// texels along a packed row); for a row that is not whole texels anyway (a
/// 30522-word vocabulary) the largest divisor up to sqrt(n); 0 when there is
/// none above 1.
static int64_t chunksOf(int64_t n) {
  int64_t whole = 0, any = 0;
  for (int64_t c = 2; c * c <= n; ++c)
    if (n % c == 0) {
      any = c;
      if ((n / c) % 4 == 0)
        whole = c;
    }
  return whole ? whole : n % 4 ? any : 0;
}

/// The static loop ranges of `op` when it reduces rows into one init:
/// parallel loops and one reduction loop (`several`: two or more). One
/// reduction loop alone is a single row (a vector summed into a scalar:
/// the second stage of a whole-tensor reduction, or a loss over a
/// flattened tensor), which one work-item would walk.
static std::optional<SmallVector<int64_t>> rowRanges(linalg::GenericOp op,
                                                     bool several) {
  unsigned reductions = op.getNumReductionLoops();
  if (op.getNumDpsInits() != 1 ||
      (several ? reductions < 2 || op.getNumParallelLoops() == 0
               : reductions != 1))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamicShape(ranges))
    return std::nullopt;
  return ranges;
}

/// The iterations of each of `chunks` chunks of a row of `n`: n / chunks
/// rounded up, and up to whole texels (a multiple of 4) where the row is
/// whole texels. The last chunk may run past the row (a ragged split).
static int64_t chunkWidth(int64_t n, int64_t chunks) {
  int64_t width = llvm::divideCeil(n, chunks);
  return n % 4 ? width : llvm::alignTo(width, 4);
}

/// The chunk counts a row of `n` iterations may be cut into: divisors of
/// `n` that leave chunks of a multiple of 4 (whole texels along a packed
/// row), or any divisor for a row that is not whole texels anyway; where
/// `ragged`, also powers of two that do not divide it (the last chunk
/// padded: a 30522-word vocabulary is 2 x 3 x 5087, whose largest divisor
/// leaves 6 chunks of 5087 iterations).
static SmallVector<int64_t> chunkCandidates(int64_t n, bool ragged) {
  SmallVector<int64_t> out;
  for (int64_t c = 2; c * 4 <= n; ++c)
    if (n % c == 0 && ((n / c) % 4 == 0 || n % 4))
      out.push_back(c);
  if (!ragged)
    return out;
  for (int64_t c = 2; c * 16 <= n; c *= 2) {
    int64_t width = chunkWidth(n, c);
    // Exact splits are above; a count whose width leaves chunks empty is
    // another count's split.
    if (width * c != n && int64_t(llvm::divideCeil(n, width)) == c &&
        !llvm::is_contained(out, c))
      out.push_back(c);
  }
  llvm::sort(out);
  return out;
}

/// Builds the two stages of `op`'s row split into `chunks` before `op`:
/// reduction loop `r` of `n` iterations becomes the chunk (parallel) and an
/// appended offset loop (the reduction) of chunkWidth iterations. Returns
/// the second stage's result; `op` stays. Where the chunks run past the row
/// (ragged), the inputs it indexes are inserted into longer tensors and the
/// partial stage keeps its accumulator at offsets past the row, whatever
/// the body makes of what lies there.
static Value buildRowSplit(RewriterBase &rewriter, linalg::GenericOp op,
                           unsigned r, int64_t n, int64_t chunks,
                           const ReductionCombiner &combiner) {
  OpOperand *init = op.getDpsInitOperand(0);
  auto initType = cast<RankedTensorType>(init->get().getType());
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  unsigned numLoops = op.getNumLoops();
  // Loops of the partial stage: the original ones with r now the chunk
  // (parallel), and the offset in the chunk appended (the reduction).
  AffineExpr chunk = getAffineDimExpr(r, ctx);
  AffineExpr offset = getAffineDimExpr(numLoops, ctx);
  int64_t width = chunkWidth(n, chunks);
  bool ragged = width * chunks != n;
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(in);
    auto type = dyn_cast<RankedTensorType>(in->get().getType());
    std::optional<unsigned> at = map.getResultPosition(chunk);
    if (!type || !at) {
      inputs.push_back(in->get());
      maps.push_back(AffineMap::get(numLoops + 1, 0, map.getResults(), ctx));
      continue;
    }
    Value source = in->get();
    if (ragged) {
      // The row extended to the chunks' length. What lies past it is never
      // used (the partial stage masks it): no fill, one copy.
      SmallVector<int64_t> padded(type.getShape());
      padded[*at] = width * chunks;
      Value empty =
          tensor::EmptyOp::create(rewriter, loc, padded, type.getElementType());
      SmallVector<OpFoldResult> offsets(type.getRank(),
                                        rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> strides(type.getRank(),
                                        rewriter.getIndexAttr(1));
      source = tensor::InsertSliceOp::create(
          rewriter, loc, source, empty, offsets,
          tensor::getMixedSizes(rewriter, loc, source), strides);
    }
    // Expand dim `at` into [chunks, width].
    SmallVector<int64_t> shape;
    SmallVector<ReassociationIndices> groups;
    SmallVector<AffineExpr> results;
    for (unsigned d = 0; d < type.getRank(); ++d) {
      ReassociationIndices group;
      group.push_back(shape.size());
      if (d == *at) {
        shape.push_back(chunks);
        shape.push_back(width);
        group.push_back(shape.size() - 1);
        results.push_back(chunk);
        results.push_back(offset);
      } else {
        shape.push_back(type.getDimSize(d));
        results.push_back(map.getResult(d));
      }
      groups.push_back(group);
    }
    auto expandedType = RankedTensorType::get(shape, type.getElementType());
    auto expand = tensor::ExpandShapeOp::create(rewriter, loc, expandedType,
                                                source, groups);
    // How the kernel is shaped, not a reshape of the model: a view under
    // every layout policy (fbl-select-layouts).
    expand->setAttr(mlir::fbl::FBLDialect::getReductionChunksAttrName(),
                    rewriter.getUnitAttr());
    inputs.push_back(expand);
    maps.push_back(AffineMap::get(numLoops + 1, 0, results, ctx));
  }
  // partial[out dims..., chunk] from the neutral element; a contraction's
  // partial[chunk, out dims...], so that its first stage is a batched
  // GEMM (split-K) rather than a generic with the batch innermost.
  bool chunkFirst = linalg::isaContractionOpInterface(op);
  AffineMap outMap = op.getMatchingIndexingMap(init);
  SmallVector<int64_t> partialShape(initType.getShape());
  SmallVector<AffineExpr> outResults(outMap.getResults());
  partialShape.insert(chunkFirst ? partialShape.begin() : partialShape.end(),
                      chunks);
  outResults.insert(chunkFirst ? outResults.begin() : outResults.end(), chunk);
  maps.push_back(AffineMap::get(numLoops + 1, 0, outResults, ctx));
  Type elem = initType.getElementType();
  Value identity = arith::ConstantOp::create(rewriter, loc, combiner.neutral);
  Value empty = tensor::EmptyOp::create(rewriter, loc, partialShape, elem);
  Value filled =
      linalg::FillOp::create(rewriter, loc, identity, empty).getResult(0);
  SmallVector<utils::IteratorType> partialIters = iters;
  partialIters[r] = utils::IteratorType::parallel;
  partialIters.push_back(utils::IteratorType::reduction);
  auto partial =
      linalg::GenericOp::create(rewriter, loc, TypeRange{filled.getType()},
                                inputs, ValueRange{filled}, maps, partialIters);
  rewriter.cloneRegionBefore(op.getRegion(), partial.getRegion(),
                             partial.getRegion().end());
  // The body's index of the row loop: chunk * width + offset.
  auto rowIndex = [&](Location l) {
    Value c = linalg::IndexOp::create(rewriter, l, r);
    Value o = linalg::IndexOp::create(rewriter, l, numLoops);
    Value w = arith::ConstantIndexOp::create(rewriter, l, width);
    Value start = arith::MulIOp::create(rewriter, l, c, w);
    return arith::AddIOp::create(rewriter, l, start, o).getResult();
  };
  SmallVector<linalg::IndexOp> indices;
  partial.getBody()->walk([&](linalg::IndexOp i) {
    if (i.getDim() == r)
      indices.push_back(i);
  });
  OpBuilder::InsertionGuard guard(rewriter);
  for (linalg::IndexOp i : indices) {
    rewriter.setInsertionPoint(i);
    rewriter.replaceOp(i, rowIndex(i.getLoc()));
  }
  if (ragged) {
    // Past the row the accumulator stays as it is.
    Operation *yield = partial.getBody()->getTerminator();
    rewriter.setInsertionPoint(yield);
    Location l = yield->getLoc();
    Value at = rowIndex(l);
    Value length = arith::ConstantIndexOp::create(rewriter, l, n);
    Value inside = arith::CmpIOp::create(rewriter, l, arith::CmpIPredicate::ult,
                                         at, length);
    Value acc = partial.getBody()->getArgument(partial.getNumDpsInputs());
    Value kept =
        arith::SelectOp::create(rewriter, l, inside, yield->getOperand(0), acc);
    rewriter.modifyOpInPlace(yield, [&] { yield->setOperand(0, kept); });
  }
  rewriter.setInsertionPointAfter(partial);
  AffineMap in;
  if (chunkFirst) {
    unsigned rank = partialShape.size();
    SmallVector<unsigned> perm = {rank - 1};
    for (unsigned d = 0; d + 1 < rank; ++d)
      perm.push_back(d);
    in = AffineMap::getPermutationMap(perm, ctx);
  }
  return combinePartials(rewriter, loc, partial.getResult(0), init->get(),
                         combiner, 1, {}, in);
}

/// Records the ops a rewriter creates in `block` (a candidate split to
/// cost, then erase); ops inside their regions go with them.
struct CreatedOps : public RewriterBase::Listener {
  explicit CreatedOps(Block *block) : block(block) {}
  Block *block;
  SmallVector<Operation *> ops;
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    if (op->getBlock() == block)
      ops.push_back(op);
  }
};

/// The modelled time of the kernels of `ops` on `target`, every float tensor
/// read and written channel-packed along its last dim (the layouts are
/// chosen later; a split changes how many work-items walk how far, which
/// any layout sees alike) and the others in the buffers they will live in
/// (a texel would read four labels at a time, an element of a buffer reads
/// one: a 1024-token label count walked in one work-item took 33 us).
static double modelledTimeNs(ArrayRef<Operation *> ops, TargetAttr target,
                             const ::fbl::cost::DeviceModel &device) {
  MLIRContext *ctx = target.getContext();
  auto layoutFor = [&](Type type) -> Attribute {
    auto t = dyn_cast<RankedTensorType>(type);
    if (!t)
      return {};
    if (livesInBuffers(t.getElementType()))
      return BufferLayoutAttr::get(ctx);
    return ChannelPackedLayoutAttr::get(
        ctx, std::max<int64_t>(t.getRank() - 1, 0), BatchFold::Y);
  };
  double ns = 0;
  for (Operation *op : ops) {
    if (!isa<linalg::LinalgOp, tensor::InsertSliceOp>(op))
      continue;
    SmallVector<Attribute> in, out;
    for (Value v : op->getOperands())
      in.push_back(layoutFor(v.getType()));
    for (Value v : op->getResults())
      out.push_back(layoutFor(v.getType()));
    if (std::optional<::fbl::cost::KernelShape> k =
            planKernel(op, in, out, target))
      ns += ::fbl::cost::kernelCost(*k, device).timeNs;
  }
  return ns;
}

/// The model's choices so far, by a hash of what each was made for. A
/// model's layers repeat the same reductions, and costing a candidate
/// traces its kernels (3 of the 6 s a 32-layer LLaMA-width step took to
/// compile). A choice only decides speed (every candidate computes the same
/// sums) and is always one of the op's own candidates, so ops that merely
/// hash alike may share one.
using SplitDecisions = llvm::DenseMap<llvm::hash_code, int64_t>;

/// What a choice for `op` depends on: its name, attributes (maps and
/// iterators), operand and result types, body, and whether its init is a
/// constant fill; the target; and the question asked.
static llvm::hash_code decisionKey(linalg::GenericOp op, TargetAttr target,
                                   bool split, ArrayRef<int64_t> candidates) {
  auto typeHash = [](Value v) { return hash_value(v.getType()); };
  llvm::hash_code h = OperationEquivalence::computeHash(
      op, typeHash, typeHash, OperationEquivalence::IgnoreLocations);
  op.getBody()->walk([&](Operation *inner) {
    h = llvm::hash_combine(h, inner->getName().getAsOpaquePointer(),
                           inner->getRawDictionaryAttrs());
  });
  return llvm::hash_combine(
      h, initConstant(op), target, split,
      llvm::hash_combine_range(candidates.begin(), candidates.end()));
}

/// The candidate split the cost model finds fastest for `op` on `target`:
/// `build` builds each of `candidates` before `op`, and the ops it creates
/// are costed (with the fill and second stage) and erased. 0 when unsplit
/// is fastest (never where `split` says the op splits anyway). Recorded in
/// `decisions`, and taken from there for an op that hashes alike.
static int64_t cheapestSplit(RewriterBase &rewriter, linalg::GenericOp op,
                             TargetAttr target, bool split,
                             ArrayRef<int64_t> candidates,
                             function_ref<void(int64_t)> build,
                             SplitDecisions &decisions) {
  llvm::hash_code key = decisionKey(op, target, split, candidates);
  if (auto it = decisions.find(key); it != decisions.end())
    return it->second;
  ::fbl::cost::DeviceModel device =
      ::fbl::cost::DeviceModel::of(target.getDescription());
  double best = split ? std::numeric_limits<double>::infinity()
                      : modelledTimeNs({op.getOperation()}, target, device);
  int64_t bestCandidate = 0;
  OpBuilder::Listener *previous = rewriter.getListener();
  for (int64_t candidate : candidates) {
    CreatedOps created(op->getBlock());
    rewriter.setListener(&created);
    build(candidate);
    rewriter.setListener(previous);
    double ns = modelledTimeNs(created.ops, target, device);
    LLVM_DEBUG(llvm::dbgs()
               << "split " << op->getLoc() << " into " << candidate << ": "
               << ns << " ns (best so far " << best << ")\n");
    if (ns < best) {
      best = ns;
      bestCandidate = candidate;
    }
    for (Operation *o : llvm::reverse(created.ops))
      rewriter.eraseOp(o);
  }
  decisions[key] = bestCandidate;
  return bestCandidate;
}

/// How a reduction of `n` iterations into `rows` outputs may split: always
/// (few rows, long enough: the fixed rule), where the target's cost model
/// finds a split faster (from `minModelledRowLength` iterations, any rows),
/// or not at all.
enum class SplitRule { None, Fixed, Modelled };
static SplitRule splitRule(int64_t rows, int64_t n, int64_t minRowLength,
                           int64_t minModelledRowLength, int64_t maxRows,
                           TargetAttr target) {
  if (rows <= maxRows && n >= minRowLength)
    return SplitRule::Fixed;
  if (target && n >= minModelledRowLength)
    return SplitRule::Modelled;
  return SplitRule::None;
}

/// Where `op`'s row splits: its reduction loop `loop` of `length`
/// iterations into `chunks`, combined by `combiner`.
struct RowSplit {
  unsigned loop;
  int64_t length, chunks;
  ReductionCombiner combiner;
};

/// How `op` splits when it has one reduction loop of at least
/// `minRowLength` iterations and parallel loops of at most `maxRows`
/// iterations in all (into chunksOf its row). On a module with a target,
/// the others from `minModelledRowLength` iterations (more rows: a LoRA
/// weight gradient, 8 x 768 outputs summed over 6304 tokens; shorter rows:
/// a LoRA adapter's product, 512 x 8 outputs over 640) are split where the
/// cost model finds a split faster, into the chunk count it finds fastest.
static std::optional<RowSplit>
planRowSplit(RewriterBase &rewriter, linalg::GenericOp op, int64_t minRowLength,
             int64_t minModelledRowLength, int64_t maxRows,
             int64_t rowKernelRowsPerUnit, SplitDecisions &decisions) {
  std::optional<SmallVector<int64_t>> staticRanges = rowRanges(op, false);
  if (!staticRanges)
    return std::nullopt;
  SmallVector<int64_t> ranges = *staticRanges;
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  unsigned r =
      llvm::find(iters, utils::IteratorType::reduction) - iters.begin();
  int64_t rows = 1;
  for (unsigned l = 0; l < ranges.size(); ++l)
    if (l != r)
      rows *= ranges[l];
  int64_t n = ranges[r];
  TargetAttr target = TargetAttr::lookup(op);
  SplitRule rule =
      splitRule(rows, n, minRowLength, minModelledRowLength, maxRows, target);
  if (rule == SplitRule::None ||
      (rowKernelRowsPerUnit &&
       takenByRowKernel(op, rows, target, rowKernelRowsPerUnit)))
    return std::nullopt;
  auto initType =
      dyn_cast<RankedTensorType>(op.getDpsInitOperand(0)->get().getType());
  std::optional<ReductionCombiner> combiner = matchReductionCombiner(op);
  if (!initType || !combiner)
    return std::nullopt;
  // Every map a projected permutation, the row loop a plain dim wherever it
  // appears (so expanding that dim addresses chunk and offset).
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isProjectedPermutation())
      return std::nullopt;
  // A single row's split is a contraction with no output dim, which the
  // GEMM kernels do not take: a dot product stays whole.
  if (op.getNumParallelLoops() == 0 &&
      linalg::isaContractionOpInterface(cast<linalg::LinalgOp>(*op)))
    return std::nullopt;
  // A fixed split takes the count the model finds fastest where there is a
  // target: the square root balances items against walks only when the
  // row divides near it (6304 tokens: 8 chunks of 788, 1536 work-items for
  // a bias gradient, where 197 of 32 are 7x faster on the H200).
  // Ragged chunks read past the row, where the body's result is dropped:
  // not in a contraction (its split is a batched GEMM, with no masks), and
  // only float inputs there (an integer division of what lies past the row
  // could trap before it is dropped).
  bool ragged =
      !linalg::isaContractionOpInterface(cast<linalg::LinalgOp>(*op)) &&
      llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *in) {
        return !op.getMatchingIndexingMap(in).getResultPosition(
                   getAffineDimExpr(r, op.getContext())) ||
               isa<FloatType>(getElementTypeOrSelf(in->get().getType()));
      });
  int64_t chunks =
      target ? cheapestSplit(
                   rewriter, op, target, rule == SplitRule::Fixed,
                   chunkCandidates(n, ragged),
                   [&](int64_t c) {
                     (void)buildRowSplit(rewriter, op, r, n, c, *combiner);
                   },
                   decisions)
             : chunksOf(n);
  if (chunks == 0)
    return std::nullopt;
  return RowSplit{r, n, chunks, *combiner};
}

static LogicalResult
splitRowReduction(RewriterBase &rewriter, linalg::GenericOp op,
                  int64_t minRowLength, int64_t minModelledRowLength,
                  int64_t maxRows, int64_t rowKernelRowsPerUnit,
                  SplitDecisions &decisions) {
  std::optional<RowSplit> split =
      planRowSplit(rewriter, op, minRowLength, minModelledRowLength, maxRows,
                   rowKernelRowsPerUnit, decisions);
  if (!split)
    return failure();
  rewriter.replaceOp(op, buildRowSplit(rewriter, op, split->loop, split->length,
                                       split->chunks, split->combiner));
  return success();
}

/// A named contraction (a forward pass's `linalg.matmul` of a LoRA
/// adapter: 512 x 8 outputs over 640) splits as its generic form would: a
/// generic clone is planned and, where the plan splits it, split in the
/// op's place; elsewhere the op stays as it is.
static LogicalResult
splitNamedContraction(RewriterBase &rewriter, linalg::LinalgOp op,
                      int64_t minRowLength, int64_t minModelledRowLength,
                      int64_t maxRows, SplitDecisions &decisions) {
  if (isa<linalg::GenericOp>(op) || !linalg::isaContractionOpInterface(op) ||
      op.getNumReductionLoops() != 1 || !op.hasPureTensorSemantics())
    return failure();
  auto clone = cast<linalg::LinalgOp>(rewriter.clone(*op));
  FailureOr<linalg::GenericOp> generic =
      linalg::generalizeNamedOp(rewriter, clone);
  if (failed(generic)) {
    rewriter.eraseOp(clone);
    return failure();
  }
  std::optional<RowSplit> split =
      planRowSplit(rewriter, *generic, minRowLength, minModelledRowLength,
                   maxRows, /*rowKernelRowsPerUnit=*/0, decisions);
  if (split) {
    rewriter.setInsertionPoint(*generic);
    rewriter.replaceOp(op, buildRowSplit(rewriter, *generic, split->loop,
                                         split->length, split->chunks,
                                         split->combiner));
  }
  rewriter.eraseOp(*generic);
  return success(split.has_value());
}

/// Builds the two stages of `op`'s split of several reduction loops before
/// `op`: the first `moved` of `reductions` (outermost first) become
/// parallel loops of a partial stage indexed by the output's loops and
/// them; a second stage reduces them into the init. No tensor is
/// reshaped. Returns the second stage's result; `op` stays. The output's
/// results must be its loops or constant 0 (a keepdim's unit dims, which
/// the partial drops).
static Value buildLoopSplit(RewriterBase &rewriter, linalg::GenericOp op,
                            ArrayRef<int64_t> ranges,
                            ArrayRef<unsigned> reductions, size_t moved,
                            const ReductionCombiner &combiner) {
  OpOperand *init = op.getDpsInitOperand(0);
  auto initType = cast<RankedTensorType>(init->get().getType());
  AffineMap outMap = op.getMatchingIndexingMap(init);
  MLIRContext *ctx = op.getContext();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  SmallVector<AffineExpr> partialResults;
  SmallVector<int64_t> partialShape;
  for (AffineExpr e : outMap.getResults())
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      partialResults.push_back(e);
      partialShape.push_back(ranges[d.getPosition()]);
    }
  unsigned kept = partialResults.size();
  for (size_t i = 0; i < moved; ++i) {
    partialResults.push_back(getAffineDimExpr(reductions[i], ctx));
    partialShape.push_back(ranges[reductions[i]]);
    iters[reductions[i]] = utils::IteratorType::parallel;
  }

  Location loc = op.getLoc();
  Type elem = initType.getElementType();
  Value identity = arith::ConstantOp::create(rewriter, loc, combiner.neutral);
  Value empty = tensor::EmptyOp::create(rewriter, loc, partialShape, elem);
  Value filled =
      linalg::FillOp::create(rewriter, loc, identity, empty).getResult(0);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  maps.back() = AffineMap::get(ranges.size(), 0, partialResults, ctx);
  auto partial = linalg::GenericOp::create(
      rewriter, loc, TypeRange{filled.getType()}, op.getDpsInputs(),
      ValueRange{filled}, maps, iters);
  rewriter.cloneRegionBefore(op.getRegion(), partial.getRegion(),
                             partial.getRegion().end());

  // The init's dims are the partial's first `kept`; its constants stay.
  SmallVector<AffineExpr> totalOut;
  unsigned next = 0;
  for (AffineExpr e : outMap.getResults())
    totalOut.push_back(isa<AffineDimExpr>(e) ? getAffineDimExpr(next++, ctx)
                                             : e);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointAfter(partial);
  unsigned p = partialShape.size();
  return combinePartials(rewriter, loc, partial.getResult(0), init->get(),
                         combiner, p - kept,
                         AffineMap::get(p, 0, totalOut, ctx));
}

/// Splits `op` when it has several reduction loops (a GroupNorm's
/// statistics over [C/G, H, W], a bias gradient over [N, H, W]) of at
/// least `minRowLength` iterations together and parallel loops of at most
/// `maxRows` iterations in all; on a module with a target, also from
/// `minModelledRowLength` iterations with any number of rows, where the
/// cost model finds a split faster. Outer reduction loops, never the
/// innermost, become parallel loops of a partial stage: without a target
/// the prefix that best balances the work items against what each walks
/// (whose iterations are closest to the square root of the whole), with
/// one the prefix the model finds fastest.
static LogicalResult
splitReductionLoops(RewriterBase &rewriter, linalg::GenericOp op,
                    int64_t minRowLength, int64_t minModelledRowLength,
                    int64_t maxRows, SplitDecisions &decisions) {
  std::optional<SmallVector<int64_t>> staticRanges = rowRanges(op, true);
  if (!staticRanges)
    return failure();
  SmallVector<int64_t> ranges = *staticRanges;
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  SmallVector<unsigned> reductions;
  int64_t rows = 1, n = 1;
  for (unsigned l = 0; l < ranges.size(); ++l) {
    if (iters[l] == utils::IteratorType::reduction) {
      reductions.push_back(l);
      n *= ranges[l];
    } else {
      rows *= ranges[l];
    }
  }
  TargetAttr target = TargetAttr::lookup(op);
  SplitRule rule =
      splitRule(rows, n, minRowLength, minModelledRowLength, maxRows, target);
  if (rule == SplitRule::None)
    return failure();
  auto initType =
      dyn_cast<RankedTensorType>(op.getDpsInitOperand(0)->get().getType());
  std::optional<ReductionCombiner> combiner = matchReductionCombiner(op);
  if (!initType || !combiner)
    return failure();
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  for (AffineExpr e : outMap.getResults()) {
    auto c = dyn_cast<AffineConstantExpr>(e);
    if (!isa<AffineDimExpr>(e) && (!c || c.getValue() != 0))
      return failure();
  }
  size_t moved = 0;
  if (!target) {
    int64_t best = 1, prefix = 1;
    for (size_t i = 0; i + 1 < reductions.size(); ++i) {
      prefix *= ranges[reductions[i]];
      int64_t balance = std::min(prefix, n / prefix);
      if (balance > best) {
        best = balance;
        moved = i + 1;
      }
    }
  } else {
    // Prefixes of more than one iteration; unsplit competes unless fixed.
    SmallVector<int64_t> prefixes;
    int64_t prefix = 1;
    for (size_t i = 0; i + 1 < reductions.size(); ++i) {
      prefix *= ranges[reductions[i]];
      if (prefix > 1)
        prefixes.push_back(static_cast<int64_t>(i) + 1);
    }
    moved = static_cast<size_t>(cheapestSplit(
        rewriter, op, target, rule == SplitRule::Fixed, prefixes,
        [&](int64_t m) {
          (void)buildLoopSplit(rewriter, op, ranges, reductions,
                               static_cast<size_t>(m), *combiner);
        },
        decisions));
  }
  if (moved == 0)
    return failure();
  Value total =
      buildLoopSplit(rewriter, op, ranges, reductions, moved, *combiner);
  rewriter.replaceOp(op, total);
  // A partial stage left with one reduction loop splits along it as any row:
  // a convolution's bias gradient over Whisper's 8 x 3000 frames became
  // 384 x 8 rows of 3000, 768 work-items walking a row each (0.84 ms on the
  // H100, the model's 0.19).
  auto partial = total.getDefiningOp<linalg::GenericOp>()
                     .getDpsInputs()
                     .front()
                     .getDefiningOp<linalg::GenericOp>();
  rewriter.setInsertionPoint(partial);
  (void)splitRowReduction(rewriter, partial, minRowLength, minModelledRowLength,
                          maxRows, /*rowKernelRowsPerUnit=*/0, decisions);
  return success();
}

/// Splits `op` when it reduces every loop of at least `minElements`
/// iterations into one scalar with a single associative combiner. The
/// partial stage, one row per value of the outermost loop, is split again
/// along its row from `minPartialRowLength` (few rows of a loss are as
/// serial as a vocabulary's), and the second stage, one row of partial
/// results, as any row (from `minRowLength`, or `minModelledRowLength`
/// where the target's model finds it faster).
static LogicalResult
splitReduction(RewriterBase &rewriter, linalg::GenericOp op,
               int64_t minElements, int64_t minPartialRowLength,
               int64_t minRowLength, int64_t minModelledRowLength,
               int64_t maxRows, SplitDecisions &decisions) {
  if (op.getNumDpsInits() != 1 || op.getNumLoops() < 2 ||
      op.getNumParallelLoops() != 0 || op.hasIndexSemantics())
    return failure();
  OpOperand *init = op.getDpsInitOperand(0);
  auto initType = dyn_cast<RankedTensorType>(init->get().getType());
  if (!initType || initType.getRank() != 0)
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamicShape(ranges) ||
      ShapedType::getNumElements(ranges) < minElements)
    return failure();
  std::optional<ReductionCombiner> combiner = matchReductionCombiner(op);
  if (!combiner)
    return failure();

  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  Type elem = initType.getElementType();
  // partial[d0] = combine over d1.. of the body, from the neutral element.
  auto partialType = RankedTensorType::get({ranges[0]}, elem);
  Value identity = arith::ConstantOp::create(rewriter, loc, combiner->neutral);
  Value empty =
      tensor::EmptyOp::create(rewriter, loc, partialType.getShape(), elem);
  Value filled =
      linalg::FillOp::create(rewriter, loc, identity, empty).getResult(0);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  maps.back() = AffineMap::get(op.getNumLoops(), 0, getAffineDimExpr(0, ctx));
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  iters[0] = utils::IteratorType::parallel;
  auto partial = linalg::GenericOp::create(
      rewriter, loc, TypeRange{partialType}, op.getDpsInputs(),
      ValueRange{filled}, maps, iters);
  rewriter.cloneRegionBefore(op.getRegion(), partial.getRegion(),
                             partial.getRegion().end());
  Value total = combinePartials(rewriter, loc, partial.getResult(0),
                                init->get(), *combiner);
  rewriter.replaceOp(op, total);
  rewriter.setInsertionPoint(partial);
  (void)splitRowReduction(rewriter, partial, minPartialRowLength,
                          minPartialRowLength, maxRows,
                          /*rowKernelRowsPerUnit=*/0, decisions);
  // The second stage is one row of as many partial results as the tensor
  // has rows (2048 for a loss over 2048 x 2048: 34 us in one work-item on
  // the H200, as long as the rest of the loss), split as rows are.
  auto second = total.getDefiningOp<linalg::GenericOp>();
  rewriter.setInsertionPoint(second);
  (void)splitRowReduction(rewriter, second, minRowLength, minModelledRowLength,
                          maxRows, /*rowKernelRowsPerUnit=*/0, decisions);
  return success();
}

namespace {
struct SplitReductionsPass
    : public mlir::fbl::impl::FBLSplitReductionsPassBase<SplitReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    SplitDecisions decisions;
    for (linalg::LinalgOp linalgOp : ops) {
      rewriter.setInsertionPoint(linalgOp);
      auto op = dyn_cast<linalg::GenericOp>(linalgOp.getOperation());
      if (!op) {
        (void)splitNamedContraction(rewriter, linalgOp, minRowLength,
                                    minModelledRowLength, maxRows, decisions);
        continue;
      }
      if (succeeded(splitReduction(rewriter, op, minElements,
                                   minPartialRowLength, minRowLength,
                                   minModelledRowLength, maxRows, decisions)) ||
          succeeded(splitRowReduction(
              rewriter, op, minRowLength, minModelledRowLength, maxRows,
              rowKernels ? rowKernelRowsPerUnit : 0, decisions)))
        continue;
      (void)splitReductionLoops(rewriter, op, minRowLength,
                                minModelledRowLength, maxRows, decisions);
    }
  }
};
} // namespace
