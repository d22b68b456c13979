//===- GradientBuilder.cpp - Reverse-mode differentiation of linalg -------===//
//
// Builds @<name>_grad from a forward function on tensors:
//
//  1. Clone the forward function; its ops stay as the primal computation.
//  2. Activity analysis: only values that depend on a differentiated
//     argument and that the loss depends on get adjoints.
//  3. Seed the loss adjoint with 1 and visit the primal ops in reverse,
//     appending adjoint code before the return. Each rule turns the adjoints
//     of an op's results into contributions to its operands' adjoints;
//     contributions to a value used several times are summed.
//  4. Return the loss and the adjoints of the differentiated arguments;
//     erase primal code nothing reads any more, operands adjoint bodies do
//     not read, and duplicated code.
//
// Linalg structured ops share one rule driven by their indexing maps: the
// adjoint of operand i is a linalg.generic over the op's iteration space
// whose output is indexed by operand i's map (dims it drops are reduced), and
// whose body is the forward-mode tangent of the scalar body seeded with the
// result adjoint. Named ops (matmul, batch_matmul, transpose, broadcast,
// fill, elementwise) are handled through their regions like generics.
//
// The rules stay in this one file (past the project's ~600 lines) because
// they share the builder's adjoint bookkeeping; scalar derivatives and the
// optimizer step live in files of their own.
//
//===----------------------------------------------------------------------===//

#include "fbl/Analysis/ActivityAnalysis.h"
#include "fbl/Autodiff/Autodiff.h"
#include "fbl/Autodiff/ScalarDerivatives.h"
#include "fbl/Dialect/FBL/IR/FBLDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fbl;

SmallVector<unsigned> mlir::fbl::getParamArgs(func::FuncOp func) {
  SmallVector<unsigned> params;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (func.getArgAttr(i, "fbl.param"))
      params.push_back(i);
  return params;
}

bool mlir::fbl::usesNames(func::FuncOp func) {
  StringRef name = FBLDialect::getNameAttrName();
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (func.getArgAttr(i, name))
      return true;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (func.getResultAttr(i, name))
      return true;
  return false;
}

bool mlir::fbl::returnsScalarLoss(func::FuncOp func) {
  ArrayRef<Type> results = func.getFunctionType().getResults();
  if (results.size() != 1)
    return false;
  auto t = dyn_cast<RankedTensorType>(results[0]);
  return t && t.getRank() == 0 && t.getElementType().isF32();
}

void mlir::fbl::cleanUpDifferentiatedFunction(func::FuncOp func) {
  // One block: region simplification would only walk every region after
  // every rewrite.
  MLIRContext *ctx = func.getContext();
  RewritePatternSet patterns(ctx);
  linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
  (void)applyPatternsGreedily(
      func, std::move(patterns),
      GreedyRewriteConfig().setRegionSimplificationLevel(
          GreedySimplifyRegionLevel::Disabled));
  IRRewriter rewriter(ctx);
  DominanceInfo dominance(func);
  eliminateCommonSubExpressions(rewriter, dominance, func);
}

/// Indices an access map (a projected permutation) selects from loop ivs.
static SmallVector<Value> applyPermutationMap(AffineMap map, ValueRange ivs) {
  SmallVector<Value> out;
  for (AffineExpr e : map.getResults())
    out.push_back(ivs[cast<AffineDimExpr>(e).getPosition()]);
  return out;
}

/// True when `v` (a value of `body`) depends on `root`.
static bool dependsOn(Value v, Value root) {
  SmallVector<Value> work = {v};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value cur = work.pop_back_val();
    if (cur == root)
      return true;
    if (!seen.insert(cur).second)
      continue;
    if (Operation *def = cur.getDefiningOp())
      work.append(def->operand_begin(), def->operand_end());
  }
  return false;
}

namespace {

/// How a reduction's output combines each iteration into its accumulator.
enum class Combiner { Sum, Max, Min };

/// Per-output facts about a linalg op's body.
struct OutputInfo {
  Value adjoint;      ///< adjoint of the result, or null
  Combiner combiner;  ///< reductions only
  Value reducedValue; ///< reductions: the value combined in (body value)
  Value yielded;      ///< the value the body yields
};

class GradientBuilder {
public:
  GradientBuilder(OpBuilder &b, const ActivityAnalysis &activity)
      : b(b), activity(activity) {}

