//===- MergeDispatches.cpp - The fbl-merge-dispatches pass ----------------===//
//
// Horizontal fusion of kernels. A launch on a GPU costs microseconds
// whatever the kernel does, and a step of a real model launches thousands,
// many too small to fill the device (a bias gradient's sum, its optimizer
// update): one after another each leaves most compute units idle. Merged,
// they run side by side in one launch.
//
// Kernels are scheduled by level (one more than the latest kernel they must
// follow), and the kernels of a level with one work-group size share a
// launch. Small kernels that only the function's results wait for (a
// bias's optimizer update) take levels after all the others, where they
// meet each other instead of running alone beside their gradients. What a
// kernel must follow is decided on memory objects: tensors before
// fbl-plan-memory (the training pipeline's place for this pass,
// where the plan then follows the new schedule), the plan's objects after
// it (where reuse orders kernels too, and the plan stays valid).
//
//===----------------------------------------------------------------------===//

#include "fbl/Dialect/FBL/IR/FBLOps.h"
#include "fbl/Dialect/FBL/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"

namespace mlir::fbl {
#define GEN_PASS_DEF_FBLMERGEDISPATCHESPASS
#include "fbl/Dialect/FBL/Transforms/Passes.h.inc"
} // namespace mlir::fbl

using namespace mlir;
using namespace mlir::fbl;

namespace {

/// The memory objects of one function, a key each: kernel outputs by their
/// fbl-plan-memory slot where the plan is made, else each tensor its own.
class MemoryObjects {
public:
  /// The object `v` (a tensor of the function's block, or a view of one)
  /// lives in.
  int64_t of(Value v) {
    v = viewedValue(v);
    if (auto result = dyn_cast<OpResult>(v))
      if (auto dispatch = dyn_cast<DispatchOp>(result.getOwner())) {
        Value out = dispatch.getOuts()[result.getResultNumber()];
        if (auto empty = out.getDefiningOp<tensor::EmptyOp>())
          if (auto slot = empty->getAttrOfType<IntegerAttr>(
                  FBLDialect::getSlotAttrName()))
            return slot.getInt();
        return of(out);
      }
    // Arguments and anything unplanned: an object of its own.
    auto [it, inserted] = others.try_emplace(v, -1 - int64_t(others.size()));
    return it->second;
  }

private:
  llvm::DenseMap<Value, int64_t> others;
};

/// The memory objects a kernel reads and writes.
struct Access {
  llvm::SmallDenseSet<int64_t, 8> reads, writes;

  Access(DispatchOp d, MemoryObjects &memory) {
    for (Value v : d.getIns())
      reads.insert(memory.of(v));
    for (Value v : d.getResults())
      writes.insert(memory.of(v));
  }
};

/// Kernels that run in one launch, in schedule order.
struct Launch {
  /// Its place in the schedule: one more than the latest launch it must
  /// follow.
  int64_t level;
  SmallVector<DispatchOp> members;
  /// The merged kernel's arguments: each input once (merge), every output.
  ::fbl::target::KernelArguments arguments = {};
  llvm::SmallDenseSet<Value, 16> ins = {};

  Launch(int64_t level, DispatchOp first) : level(level) { add(first); }

  /// The arguments the merged kernel would take with `d` too: an input
  /// another member reads is passed once.
  ::fbl::target::KernelArguments argumentsWith(DispatchOp d) const {
    ::fbl::target::KernelArguments with = arguments;
    with += d.getKernelArguments();
    for (Value v : d.getIns())
      if (ins.contains(v))
        --(DispatchOp::isBufferArgument(v.getType()) ? with.buffers
                                                     : with.readImages);
    return with;
  }

