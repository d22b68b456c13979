//===- ContractionKernels.cpp - GEMM kernels ------------------------------===//
//
// The GEMM kernels of fbl-lower-to-kernels, for contractions
// C[b, m, n] (+)= A * B (matmul, batch_matmul and their transposed forms)
// with one reduction loop k, on images, any sizes (a range that ends inside
// a texel, ViT's 197 tokens, is read and written in whole texels with what
// lies past it masked, where a pad to whole texels would copy the operands):
//
//  - register-tiled: each work-item computes a 4x4 block of C, walks k 4 at
//    a time, and reads A, B (and C's init) as whole texels: the 4 elements
//    along an operand's packed dim inside the block are the 4 channels of
//    one texel (a block is transposed in registers when packed along the
//    other dim).
//  - local-tiled (the target's local_tiled_gemm, sizes its gemm_tile
//    covers, the last tiles and slices possibly ragged): the same blocks,
//    item_blocks^2 per work-item, with A and B staged through local memory so
//    that each texel is read from its image once per work-group; consecutive
//    work-items read neighbouring texels of an image row, and two buffers let
//    the reads of the next k slice overlap the multiplication of this one.
//
// Which ops take which kernel is decided in fbl/CostModel/KernelPlan.h, where
// the cost model asks the same question.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "KernelLowerings.h"

#include "fbl/CostModel/KernelPlan.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fbl;
using namespace mlir::fbl::kernels;
namespace fl = ::fbl::layout;

namespace {

/// The scalars of a 4x4 block: block[i][j] at (rowLoop + i, colLoop + j).
using ScalarBlock = SmallVector<SmallVector<Value>>;

} // namespace

namespace {

/// Builds a GEMM kernel: what the register- and local-tiled kernels share
/// (block addressing, texel reads, the 4x4 multiply-add, C's stores).
class GemmKernelBuilder {
public:
  GemmKernelBuilder(OpBuilder &b, Location loc, TargetAttr target,
                    const GemmMatch &match,
                    const std::optional<GemmEpilogue> &epilogue)
      : kb(b, loc, target), b(b), loc(loc), ad{b, loc}, g(match),
        epilogue(epilogue), texelType(VectorType::get({4}, b.getF32Type())) {
    g.a.input = kb.addInput(g.a.value);
    g.b.input = kb.addInput(g.b.value);
    if (g.readsInit)
      g.c.input = kb.addInput(g.c.value);
    if (!epilogue)
      return;
    for (GemmOperand &x : this->epilogue->inputs)
      x.input = kb.addInput(x.value);
    // Tensors its scalars read (captured or scalar operands).
    llvm::DenseSet<Value> seen;
    linalg::LinalgOp e = this->epilogue->op;
    (void)addCapturedInputs(e->getRegion(0), kb, seen);
    for (OpOperand *in : e.getDpsInputOperands())
      if (!isa<RankedTensorType>(in->get().getType()))
        collectScalarInputs(in->get(), kb, seen);
  }

  /// What the kernel writes, in order: C (unless an epilogue is its only
  /// reader), then the epilogue's result.
  SmallVector<const GemmOperand *> outputs() const {
    SmallVector<const GemmOperand *> out;
    if (!epilogue || epilogue->keepsResult)
      out.push_back(&g.c);
    if (epilogue)
      out.push_back(&epilogue->output);
    return out;
  }

  /// The types of outputs().
  SmallVector<RankedTensorType> outputTypes() const {
    SmallVector<RankedTensorType> types;
    for (const GemmOperand *out : outputs())
      types.push_back(cast<RankedTensorType>(out->value.getType()));
    return types;
  }

  /// The epilogue's body applied to the 16 accumulators of the block at
  /// loops `origin` (m and n at its start): its inputs' blocks read there.
  SmallVector<Value> applyEpilogue(ArrayRef<Value> acc,
                                   ArrayRef<Value> origin) {
    linalg::LinalgOp e = epilogue->op;
    Block &body = *e.getBlock();
    IRMapping outside;
    SmallVector<ScalarBlock> blocks;
    for (const GemmOperand &x : epilogue->inputs)
      blocks.push_back(readBlock(x, origin));
    SmallVector<Value> out;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        IRMapping mapping;
        mapping.map(body.getArgument(epilogue->resultInput), acc[i * 4 + j]);
        for (auto [x, block] : llvm::zip(epilogue->inputs, blocks))
          mapping.map(body.getArgument(x.operandNumber), block[i][j]);
        for (OpOperand *in : e.getDpsInputOperands())
          if (!isa<RankedTensorType>(in->get().getType()))
            mapping.map(body.getArgument(in->getOperandNumber()),
                        scalar(in->get(), outside));
        for (Operation &inner : body.without_terminator()) {
          for (Value v : inner.getOperands())
            if (v.getParentRegion() != &e->getRegion(0))
              mapping.map(v, scalar(v, outside));
          b.clone(inner, mapping);
        }
        Value y = body.getTerminator()->getOperand(0);
        out.push_back(y.getParentRegion() == &e->getRegion(0)
                          ? mapping.lookupOrDefault(y)
                          : scalar(y, outside));
      }
    return out;
  }

  /// `v`, a scalar from above the epilogue's body, computed in the kernel
  /// (once per block; matchGemmEpilogue accepted only pure scalar code).
  Value scalar(Value v, IRMapping &outside) {
    if (Value known = outside.lookupOrNull(v))
      return known;
    FailureOr<Value> cloned = cloneScalar(v, kb, outside);
    assert(succeeded(cloned) && "matchGemmEpilogue checks the scalars");
    outside.map(v, *cloned);
    return *cloned;
  }

