//===- OpCost.cpp - Cost of MLIR ops on encoded tensors -------------------===//
//
// Linalg ops are costed from their iteration space and indexing maps; the
// other ops fbl runs as kernels are costed as the kernel it would emit:
// softmax as three passes (max, sum, normalize) over its reduction, and
// gathers, scatters and element accesses as one fetch per element.
//
//===----------------------------------------------------------------------===//

#include "fbl/CostModel/OpCost.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::fbl;
namespace fc = ::fbl::cost;
namespace fl = ::fbl::layout;

fl::Layout mlir::fbl::layoutOf(RankedTensorType type,
                               LayoutEncodingAttrInterface encoding) {
  return encoding.getLayout(type.getRank());
}

OpCostModel::OpCostModel(TargetAttr target) : target(target) {
  cache.lineWidth = target.getCacheLineTexels()[0];
  cache.lineHeight = target.getCacheLineTexels()[1];
  cache.bytes = target.getCacheBytes();
  cache.ways = target.getCacheWays();
  wgX = target.getPreferredWorkgroup()[0];
  wgY = target.getPreferredWorkgroup()[1];
}

static std::vector<int64_t> shapeOf(Type type) {
  auto t = cast<RankedTensorType>(type);
  return std::vector<int64_t>(t.getShape().begin(), t.getShape().end());
}

/// An access that walks a tensor once in its own row-major order (copies,
/// gathers, scatters): a 4x4-blocked nest over its dims.
static fc::AccessCost wholeTensorRead(RankedTensorType type,
                                      const fl::Layout &layout, int64_t wgX,
                                      int64_t wgY,
                                      const fc::CacheGeometry &cache) {
  std::vector<int64_t> shape = shapeOf(type);
  std::vector<int> loops(shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    loops[d] = static_cast<int>(d);
  fc::LoopNest nest =
      fc::makeLoopNest(shape, std::vector<bool>(shape.size(), false), loops);
  return fc::readCost(nest, fc::TensorAccess{shape, loops, layout}, wgX, wgY,
                      cache);
}

fc::AccessCost OpCostModel::readCost(OpOperand &operand,
                                     LayoutEncodingAttrInterface layout) {
  auto key =
      std::make_tuple(static_cast<void *>(operand.getOwner()),
                      operand.getOperandNumber(), layout.getAsOpaquePointer());
  if (auto it = memo.find(key); it != memo.end())
    return it->second;
  Operation *op = operand.getOwner();
  auto type = cast<RankedTensorType>(operand.get().getType());
  fl::Layout l = layoutOf(type, layout);
  fc::AccessCost c;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    SmallVector<int64_t> ranges = linalgOp.getStaticLoopRanges();
    std::vector<bool> reduction;
    for (utils::IteratorType t : linalgOp.getIteratorTypesArray())
      reduction.push_back(t == utils::IteratorType::reduction);
    auto loopsOf = [](AffineMap map) {
      std::vector<int> loops;
      for (AffineExpr e : map.getResults()) {
        auto d = dyn_cast<AffineDimExpr>(e);
        loops.push_back(d ? static_cast<int>(d.getPosition()) : -1);
      }
      return loops;
    };
    std::vector<int> outLoops;
    if (linalgOp.getNumDpsInits())
      outLoops = loopsOf(
          linalgOp.getMatchingIndexingMap(linalgOp.getDpsInitOperand(0)));
    fc::LoopNest nest =
        fc::makeLoopNest(std::vector<int64_t>(ranges.begin(), ranges.end()),
                         reduction, outLoops);
    c = fc::readCost(
        nest,
        fc::TensorAccess{shapeOf(type),
                         loopsOf(linalgOp.getMatchingIndexingMap(&operand)), l},
        wgX, wgY, cache);
  } else if (auto softmax = dyn_cast<linalg::SoftmaxOp>(op)) {
    std::vector<int64_t> shape = shapeOf(type);
    std::vector<int> loops(shape.size());
    std::vector<bool> reduction(shape.size(), false);
    for (size_t d = 0; d < shape.size(); ++d)
      loops[d] = static_cast<int>(d);
    reduction[softmax.getDimension()] = true;
    std::vector<int> outLoops;
    for (size_t d = 0; d < shape.size(); ++d)
      if (!reduction[d])
        outLoops.push_back(static_cast<int>(d));
    fc::LoopNest nest = fc::makeLoopNest(shape, reduction, outLoops);
    fc::AccessCost pass =
        fc::readCost(nest, fc::TensorAccess{shape, loops, l}, wgX, wgY, cache);
    for (int i = 0; i < 3; ++i)
      c += pass;
  } else {
    c = wholeTensorRead(type, l, wgX, wgY, cache);
  }
  memo[key] = c;
  return c;
}

fc::AccessCost
OpCostModel::capturedReadCost(Operation *op, Value value,
                              LayoutEncodingAttrInterface layout) {
  // A gather reads one element per iteration, at data-dependent places:
  // count a fetch and a miss per element (no reuse is assumed).
  int64_t iterations = 1;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    for (int64_t r : linalgOp.getStaticLoopRanges())
      iterations *= r;
  fc::AccessCost c;
  c.fetches = iterations;
  c.misses = iterations;
  c.elements = iterations;
  c.cost = iterations * (1.0 + fc::CostWeights().miss);
  (void)value;
  (void)layout;
  return c;
}

fc::AccessCost OpCostModel::writeCost(OpResult result,
                                      LayoutEncodingAttrInterface layout) {
  auto type = cast<RankedTensorType>(result.getType());
  std::vector<int64_t> shape = shapeOf(type);
  return fc::writeCost(fc::TensorAccess{
      shape, std::vector<int>(shape.size(), -1), layoutOf(type, layout)});
}

fc::AccessCost OpCostModel::relayoutCost(RankedTensorType type,
                                         LayoutEncodingAttrInterface from,
                                         LayoutEncodingAttrInterface to) {
  auto key =
      std::make_tuple(type.getAsOpaquePointer(), from.getAsOpaquePointer(),
                      to.getAsOpaquePointer());
  if (auto it = relayoutMemo.find(key); it != relayoutMemo.end())
    return it->second;
  fc::AccessCost c = fc::relayoutCost(shapeOf(type), layoutOf(type, from),
                                      layoutOf(type, to), wgX, wgY, cache);
  relayoutMemo[key] = c;
  return c;
}