  void add(DispatchOp d) {
    arguments = argumentsWith(d);
    ins.insert(d.getIns().begin(), d.getIns().end());
    members.push_back(d);
  }
};

/// Tensors a deferred kernel reads or writes hold at most this many
/// elements: deferring keeps what it reads alive until the step's end.
constexpr int64_t kDeferredElements = int64_t(1) << 20;

/// Work-items in one of `d`'s work-groups.
int64_t groupSize(DispatchOp d) {
  ArrayRef<int64_t> w = d.getWorkgroup();
  return w[0] * w[1] * w[2];
}

/// The kind a kernel's name carries (`k12_generic`: "generic").
StringRef kindOf(DispatchOp d) { return d.getKernel().split('_').second; }

/// Work-groups of a kernel along x, y, z.
std::array<int64_t, 3> groupsOf(DispatchOp d) {
  ArrayRef<int64_t> grid = d.getGrid(), w = d.getWorkgroup();
  return {grid[0] / w[0], grid[1] / w[1], grid[2] / w[2]};
}

/// Whether `d` is too small to fill the device (fewer work-groups than it
/// has compute units) and touches only small tensors: such a kernel gains
/// from running beside others, and keeping its inputs costs little.
bool isSmall(DispatchOp d, int64_t computeUnits) {
  auto [gx, gy, gz] = groupsOf(d);
  auto small = [](Value v) {
    auto type = dyn_cast<ShapedType>(v.getType());
    return type && type.hasStaticShape() &&
           type.getNumElements() <= kDeferredElements;
  };
  return gx * gy * gz < computeUnits && llvm::all_of(d.getIns(), small) &&
         llvm::all_of(d.getOuts(), small);
}

/// Kernels that can wait for the end of the step: small ones (isSmall)
/// whose results only the function's results and other such kernels read,
/// and that no later kernel they would move past writes what they touch or
/// reads what they write. Each parameter's optimizer update, and the last
/// stage of a bias or norm-weight gradient before it, is such a kernel: at
/// the level its gradient is ready it runs nearly alone, at the end beside
/// every other parameter's.
llvm::DenseSet<Operation *> deferredKernels(Block &block, MemoryObjects &memory,
                                            int64_t computeUnits) {
  llvm::DenseSet<Operation *> deferred;
  // What the kernels after the current one that stay in place touch, and
  // the tensors they read (seen through views).
  llvm::DenseSet<int64_t> laterReads, laterWrites;
  llvm::DenseSet<Value> readByStaying;
  SmallVector<DispatchOp> kernels(block.getOps<DispatchOp>());
  for (DispatchOp d : llvm::reverse(kernels)) {
    Access access(d, memory);
    bool waits =
        isSmall(d, computeUnits) &&
        llvm::none_of(d->getResults(),
                      [&](Value r) { return readByStaying.contains(r); }) &&
        llvm::none_of(access.reads,
                      [&](int64_t r) { return laterWrites.contains(r); }) &&
        llvm::none_of(access.writes, [&](int64_t w) {
          return laterWrites.contains(w) || laterReads.contains(w);
        });
    if (waits) {
      deferred.insert(d);
      continue;
    }
    laterReads.insert(access.reads.begin(), access.reads.end());
    laterWrites.insert(access.writes.begin(), access.writes.end());
    for (Value in : d.getIns())
      readByStaying.insert(viewedValue(in));
  }
  return deferred;
}

/// What kernels must share to share a launch: the work-items of a
/// work-group, and for GEMMs their kind and local memory. A merged kernel
/// takes the registers and local memory of its largest member, so a GEMM
/// (many accumulators, local tiles) would lower the occupancy of the small
/// kernels beside it; GEMMs of one kind and tile have the same needs.
std::string familyOf(DispatchOp d) {
  std::string family = std::to_string(groupSize(d));
  llvm::raw_string_ostream os(family);
  if (kindOf(d).starts_with("gemm"))
    os << " " << kindOf(d);
  for (Operation &op : d.getBody().front())
    if (auto alloca = dyn_cast<memref::AllocaOp>(op))
      os << " " << alloca.getType();
  // Variant i of a merged kernel merges the members' variants i.
  if (!d.getVariants().empty())
    os << " variants " << d.getVariants().size();
  return family;
}

/// Kernels that run alone: GEMMs whose tile class says so
/// (`fbl.own_launch`), and those fbl-plan-memory decides the storage of
/// from their own body or inputs, on a target with half storage: those that
/// only copy or select (their outputs stay exact) and those computed from
/// constants alone (small tables). Merged with others, the merged kernel
/// would decide for them.
class KeepAlone {
public:
  explicit KeepAlone(func::FuncOp func) {
    TargetAttr target = TargetAttr::lookup(func);
    active = target && target.getHalfStorage();
  }