  /// The global work-item ids: 4x4 blocks of (n, m), and the batch.
  std::array<Value, 3> workItems() {
    Value bx = kb.workItem(0), by = kb.workItem(1), bz = kb.workItem(2);
    return {bx, by, bz};
  }

  /// Loop values of batch item `item`, k at 0 (m and n are left unset).
  SmallVector<Value> batchOrigin(Value item) {
    SmallVector<Value> at(g.ranges.size());
    Value rest = item;
    for (unsigned l : llvm::reverse(g.batchLoops)) {
      at[l] = ad.rem(rest, g.ranges[l]);
      rest = ad.div(rest, g.ranges[l]);
    }
    at[g.kLoop] = ad.c(0);
    return at;
  }

  /// `at` with m and n at the origins of a block.
  SmallVector<Value> blockAt(ArrayRef<Value> at, Value m, Value n) {
    SmallVector<Value> loops(at.begin(), at.end());
    loops[g.mLoop] = m;
    loops[g.nLoop] = n;
    return loops;
  }

  /// Whether `loop`'s range ends inside a texel.
  bool partial(unsigned loop) const { return g.ranges[loop] % 4 != 0; }

  /// `texel` with the channels whose `loop` (from `first`, one a channel)
  /// lies past its range zeroed.
  Value zeroChannelsPast(Value texel, unsigned loop, Value first) {
    SmallVector<Value> channels;
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
    for (int64_t ch = 0; ch < 4; ++ch) {
      Value at = ad.add(first, ad.c(ch));
      Value inside = ad.lt(at, g.ranges[loop]);
      Value v = vector::ExtractOp::create(b, loc, texel, ch);
      channels.push_back(arith::SelectOp::create(b, loc, inside, v, zero));
    }
    return vector::FromElementsOp::create(b, loc, texelType, channels);
  }

  /// Texel `o` of `x`'s 4x4 block at loops `at` (its row and column loops
  /// at their block starts): the one at offset `o` along the unpacked dim.
  /// Past a range that ends inside a texel: a texel past it is read at the
  /// range's last (the image may end there) and, along k, zeroed, as are
  /// the channels past K (zeros add nothing; past M or N they reach only
  /// C's elements past them, which storeBlocks does not keep). With
  /// `pastEdge`, `at` may lie past the image along M or N: the read clamps
  /// to the image's edge on the device.
  Value readTexel(const GemmOperand &x, ArrayRef<Value> at, Value o,
                  bool pastEdge = false) {
    unsigned other = x.packed == x.rowLoop ? x.colLoop : x.rowLoop;
    SmallVector<Value> loops(at.begin(), at.end());
    loops[other] = ad.add(at[other], o);
    Value keep;
    if (partial(other)) {
      Value inside = ad.lt(loops[other], g.ranges[other]);
      Value last = ad.c(g.ranges[other] - 1);
      loops[other] =
          arith::SelectOp::create(b, loc, inside, loops[other], last);
      if (other == g.kLoop)
        keep = inside;
    }
    SmallVector<Value> idx;
    for (AffineExpr e : x.map.getResults())
      idx.push_back(loops[cast<AffineDimExpr>(e).getPosition()]);
    Value handle = kb.inputHandle(x.input);
    auto type = cast<RankedTensorType>(handle.getType());
    std::array<Value, 4> t = ad.texelOf(type, idx);
    auto load =
        LoadTexelOp::create(b, loc, texelType, handle, t[0], t[1], t[2]);
    if (pastEdge)
      load.setClampToEdge(true);
    Value texel = load;
    if (keep)
      texel = arith::SelectOp::create(b, loc, keep, texel, ad.zero(texelType));
    if (x.packed == g.kLoop && partial(g.kLoop))
      texel = zeroChannelsPast(texel, g.kLoop, loops[g.kLoop]);
    return texel;
  }

  /// The 4x4 block of `x` held by its 4 texels: the channels run along the
  /// packed dim.
  ScalarBlock blockOf(const GemmOperand &x, ArrayRef<Value> texels) {
    ScalarBlock block(4, SmallVector<Value>(4));
    for (int o = 0; o < 4; ++o)
      for (int ch = 0; ch < 4; ++ch) {
        Value v = vector::ExtractOp::create(b, loc, texels[o], ch);
        if (x.packed == x.rowLoop)
          block[ch][o] = v;
        else
          block[o][ch] = v;
      }
    return block;
  }

  /// Reads `x`'s 4x4 block at loops `at` from its image (one texel for a
  /// broadcast operand, the same for every row or column).
  ScalarBlock readBlock(const GemmOperand &x, ArrayRef<Value> at) {
    if (x.broadcast) {
      Value texel = readTexel(x, at, ad.c(0));
      ScalarBlock block(4, SmallVector<Value>(4));
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          block[i][j] = vector::ExtractOp::create(
              b, loc, texel, x.packed == x.rowLoop ? i : j);
      return block;
    }
    SmallVector<Value> texels;
    for (int o = 0; o < 4; ++o)
      texels.push_back(readTexel(x, at, ad.c(o)));
    return blockOf(x, texels);
  }