  void setAdjoint(Value v, Value adjoint) { adjoints[v] = adjoint; }
  Value getAdjoint(Value v) const { return adjoints.lookup(v); }

  /// Appends the adjoint code of `op`.
  LogicalResult visit(Operation *op);

  /// A zero of `type` (float scalar or ranked float tensor).
  Value zeros(Location loc, Type type);

private:
  void accumulate(Location loc, Value primal, Value contribution);
  Value add(Location loc, Value x, Value y);

  LogicalResult visitLinalg(linalg::LinalgOp op);
  LogicalResult visitSoftmax(linalg::SoftmaxOp op);
  LogicalResult visitScalar(Operation *op);
  LogicalResult visitTensorOp(Operation *op);

  FailureOr<SmallVector<OutputInfo>> analyzeOutputs(linalg::LinalgOp op);
  FailureOr<Value> operandAdjoint(linalg::LinalgOp op, OpOperand &operand,
                                  ArrayRef<OutputInfo> outputs);
  Value reductionInitAdjoint(linalg::LinalgOp op, unsigned output,
                             const OutputInfo &info);
  FailureOr<Value> gatherAdjoint(linalg::LinalgOp op, tensor::ExtractOp gather,
                                 ArrayRef<OutputInfo> outputs);
  /// The tangent of output `info` seeded at `seed` with the output's
  /// adjoint, restricted to the winning iterations of max/min reductions.
  FailureOr<Value> outputTangent(Block &body, IRMapping &mapping, Value seed,
                                 Value seedTangent, const OutputInfo &info,
                                 Value result, Location loc);

  OpBuilder &b;
  const ActivityAnalysis &activity;
  llvm::DenseMap<Value, Value> adjoints;
};

} // namespace

Value GradientBuilder::zeros(Location loc, Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 0.0));
  Value zero = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(tensor.getElementType(), 0.0));
  Value empty = tensor::EmptyOp::create(
      b, loc, tensor.getShape(), tensor.getElementType(), tensor.getEncoding());
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

Value GradientBuilder::add(Location loc, Value x, Value y) {
  if (!isa<RankedTensorType>(x.getType()))
    return arith::AddFOp::create(b, loc, x, y);
  auto type = cast<RankedTensorType>(x.getType());
  Value empty = tensor::EmptyOp::create(
      b, loc, type.getShape(), type.getElementType(), type.getEncoding());
  return linalg::AddOp::create(b, loc, ValueRange{x, y}, ValueRange{empty})
      .getResult(0);
}

void GradientBuilder::accumulate(Location loc, Value primal,
                                 Value contribution) {
  if (!contribution)
    return;
  Value &slot = adjoints[primal];
  slot = slot ? add(loc, slot, contribution) : contribution;
}

LogicalResult GradientBuilder::visit(Operation *op) {
  if (!activity.isActive(op))
    return success();
  // Nothing to propagate when no result received an adjoint.
  if (llvm::none_of(op->getResults(), [&](Value r) { return getAdjoint(r); }))
    return success();
  if (auto softmax = dyn_cast<linalg::SoftmaxOp>(op))
    return visitSoftmax(softmax);
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return visitLinalg(linalgOp);
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
          tensor::ExtractSliceOp, tensor::InsertSliceOp, tensor::ExtractOp,
          tensor::InsertOp, tensor::CastOp>(op))
    return visitTensorOp(op);
  if (op->getNumResults() == 1 && isa<FloatType>(op->getResult(0).getType()))
    return visitScalar(op);
  return op->emitError("fbl-autodiff: cannot differentiate '")
         << op->getName() << "'";
}

//===----------------------------------------------------------------------===//
// Scalar ops at function level
//===----------------------------------------------------------------------===//

