//===- ContractionKernels.cpp - GEMM kernels ------------------------------===//
//
// The GEMM kernels of fbl-lower-to-kernels, for contractions
// C[b, m, n] (+)= A * B (matmul, batch_matmul and their transposed forms)
// with one reduction loop k, on images, sizes multiples of 4:
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

  /// The type the kernel writes: the epilogue's result, else C.
  RankedTensorType outputType() const {
    return epilogue ? cast<RankedTensorType>(epilogue->output.value.getType())
                    : g.resultType;
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

  /// Texel `o` of `x`'s 4x4 block at loops `at` (its row and column loops
  /// at their block starts): the one at offset `o` along the unpacked dim.
  Value readTexel(const GemmOperand &x, ArrayRef<Value> at, Value o) {
    unsigned other = x.packed == x.rowLoop ? x.colLoop : x.rowLoop;
    SmallVector<Value> loops(at.begin(), at.end());
    loops[other] = ad.add(at[other], o);
    SmallVector<Value> idx;
    for (AffineExpr e : x.map.getResults())
      idx.push_back(loops[cast<AffineDimExpr>(e).getPosition()]);
    Value handle = kb.inputHandle(x.input);
    auto type = cast<RankedTensorType>(handle.getType());
    std::array<Value, 4> t = ad.texelOf(type, idx);
    return LoadTexelOp::create(b, loc, texelType, handle, t[0], t[1], t[2]);
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

  /// Reads `x`'s 4x4 block at loops `at` from its image.
  ScalarBlock readBlock(const GemmOperand &x, ArrayRef<Value> at) {
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
  /// `initialAccumulators`) as 4 whole texels of C, or of the epilogue's
  /// result computed from them. With `tileSide` (tiles of C of that side),
  /// a block beyond the end of a ragged M or N is not stored.
  void storeBlocks(ValueRange acc, ArrayRef<Value> mBlocks,
                   ArrayRef<Value> nBlocks, ArrayRef<Value> at,
                   int64_t tileSide = 4) {
    const GemmOperand &out = epilogue ? epilogue->output : g.c;
    RankedTensorType type = outputType();
    unsigned cPacked = out.packed;
    unsigned other = cPacked == g.mLoop ? g.nLoop : g.mLoop;
    int64_t first = 0;
    for (Value m : mBlocks)
      for (Value n : nBlocks) {
        OpBuilder::InsertionGuard insertionGuard(b);
        Value inside;
        if (ragged(g.mLoop, tileSide))
          inside = ad.lt(m, g.ranges[g.mLoop]);
        if (ragged(g.nLoop, tileSide))
          inside = ad.andi(inside, ad.lt(n, g.ranges[g.nLoop]));
        if (inside) {
          auto guard = scf::IfOp::create(b, loc, inside, false);
          b.setInsertionPointToStart(&guard.getThenRegion().front());
        }
        SmallVector<Value> origin = blockAt(at, m, n);
        SmallVector<Value> values(acc.begin() + first,
                                  acc.begin() + first + 16);
        if (epilogue)
          values = applyEpilogue(values, origin);
        for (int o = 0; o < 4; ++o) {
          SmallVector<Value> loops = origin;
          loops[other] = ad.add(origin[other], ad.c(o));
          SmallVector<Value> idx;
          for (AffineExpr e : out.map.getResults())
            idx.push_back(loops[cast<AffineDimExpr>(e).getPosition()]);
          std::array<Value, 4> t = ad.texelOf(type, idx);
          SmallVector<Value> channels;
          for (int ch = 0; ch < 4; ++ch) {
            int i = cPacked == g.mLoop ? ch : o,
                j = cPacked == g.mLoop ? o : ch;
            channels.push_back(values[i * 4 + j]);
          }
          Value texel =
              vector::FromElementsOp::create(b, loc, texelType, channels);
          StoreTexelOp::create(b, loc, texel, kb.outputHandle(), t[0], t[1],
                               t[2]);
        }
        first += 16;
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
  int64_t mBlockCount = g.ranges[g.mLoop] / 4;
  int64_t nBlockCount = g.ranges[g.nLoop] / 4;
  kb.begin(("k" + Twine(counter++) + "_gemm").str(), gb.outputType(),
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
/// One operand's local tile in the local-tiled kernel: the texels of a
/// k slice, read from the image in the order
/// ::fbl::cost::localGemmStagingOrder decides (the order the cost model
/// traces), held in local memory of two buffers.
///
/// Where they sit in local memory serves the multiplication: a warp's
/// work-items read A's blocks by their local row (a few rows a warp: the
/// loads broadcast) and B's by their local column (consecutive columns).
/// So A's tile keeps the staging order (the stores are consecutive too),
/// and B's keeps blocks innermost, each row of blocks rotated by its row
/// (kblk * 4 + o) where B is read in another order, so that the stores of
/// consecutive rows do not fall on one bank. Where blocks are not innermost
/// (A packed along k: the forward's activations), the rows a warp reads
/// would lie a multiple of 4 texels apart, on the same banks; one texel of
/// padding after each block's texels puts them on different banks.
/// (Keeping A's blocks innermost and rotated instead, as B's, was measured
/// on the H200 and is not faster: docs/benchmarks.md.)
struct LocalTile {
  const GemmOperand *x;
  /// The loop along the work-group tile (m for A, n for B), and where the
  /// group's tile starts along it.
  unsigned tileLoop;
  Value tileStart;
  /// (kblk, o, blk) slowest first as read, and their extents in that order.
  std::array<int, 3> order;
  std::array<int64_t, 3> extents;
  /// (kblk, o, blk) slowest first as stored, and the texels between
  /// neighbours along each (padding included).
  std::array<int, 3> layout;
  std::array<int64_t, 3> strides;
  /// B's rows of blocks rotated (blocks per row: the tile's blocks).
  bool rotated = false;
  int64_t rowBlocks = 0;
  /// memref<2 x texels x vector<4xf32>, 3>: one buffer per slice parity.
  Value buffers;

  /// The indices of texel (kblk, o, blk) in buffer `buffer`.
  SmallVector<Value> at(Addressing &ad, Value buffer, Value kblk, Value o,
                        Value blk) const {
    if (rotated)
      blk = ad.rem(ad.add(blk, ad.add(ad.mul(kblk, 4), o)), rowBlocks);
    std::array<Value, 3> byDim = {kblk, o, blk};
    Value flat = byDim[layout[2]];
    for (int i = 1; i >= 0; --i)
      flat = ad.add(ad.mul(byDim[layout[i]], strides[i]), flat);
    return {buffer, flat};
  }
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

/// The texels between neighbours along each dim of a local tile stored in
/// `layout` order with `byDim` extents: dense, except that where blocks are
/// not innermost and neighbouring blocks would lie a multiple of 4 texels
/// (of 16 bytes) apart, one texel pads each block, so that the block rows a
/// warp reads fall on different banks.
static std::array<int64_t, 3> localTileStrides(std::array<int, 3> layout,
                                               std::array<int64_t, 3> byDim,
                                               bool pad) {
  namespace fc = ::fbl::cost;
  std::array<int64_t, 3> strides;
  strides[2] = 1;
  for (int i = 1; i >= 0; --i) {
    strides[i] = strides[i + 1] * byDim[layout[i + 1]];
    if (pad && layout[i] == fc::StageBlock && strides[i] % 4 == 0)
      strides[i] += 1;
  }
  return strides;
}

/// Allocates `x`'s double-buffered local tile (`isB`: B's, read by local
/// column). Padding is kept only where both tiles (B's never padded: its
/// blocks are innermost) still fit the local memory every OpenCL device
/// has.
static LocalTile makeLocalTile(GemmKernelBuilder &gb, const GemmOperand &x,
                               unsigned tileLoop, Value tileStart,
                               const ::fbl::target::GemmTile &tile, bool isB) {
  namespace fc = ::fbl::cost;
  const GemmMatch &g = gb.g;
  LocalTile t{&x, tileLoop, tileStart, {}, {}, {}, {}};
  t.order = fc::localGemmStagingOrder(accessOf(x), tileLoop, g.kLoop, x.rowLoop,
                                      x.colLoop, g.ranges.size());
  std::array<int64_t, 3> byDim = {tile.kBlocks(), 4, tile.tileBlocks()};
  for (int i = 0; i < 3; ++i)
    t.extents[i] = byDim[t.order[i]];
  t.layout =
      isB ? std::array<int, 3>{fc::StageK, fc::StageTexel, fc::StageBlock}
          : t.order;
  // What fc::localGemmRotatesB tells the cost model.
  t.rotated = isB && t.layout != t.order;
  t.rowBlocks = tile.tileBlocks();
  std::array<int64_t, 3> dense =
      localTileStrides(t.layout, byDim, /*pad=*/false);
  t.strides = localTileStrides(t.layout, byDim, /*pad=*/true);
  // localBytes counts both buffers of both tiles dense.
  int64_t paddingBytes =
      2 * (t.strides[0] - dense[0]) * byDim[t.layout[0]] * 16;
  if (tile.localBytes() + paddingBytes > ::fbl::target::kMinLocalMemoryBytes)
    t.strides = dense;
  auto type = MemRefType::get({2, t.strides[0] * byDim[t.layout[0]]},
                              gb.texelType, AffineMap(),
                              gb.b.getI64IntegerAttr(3));
  t.buffers = memref::AllocaOp::create(gb.b, gb.loc, type);
  return t;
}

/// Reads this work-item's share of `t`'s texels of the slice at loops `atK`
/// from its image (flat id `flat` within the group): consecutive work-items
/// read consecutive texels in the tile's staging order.
static SmallVector<Value> readSlice(GemmKernelBuilder &gb,
                                    const ::fbl::target::GemmTile &tile,
                                    const LocalTile &t, ArrayRef<Value> atK,
                                    Value flat,
                                    SmallVector<std::array<Value, 3>> &where) {
  const GemmMatch &g = gb.g;
  Addressing &ad = gb.ad;
  SmallVector<Value> texels;
  where.clear();
  for (int64_t r = 0; r < tile.stagedPerItem(); ++r) {
    Value flatR = ad.add(flat, ad.c(r * tile.items()));
    std::array<Value, 3> byDim;
    byDim[t.order[2]] = ad.rem(flatR, t.extents[2]);
    byDim[t.order[1]] = ad.rem(ad.div(flatR, t.extents[2]), t.extents[1]);
    byDim[t.order[0]] = ad.div(flatR, t.extents[2] * t.extents[1]);
    SmallVector<Value> loops(atK.begin(), atK.end());
    loops[t.tileLoop] = ad.add(t.tileStart, ad.mul(byDim[2], 4));
    loops[g.kLoop] = ad.add(atK[g.kLoop], ad.mul(byDim[0], 4));
    // Beyond a ragged edge: read a texel inside and zero it (zeros add
    // nothing along k, and rows or columns of C beyond M or N are not
    // stored).
    Value inside;
    for (auto [loop, multiple] : {std::pair(t.tileLoop, tile.tile()),
                                  std::pair(g.kLoop, tile.localK)}) {
      if (!gb.ragged(loop, multiple))
        continue;
      auto [at, in] = gb.clampToRange(loops[loop], loop);
      loops[loop] = at;
      inside = ad.andi(inside, in);
    }
    Value texel = gb.readTexel(*t.x, loops, byDim[1]);
    if (inside)
      texel = arith::SelectOp::create(gb.b, gb.loc, inside, texel,
                                      ad.zero(gb.texelType));
    texels.push_back(texel);
    where.push_back(byDim);
  }
  return texels;
}

/// Stores texels read by readSlice into buffer `buffer` of `t`.
static void storeSlice(GemmKernelBuilder &gb, const LocalTile &t,
                       ArrayRef<Value> texels,
                       ArrayRef<std::array<Value, 3>> where, Value buffer) {
  for (auto [texel, at] : llvm::zip(texels, where))
    memref::StoreOp::create(gb.b, gb.loc, texel, t.buffers,
                            t.at(gb.ad, buffer, at[0], at[1], at[2]));
}

/// Multiplies the work-item's blocks (block i of its rows at local row
/// `ly + i * groupItems`, likewise columns) out of buffer `buffer` of the
/// staged tiles into `acc`.
static void multiplyTiles(GemmKernelBuilder &gb,
                          const ::fbl::target::GemmTile &tile,
                          MutableArrayRef<Value> acc, Value lx, Value ly,
                          const LocalTile &aTile, const LocalTile &bTile,
                          Value buffer) {
  const GemmMatch &g = gb.g;
  Addressing &ad = gb.ad;
  int64_t itemBlocks = tile.itemBlocks;
  for (int64_t kblk = 0; kblk < tile.kBlocks(); ++kblk) {
    SmallVector<ScalarBlock> aBlocks, bBlocks;
    for (int64_t i = 0; i < itemBlocks; ++i) {
      SmallVector<Value> aTexels, bTexels;
      Value am = ad.add(ly, ad.c(i * tile.groupItems));
      Value bn = ad.add(lx, ad.c(i * tile.groupItems));
      for (int64_t o = 0; o < 4; ++o) {
        aTexels.push_back(memref::LoadOp::create(
            gb.b, gb.loc, aTile.buffers,
            aTile.at(ad, buffer, ad.c(kblk), ad.c(o), am)));
        bTexels.push_back(memref::LoadOp::create(
            gb.b, gb.loc, bTile.buffers,
            bTile.at(ad, buffer, ad.c(kblk), ad.c(o), bn)));
      }
      aBlocks.push_back(gb.blockOf(g.a, aTexels));
      bBlocks.push_back(gb.blockOf(g.b, bTexels));
    }
    for (int64_t i = 0; i < itemBlocks; ++i)
      for (int64_t j = 0; j < itemBlocks; ++j) {
        int64_t first = (i * itemBlocks + j) * 16;
        SmallVector<Value> next = gb.multiplyAdd(
            ValueRange(acc).slice(first, 16), aBlocks[i], bBlocks[j]);
        llvm::copy(next, acc.begin() + first);
      }
  }
}

/// The local-tiled kernel: work-groups of groupItems^2 work-items over
/// tiles of C, itemBlocks^2 blocks per work-item. Slices of A and B go
/// through two local buffers: while a slice is multiplied out of one, each
/// work-item has already issued its reads of the next slice, which it
/// stores into the other; one barrier a slice.
static DispatchOp
buildLocalTiledGemm(linalg::LinalgOp op, const GemmMatch &match,
                    const std::optional<GemmEpilogue> &epilogue,
                    const ::fbl::target::GemmTile &tile, TargetAttr target,
                    unsigned &counter) {
  OpBuilder builder(op);
  GemmKernelBuilder gb(builder, op.getLoc(), target, match, epilogue);
  const GemmMatch &g = gb.g;
  KernelBuilder &kb = gb.kb;
  Addressing &ad = gb.ad;
  OpBuilder &b = gb.b;
  Location loc = gb.loc;
  kb.begin(("k" + Twine(counter++) + "_gemm_local").str(), gb.outputType(),
           {tile.tilesAlong(g.ranges[g.nLoop]) * tile.groupItems,
            tile.tilesAlong(g.ranges[g.mLoop]) * tile.groupItems, g.batch},
           {tile.groupItems, tile.groupItems, 1});
  // Blocks are placed by group and local ids; of the global ids only the
  // batch is used. No guard around the body: the grid is whole
  // work-groups, and every work-item must reach the barriers; the last
  // tiles along a ragged M or N store only their blocks inside it.
  Value bz = gb.workItems()[2];
  SmallVector<Value> at = gb.batchOrigin(bz);
  // Block (i, j) of a work-item is block (i * groupItems + ly,
  // j * groupItems + lx) of its group's tile.
  Value lx =
      LocalIdOp::create(b, loc, b.getIndexType(), b.getI64IntegerAttr(0));
  Value ly =
      LocalIdOp::create(b, loc, b.getIndexType(), b.getI64IntegerAttr(1));
  Value gx =
      GroupIdOp::create(b, loc, b.getIndexType(), b.getI64IntegerAttr(0));
  Value gy =
      GroupIdOp::create(b, loc, b.getIndexType(), b.getI64IntegerAttr(1));
  Value mTile = ad.mul(gy, tile.tile());
  Value nTile = ad.mul(gx, tile.tile());
  // The tiles, allocated first so they sit at the kernel's top level.
  LocalTile aTile = makeLocalTile(gb, g.a, g.mLoop, mTile, tile, false);
  LocalTile bTile = makeLocalTile(gb, g.b, g.nLoop, nTile, tile, true);
  Value flat = ad.add(ad.mul(ly, tile.groupItems), lx);
  SmallVector<Value> mBlocks, nBlocks;
  for (int64_t i = 0; i < tile.itemBlocks; ++i) {
    mBlocks.push_back(
        ad.add(mTile, ad.mul(ad.add(ly, ad.c(i * tile.groupItems)), 4)));
    nBlocks.push_back(
        ad.add(nTile, ad.mul(ad.add(lx, ad.c(i * tile.groupItems)), 4)));
  }
  // C's init is read at a place inside for the blocks beyond a ragged
  // edge (they are not stored).
  auto initOrigins = [&](ArrayRef<Value> blocks, unsigned loop) {
    SmallVector<Value> origins(blocks);
    if (g.readsInit && gb.ragged(loop, tile.tile()))
      for (Value &x : origins)
        x = gb.clampToRange(x, loop).first;
    return origins;
  };
  SmallVector<Value> mInit = initOrigins(mBlocks, g.mLoop);
  SmallVector<Value> nInit = initOrigins(nBlocks, g.nLoop);
  SmallVector<Value> accInit = gb.initialAccumulators(mInit, nInit, at);
  // The first slice into buffer 0.
  SmallVector<std::array<Value, 3>> aWhere, bWhere;
  {
    SmallVector<Value> at0 = at;
    SmallVector<Value> aTexels = readSlice(gb, tile, aTile, at0, flat, aWhere);
    SmallVector<Value> bTexels = readSlice(gb, tile, bTile, at0, flat, bWhere);
    storeSlice(gb, aTile, aTexels, aWhere, ad.c(0));
    storeSlice(gb, bTile, bTexels, bWhere, ad.c(0));
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
    SmallVector<Value> aTexels =
        readSlice(gb, tile, aTile, atNext, flat, aWhere);
    SmallVector<Value> bTexels =
        readSlice(gb, tile, bTile, atNext, flat, bWhere);
    SmallVector<Value> acc(loop.getRegionIterArgs());
    multiplyTiles(gb, tile, acc, lx, ly, aTile, bTile, current);
    // The other buffer was last read in the step before, which everyone
    // left through the barrier below.
    storeSlice(gb, aTile, aTexels, aWhere, next);
    storeSlice(gb, bTile, bTexels, bWhere, next);
    BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, acc);
  }
  // The last slice.
  SmallVector<Value> acc(loop.getResults());
  multiplyTiles(gb, tile, acc, lx, ly, aTile, bTile, ad.c((slices - 1) % 2));
  gb.storeBlocks(acc, mBlocks, nBlocks, at, tile.tile());
  return kb.end();
}

FailureOr<DispatchOp> kernels::lowerContraction(linalg::LinalgOp op,
                                                TargetAttr target,
                                                unsigned &counter) {
  std::optional<GemmMatch> g = matchGemm(op);
  if (!g)
    return failure();
  std::optional<GemmEpilogue> epilogue = matchGemmEpilogue(op, *g);
  DispatchOp dispatch;
  if (std::optional<::fbl::target::GemmTile> tile = localGemmTile(*g, target))
    dispatch = buildLocalTiledGemm(op, *g, epilogue, *tile, target, counter);
  else
    dispatch = buildRegisterTiledGemm(op, *g, epilogue, target, counter);
  if (epilogue) {
    // The kernel computes the epilogue's result: the op it replaces.
    epilogue->op->getResult(0).replaceAllUsesWith(dispatch.getResult(0));
    epilogue->op->erase();
  }
  return dispatch;
}