  /// The accumulators of the work-item's blocks (m origins x n origins):
  /// 16 per block, blocks in (i, j) order; C's init, or the constant it is
  /// filled with.
  SmallVector<Value> initialAccumulators(ArrayRef<Value> mBlocks,
                                         ArrayRef<Value> nBlocks,
                                         ArrayRef<Value> at) {
    SmallVector<Value> acc;
    // The init's fill constant (initConstant), else zero.
    Value start = arith::ConstantOp::create(
        b, loc, g.initValue ? g.initValue : b.getF32FloatAttr(0));
    for (Value m : mBlocks)
      for (Value n : nBlocks) {
        if (!g.readsInit) {
          acc.append(16, start);
          continue;
        }
        ScalarBlock c = readBlock(g.c, blockAt(at, m, n));
        for (int r = 0; r < 4; ++r)
          for (int q = 0; q < 4; ++q)
            acc.push_back(c[r][q]);
      }
    return acc;
  }

  /// acc[i][j] += sum_k a[i][k] * b[k][j] over one 4-step of k.
  SmallVector<Value> multiplyAdd(ValueRange acc, const ScalarBlock &aBlock,
                                 const ScalarBlock &bBlock) {
    SmallVector<Value> next;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        Value sum = acc[i * 4 + j];
        for (int k = 0; k < 4; ++k) {
          Value x = aBlock[i][k], y = bBlock[k][j];
          Value p = g.aFirst ? arith::MulFOp::create(b, loc, x, y)
                             : arith::MulFOp::create(b, loc, y, x);
          sum = arith::AddFOp::create(b, loc, sum, p);
        }
        next.push_back(sum);
      }
    return next;
  }

  /// Whether `x`'s image holds texels past `loop`'s range (its tile along
  /// the dim `loop` indexes pads it), rather than ending there.
  bool padsAlong(const GemmOperand &x, RankedTensorType type,
                 unsigned loop) const {
    for (auto [d, e] : llvm::enumerate(x.map.getResults()))
      if (cast<AffineDimExpr>(e).getPosition() == loop)
        return layoutOf(type, type.getEncoding()).tile()[d] % 4 == 0;
    return false;
  }

  /// Whether `loop` ends inside a tile of `multiple` (a ragged edge).
  bool ragged(unsigned loop, int64_t multiple) const {
    return g.ranges[loop] % multiple != 0;
  }

  /// `x` where it is inside `loop`'s range, else 0 (a place every read can
  /// take), and whether it is inside.
  std::pair<Value, Value> clampToRange(Value x, unsigned loop) {
    Value inside = ad.lt(x, g.ranges[loop]);
    Value at = arith::SelectOp::create(b, loc, inside, x, ad.c(0));
    return {at, inside};
  }

  /// Stores each block's accumulators (`acc`, in the order of
  /// `initialAccumulators`) as 4 whole texels of each output: C, the
  /// epilogue's result computed from them. With `tileM` x `tileN` (tiles of
  /// C), a block beyond the end of a ragged M or N is not stored.
  void storeBlocks(ValueRange acc, ArrayRef<Value> mBlocks,
                   ArrayRef<Value> nBlocks, ArrayRef<Value> at,
                   int64_t tileM = 4, int64_t tileN = 4) {
    SmallVector<const GemmOperand *> outs = outputs();
    SmallVector<RankedTensorType> types = outputTypes();
    int64_t first = 0;
    for (Value m : mBlocks)
      for (Value n : nBlocks) {
        OpBuilder::InsertionGuard insertionGuard(b);
        Value inside;
        if (ragged(g.mLoop, tileM))
          inside = ad.lt(m, g.ranges[g.mLoop]);
        if (ragged(g.nLoop, tileN))
          inside = ad.andi(inside, ad.lt(n, g.ranges[g.nLoop]));
        if (inside) {
          auto guard = scf::IfOp::create(b, loc, inside, false);
          b.setInsertionPointToStart(&guard.getThenRegion().front());
        }
        SmallVector<Value> origin = blockAt(at, m, n);
        SmallVector<Value> values(acc.begin() + first,
                                  acc.begin() + first + 16);
        for (auto [r, out] : llvm::enumerate(outs))
          storeBlock(*out, types[r], r,
                     out == &g.c ? values : applyEpilogue(values, origin),
                     origin);
        first += 16;
      }
  }

  /// Stores the 16 `values` of the block at loops `origin` as 4 whole
  /// texels of output `r` (`out`, of `type`).
  void storeBlock(const GemmOperand &out, RankedTensorType type, unsigned r,
                  ArrayRef<Value> values, ArrayRef<Value> origin) {
    unsigned packed = out.packed;
    unsigned other = packed == g.mLoop ? g.nLoop : g.mLoop;
    for (int o = 0; o < 4; ++o) {
      OpBuilder::InsertionGuard texelGuard(b);
      SmallVector<Value> loops(origin);
      loops[other] = ad.add(origin[other], ad.c(o));
      // A texel past a range that ends inside one: zeros where C's tiles
      // pad the image (as every kernel leaves padding), nothing where the
      // image ends at the range (tiles of 1).
      Value zeroed;
      if (partial(other)) {
        Value inside = ad.lt(loops[other], g.ranges[other]);
        if (padsAlong(out, type, other)) {
          zeroed = inside;
        } else {
          auto guard = scf::IfOp::create(b, loc, inside, false);
          b.setInsertionPointToStart(&guard.getThenRegion().front());
        }
      }
      SmallVector<Value> idx;
      for (AffineExpr e : out.map.getResults())
        idx.push_back(loops[cast<AffineDimExpr>(e).getPosition()]);
      std::array<Value, 4> t = ad.texelOf(type, idx);
      SmallVector<Value> channels;
      for (int ch = 0; ch < 4; ++ch) {
        int i = packed == g.mLoop ? ch : o, j = packed == g.mLoop ? o : ch;
        channels.push_back(values[i * 4 + j]);
      }
      Value texel = vector::FromElementsOp::create(b, loc, texelType, channels);
      if (zeroed)
        texel =
            arith::SelectOp::create(b, loc, zeroed, texel, ad.zero(texelType));
      // Channels past the packed range are padding: zeros.
      if (partial(packed))
        texel = zeroChannelsPast(texel, packed, origin[packed]);
      StoreTexelOp::create(b, loc, texel, kb.outputHandle(r), t[0], t[1], t[2]);
    }
  }

  KernelBuilder kb;
  OpBuilder &b;
  Location loc;
  Addressing ad;
  GemmMatch g;
  std::optional<GemmEpilogue> epilogue;
  Type texelType;
};

} // namespace