LogicalResult GradientBuilder::visitScalar(Operation *op) {
  Value adj = getAdjoint(op->getResult(0));
  for (OpOperand &operand : op->getOpOperands()) {
    if (!activity.isActive(operand.get()))
      continue;
    SmallVector<Value> tangents(op->getNumOperands());
    tangents[operand.getOperandNumber()] = adj;
    FailureOr<Value> c = emitScalarTangent(b, op, tangents);
    if (failed(c))
      return op->emitError("fbl-autodiff: cannot differentiate '")
             << op->getName() << "'";
    accumulate(op->getLoc(), operand.get(), *c);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Tensor reshapes, slices and element access
//===----------------------------------------------------------------------===//

/// `adj` with the inserts into it that write outside `slice`'s region looked
/// through. The adjoint of a tensor.concat's destination is the result's
/// adjoint with each inserted region zeroed, one insert after another; the
/// slice of each source would read the last of them and keep the whole chain
/// of copies alive, although none of them writes the region it reads.
static Value outsideInserts(Value adj, OffsetSizeAndStrideOpInterface slice) {
  HyperrectangularSlice read(slice);
  while (auto insert = adj.getDefiningOp<tensor::InsertSliceOp>()) {
    FailureOr<bool> overlapping =
        ValueBoundsConstraintSet::areOverlappingSlices(
            insert.getContext(), read, HyperrectangularSlice(insert));
    if (failed(overlapping) || *overlapping)
      return adj;
    adj = insert.getDest();
  }
  return adj;
}

LogicalResult GradientBuilder::visitTensorOp(Operation *op) {
  Location loc = op->getLoc();
  Value adj = getAdjoint(op->getResult(0));
  auto active = [&](Value v) { return activity.isActive(v); };
  llvm::TypeSwitch<Operation *>(op)
      .Case<tensor::ExpandShapeOp>([&](auto expand) {
        accumulate(
            loc, expand.getSrc(),
            tensor::CollapseShapeOp::create(b, loc, expand.getSrcType(), adj,
                                            expand.getReassociationIndices()));
      })
      .Case<tensor::CollapseShapeOp>([&](auto collapse) {
        accumulate(
            loc, collapse.getSrc(),
            tensor::ExpandShapeOp::create(b, loc, collapse.getSrcType(), adj,
                                          collapse.getReassociationIndices()));
      })
      .Case<tensor::ExtractSliceOp>([&](auto slice) {
        Value z = zeros(loc, slice.getSourceType());
        accumulate(loc, slice.getSource(),
                   tensor::InsertSliceOp::create(
                       b, loc, adj, z, slice.getMixedOffsets(),
                       slice.getMixedSizes(), slice.getMixedStrides()));
      })
      .Case<tensor::InsertSliceOp>([&](auto insert) {
        if (active(insert.getSource()))
          accumulate(loc, insert.getSource(),
                     tensor::ExtractSliceOp::create(
                         b, loc, insert.getSourceType(),
                         outsideInserts(adj, insert), insert.getMixedOffsets(),
                         insert.getMixedSizes(), insert.getMixedStrides()));
        if (active(insert.getDest())) {
          // The inserted region of the destination was overwritten.
          Value z = zeros(loc, insert.getSourceType());
          accumulate(loc, insert.getDest(),
                     tensor::InsertSliceOp::create(
                         b, loc, z, adj, insert.getMixedOffsets(),
                         insert.getMixedSizes(), insert.getMixedStrides()));
        }
      })
      .Case<tensor::ExtractOp>([&](auto extract) {
        Value z = zeros(loc, extract.getTensor().getType());
        accumulate(
            loc, extract.getTensor(),
            tensor::InsertOp::create(b, loc, adj, z, extract.getIndices()));
      })
      .Case<tensor::InsertOp>([&](auto insert) {
        if (active(insert.getScalar()))
          accumulate(
              loc, insert.getScalar(),
              tensor::ExtractOp::create(b, loc, adj, insert.getIndices()));
        if (active(insert.getDest())) {
          Value z = zeros(loc, insert.getScalar().getType());
          accumulate(
              loc, insert.getDest(),
              tensor::InsertOp::create(b, loc, z, adj, insert.getIndices()));
        }
      })
      .Case<tensor::CastOp>([&](auto cast) {
        accumulate(
            loc, cast.getSource(),
            tensor::CastOp::create(b, loc, cast.getSource().getType(), adj));
      });
  return success();
}

//===----------------------------------------------------------------------===//
// linalg.softmax
//===----------------------------------------------------------------------===//

LogicalResult GradientBuilder::visitSoftmax(linalg::SoftmaxOp op) {
  // dx = y * (dy - sum_d(dy * y)); the init is overwritten.
  Location loc = op.getLoc();
  Value input = op.getInput();
  if (!activity.isActive(input))
    return success();
  Value y = op.getResult()[0], dy = getAdjoint(y);
  auto type = cast<RankedTensorType>(y.getType());
  int64_t dim = op.getDimension(), rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  SmallVector<AffineExpr> kept;
  SmallVector<int64_t> reducedShape;
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim) {
      kept.push_back(getAffineDimExpr(d, ctx));
      reducedShape.push_back(type.getDimSize(d));
    }
  AffineMap dropDim = AffineMap::get(rank, 0, kept, ctx);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  iters[dim] = utils::IteratorType::reduction;
  Value sumInit =
      zeros(loc, RankedTensorType::get(reducedShape, type.getElementType()));
  Value sum =
      linalg::GenericOp::create(
          b, loc, sumInit.getType(), ValueRange{dy, y}, ValueRange{sumInit},
          ArrayRef<AffineMap>{id, id, dropDim}, iters,
          [](OpBuilder &nb, Location l, ValueRange args) {
            Value p = arith::MulFOp::create(nb, l, args[0], args[1]);
            linalg::YieldOp::create(
                nb, l, ValueRange{arith::AddFOp::create(nb, l, args[2], p)});
          })
          .getResult(0);
  Value dxInit = tensor::EmptyOp::create(
      b, loc, type.getShape(), type.getElementType(), type.getEncoding());
  SmallVector<utils::IteratorType> par(rank, utils::IteratorType::parallel);
  Value dx =
      linalg::GenericOp::create(
          b, loc, type, ValueRange{y, dy, sum}, ValueRange{dxInit},
          ArrayRef<AffineMap>{id, id, dropDim, id}, par,
          [](OpBuilder &nb, Location l, ValueRange args) {
            Value diff = arith::SubFOp::create(nb, l, args[1], args[2]);
            linalg::YieldOp::create(
                nb, l, ValueRange{arith::MulFOp::create(nb, l, args[0], diff)});
          })
          .getResult(0);
  accumulate(loc, input, dx);
  return success();
}

//===----------------------------------------------------------------------===//
// Linalg structured ops
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<OutputInfo>>
GradientBuilder::analyzeOutputs(linalg::LinalgOp op) {
  Block &body = *op.getBlock();
  Operation *yield = body.getTerminator();
  unsigned numInputs = op.getNumDpsInputs();
  bool reduction = op.getNumReductionLoops() > 0;
  SmallVector<OutputInfo> outputs;
  for (unsigned j = 0, e = op.getNumDpsInits(); j < e; ++j) {
    OutputInfo info;
    info.adjoint = getAdjoint(op->getResult(j));
    info.yielded = yield->getOperand(j);
    info.combiner = Combiner::Sum;
    if (reduction && info.adjoint) {
      BlockArgument acc = body.getArgument(numInputs + j);
      Operation *def = info.yielded.getDefiningOp();
      if (!def || def->getNumOperands() != 2)
        return op.emitError("fbl-autodiff: cannot differentiate the "
                            "reduction of output #")
               << j << ": the body does not combine into the accumulator";
      std::optional<Combiner> combiner =
          llvm::TypeSwitch<Operation *, std::optional<Combiner>>(def)
              .Case<arith::AddFOp>([](auto) { return Combiner::Sum; })
              .Case<arith::MaximumFOp, arith::MaxNumFOp>(
                  [](auto) { return Combiner::Max; })
              .Case<arith::MinimumFOp, arith::MinNumFOp>(
                  [](auto) { return Combiner::Min; })
              .Default([](Operation *) { return std::nullopt; });
      Value other = def->getOperand(0) == acc   ? def->getOperand(1)
                    : def->getOperand(1) == acc ? def->getOperand(0)
                                                : Value();
      if (!combiner || !other || dependsOn(other, acc))
        return op.emitError("fbl-autodiff: cannot differentiate the "
                            "reduction of output #")
               << j << " combined by '" << def->getName()
               << "': supported reductions are sums, maxima and minima";
      info.combiner = *combiner;
      info.reducedValue = other;
    }
    outputs.push_back(info);
  }
  return outputs;
}

FailureOr<Value> GradientBuilder::outputTangent(Block &body, IRMapping &mapping,
                                                Value seed, Value seedTangent,
                                                const OutputInfo &info,
                                                Value result, Location loc) {
  llvm::DenseMap<Value, Value> tangents;
  tangents[seed] = seedTangent;
  Value target = info.reducedValue ? info.reducedValue : info.yielded;
  FailureOr<Value> t = differentiateBody(b, body, mapping, tangents, target);
  if (failed(t) || !*t || !info.reducedValue || info.combiner == Combiner::Sum)
    return t;
  // Max/min: only the iterations that produced the result contribute.
  Value cond = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                     mapping.lookup(info.reducedValue), result);
  Value zero =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(t->getType(), 0.0));
  return Value(arith::SelectOp::create(b, loc, cond, *t, zero));
}