  /// Whether `d` runs alone. Asked in schedule order.
  bool keeps(DispatchOp d) {
    bool own = d->hasAttr(FBLDialect::getOwnLaunchAttrName());
    if (!active)
      return own;
    bool constant = llvm::all_of(d.getIns(), [&](Value v) {
      return fromConstants.contains(viewedValue(v));
    });
    if (constant)
      fromConstants.insert(d.getResults().begin(), d.getResults().end());
    return own || constant || d.onlySelects();
  }

private:
  bool active;
  llvm::DenseSet<Value> fromConstants;
};

/// The ids a member's body saw, computed in the merged kernel (a 1-D grid of
/// work-groups of the members' size) from its group and local ids.
struct MemberIds {
  std::array<Value, 3> group, local;
  ArrayRef<int64_t> workgroup;

  /// Replaces `op`, an id op of the member's body, by its value.
  void replace(Operation *op) const {
    Value v;
    if (auto g = dyn_cast<GroupIdOp>(op)) {
      v = group[g.getDim()];
    } else if (auto l = dyn_cast<LocalIdOp>(op)) {
      v = local[l.getDim()];
    } else {
      auto w = cast<WorkItemIdOp>(op);
      OpBuilder b(op);
      Location loc = op->getLoc();
      unsigned d = w.getDim();
      v = arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(
              b, loc, group[d],
              arith::ConstantIndexOp::create(b, loc, workgroup[d])),
          local[d]);
    }
    op->getResult(0).replaceAllUsesWith(v);
    op->erase();
  }
};

/// Fills `region` of the merged kernel (its body, or variant i) with the
/// members' same region, member by member: a member's work-groups follow
/// the previous members'. `ins` are the merged kernel's inputs, each once
/// (`inIndex`), then every member's outputs.
void mergeBodies(ArrayRef<DispatchOp> members, Region &region,
                 ArrayRef<Value> ins,
                 const llvm::SmallDenseMap<Value, unsigned> &inIndex,
                 OpBuilder &b) {
  unsigned r = region.getRegionNumber();
  Location loc = region.getParentOp()->getLoc();
  Block *body = new Block();
  region.push_back(body);
  for (Value v : ins)
    body->addArgument(v.getType(), v.getLoc());
  for (DispatchOp d : members)
    for (Value v : d.getOuts())
      body->addArgument(v.getType(), v.getLoc());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(body);
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  // Splits a linear index into x, y, z of extents ex, ey.
  auto split = [&](Value linear, int64_t ex, int64_t ey) {
    return std::array<Value, 3>{
        arith::RemUIOp::create(b, loc, linear, index(ex)),
        arith::RemUIOp::create(
            b, loc, arith::DivUIOp::create(b, loc, linear, index(ex)),
            index(ey)),
        arith::DivUIOp::create(b, loc, linear, index(ex * ey))};
  };
  Value group =
      GroupIdOp::create(b, loc, b.getIndexType(), b.getI64IntegerAttr(0));
  Value item =
      LocalIdOp::create(b, loc, b.getIndexType(), b.getI64IntegerAttr(0));
  // Local memory, once: every member declares the same (familyOf), and a
  // work-group runs one member. Where the device miscompiles that
  // (shared_local_memory = 0: PoCL), each member declares its own.
  bool shared =
      TargetAttr::lookupKernelArguments(members.front()).sharedLocalMemory;
  // A member's arrays follow the previous member's, at the kernel's top.
  SmallVector<Value> local;
  Operation *lastLocal = item.getDefiningOp();
  auto declareLocal = [&](DispatchOp d) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfter(lastLocal);
    local.clear();
    for (Operation &op : d->getRegion(r).front())
      if (isa<memref::AllocaOp>(op)) {
        lastLocal = b.clone(op);
        local.push_back(lastLocal->getResult(0));
      }
  };
  declareLocal(members.front());

  // Member by member: its work-groups follow the previous members'.
  int64_t first = 0;
  unsigned outIndex = 0;
  for (size_t m = 0; m < members.size(); ++m) {
    DispatchOp d = members[m];
    auto [gx, gy, gz] = groupsOf(d);
    int64_t count = gx * gy * gz;
    if (m > 0 && !shared)
      declareLocal(d);
    b.setInsertionPointToEnd(body);
    Value inside;
    if (m > 0)
      inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, group,
                                     index(first));
    if (m + 1 < members.size()) {
      Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          group, index(first + count));
      inside = inside ? arith::AndIOp::create(b, loc, inside, below).getResult()
                      : below;
    }
    auto branch = scf::IfOp::create(b, loc, inside, /*withElse=*/false);
    b.setInsertionPointToStart(&branch.getThenRegion().front());
    ArrayRef<int64_t> w = d.getWorkgroup();
    MemberIds ids{
        split(arith::SubIOp::create(b, loc, group, index(first)), gx, gy),
        split(item, w[0], w[1]), w};
    IRMapping mapping;
    Block &memberBody = d->getRegion(r).front();
    for (auto [i, arg] : llvm::enumerate(memberBody.getArguments()))
      mapping.map(arg, i < d.getIns().size()
                           ? body->getArgument(inIndex.lookup(d.getIns()[i]))
                           : body->getArgument(ins.size() + outIndex++));
    SmallVector<Operation *> idOps;
    unsigned allocas = 0;
    for (Operation &op : memberBody.without_terminator()) {
      if (isa<memref::AllocaOp>(op)) {
        mapping.map(op.getResult(0), local[allocas++]);
        continue;
      }
      b.clone(op, mapping)->walk([&](Operation *inner) {
        if (isa<GroupIdOp, LocalIdOp, WorkItemIdOp>(inner))
          idOps.push_back(inner);
      });
    }
    for (Operation *op : idOps)
      ids.replace(op);
    first += count;
  }
  b.setInsertionPointToEnd(body);
  KernelReturnOp::create(b, loc);
}