/// The register-tiled kernel: one work-item per 4x4 block of C.
static DispatchOp
buildRegisterTiledGemm(linalg::LinalgOp op, const GemmMatch &match,
                       const std::optional<GemmEpilogue> &epilogue,
                       TargetAttr target, unsigned &counter) {
  OpBuilder builder(op);
  GemmKernelBuilder gb(builder, op.getLoc(), target, match, epilogue);
  const GemmMatch &g = gb.g;
  KernelBuilder &kb = gb.kb;
  Addressing &ad = gb.ad;
  OpBuilder &b = gb.b;
  Location loc = gb.loc;
  int64_t mBlockCount = llvm::divideCeil(g.ranges[g.mLoop], 4);
  int64_t nBlockCount = llvm::divideCeil(g.ranges[g.nLoop], 4);
  kb.begin(("k" + Twine(counter++) + "_gemm").str(), gb.outputTypes(),
           {nBlockCount, mBlockCount, g.batch});
  auto [bx, by, bz] = gb.workItems();
  // The grid is rounded up to whole work-groups: skip the padding.
  Value inM = ad.lt(by, mBlockCount);
  Value inN = ad.lt(bx, nBlockCount);
  auto guard = scf::IfOp::create(b, loc, ad.andi(inN, inM), false);
  b.setInsertionPointToStart(&guard.getThenRegion().front());
  SmallVector<Value> at = gb.batchOrigin(bz);
  Value mBlock = ad.mul(by, 4);
  Value nBlock = ad.mul(bx, 4);
  SmallVector<Value> accInit = gb.initialAccumulators(mBlock, nBlock, at);
  Value kStep = ad.c(4);
  Value kEnd = ad.c(g.ranges[g.kLoop]);
  Value kBegin = ad.c(0);
  auto loop = scf::ForOp::create(b, loc, kBegin, kEnd, kStep, accInit);
  {
    OpBuilder::InsertionGuard insertionGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> atK = at;
    atK[g.kLoop] = loop.getInductionVar();
    SmallVector<Value> here = gb.blockAt(atK, mBlock, nBlock);
    ScalarBlock aBlock = gb.readBlock(g.a, here);
    ScalarBlock bBlock = gb.readBlock(g.b, here);
    scf::YieldOp::create(
        b, loc, gb.multiplyAdd(loop.getRegionIterArgs(), aBlock, bBlock));
  }
  gb.storeBlocks(loop.getResults(), mBlock, nBlock, at);
  b.setInsertionPointAfter(guard);
  return kb.end();
}

namespace {
/// One operand's local tile in the local-tiled kernel: a k slice held
/// k-major, each of its k a row of texels along the tile (4 consecutive m
/// of A, or n of B, a texel), in two buffers (one multiplied while the next
/// is staged). The multiplication then reads, per k, one texel per block of
/// the work-item from each tile and multiplies them out (an outer
/// product): a warp's loads of A fall on a few texels (broadcast), its
/// loads of B on consecutive ones.
///
/// ::fbl::cost::localGemmStaging decides how work-items stage it (the order
/// the cost model traces): texels where the operand is packed along the
/// tile, in runs of 8 neighbouring blocks (the stores of neighbouring
/// work-items fall on consecutive texels of one row), else whole 4x4 blocks
/// transposed in registers: in the image's order, each row's blocks
/// permuted (`staging.swizzled`), or in runs as texels are, as the tile's
/// swizzleBlocks says.
struct LocalTile {
  const GemmOperand *x;
  /// The loop along the work-group tile (m for A, n for B) and where the
  /// group's tile starts along it.
  unsigned tileLoop;
  Value tileStart;
  ::fbl::cost::LocalGemmStaging staging;
  /// memref<2 x local_k x blocks along the tile x vector<4xf32>, 3>.
  Value buffers;
  /// Where staging.swizzled (whole blocks staged in the image's order:
  /// neighbouring work-items store into different rows, a block's k, of one
  /// column), each row's blocks are permuted by an XOR with an even number
  /// that differs between the 4 rows of a block and between neighbouring
  /// blocks' rows, which puts those stores on different banks and keeps the
  /// loads of one row a permutation of aligned groups of 8 texels.
  /// The XOR of row `row`'s blocks.
  static int64_t swizzleOf(int64_t row) { return 2 * ((row + row / 4) % 4); }
  /// Where block `blk` of row `row` sits in the row.
  Value place(Addressing &ad, Value row, Value blk) const {
    if (!staging.swizzled)
      return blk;
    Value s = ad.mul(ad.rem(ad.add(row, ad.div(row, 4)), 4), 2);
    return arith::XOrIOp::create(ad.b, ad.loc, blk, s);
  }
  Value place(Addressing &ad, int64_t row, Value blk) const {
    if (!staging.swizzled || swizzleOf(row) == 0)
      return blk;
    return arith::XOrIOp::create(ad.b, ad.loc, blk, ad.c(swizzleOf(row)));
  }
};

/// A texel staged into a local tile: its value, its place (k row, block)
/// and, for the units beyond an uneven split, whether this work-item
/// stores it.
struct StagedTexel {
  Value texel, row, blk, guard;
};
} // namespace