Value GradientBuilder::reductionInitAdjoint(linalg::LinalgOp op,
                                            unsigned output,
                                            const OutputInfo &info) {
  Value init = op.getDpsInits()[output];
  if (info.combiner == Combiner::Sum)
    return info.adjoint;
  // Max/min: the init reaches the result only where it won.
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(init.getType());
  AffineMap id =
      AffineMap::getMultiDimIdentityMap(type.getRank(), b.getContext());
  Value empty = tensor::EmptyOp::create(
      b, loc, type.getShape(), type.getElementType(), type.getEncoding());
  SmallVector<utils::IteratorType> par(type.getRank(),
                                       utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type,
             ValueRange{init, op->getResult(output), info.adjoint},
             ValueRange{empty}, ArrayRef<AffineMap>{id, id, id, id}, par,
             [](OpBuilder &nb, Location l, ValueRange args) {
               Value won = arith::CmpFOp::create(
                   nb, l, arith::CmpFPredicate::OEQ, args[0], args[1]);
               Value zero = arith::ConstantOp::create(
                   nb, l, nb.getFloatAttr(args[2].getType(), 0.0));
               linalg::YieldOp::create(nb, l,
                                       ValueRange{arith::SelectOp::create(
                                           nb, l, won, args[2], zero)});
             })
      .getResult(0);
}