/// Replaces `members` by one kernel at the last one's place. The schedule
/// put them together: what lies between them (empty tensors and views for
/// later members) reads none of their results.
void merge(ArrayRef<DispatchOp> members) {
  DispatchOp front = members.front(), last = members.back();
  MLIRContext *ctx = last.getContext();
  Location loc = FusedLoc::get(
      ctx,
      llvm::map_to_vector(members, [](DispatchOp d) { return d.getLoc(); }));
  OpBuilder b(last);
  int64_t size = groupSize(last);

  // Operands: each input once, then every output.
  SmallVector<Value> ins, outs;
  llvm::SmallDenseMap<Value, unsigned> inIndex;
  for (DispatchOp d : members)
    for (Value v : d.getIns())
      if (inIndex.try_emplace(v, ins.size()).second)
        ins.push_back(v);
  for (DispatchOp d : members)
    llvm::append_range(outs, d.getOuts());

  int64_t groups = 0;
  for (DispatchOp d : members) {
    auto [gx, gy, gz] = groupsOf(d);
    groups += gx * gy * gz;
  }
  std::string name = (front.getKernel().split('_').first + "_merged").str();
  auto merged = DispatchOp::create(
      b, loc, ValueRange(outs).getTypes(), FlatSymbolRefAttr::get(ctx, name),
      ins, outs, b.getDenseI64ArrayAttr({groups * size, 1, 1}),
      b.getDenseI64ArrayAttr({size, 1, 1}), front.getVariants().size());
  // No fbl.estimate: the cost model times kernels one at a time, and the
  // members of a launch run side by side. The GEMMs it computes are its
  // members', in order.
  SmallVector<int64_t> gemms;
  for (DispatchOp d : members)
    if (auto gemm =
            d->getAttrOfType<DenseI64ArrayAttr>(FBLDialect::getGemmAttrName()))
      llvm::append_range(gemms, gemm.asArrayRef());
  if (!gemms.empty())
    merged->setAttr(FBLDialect::getGemmAttrName(),
                    b.getDenseI64ArrayAttr(gemms));
  for (Region &region : merged->getRegions())
    mergeBodies(members, region, ins, inIndex, b);

  unsigned resultIndex = 0;
  for (DispatchOp d : members)
    for (Value r : d.getResults())
      r.replaceAllUsesWith(merged.getResult(resultIndex++));
  for (DispatchOp d : members)
    d->erase();
  // The members' bodies each made their constants and index arithmetic.
  IRRewriter rewriter(ctx);
  DominanceInfo dominance;
  eliminateCommonSubExpressions(rewriter, dominance, merged);
}