/// The access a cost trace sees for `x`.
static ::fbl::cost::TensorAccess accessOf(const GemmOperand &x) {
  auto type = cast<RankedTensorType>(x.value.getType());
  ::fbl::cost::TensorAccess a;
  a.shape.assign(type.getShape().begin(), type.getShape().end());
  for (AffineExpr e : x.map.getResults())
    a.loopOfDim.push_back(
        static_cast<int>(cast<AffineDimExpr>(e).getPosition()));
  a.layout = layoutOf(type, type.getEncoding());
  return a;
}

/// Allocates `x`'s double-buffered local tile.
static LocalTile makeLocalTile(GemmKernelBuilder &gb, const GemmOperand &x,
                               unsigned tileLoop, Value tileStart,
                               int64_t sideBlocks,
                               const ::fbl::target::GemmTile &tile) {
  const GemmMatch &g = gb.g;
  LocalTile t{&x, tileLoop, tileStart, {}, {}};
  t.staging = ::fbl::cost::localGemmStaging(
      accessOf(x), tileLoop, g.kLoop, x.rowLoop, x.colLoop, g.ranges.size(),
      tile.kBlocks(), sideBlocks, tile.swizzleBlocks);
  auto type = MemRefType::get({2, tile.localK, sideBlocks}, gb.texelType,
                              AffineMap(), gb.b.getI64IntegerAttr(3));
  t.buffers = memref::AllocaOp::create(gb.b, gb.loc, type);
  return t;
}

/// Reads this work-item's share of `t`'s slice at loops `atK` from its
/// image (flat id `flat` within the group): consecutive work-items read
/// consecutive units in the staging order. Returns the texels to store,
/// each a row of the k-major tile.
static SmallVector<StagedTexel> readSlice(GemmKernelBuilder &gb,
                                          const ::fbl::target::GemmTile &tile,
                                          const LocalTile &t,
                                          ArrayRef<Value> atK, Value flat) {
  const GemmMatch &g = gb.g;
  Addressing &ad = gb.ad;
  OpBuilder &b = gb.b;
  bool whole = t.staging.wholeBlocks;
  const std::array<int, 3> &order = t.staging.order;
  int64_t units = t.staging.units();
  SmallVector<StagedTexel> staged;
  for (int64_t r = 0; r < t.staging.unitsPerItem(tile.items()); ++r) {
    Value unit = ad.add(flat, ad.c(r * tile.items()));
    // Where the units do not split evenly, the last round's extra
    // work-items read the last unit and store nothing.
    Value guard;
    if ((r + 1) * tile.items() > units) {
      guard = ad.lt(unit, units);
      unit = arith::SelectOp::create(b, gb.loc, guard, unit, ad.c(units - 1));
    }
    // (kblk, o, blk): the run's block first, then the digits in `order`.
    const std::array<int64_t, 3> &extents = t.staging.extents;
    Value inRun = ad.rem(unit, t.staging.run);
    Value rest = ad.div(unit, t.staging.run);
    std::array<Value, 3> byDim;
    byDim[order[2]] = ad.rem(rest, extents[order[2]]);
    byDim[order[1]] =
        ad.rem(ad.div(rest, extents[order[2]]), extents[order[1]]);
    byDim[order[0]] = ad.div(rest, extents[order[2]] * extents[order[1]]);
    byDim[::fbl::cost::StageBlock] =
        ad.add(ad.mul(byDim[::fbl::cost::StageBlock], t.staging.run), inRun);
    Value kblk = byDim[::fbl::cost::StageK],
          blk = byDim[::fbl::cost::StageBlock];
    SmallVector<Value> loops(atK.begin(), atK.end());
    loops[t.tileLoop] = ad.add(t.tileStart, ad.mul(blk, 4));
    loops[g.kLoop] = ad.add(atK[g.kLoop], ad.mul(kblk, 4));
    // Beyond a ragged k: read a texel inside and zero it (zeros add
    // nothing along k). Beyond a ragged M or N the values reach only rows
    // or columns of C that are not stored: the read may lie past the image,
    // clamped by the device, with no instructions for the edge (a clamp
    // and a select on every read changed how the NVIDIA driver schedules
    // the loop: NT GEMMs of 6304 rows in 96x96 tiles ran 14% slower than
    // of 6336).
    Value inside;
    if (gb.ragged(g.kLoop, tile.localK)) {
      auto [at, in] = gb.clampToRange(loops[g.kLoop], g.kLoop);
      loops[g.kLoop] = at;
      inside = in;
    }
    int64_t side = t.tileLoop == g.mLoop ? tile.tileM() : tile.tileN();
    bool pastEdge = gb.ragged(t.tileLoop, side);
    auto read = [&](Value o) {
      Value texel = gb.readTexel(*t.x, loops, o, pastEdge);
      if (inside)
        texel = arith::SelectOp::create(b, gb.loc, inside, texel,
                                        ad.zero(gb.texelType));
      return texel;
    };
    Value firstRow = ad.mul(kblk, 4);
    if (!whole) {
      // Texel o of the block lies o along k: a row's texel as it is.
      Value o = byDim[::fbl::cost::StageTexel];
      Value texel = read(o);
      Value row = ad.add(firstRow, o);
      staged.push_back({texel, row, t.place(ad, row, blk), guard});
      continue;
    }
    SmallVector<Value> texels;
    for (int64_t o = 0; o < 4; ++o)
      texels.push_back(read(ad.c(o)));
    ScalarBlock block = gb.blockOf(*t.x, texels);
    bool tileAlongRows = t.x->rowLoop == t.tileLoop;
    for (int64_t kk = 0; kk < 4; ++kk) {
      SmallVector<Value> elements;
      for (int64_t e = 0; e < 4; ++e)
        elements.push_back(tileAlongRows ? block[e][kk] : block[kk][e]);
      Value row = ad.add(firstRow, ad.c(kk));
      staged.push_back(
          {vector::FromElementsOp::create(b, gb.loc, gb.texelType, elements),
           row, t.place(ad, row, blk), guard});
    }
  }
  return staged;
}