FailureOr<Value> GradientBuilder::operandAdjoint(linalg::LinalgOp op,
                                                 OpOperand &operand,
                                                 ArrayRef<OutputInfo> outputs) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  Block &body = *op.getBlock();
  AffineMap map = op.getMatchingIndexingMap(&operand);
  if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
    return op.emitError("fbl-autodiff: cannot differentiate '")
           << op->getName() << "': operand #" << operand.getOperandNumber()
           << " is accessed through " << AffineMapAttr::get(map)
           << ", which is not a projected permutation";
  bool reduction = op.getNumReductionLoops() > 0;
  unsigned numInputs = op.getNumDpsInputs(), numInits = op.getNumDpsInits();
  Type operandType = operand.get().getType();
  bool scalar = !isa<RankedTensorType>(operandType);
  auto outType = scalar ? RankedTensorType::get({}, operandType)
                        : cast<RankedTensorType>(operandType);

  // Inputs of the adjoint generic: the op's inputs; per output the value a
  // body reading its out argument sees (the init for parallel ops, the
  // result for reductions); the adjoints of the outputs.
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  for (OpOperand *in : op.getDpsInputOperands()) {
    ins.push_back(in->get());
    maps.push_back(op.getMatchingIndexingMap(in));
  }
  for (unsigned j = 0; j < numInits; ++j) {
    OpOperand *init = op.getDpsInitOperand(j);
    ins.push_back(reduction ? op->getResult(j) : init->get());
    maps.push_back(op.getMatchingIndexingMap(init));
  }
  SmallVector<unsigned> adjointPos(numInits, ~0u);
  for (unsigned j = 0; j < numInits; ++j) {
    if (!outputs[j].adjoint)
      continue;
    adjointPos[j] = ins.size();
    ins.push_back(outputs[j].adjoint);
    maps.push_back(op.getMatchingIndexingMap(op.getDpsInitOperand(j)));
  }
  maps.push_back(map);
  SmallVector<utils::IteratorType> iters(op.getNumLoops(),
                                         utils::IteratorType::reduction);
  for (AffineExpr e : map.getResults())
    iters[cast<AffineDimExpr>(e).getPosition()] = utils::IteratorType::parallel;

  // When the operand's map is a permutation every adjoint element is written
  // exactly once: no zero init, no accumulation (a transposed copy stays a
  // plain permutation, which later passes turn into a view).
  bool writesOnce = map.isPermutation();
  Value init = writesOnce
                   ? Value(tensor::EmptyOp::create(b, loc, outType.getShape(),
                                                   outType.getElementType(),
                                                   outType.getEncoding()))
                   : zeros(loc, outType);
  auto generic = linalg::GenericOp::create(b, loc, TypeRange{outType}, ins,
                                           ValueRange{init}, maps, iters);
  SmallVector<Type> argTypes;
  for (Value v : ins)
    argTypes.push_back(getElementTypeOrSelf(v.getType()));
  argTypes.push_back(outType.getElementType());
  OpBuilder::InsertionGuard guard(b);
  Block *block = b.createBlock(&generic.getRegion(), {}, argTypes,
                               SmallVector<Location>(argTypes.size(), loc));
  IRMapping mapping;
  for (unsigned k = 0; k < numInputs + numInits; ++k)
    mapping.map(body.getArgument(k), block->getArgument(k));

  Value seed = body.getArgument(operand.getOperandNumber());
  Value contribution;
  for (unsigned j = 0; j < numInits; ++j) {
    if (!outputs[j].adjoint)
      continue;
    FailureOr<Value> t =
        outputTangent(body, mapping, seed, block->getArgument(adjointPos[j]),
                      outputs[j], block->getArgument(numInputs + j), loc);
    if (failed(t))
      return failure();
    if (*t)
      contribution =
          contribution ? Value(arith::AddFOp::create(b, loc, contribution, *t))
                       : *t;
  }
  // The operand's adjoint is an output's adjoint as it is (x + y, copies):
  // pass it on instead of copying it.
  std::optional<unsigned> passThrough;
  for (unsigned j = 0; j < numInits; ++j)
    if (outputs[j].adjoint &&
        contribution == block->getArgument(adjointPos[j]) && !reduction &&
        map == op.getMatchingIndexingMap(op.getDpsInitOperand(j)) &&
        outputs[j].adjoint.getType() == outType)
      passThrough = j;
  if (!contribution || passThrough) {
    b.setInsertionPoint(generic);
    generic.erase();
    return passThrough ? outputs[*passThrough].adjoint : Value();
  }
  Value sum = writesOnce
                  ? contribution
                  : Value(arith::AddFOp::create(
                        b, loc, block->getArguments().back(), contribution));
  linalg::YieldOp::create(b, loc, ValueRange{sum});
  b.setInsertionPointAfter(generic);
  Value result = generic.getResult(0);
  if (scalar)
    return Value(tensor::ExtractOp::create(b, loc, result, ValueRange{}));
  (void)ctx;
  return result;
}