struct MergeDispatchesPass
    : public mlir::fbl::impl::FBLMergeDispatchesPassBase<MergeDispatchesPass> {
  using Base::Base;

  void runOnOperation() override {
    if (maxKernels < 1) {
      getOperation().emitError("fbl-merge-dispatches: max-kernels must be "
                               "positive, got ")
          << static_cast<int64_t>(maxKernels);
      return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        mergeIn(func);
  }

  void mergeIn(func::FuncOp func) {
    Block &block = func.getBody().front();
    // Kernels, views, empty tensors and constants: the forms after
    // fbl-plan-memory. Anything else and the schedule stays as it is.
    for (Operation &op : block.without_terminator())
      if (!isa<DispatchOp, TransposeViewOp, ReshapeViewOp, tensor::EmptyOp,
               arith::ConstantOp>(op))
        return;

    // Levels: a kernel comes after the last writer of what it reads or
    // writes and the readers of what it writes, so kernels of one level
    // touch no memory object another of them writes.
    // Small kernels that can wait are scheduled after all the others.
    MemoryObjects memory;
    TargetAttr target = TargetAttr::lookup(func);
    llvm::DenseSet<Operation *> deferred;
    if (target)
      deferred =
          deferredKernels(block, memory, target.getExecution().computeUnits);
    SmallVector<DispatchOp> order;
    for (bool last : {false, true})
      for (DispatchOp d : block.getOps<DispatchOp>())
        if (deferred.contains(d) == last)
          order.push_back(d);

    // A merged kernel takes every member's outputs and inputs: no more
    // than the device lets one kernel take.
    ::fbl::target::KernelArgumentLimits limits =
        TargetAttr::lookupKernelArguments(func);
    KeepAlone alone(func);
    llvm::DenseMap<int64_t, int64_t> lastWrite, lastRead;
    SmallVector<Launch> launches;
    std::map<std::pair<int64_t, std::string>, size_t> open;
    int64_t deepest = 0;
    for (DispatchOp d : order) {
      Access access(d, memory);
      // The deferred kernels' levels start after every other's.
      int64_t level = deferred.contains(d) ? deepest : 0;
      for (int64_t r : access.reads)
        level = std::max(level, lastWrite.lookup(r));
      for (int64_t w : access.writes)
        level = std::max({level, lastWrite.lookup(w), lastRead.lookup(w)});
      ++level;
      if (!deferred.contains(d))
        deepest = std::max(deepest, level);
      for (int64_t r : access.reads)
        lastRead[r] = std::max(lastRead.lookup(r), level);
      for (int64_t w : access.writes) {
        lastWrite[w] = level;
        lastRead.erase(w);
      }
      if (alone.keeps(d)) {
        launches.emplace_back(level, d);
        continue;
      }
      auto [it, inserted] =
          open.try_emplace({level, familyOf(d)}, launches.size());
      if (!inserted) {
        Launch &l = launches[it->second];
        if (int64_t(l.members.size()) < maxKernels &&
            ::fbl::target::exceededArguments(l.argumentsWith(d), limits)
                .empty()) {
          l.add(d);
          continue;
        }
      }
      it->second = launches.size();
      launches.emplace_back(level, d);
    }

    // The schedule: by level, then in the order of each launch's first
    // kernel. Views and empty tensors go just before their first reader.
    llvm::stable_sort(launches, [](const Launch &a, const Launch &b) {
      return a.level < b.level;
    });
    Operation *end = block.getTerminator();
    llvm::DenseSet<Operation *> placed;
    std::function<void(Operation *)> place = [&](Operation *op) {
      if (!placed.insert(op).second)
        return;
      for (Value v : op->getOperands())
        if (Operation *def = v.getDefiningOp();
            def && def->getBlock() == &block && !isa<DispatchOp>(def))
          place(def);
      op->moveBefore(end);
    };
    for (const Launch &l : launches)
      for (DispatchOp d : l.members)
        place(d);
    SmallVector<Operation *> rest;
    for (Operation &op : block.without_terminator())
      if (!placed.contains(&op))
        rest.push_back(&op);
    for (Operation *op : rest)
      place(op);

    for (const Launch &l : launches)
      if (l.members.size() > 1)
        merge(l.members);
  }
};

} // namespace