/// Stores texels read by readSlice into buffer `buffer` of `t`.
static void storeSlice(GemmKernelBuilder &gb, const LocalTile &t,
                       ArrayRef<StagedTexel> staged, Value buffer) {
  OpBuilder::InsertionGuard insertionGuard(gb.b);
  scf::IfOp open;
  for (const StagedTexel &s : staged) {
    // One guard around the texels of one unit.
    if (open && open.getCondition() != s.guard) {
      gb.b.setInsertionPointAfter(open);
      open = {};
    }
    if (s.guard && !open) {
      open = scf::IfOp::create(gb.b, gb.loc, s.guard, false);
      gb.b.setInsertionPointToStart(&open.getThenRegion().front());
    }
    memref::StoreOp::create(gb.b, gb.loc, s.texel, t.buffers,
                            ValueRange{buffer, s.row, s.blk});
  }
}

/// Multiplies the work-item's blocks (block i of its rows at local block
/// `ly + i * rows`, block j of its columns at `lx + j * cols`; blocksM() x
/// blocksN() of them) out of buffer
/// `buffer` of the staged tiles into `acc`, one k at a time, for the
/// slice's k steps in [kBegin, kEnd); each multiply-add as fma() with
/// `fma`.
static void multiplyTiles(GemmKernelBuilder &gb,
                          const ::fbl::target::GemmTile &tile,
                          MutableArrayRef<Value> acc, Value lx, Value ly,
                          const LocalTile &aTile, const LocalTile &bTile,
                          Value buffer, int64_t kBegin, int64_t kEnd,
                          bool fma) {
  const GemmMatch &g = gb.g;
  Addressing &ad = gb.ad;
  OpBuilder &b = gb.b;
  Location loc = gb.loc;
  int64_t blocksM = tile.blocksM(), blocksN = tile.blocksN();
  auto rowOf = [&](const LocalTile &t, int64_t k, Value blk) {
    Value texel = memref::LoadOp::create(
        b, loc, t.buffers, ValueRange{buffer, ad.c(k), t.place(ad, k, blk)});
    SmallVector<Value> channels;
    for (int64_t ch = 0; ch < 4; ++ch)
      channels.push_back(vector::ExtractOp::create(b, loc, texel, ch));
    return channels;
  };
  for (int64_t k = kBegin; k < kEnd; ++k) {
    // A's and B's rows interleaved, as square tiles always read them.
    SmallVector<SmallVector<Value>> aRows, bRows;
    for (int64_t i = 0; i < std::max(blocksM, blocksN); ++i) {
      if (i < blocksM)
        aRows.push_back(rowOf(aTile, k, ad.add(ly, ad.c(i * tile.rows()))));
      if (i < blocksN)
        bRows.push_back(rowOf(bTile, k, ad.add(lx, ad.c(i * tile.cols()))));
    }
    for (int64_t i = 0; i < blocksM; ++i)
      for (int64_t j = 0; j < blocksN; ++j)
        for (int64_t r = 0; r < 4; ++r)
          for (int64_t q = 0; q < 4; ++q) {
            Value &sum = acc[(i * blocksN + j) * 16 + r * 4 + q];
            Value x = aRows[i][r], y = bRows[j][q];
            if (!g.aFirst)
              std::swap(x, y);
            if (fma) {
              sum = math::FmaOp::create(b, loc, x, y, sum);
              continue;
            }
            Value p = arith::MulFOp::create(b, loc, x, y);
            sum = arith::AddFOp::create(b, loc, sum, p);
          }
  }
}