FailureOr<Value> GradientBuilder::gatherAdjoint(linalg::LinalgOp op,
                                                tensor::ExtractOp gather,
                                                ArrayRef<OutputInfo> outputs) {
  // The gradient of a gather is a scatter-add: loop over the iteration
  // space, and add each iteration's contribution at the gathered index.
  Location loc = op.getLoc();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return op.emitError("fbl-autodiff: the gradient of a gather needs static "
                        "loop ranges");
  Block &body = *op.getBlock();
  bool reduction = op.getNumReductionLoops() > 0;
  unsigned numInputs = op.getNumDpsInputs(), numInits = op.getNumDpsInits();
  Value table = gather.getTensor();
  Value zeroTable = zeros(loc, table.getType());
  SmallVector<Value> lbs, ubs, steps;
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t r : ranges) {
    lbs.push_back(c0);
    ubs.push_back(arith::ConstantIndexOp::create(b, loc, r));
    steps.push_back(c1);
  }
  bool failedBody = false;
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, ValueRange{zeroTable},
      [&](OpBuilder &nb, Location l, ValueRange ivs,
          ValueRange iterArgs) -> scf::ValueVector {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        IRMapping mapping;
        body.walk([&](linalg::IndexOp index) {
          mapping.map(index.getResult(), ivs[index.getDim()]);
        });
        auto element = [&](Value tensor, AffineMap map) -> Value {
          if (!isa<RankedTensorType>(tensor.getType()))
            return tensor;
          return tensor::ExtractOp::create(b, l, tensor,
                                           applyPermutationMap(map, ivs));
        };
        for (unsigned k = 0; k < numInputs; ++k) {
          OpOperand *in = op.getDpsInputOperand(k);
          mapping.map(body.getArgument(k),
                      element(in->get(), op.getMatchingIndexingMap(in)));
        }
        SmallVector<Value> results(numInits);
        for (unsigned j = 0; j < numInits; ++j) {
          OpOperand *init = op.getDpsInitOperand(j);
          results[j] = element(reduction ? op->getResult(j) : init->get(),
                               op.getMatchingIndexingMap(init));
          mapping.map(body.getArgument(numInputs + j), results[j]);
        }
        Value contribution;
        for (unsigned j = 0; j < numInits; ++j) {
          if (!outputs[j].adjoint)
            continue;
          Value dy =
              element(outputs[j].adjoint,
                      op.getMatchingIndexingMap(op.getDpsInitOperand(j)));
          FailureOr<Value> t = outputTangent(body, mapping, gather.getResult(),
                                             dy, outputs[j], results[j], l);
          if (failed(t)) {
            failedBody = true;
            return {iterArgs[0]};
          }
          if (*t)
            contribution =
                contribution
                    ? Value(arith::AddFOp::create(b, l, contribution, *t))
                    : *t;
        }
        if (!contribution)
          return {iterArgs[0]};
        SmallVector<Value> idx;
        for (Value v : gather.getIndices())
          idx.push_back(mapping.lookup(v));
        Value old = tensor::ExtractOp::create(b, l, iterArgs[0], idx);
        Value sum = arith::AddFOp::create(b, l, old, contribution);
        return {tensor::InsertOp::create(b, l, sum, iterArgs[0], idx)};
      });
  if (failedBody)
    return failure();
  return nest.results.front();
}

