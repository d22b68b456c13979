//===- OptimizerStep.cpp - SGD and AdamW update steps ---------------------===//
//
// Builds @<name>_step from @<name>_grad: the gradient code followed by an
// elementwise update of every differentiated parameter. Hyper-parameters are
// constants of the step; AdamW's moments and step count are arguments, and
// their updates are results, so the caller owns the optimizer state. Names
// follow the parameters' `fbl.name` so the runtime can save and load the
// state by name.
//
//===----------------------------------------------------------------------===//

#include "fbl/Autodiff/Autodiff.h"
#include "fbl/Dialect/FBL/IR/FBLDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::fbl;

/// An elementwise linalg.generic over tensors of `type`; scalar operands are
/// broadcast (indexing map `() -> ()`).
static Value
elementwise(OpBuilder &b, Location loc, RankedTensorType type, ValueRange ins,
            function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  MLIRContext *ctx = b.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(type.getRank(), ctx);
  AffineMap scalar = AffineMap::get(type.getRank(), 0, ctx);
  SmallVector<AffineMap> maps;
  for (Value v : ins)
    maps.push_back(isa<RankedTensorType>(v.getType()) ? id : scalar);
  maps.push_back(id);
  Value empty = tensor::EmptyOp::create(
      b, loc, type.getShape(), type.getElementType(), type.getEncoding());
  SmallVector<utils::IteratorType> par(type.getRank(),
                                       utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type, ins, ValueRange{empty}, maps, par,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l,
                                       ValueRange{fn(nb, l, args.drop_back())});
             })
      .getResult(0);
}