/// The local-tiled kernel: work-groups of cols x rows work-items over
/// tiles of C, blocksM() x blocksN() blocks per work-item. Slices of A and B go
/// through two local buffers: while a slice is multiplied out of one, each
/// work-item has already issued its reads of the next slice, which it
/// stores into the other; one barrier a slice. `code` says where the
/// stores stand and whether multiply-adds are fma().
static DispatchOp
buildLocalTiledGemm(linalg::LinalgOp op, const GemmMatch &match,
                    const std::optional<GemmEpilogue> &epilogue,
                    const ::fbl::target::GemmTile &tile,
                    const ::fbl::target::GemmVariant &code, TargetAttr target,
                    unsigned &counter) {
  OpBuilder builder(op);
  GemmKernelBuilder gb(builder, op.getLoc(), target, match, epilogue);
  const GemmMatch &g = gb.g;
  KernelBuilder &kb = gb.kb;
  Addressing &ad = gb.ad;
  OpBuilder &b = gb.b;
  Location loc = gb.loc;
  kb.begin(("k" + Twine(counter++) + "_gemm_local").str(), gb.outputTypes(),
           {tile.tilesAlongN(g.ranges[g.nLoop]) * tile.cols(),
            tile.tilesAlongM(g.ranges[g.mLoop]) * tile.rows(), g.batch},
           {tile.cols(), tile.rows(), 1});
  // Blocks are placed by group and local ids; of the global ids only the
  // batch is used. No guard around the body: the grid is whole
  // work-groups, and every work-item must reach the barriers; the last
  // tiles along a ragged M or N store only their blocks inside it.
  Value bz = gb.workItems()[2];
  SmallVector<Value> at = gb.batchOrigin(bz);
  // Block (i, j) of a work-item is block (i * rows + ly, j * cols + lx) of
  // its group's tile.
  Value lx =
      LocalIdOp::create(b, loc, b.getIndexType(), b.getI64IntegerAttr(0));
  Value ly =
      LocalIdOp::create(b, loc, b.getIndexType(), b.getI64IntegerAttr(1));
  Value gx =
      GroupIdOp::create(b, loc, b.getIndexType(), b.getI64IntegerAttr(0));
  Value gy =
      GroupIdOp::create(b, loc, b.getIndexType(), b.getI64IntegerAttr(1));
  Value mTile = ad.mul(gy, tile.tileM());
  Value nTile = ad.mul(gx, tile.tileN());
  // The tiles, allocated first so they sit at the kernel's top level.
  LocalTile aTile =
      makeLocalTile(gb, g.a, g.mLoop, mTile, tile.tileBlocksM(), tile);
  LocalTile bTile =
      makeLocalTile(gb, g.b, g.nLoop, nTile, tile.tileBlocksN(), tile);
  Value flat = ad.add(ad.mul(ly, tile.cols()), lx);
  SmallVector<Value> mBlocks, nBlocks;
  for (int64_t i = 0; i < std::max(tile.blocksM(), tile.blocksN()); ++i) {
    if (i < tile.blocksM())
      mBlocks.push_back(
          ad.add(mTile, ad.mul(ad.add(ly, ad.c(i * tile.rows())), 4)));
    if (i < tile.blocksN())
      nBlocks.push_back(
          ad.add(nTile, ad.mul(ad.add(lx, ad.c(i * tile.cols())), 4)));
  }
  // C's init is read at a place inside for the blocks beyond a ragged
  // edge (they are not stored).
  auto initOrigins = [&](ArrayRef<Value> blocks, unsigned loop, int64_t side) {
    SmallVector<Value> origins(blocks);
    if (g.readsInit && gb.ragged(loop, side))
      for (Value &x : origins)
        x = gb.clampToRange(x, loop).first;
    return origins;
  };
  SmallVector<Value> mInit = initOrigins(mBlocks, g.mLoop, tile.tileM());
  SmallVector<Value> nInit = initOrigins(nBlocks, g.nLoop, tile.tileN());
  SmallVector<Value> accInit = gb.initialAccumulators(mInit, nInit, at);
  // The first slice into buffer 0.
  {
    SmallVector<StagedTexel> aStaged = readSlice(gb, tile, aTile, at, flat);
    SmallVector<StagedTexel> bStaged = readSlice(gb, tile, bTile, at, flat);
    storeSlice(gb, aTile, aStaged, ad.c(0));
    storeSlice(gb, bTile, bStaged, ad.c(0));
    BarrierOp::create(b, loc);
  }
  // Slices 0 .. S-2, each reading the next slice before multiplying.
  int64_t slices = tile.slicesAlong(g.ranges[g.kLoop]);
  Value kStep = ad.c(tile.localK);
  Value kEnd = ad.c((slices - 1) * tile.localK);
  Value kBegin = ad.c(0);
  auto loop = scf::ForOp::create(b, loc, kBegin, kEnd, kStep, accInit);
  {
    OpBuilder::InsertionGuard insertionGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value k = loop.getInductionVar();
    Value current = ad.rem(ad.div(k, tile.localK), 2);
    Value next = ad.rem(ad.add(ad.div(k, tile.localK), ad.c(1)), 2);
    SmallVector<Value> atNext = at;
    atNext[g.kLoop] = ad.add(k, kStep);
    SmallVector<StagedTexel> aStaged = readSlice(gb, tile, aTile, atNext, flat);
    SmallVector<StagedTexel> bStaged = readSlice(gb, tile, bTile, atNext, flat);
    SmallVector<Value> acc(loop.getRegionIterArgs());
    // The other buffer was last read in the step before, which everyone
    // left through the barrier below: its stores may stand anywhere in the
    // multiplication. Where they stand bounds how far the device's compiler
    // can sink the reads above towards them (past the multiplication, which
    // leaves their latency exposed).
    bool fma = code.fusedMultiplyAdd;
    int64_t storeAt = code.storeAfterK ? code.storeAfterK : tile.localK;
    multiplyTiles(gb, tile, acc, lx, ly, aTile, bTile, current, 0, storeAt,
                  fma);
    storeSlice(gb, aTile, aStaged, next);
    storeSlice(gb, bTile, bStaged, next);
    multiplyTiles(gb, tile, acc, lx, ly, aTile, bTile, current, storeAt,
                  tile.localK, fma);
    BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, acc);
  }
  // The last slice.
  SmallVector<Value> acc(loop.getResults());
  multiplyTiles(gb, tile, acc, lx, ly, aTile, bTile, ad.c((slices - 1) % 2), 0,
                tile.localK, code.fusedMultiplyAdd);
  gb.storeBlocks(acc, mBlocks, nBlocks, at, tile.tileM(), tile.tileN());
  return kb.end();
}