LogicalResult GradientBuilder::visitLinalg(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics())
    return op.emitError("fbl-autodiff: cannot differentiate '")
           << op->getName() << "' on buffers";
  FailureOr<SmallVector<OutputInfo>> outputs = analyzeOutputs(op);
  if (failed(outputs))
    return failure();
  bool reduction = op.getNumReductionLoops() > 0;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!activity.isActive(operand.get()))
      continue;
    Value contribution;
    if (op.isDpsInit(&operand) && reduction) {
      unsigned j = operand.getOperandNumber() - op.getNumDpsInputs();
      if ((*outputs)[j].adjoint)
        contribution = reductionInitAdjoint(op, j, (*outputs)[j]);
    } else {
      FailureOr<Value> c = operandAdjoint(op, operand, *outputs);
      if (failed(c))
        return failure();
      contribution = *c;
    }
    accumulate(op.getLoc(), operand.get(), contribution);
  }
  // Tensors the body reads from above: gathers get a scatter-add; anything
  // else active has no rule.
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegion(0), captured);
  for (Value v : captured) {
    if (!activity.isActive(v))
      continue;
    for (OpOperand &use : v.getUses()) {
      if (!op->isProperAncestor(use.getOwner()))
        continue;
      auto gather = dyn_cast<tensor::ExtractOp>(use.getOwner());
      if (!gather)
        return use.getOwner()->emitError(
                   "fbl-autodiff: cannot differentiate a use of an active "
                   "value captured by '")
               << op->getName() << "' other than tensor.extract";
      FailureOr<Value> c = gatherAdjoint(op, gather, *outputs);
      if (failed(c))
        return failure();
      accumulate(op.getLoc(), v, *c);
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

FailureOr<func::FuncOp>
mlir::fbl::buildGradientFunction(func::FuncOp forward, ArrayRef<unsigned> wrt) {
  if (!forward.getBody().hasOneBlock())
    return forward.emitError("fbl-autodiff: expected a single-block function");
  if (!returnsScalarLoss(forward))
    return forward.emitError("fbl-autodiff: expected the function to return "
                             "one scalar loss of type tensor<f32>");
  for (unsigned i : wrt) {
    if (i >= forward.getNumArguments())
      return forward.emitError("fbl-autodiff: no argument #") << i;
    if (!isDifferentiableType(forward.getArgument(i).getType()) ||
        !isa<RankedTensorType>(forward.getArgument(i).getType()))
      return forward.emitError("fbl-autodiff: argument #")
             << i << " is not a tensor of floats and cannot be differentiated";
  }
  std::string name = (forward.getSymName() + "_grad").str();
  auto module = forward->getParentOfType<ModuleOp>();
  if (module && SymbolTable::lookupSymbolIn(module, name))
    return forward.emitError("fbl-autodiff: @") << name << " already exists";

  OpBuilder b(forward);
  b.setInsertionPointAfter(forward);
  auto grad = cast<func::FuncOp>(b.clone(*forward));
  grad.setSymName(name);
  Block &block = grad.getBody().front();
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  Value loss = ret.getOperand(0);

  ActivityAnalysis activity(grad, wrt, loss);
  SmallVector<Operation *> primalOps;
  for (Operation &op : block.without_terminator())
    primalOps.push_back(&op);

  b.setInsertionPoint(ret);
  GradientBuilder builder(b, activity);
  Location loc = ret.getLoc();
  auto lossType = cast<RankedTensorType>(loss.getType());
  Value one =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(b.getF32Type(), 1.0));
  Value seed =
      linalg::FillOp::create(b, loc, one,
                             ValueRange{tensor::EmptyOp::create(
                                 b, loc, ArrayRef<int64_t>{}, b.getF32Type(),
                                 lossType.getEncoding())})
          .getResult(0);
  builder.setAdjoint(loss, seed);
  for (Operation *op : llvm::reverse(primalOps)) {
    if (failed(builder.visit(op))) {
      grad.erase();
      return failure();
    }
  }

  SmallVector<Value> results = {loss};
  for (unsigned i : wrt) {
    Value arg = block.getArgument(i);
    Value adj = builder.getAdjoint(arg);
    results.push_back(adj ? adj : builder.zeros(loc, arg.getType()));
  }
  func::ReturnOp::create(b, loc, results);
  ret.erase();
  grad.setFunctionType(b.getFunctionType(grad.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  // Result attributes, one per new result (setFunctionType leaves the
  // forward's list as it was): the loss keeps the forward's and is named,
  // each gradient is named after its parameter.
  StringRef nameAttr = FBLDialect::getNameAttrName();
  NamedAttrList lossAttrs(forward.getResultAttrDict(0));
  if (usesNames(forward) && !lossAttrs.get(nameAttr))
    lossAttrs.set(nameAttr, b.getStringAttr(kLossName));
  SmallVector<DictionaryAttr> resultAttrs = {
      lossAttrs.getDictionary(b.getContext())};
  for (unsigned i : wrt) {
    auto name = grad.getArgAttrOfType<StringAttr>(i, nameAttr);
    resultAttrs.push_back(
        name ? b.getDictionaryAttr(b.getNamedAttr(
                   nameAttr, b.getStringAttr(name.getValue() + kGradSuffix)))
             : b.getDictionaryAttr({}));
  }
  grad.setAllResultAttrs(resultAttrs);
  cleanUpDifferentiatedFunction(grad);
  return grad;
}