FailureOr<func::FuncOp>
mlir::fbl::buildStepFunction(func::FuncOp grad, StringRef forwardName,
                             ArrayRef<unsigned> wrt,
                             const OptimizerOptions &options) {
  std::string name = (forwardName + "_step").str();
  auto module = grad->getParentOfType<ModuleOp>();
  if (module && SymbolTable::lookupSymbolIn(module, name))
    return grad.emitError("fbl-autodiff: @") << name << " already exists";
  OpBuilder b(grad);
  b.setInsertionPointAfter(grad);
  auto step = cast<func::FuncOp>(b.clone(*grad));
  step.setSymName(name);
  Block &block = step.getBody().front();
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  Location loc = ret.getLoc();
  bool adamw = options.kind == OptimizerOptions::Kind::AdamW;

  // Optimizer state arguments: moments start at zero, as AdamW defines them.
  StringRef nameAttr = FBLDialect::getNameAttrName();
  SmallVector<Value> m, v;
  Value stepCount;
  auto appendArgument = [&](Type type, ArrayRef<NamedAttribute> attrs) {
    unsigned index = step.getNumArguments();
    if (failed(
            step.insertArgument(index, type, b.getDictionaryAttr(attrs), loc)))
      return Value();
    return Value(step.getArgument(index));
  };
  auto appendMoment = [&](unsigned param, StringRef suffix) {
    SmallVector<NamedAttribute> attrs = {b.getNamedAttr(
        FBLDialect::getInitAttrName(), b.getStringAttr("zeros"))};
    if (auto name = step.getArgAttrOfType<StringAttr>(param, nameAttr))
      attrs.push_back(
          b.getNamedAttr(nameAttr, b.getStringAttr(name.getValue() + suffix)));
    return appendArgument(block.getArgument(param).getType(), attrs);
  };
  if (adamw) {
    for (unsigned i : wrt)
      m.push_back(appendMoment(i, kFirstMomentSuffix));
    for (unsigned i : wrt)
      v.push_back(appendMoment(i, kSecondMomentSuffix));
    SmallVector<NamedAttribute> attrs = {
        b.getNamedAttr("fbl.step_count", b.getUnitAttr())};
    if (usesNames(grad))
      attrs.push_back(
          b.getNamedAttr(nameAttr, b.getStringAttr(kStepCountName)));
    stepCount =
        appendArgument(RankedTensorType::get({}, b.getF32Type()), attrs);
  }

  b.setInsertionPoint(ret);
  auto f32 = [&](double x) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(x));
  };
  Value lr = f32(options.learningRate), wd = f32(options.weightDecay);
  Value b1 = f32(options.beta1), b2 = f32(options.beta2),
        eps = f32(options.epsilon), one = f32(1.0);
  Value bias1, bias2;
  if (adamw) {
    // Bias corrections 1 - beta^t.
    Value t = tensor::ExtractOp::create(b, loc, stepCount, ValueRange{});
    bias1 =
        arith::SubFOp::create(b, loc, one, math::PowFOp::create(b, loc, b1, t));
    bias2 =
        arith::SubFOp::create(b, loc, one, math::PowFOp::create(b, loc, b2, t));
  }

  SmallVector<Value> results = {ret.getOperand(0)}, newM, newV;
  for (auto [k, i] : llvm::enumerate(wrt)) {
    Value p = block.getArgument(i), g = ret.getOperand(1 + k);
    auto type = cast<RankedTensorType>(p.getType());
    if (!adamw) {
      // p - lr * (g + wd * p)
      results.push_back(elementwise(
          b, loc, type, {p, g, lr, wd},
          [](OpBuilder &nb, Location l, ValueRange a) -> Value {
            Value decay = arith::MulFOp::create(nb, l, a[3], a[0]);
            Value dir = arith::AddFOp::create(nb, l, a[1], decay);
            return arith::SubFOp::create(
                nb, l, a[0], arith::MulFOp::create(nb, l, a[2], dir));
          }));
      continue;
    }
    // m' = b1 m + (1 - b1) g;  v' = b2 v + (1 - b2) g^2
    Value mk = elementwise(
        b, loc, type, {m[k], g, b1},
        [](OpBuilder &nb, Location l, ValueRange a) -> Value {
          Value one = arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(1.0));
          Value c = arith::SubFOp::create(nb, l, one, a[2]);
          // Sequenced: argument order would depend on the compiler.
          Value fresh = arith::MulFOp::create(nb, l, c, a[1]);
          Value decayed = arith::MulFOp::create(nb, l, a[2], a[0]);
          return arith::AddFOp::create(nb, l, decayed, fresh);
        });
    Value vk = elementwise(
        b, loc, type, {v[k], g, b2},
        [](OpBuilder &nb, Location l, ValueRange a) -> Value {
          Value one = arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(1.0));
          Value c = arith::SubFOp::create(nb, l, one, a[2]);
          Value g2 = arith::MulFOp::create(nb, l, a[1], a[1]);
          Value fresh = arith::MulFOp::create(nb, l, c, g2);
          Value decayed = arith::MulFOp::create(nb, l, a[2], a[0]);
          return arith::AddFOp::create(nb, l, decayed, fresh);
        });
    // p' = p - lr * ((m' / bias1) / (sqrt(v' / bias2) + eps) + wd * p)
    results.push_back(elementwise(
        b, loc, type, {p, mk, vk, lr, wd, bias1, bias2, eps},
        [](OpBuilder &nb, Location l, ValueRange a) -> Value {
          Value mhat = arith::DivFOp::create(nb, l, a[1], a[5]);
          Value vhat = arith::DivFOp::create(nb, l, a[2], a[6]);
          Value denom = arith::AddFOp::create(
              nb, l, math::SqrtOp::create(nb, l, vhat), a[7]);
          Value decay = arith::MulFOp::create(nb, l, a[4], a[0]);
          Value dir = arith::AddFOp::create(
              nb, l, arith::DivFOp::create(nb, l, mhat, denom), decay);
          return arith::SubFOp::create(nb, l, a[0],
                                       arith::MulFOp::create(nb, l, a[3], dir));
        }));
    newM.push_back(mk);
    newV.push_back(vk);
  }
  results.append(newM);
  results.append(newV);
  func::ReturnOp::create(b, loc, results);
  ret.erase();
  step.setFunctionType(b.getFunctionType(block.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  // Which argument each result replaces in the next step (-1: the loss), and
  // which argument counts steps: what a training loop needs to know.
  SmallVector<int64_t> updates = {-1};
  for (unsigned i : wrt)
    updates.push_back(i);
  for (Value state : m)
    updates.push_back(cast<BlockArgument>(state).getArgNumber());
  for (Value state : v)
    updates.push_back(cast<BlockArgument>(state).getArgNumber());
  step->setAttr("fbl.updates", b.getDenseI64ArrayAttr(updates));
  // Each update carries the name of the argument it replaces; the loss keeps
  // the gradient function's name for it.
  auto lossName = grad.getResultAttrOfType<StringAttr>(0, nameAttr);
  SmallVector<DictionaryAttr> resultAttrs;
  for (int64_t arg : updates) {
    auto name =
        arg < 0 ? lossName : step.getArgAttrOfType<StringAttr>(arg, nameAttr);
    resultAttrs.push_back(
        name ? b.getDictionaryAttr(b.getNamedAttr(nameAttr, name))
             : b.getDictionaryAttr({}));
  }
  step.setAllResultAttrs(resultAttrs);
  cleanUpDifferentiatedFunction(step);
  return step;
}