/// Erases `d`, a dispatch no one reads, and the empty tensors it wrote.
static void eraseWithOuts(DispatchOp d) {
  SmallVector<Operation *> outs = llvm::map_to_vector(
      d.getOuts(), [](Value v) { return v.getDefiningOp(); });
  d->erase();
  for (Operation *empty : outs)
    if (empty && empty->use_empty())
      empty->erase();
}

/// The local-tiled kernel with the target's `gemm_variants` as variants
/// (each once, none the same as the tile's own body, none storing after the
/// tile's slice): every body is built as a dispatch of its own, then they
/// become one dispatch's regions.
static DispatchOp
buildLocalTiledGemmVariants(linalg::LinalgOp op, const GemmMatch &match,
                            const std::optional<GemmEpilogue> &epilogue,
                            const ::fbl::target::GemmTile &tile,
                            TargetAttr target, unsigned &counter) {
  ::fbl::target::GemmVariant own{tile.storeAfterK, false};
  DispatchOp main =
      buildLocalTiledGemm(op, match, epilogue, tile, own, target, counter);
  SmallVector<::fbl::target::GemmVariant> codes = {own};
  SmallVector<DispatchOp> others;
  for (const ::fbl::target::GemmVariant &code : target.getGemmVariants()) {
    if (llvm::is_contained(codes, code) || code.storeAfterK >= tile.localK)
      continue;
    codes.push_back(code);
    unsigned unused = counter;
    DispatchOp other =
        buildLocalTiledGemm(op, match, epilogue, tile, code, target, unused);
    // The same code path collects the same inputs in the same order; a body
    // whose arguments would mean other tensors is no variant (never built
    // so far, but a variant must not read the wrong tensor).
    if (!llvm::equal(other.getIns(), main.getIns())) {
      eraseWithOuts(other);
      continue;
    }
    others.push_back(other);
  }
  if (others.empty())
    return main;
  OpBuilder b(main);
  auto dispatch = DispatchOp::create(b, main.getLoc(), main.getResultTypes(),
                                     main.getKernelAttr(), main.getIns(),
                                     main.getOuts(), main.getGridAttr(),
                                     main.getWorkgroupAttr(), others.size());
  dispatch.getBody().takeBody(main.getBody());
  for (auto [variant, other] : llvm::zip_equal(dispatch.getVariants(), others))
    variant.takeBody(other.getBody());
  dispatch->setDiscardableAttrs(main->getDiscardableAttrDictionary());
  main->replaceAllUsesWith(dispatch);
  main->erase();
  for (DispatchOp other : others)
    eraseWithOuts(other);
  return dispatch;
}

FailureOr<DispatchOp> kernels::lowerContraction(linalg::LinalgOp op,
                                                TargetAttr target,
                                                unsigned &counter,
                                                GemmEpilogueKinds epilogues) {
  SmallVector<Attribute> layouts = encodingsOf(op->getOperands());
  std::optional<GemmMatch> g = matchGemm(op, layouts);
  if (!g)
    return failure();
  std::optional<GemmEpilogue> epilogue = matchGemmEpilogue(op, *g, epilogues);
  DispatchOp dispatch;
  // Rows and columns of C a work-group computes (the register-tiled
  // kernel's work-items one 4x4 block each).
  int64_t tileRows, tileCols;
  // The tile the kernel plan takes (it compares tiles at these layouts).
  std::optional<LocalGemmTile> local;
  planLinalgKernel(op, layouts, g->resultType.getEncoding(), target, &local);
  if (local) {
    dispatch = buildLocalTiledGemmVariants(op, *g, epilogue, local->tile,
                                           target, counter);
    if (local->ownLaunch)
      dispatch->setAttr(FBLDialect::getOwnLaunchAttrName(),
                        UnitAttr::get(op.getContext()));
    tileRows = local->tile.tileM();
    tileCols = local->tile.tileN();
  } else {
    dispatch = buildRegisterTiledGemm(op, *g, epilogue, target, counter);
    tileRows = 4 * dispatch.getWorkgroup()[1];
    tileCols = 4 * dispatch.getWorkgroup()[0];
  }
  dispatch->setAttr(
      FBLDialect::getGemmAttrName(),
      DenseI64ArrayAttr::get(
          op.getContext(), {g->batch, g->ranges[g->mLoop], g->ranges[g->nLoop],
                            g->ranges[g->kLoop], tileRows, tileCols}));
  if (epilogue) {
    // The kernel computes the epilogue's result (its last): the op it
    // replaces. C, where it stores it, is its first (the caller's).
    epilogue->op->getResult(0).replaceAllUsesWith(dispatch.getResults().back());
    epilogue->op->erase();
  }
  return dispatch;
}
