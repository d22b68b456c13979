//===- FBLAttrs.cpp - fbl layout encodings and target ---------------------===//
//
// Layout encodings map their parameters onto the layout algebra; everything
// else (extents, texel maps, views, limits) is answered by the algebra.
//
//===----------------------------------------------------------------------===//

#include "fbl/Dialect/FBL/IR/FBLAttrs.h"
#include "fbl/Dialect/FBL/IR/FBLDialect.h"
#include "fbl/Layout/TargetDescription.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::fbl;
namespace fl = ::fbl::layout;

#include "fbl/Dialect/FBL/IR/FBLEnums.cpp.inc"
#include "fbl/Dialect/FBL/IR/FBLInterfaces.cpp.inc"

//===----------------------------------------------------------------------===//
// Factor lists of #fbl.image: `[d1, d0.e]`
//===----------------------------------------------------------------------===//

static ParseResult parseFactors(AsmParser &parser,
                                SmallVector<int64_t> &factors) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        StringRef keyword;
        SMLoc loc = parser.getCurrentLocation();
        if (parser.parseKeyword(&keyword))
          return failure();
        // The lexer reads `d0.e` as one bare identifier.
        auto [dimPart, levelPart] = keyword.split('.');
        unsigned dim;
        if (!dimPart.consume_front("d") || dimPart.getAsInteger(10, dim) ||
            (!levelPart.empty() && levelPart != "e"))
          return parser.emitError(loc,
                                  "expected a factor 'dN' or 'dN.e', got '")
                 << keyword << "'";
        factors.push_back(ImageLayoutAttr::encodeFactor(
            {dim, levelPart.empty() ? fl::Level::Tile : fl::Level::Element}));
        return success();
      });
}

static void printFactors(AsmPrinter &printer, ArrayRef<int64_t> factors) {
  printer << '[';
  llvm::interleaveComma(factors, printer, [&](int64_t v) {
    fl::Factor f = ImageLayoutAttr::decodeFactor(v);
    printer << 'd' << f.dim << (f.level == fl::Level::Element ? ".e" : "");
  });
  printer << ']';
}

#define GET_ATTRDEF_CLASSES
#include "fbl/Dialect/FBL/IR/FBLAttrs.cpp.inc"

void FBLDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "fbl/Dialect/FBL/IR/FBLAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

static fl::BatchFold toAlgebra(BatchFold f) {
  return f == BatchFold::Y ? fl::BatchFold::Y : fl::BatchFold::Layers;
}
static BatchFold fromAlgebra(fl::BatchFold f) {
  return f == fl::BatchFold::Y ? BatchFold::Y : BatchFold::Layers;
}
static fl::IntraTileOrder toAlgebra(IntraTileOrder o) {
  return static_cast<fl::IntraTileOrder>(static_cast<int>(o));
}
static fl::InterTileOrder toAlgebra(InterTileOrder o) {
  return static_cast<fl::InterTileOrder>(static_cast<int>(o));
}

static std::vector<int64_t> toVector(ArrayRef<int64_t> a) {
  return std::vector<int64_t>(a.begin(), a.end());
}

RankedTensorType mlir::fbl::withEncoding(RankedTensorType type,
                                         Attribute encoding) {
  return RankedTensorType::get(type.getShape(), type.getElementType(),
                               encoding);
}

LogicalResult mlir::fbl::setTensorEncoding(Value value, Attribute encoding) {
  auto type = withEncoding(cast<RankedTensorType>(value.getType()), encoding);
  Operation *def = value.getDefiningOp();
  if (def && def->hasTrait<OpTrait::ConstantLike>()) {
    // arith.constant and its kin hold their data as `value`, typed exactly
    // as the result.
    Attribute data = def->getAttr("value");
    DenseElementsAttr retyped;
    if (auto dense = dyn_cast_or_null<DenseElementsAttr>(data)) {
      retyped = dense.reshape(type);
    } else if (auto resource =
                   dyn_cast_or_null<DenseResourceElementsAttr>(data)) {
      AsmResourceBlob *blob = resource.getRawHandle().getBlob();
      bool splat = false;
      if (!blob ||
          !DenseElementsAttr::isValidRawBuffer(type, blob->getData(), splat))
        return failure();
      retyped = DenseElementsAttr::getFromRawBuffer(type, blob->getData());
    } else if (data) {
      return failure();
    }
    if (retyped)
      def->setAttr("value", retyped);
  }
  value.setType(type);
  if (auto arg = dyn_cast<BlockArgument>(value))
    if (auto func =
            dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
        func && arg.getOwner() == &func.getFunctionBody().front())
      func.setType(FunctionType::get(func->getContext(),
                                     arg.getOwner()->getArgumentTypes(),
                                     func.getResultTypes()));
  return success();
}

LayoutEncodingAttrInterface mlir::fbl::getLayoutEncoding(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return {};
  return dyn_cast_or_null<LayoutEncodingAttrInterface>(tensor.getEncoding());
}

bool mlir::fbl::livesInBuffers(Type elementType) {
  return !isa<FloatType>(elementType);
}

unsigned mlir::fbl::getElementBytes(Type elementType) {
  if (!elementType.isIntOrIndexOrFloat() || elementType.isIndex())
    return 8; // index and other element types travel as 64-bit values
  return std::max(1u, elementType.getIntOrFloatBitWidth() / 8);
}

int64_t mlir::fbl::getDeviceBytes(RankedTensorType type) {
  if (LayoutEncodingAttrInterface enc = getLayoutEncoding(type))
    return enc.getDeviceBytes(type.getShape(), type.getElementType());
  return type.getNumElements() * getElementBytes(type.getElementType());
}

Attribute mlir::fbl::fitEncodingToLimits(RankedTensorType type,
                                         Attribute encoding,
                                         const fl::DeviceLimits &limits) {
  auto enc = dyn_cast_or_null<LayoutEncodingAttrInterface>(encoding);
  if (!enc || !type.hasStaticShape())
    return {};
  std::vector<int64_t> shape = toVector(type.getShape());
  unsigned bytes = getElementBytes(type.getElementType());
  auto fits = [&](const fl::Layout &l) {
    return l.verifyShape(shape).empty() &&
           l.checkLimits(shape, limits, bytes).empty();
  };
  SmallVector<Attribute, 2> variants = {encoding};
  MLIRContext *ctx = type.getContext();
  if (auto cp = dyn_cast<ChannelPackedLayoutAttr>(encoding))
    variants.push_back(
        ChannelPackedLayoutAttr::get(ctx, cp.getPacked(), BatchFold::Layers));
  if (auto rt = dyn_cast<RTileLayoutAttr>(encoding))
    variants.push_back(RTileLayoutAttr::get(ctx, rt.getTile(), rt.getPacked(),
                                            rt.getIntra(), rt.getInter(),
                                            BatchFold::Layers));
  for (Attribute v : variants)
    if (fits(cast<LayoutEncodingAttrInterface>(v).getLayout(type.getRank())))
      return v;
  // Spread over layers: from the batch-in-y form, whose layers are free.
  fl::Layout l = enc.getLayout(type.getRank());
  if (std::optional<fl::Layout> split = l.splitAcrossLayers(shape, limits))
    if (fits(*split))
      return getEncodingForLayout(*split, ctx);
  return {};
}

AffineMap mlir::fbl::buildTexelMap(const fl::Layout &layout,
                                   ArrayRef<int64_t> shape,
                                   MLIRContext *context) {
  unsigned rank = shape.size();
  std::vector<int64_t> dims = toVector(shape);
  AffineExpr zero = getAffineConstantExpr(0, context);
  if (layout.isBuffer()) {
    AffineExpr linear = zero;
    for (unsigned d = 0; d < rank; ++d)
      linear = linear * shape[d] + getAffineDimExpr(d, context);
    return AffineMap::get(rank, 0, {zero, zero, linear, zero}, context);
  }
  AffineExpr axis[fl::kNumAxes] = {zero, zero, zero};
  for (unsigned a = 0; a < fl::kNumAxes; ++a)
    for (const fl::FactorTerm &t :
         layout.terms(dims, static_cast<fl::Axis>(a))) {
      AffineExpr e = getAffineDimExpr(t.factor.dim, context);
      if (t.divisor != 1)
        e = e.floorDiv(t.divisor);
      if (t.modulus)
        e = e % t.modulus;
      axis[a] = axis[a] + e * t.stride;
    }
  AffineExpr channel =
      layout.packedDim() < 0
          ? zero
          : getAffineDimExpr(layout.packedDim(), context) % fl::kTexelChannels;
  return AffineMap::get(rank, 0, {axis[2], axis[1], axis[0], channel}, context);
}

Attribute mlir::fbl::getEncodingForLayout(const fl::Layout &layout,
                                          MLIRContext *context) {
  if (layout.isBuffer())
    return BufferLayoutAttr::get(context);
  if (auto cp = layout.asChannelPacked())
    return ChannelPackedLayoutAttr::get(context, std::max(cp->packedDim, 0),
                                        fromAlgebra(cp->fold));
  if (auto rt = layout.asRTile())
    return RTileLayoutAttr::get(
        context, {rt->tileRows, rt->tileCols}, rt->packedDim,
        static_cast<IntraTileOrder>(static_cast<int>(rt->intra)),
        static_cast<InterTileOrder>(static_cast<int>(rt->inter)),
        fromAlgebra(rt->fold));
  SmallVector<int64_t> axes[fl::kNumAxes];
  for (unsigned a = 0; a < fl::kNumAxes; ++a)
    for (fl::Factor f : layout.axes()[a])
      axes[a].push_back(ImageLayoutAttr::encodeFactor(f));
  return ImageLayoutAttr::get(context, layout.tile(), layout.packedDim(),
                              axes[0], axes[1], axes[2]);
}

FailureOr<Attribute>
mlir::fbl::getTransposedEncoding(const fl::Layout &layout,
                                 ArrayRef<int64_t> permutation,
                                 MLIRContext *context) {
  std::optional<fl::Layout> result = layout.transposed(toVector(permutation));
  if (!result)
    return failure();
  return getEncodingForLayout(*result, context);
}

FailureOr<Attribute> mlir::fbl::getReshapedEncoding(
    const fl::Layout &layout, ArrayRef<int64_t> sourceShape,
    ArrayRef<int64_t> resultShape, ArrayRef<ReassociationIndices> reassociation,
    MLIRContext *context) {
  std::vector<std::vector<int64_t>> groups;
  for (const ReassociationIndices &g : reassociation)
    groups.push_back(toVector(g));
  std::optional<fl::Layout> result;
  if (resultShape.size() <= sourceShape.size())
    result = layout.collapsed(toVector(sourceShape), groups);
  else
    result =
        layout.expanded(toVector(sourceShape), toVector(resultShape), groups);
  if (!result)
    return failure();
  return getEncodingForLayout(*result, context);
}

/// Checks shared by every image encoding: static shape, element type, and
/// the algebra's structural check for this rank.
static LogicalResult
verifyImageEncoding(const fl::Layout &layout, ArrayRef<int64_t> shape,
                    Type elementType,
                    function_ref<InFlightDiagnostic()> emitError) {
  if (ShapedType::isDynamicShape(shape))
    return emitError() << "fbl image layouts need a static shape";
  if (!elementType)
    return failure(); // the parser has reported the bad element type
  if (!elementType.isF32() && !elementType.isF16())
    return emitError() << "fbl image layouts hold f32 or f16 elements, not "
                       << elementType;
  std::string err = layout.verifyShape(toVector(shape));
  if (!err.empty())
    return emitError() << err;
  return success();
}

//===----------------------------------------------------------------------===//
// BufferLayoutAttr
//===----------------------------------------------------------------------===//

fl::Layout BufferLayoutAttr::getLayout(unsigned rank) const {
  return fl::Layout::buffer(rank);
}

LogicalResult BufferLayoutAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type elementType,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (ShapedType::isDynamicShape(shape))
    return emitError() << "fbl buffer layouts need a static shape";
  if (!elementType)
    return failure(); // the parser has reported the bad element type
  if (!elementType.isIntOrIndexOrFloat())
    return emitError() << "fbl buffers hold integer or float elements, not "
                       << elementType;
  return success();
}

//===----------------------------------------------------------------------===//
// ChannelPackedLayoutAttr
//===----------------------------------------------------------------------===//

LogicalResult
ChannelPackedLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                int64_t packed, BatchFold) {
  if (packed < 0)
    return emitError() << "packed dim must be non-negative, got " << packed;
  return success();
}

fl::Layout ChannelPackedLayoutAttr::getLayout(unsigned rank) const {
  return fl::Layout::channelPacked(rank, static_cast<int>(getPacked()),
                                   toAlgebra(getBatch()));
}

LogicalResult ChannelPackedLayoutAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type elementType,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (!shape.empty() && getPacked() >= static_cast<int64_t>(shape.size()))
    return emitError() << "packed dim " << getPacked()
                       << " is out of range for a rank-" << shape.size()
                       << " tensor";
  return verifyImageEncoding(getLayout(shape.size()), shape, elementType,
                             emitError);
}

//===----------------------------------------------------------------------===//
// RTileLayoutAttr
//===----------------------------------------------------------------------===//

LogicalResult
RTileLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        ArrayRef<int64_t> tile, int64_t packed, IntraTileOrder,
                        InterTileOrder, BatchFold) {
  if (tile.size() != 2)
    return emitError() << "R-Tile needs 2 tile sizes (rows, columns), got "
                       << tile.size();
  if (llvm::any_of(tile, [](int64_t t) { return t < 1; }))
    return emitError() << "tile sizes must be positive";
  if (packed < 0)
    return emitError() << "packed dim must be non-negative, got " << packed;
  return success();
}

fl::Layout RTileLayoutAttr::getLayout(unsigned rank) const {
  return fl::Layout::rtile(rank, getTile()[0], getTile()[1],
                           static_cast<int>(getPacked()), toAlgebra(getIntra()),
                           toAlgebra(getInter()), toAlgebra(getBatch()));
}

LogicalResult RTileLayoutAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type elementType,
    function_ref<InFlightDiagnostic()> emitError) const {
  int64_t rank = shape.size();
  if (rank < 2)
    return emitError() << "R-Tile layouts tile the last two dims; a rank-"
                       << rank << " tensor has fewer";
  int64_t packed = getPacked();
  if (packed != rank - 2 && packed != rank - 1)
    return emitError() << "packed dim " << packed << " of a rank-" << rank
                       << " tensor is not one of the tiled dims " << rank - 2
                       << " and " << rank - 1;
  int64_t packedTile = getTile()[packed - (rank - 2)];
  if (packedTile % fl::kTexelChannels != 0)
    return emitError() << "tile size " << packedTile << " along packed dim "
                       << packed << " is not a multiple of 4 (one texel)";
  for (int64_t k = 0; k < 2; ++k) {
    int64_t dim = rank - 2 + k, size = shape[dim];
    if (ShapedType::isDynamic(size))
      continue;
    int64_t padded = llvm::alignTo(size, fl::kTexelChannels);
    if (getTile()[k] > padded)
      return emitError() << "tile size " << getTile()[k] << " along dim " << dim
                         << " exceeds the dim's size " << size
                         << ": the tile would be mostly padding";
  }
  return verifyImageEncoding(getLayout(rank), shape, elementType, emitError);
}

//===----------------------------------------------------------------------===//
// ImageLayoutAttr
//===----------------------------------------------------------------------===//

static fl::Layout buildImageLayout(ArrayRef<int64_t> tile, int64_t packed,
                                   ArrayRef<int64_t> x, ArrayRef<int64_t> y,
                                   ArrayRef<int64_t> layers) {
  fl::Layout::AxisFactors axes;
  ArrayRef<int64_t> lists[fl::kNumAxes] = {x, y, layers};
  for (unsigned a = 0; a < fl::kNumAxes; ++a)
    for (int64_t v : lists[a])
      axes[a].push_back(ImageLayoutAttr::decodeFactor(v));
  return fl::Layout::image(toVector(tile), static_cast<int>(packed),
                           std::move(axes));
}

LogicalResult
ImageLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        ArrayRef<int64_t> tile, int64_t packed,
                        ArrayRef<int64_t> x, ArrayRef<int64_t> y,
                        ArrayRef<int64_t> layers) {
  std::string err = buildImageLayout(tile, packed, x, y, layers).verify();
  if (!err.empty())
    return emitError() << err;
  return success();
}

fl::Layout ImageLayoutAttr::getLayout(unsigned) const {
  return buildImageLayout(getTile(), getPacked(), getX(), getY(), getLayers());
}

LogicalResult ImageLayoutAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type elementType,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() != getTile().size())
    return emitError() << "#fbl.image of rank " << getTile().size()
                       << " on a tensor of rank " << shape.size();
  return verifyImageEncoding(getLayout(shape.size()), shape, elementType,
                             emitError);
}

//===----------------------------------------------------------------------===//
// TargetAttr
//===----------------------------------------------------------------------===//

ArrayRef<StringRef> TargetAttr::getPresetNames() {
  static const SmallVector<StringRef> names = [] {
    SmallVector<StringRef> n;
    for (const ::fbl::target::TargetDescription &p : ::fbl::target::kPresets)
      n.push_back(p.name);
    return n;
  }();
  return names;
}

TargetAttr TargetAttr::get(MLIRContext *context,
                           const ::fbl::target::TargetDescription &d) {
  return TargetAttr::get(context, d.name, d.maxImageWidth, d.maxImageHeight,
                         d.maxImageLayers, d.maxBufferBytes, d.cacheLineTexels,
                         d.cacheBytes, d.cacheWays, d.fp16, d.maxWorkgroupSize,
                         d.preferredWorkgroup, d.localTiledGemm, d.execution,
                         d.halfStorage, d.gemmTile, d.gemmTileClasses,
                         d.gemmVariants, d.kernelArguments);
}

::fbl::target::TargetDescription TargetAttr::getDescription() const {
  ::fbl::target::TargetDescription d;
  d.name = getName().str();
  d.maxImageWidth = getMaxImageWidth();
  d.maxImageHeight = getMaxImageHeight();
  d.maxImageLayers = getMaxImageLayers();
  d.maxBufferBytes = getMaxBufferBytes();
  std::copy_n(getCacheLineTexels().begin(), 2, d.cacheLineTexels.begin());
  d.cacheBytes = getCacheBytes();
  d.cacheWays = getCacheWays();
  d.fp16 = getFp16();
  d.maxWorkgroupSize = getMaxWorkgroupSize();
  std::copy_n(getPreferredWorkgroup().begin(), 2, d.preferredWorkgroup.begin());
  d.localTiledGemm = getLocalTiledGemm();
  d.execution = getExecution();
  d.halfStorage = getHalfStorage();
  d.gemmTile = getGemmTile();
  d.gemmTileClasses.assign(getGemmTileClasses().begin(),
                           getGemmTileClasses().end());
  d.gemmVariants.assign(getGemmVariants().begin(), getGemmVariants().end());
  d.kernelArguments = getKernelArguments();
  return d;
}

TargetAttr TargetAttr::getPreset(MLIRContext *context, StringRef name) {
  const ::fbl::target::TargetDescription *p =
      ::fbl::target::findPreset(name.str());
  return p ? TargetAttr::get(context, *p) : TargetAttr();
}

TargetAttr TargetAttr::lookup(Operation *op) {
  for (; op; op = op->getParentOp())
    if (auto t = op->getAttrOfType<TargetAttr>(FBLDialect::getTargetAttrName()))
      return t;
  return {};
}

::fbl::target::KernelArgumentLimits
TargetAttr::lookupKernelArguments(Operation *op) {
  TargetAttr t = lookup(op);
  return t ? t.getKernelArguments() : ::fbl::target::kMinKernelArguments;
}

TargetAttr TargetAttr::lookupOrEmitError(Operation *op) {
  if (TargetAttr t = lookup(op))
    return t;
  // At the op's location only: the op itself is usually the whole module.
  mlir::emitError(op->getLoc(),
                  "no target: set fbl.target on the module or pass "
                  "target=NAME (")
      << llvm::join(getPresetNames(), ", ") << ")";
  return {};
}

fl::DeviceLimits TargetAttr::getLimits() const {
  fl::DeviceLimits l;
  l.maxImageWidth = getMaxImageWidth();
  l.maxImageHeight = getMaxImageHeight();
  l.maxImageLayers = getMaxImageLayers();
  l.maxBufferBytes = getMaxBufferBytes();
  return l;
}

// The target's parts of optional integer fields (the execution model, the
// kernel argument limits), each a table of keys and members: parsed,
// filled in, verified and printed alike.
template <typename Part, size_t N>
using IntegerFields = const ::fbl::target::IntegerField<Part> (&)[N];
template <size_t N> using IntegerValues = std::optional<int64_t>[N];

/// Parses `key`'s value into `values` where `fields` has `key`; none where
/// it has not.
template <typename Part, size_t N>
static std::optional<ParseResult>
parseIntegerField(AsmParser &parser, StringRef key,
                  IntegerFields<Part, N> fields, IntegerValues<N> &values) {
  auto *f = llvm::find_if(fields, [&](const auto &f) { return key == f.key; });
  if (f == std::end(fields))
    return std::nullopt;
  return parser.parseInteger(values[f - std::begin(fields)].emplace());
}

/// `part` with the parsed values in place of its own.
template <typename Part, size_t N>
static Part withIntegerFields(Part part, IntegerFields<Part, N> fields,
                              const IntegerValues<N> &values) {
  for (auto [field, value] : llvm::zip_equal(fields, values))
    if (value)
      part.*field.member = *value;
  return part;
}

/// An error naming the first field of `part` outside its range.
template <typename Part, size_t N>
static LogicalResult
verifyFieldRanges(function_ref<InFlightDiagnostic()> emitError,
                  const Part &part, IntegerFields<Part, N> fields) {
  for (const auto &f : fields) {
    int64_t v = part.*f.member;
    if (v >= f.least && v <= f.most)
      continue;
    if (f.most == std::numeric_limits<int64_t>::max() && f.least == 1)
      return emitError() << f.key << " must be positive";
    return emitError() << f.key << " must be " << f.least
                       << (f.most == f.least + 1 ? " or " : " to ") << f.most;
  }
  return success();
}

/// Prints the fields of `part` that differ from `assumed` (what parsing
/// fills in).
template <typename Part, size_t N>
static void printDifferingFields(AsmPrinter &printer, const Part &part,
                                 const Part &assumed,
                                 IntegerFields<Part, N> fields) {
  for (const auto &f : fields)
    if (part.*f.member != assumed.*f.member)
      printer << ", " << f.key << " = " << part.*f.member;
}

LogicalResult
TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError, StringRef name,
                   int64_t maxImageWidth, int64_t maxImageHeight,
                   int64_t maxImageLayers, int64_t maxBufferBytes,
                   ArrayRef<int64_t> cacheLineTexels, int64_t cacheBytes,
                   int64_t cacheWays, bool fp16, int64_t maxWorkgroupSize,
                   ArrayRef<int64_t> preferredWorkgroup, bool,
                   ::fbl::target::ExecutionModel execution, bool halfStorage,
                   ::fbl::target::GemmTile gemmTile,
                   ArrayRef<::fbl::target::GemmTileClass> gemmTileClasses,
                   ArrayRef<::fbl::target::GemmVariant> gemmVariants,
                   ::fbl::target::KernelArgumentLimits kernelArguments) {
  if (name.empty())
    return emitError() << "target needs a name";
  if (maxImageWidth < 1 || maxImageHeight < 1 || maxImageLayers < 1)
    return emitError() << "image limits must be positive";
  if (maxBufferBytes < 0)
    return emitError() << "max_buffer_bytes must be non-negative";
  if (cacheLineTexels.size() != 2 ||
      llvm::any_of(cacheLineTexels, [](int64_t v) { return v < 1; }))
    return emitError() << "cache_line_texels needs two positive sizes (w, h)";
  if (cacheBytes < 1 || cacheWays < 1)
    return emitError() << "cache_bytes and cache_ways must be positive";
  // A set's bytes, checked for overflow (sizes from the text can be any
  // int64).
  int64_t setBytes = 16;
  for (int64_t factor : {cacheLineTexels[0], cacheLineTexels[1], cacheWays})
    if (llvm::MulOverflow(setBytes, factor, setBytes) || setBytes > cacheBytes)
      return emitError() << "cache_bytes " << cacheBytes << " holds no set of "
                         << cacheWays << " lines of " << cacheLineTexels[0]
                         << "x" << cacheLineTexels[1] << " RGBA32F texels";
  if (cacheBytes % setBytes)
    return emitError() << "cache_bytes " << cacheBytes
                       << " is not a whole number of sets of " << cacheWays
                       << " lines of " << cacheLineTexels[0] << "x"
                       << cacheLineTexels[1] << " RGBA32F texels";
  if (maxWorkgroupSize < 1)
    return emitError() << "max_workgroup_size must be positive";
  if (preferredWorkgroup.size() != 2 ||
      llvm::any_of(preferredWorkgroup, [](int64_t v) { return v < 1; }))
    return emitError() << "preferred_workgroup needs two positive sizes";
  if (int64_t items;
      llvm::MulOverflow(preferredWorkgroup[0], preferredWorkgroup[1], items) ||
      items > maxWorkgroupSize)
    return emitError() << "preferred_workgroup " << preferredWorkgroup[0] << "x"
                       << preferredWorkgroup[1]
                       << " exceeds max_workgroup_size " << maxWorkgroupSize;
  if (failed(verifyFieldRanges(emitError, execution,
                               ::fbl::target::kExecutionFields)) ||
      failed(verifyFieldRanges(emitError, kernelArguments,
                               ::fbl::target::kKernelArgumentFields)))
    return failure();
  if (halfStorage && !fp16)
    return emitError() << "half_storage needs fp16 = true (images that store "
                          "half floats)";
  auto verifyTile = [&](const ::fbl::target::GemmTile &tile) {
    if (const char *reason = tile.invalidReason())
      return emitError() << reason, failure();
    // OpenCL 1.2 promises every device 32 KiB of local memory.
    if (int64_t bytes = tile.localBytes();
        bytes > ::fbl::target::kMinLocalMemoryBytes)
      return emitError() << "gemm_tile's local tiles take " << bytes
                         << " bytes, more than the "
                         << ::fbl::target::kMinLocalMemoryBytes
                         << " OpenCL promises",
             failure();
    if (tile.items() > maxWorkgroupSize)
      return emitError() << "gemm_tile's " << tile.cols() << "x" << tile.rows()
                         << " work-groups exceed max_workgroup_size "
                         << maxWorkgroupSize,
             failure();
    return success();
  };
  if (failed(verifyTile(gemmTile)))
    return failure();
  int64_t previous = 0;
  for (const ::fbl::target::GemmTileClass &c : gemmTileClasses) {
    if (c.minOutputs <= previous)
      return emitError() << "gemm_tile_classes needs positive min_outputs in "
                            "increasing order";
    previous = c.minOutputs;
    if (failed(verifyTile(c.tile)))
      return failure();
  }
  for (const ::fbl::target::GemmVariant &v : gemmVariants)
    if (v.storeAfterK < 0)
      return emitError() << "gemm_variants' store_after_k must be at least 0, "
                            "got "
                         << v.storeAfterK;
  return success();
}

/// The tile `[group_items, item_blocks, local_k(, group_rows(, swizzle(,
/// store_after_k(, item_blocks_n))))]` spells, or none for another count of
/// numbers or a swizzle other than 0 or 1 (the verifier checks the sizes).
static std::optional<::fbl::target::GemmTile> gemmTileOf(ArrayRef<int64_t> v) {
  if (v.size() < 3 || v.size() > 7 || (v.size() >= 5 && v[4] != 0 && v[4] != 1))
    return std::nullopt;
  return ::fbl::target::GemmTile{v[0],
                                 v[1],
                                 v[2],
                                 v.size() >= 4 ? v[3] : 0,
                                 v.size() < 5 || v[4] == 1,
                                 v.size() >= 6 ? v[5] : 0,
                                 v.size() >= 7 ? v[6] : 0};
}

/// `[n, n, ...]` into `values`.
static ParseResult parseIntegerList(AsmParser &parser,
                                    SmallVectorImpl<int64_t> &values) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
    return parser.parseInteger(values.emplace_back());
  });
}

/// `[[n, ...], [n, ...], ...]`, each inner list handed to `entry`.
static ParseResult
parseIntegerLists(AsmParser &parser,
                  function_ref<ParseResult(ArrayRef<int64_t>)> entry) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                        [&]() -> ParseResult {
                                          SmallVector<int64_t> values;
                                          if (parseIntegerList(parser, values))
                                            return failure();
                                          return entry(values);
                                        });
}

Attribute TargetAttr::parse(AsmParser &parser, Type) {
  MLIRContext *ctx = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  std::string name;
  if (parser.parseLess() || parser.parseString(&name))
    return {};
  // Start from the preset of that name, if any; fields override it.
  std::optional<int64_t> ints[7];
  std::optional<bool> fp16, localTiledGemm, halfStorage;
  std::optional<int64_t> execution[std::size(::fbl::target::kExecutionFields)];
  std::optional<int64_t>
      arguments[std::size(::fbl::target::kKernelArgumentFields)];
  SmallVector<int64_t> line, wg;
  std::optional<::fbl::target::GemmTile> tile;
  SmallVector<::fbl::target::GemmTileClass> classes;
  SmallVector<::fbl::target::GemmVariant> variants;
  bool hasLine = false, hasWg = false, hasClasses = false, hasVariants = false;
  static const char *intKeys[] = {"max_image_width",   "max_image_height",
                                  "max_image_layers",  "max_buffer_bytes",
                                  "cache_bytes",       "cache_ways",
                                  "max_workgroup_size"};
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    SMLoc keyLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    std::optional<ParseResult> field = parseIntegerField(
        parser, key, ::fbl::target::kExecutionFields, execution);
    if (!field)
      field = parseIntegerField(
          parser, key, ::fbl::target::kKernelArgumentFields, arguments);
    auto *it = llvm::find(intKeys, key);
    if (field) {
      if (failed(*field))
        return {};
    } else if (it != std::end(intKeys)) {
      int64_t v;
      if (parser.parseInteger(v))
        return {};
      ints[it - std::begin(intKeys)] = v;
    } else if (key == "fp16" || key == "local_tiled_gemm" ||
               key == "half_storage") {
      StringRef b;
      if (parser.parseKeyword(&b) || (b != "true" && b != "false")) {
        parser.emitError(keyLoc, key) << " must be true or false";
        return {};
      }
      (key == "fp16"               ? fp16
       : key == "local_tiled_gemm" ? localTiledGemm
                                   : halfStorage) = b == "true";
    } else if (key == "gemm_tile") {
      SmallVector<int64_t> v;
      if (parseIntegerList(parser, v))
        return {};
      if (!(tile = gemmTileOf(v))) {
        parser.emitError(keyLoc, "gemm_tile needs [group_items, item_blocks, "
                                 "local_k(, group_rows(, swizzle(, "
                                 "store_after_k(, item_blocks_n))))], swizzle "
                                 "0 or 1");
        return {};
      }
    } else if (key == "gemm_tile_classes") {
      hasClasses = true;
      if (parseIntegerLists(parser, [&](ArrayRef<int64_t> c) -> ParseResult {
            // The ninth number, own_launch, follows a whole tile.
            std::optional<::fbl::target::GemmTile> t;
            bool own = c.size() == 9 && c[8] == 1;
            if (c.size() == 9 ? c[8] == 0 || c[8] == 1
                              : !c.empty() && c.size() < 9)
              t = gemmTileOf(c.slice(1, std::min<size_t>(c.size(), 8) - 1));
            if (!t)
              return parser.emitError(
                  keyLoc, "gemm_tile_classes needs [min_outputs, "
                          "group_items, item_blocks, local_k(, group_rows(, "
                          "swizzle(, store_after_k(, item_blocks_n(, "
                          "own_launch)))))] entries, swizzle and own_launch 0 "
                          "or 1");
            classes.push_back({c[0], *t, own});
            return success();
          }))
        return {};
    } else if (key == "gemm_variants") {
      hasVariants = true;
      if (parseIntegerLists(parser, [&](ArrayRef<int64_t> v) -> ParseResult {
            if (v.size() != 2 || (v[1] != 0 && v[1] != 1))
              return parser.emitError(keyLoc,
                                      "gemm_variants needs [store_after_k, "
                                      "fma] entries, fma 0 or 1");
            variants.push_back({v[0], v[1] == 1});
            return success();
          }))
        return {};
    } else if (key == "cache_line_texels" || key == "preferred_workgroup") {
      SmallVector<int64_t> &dst = key == "cache_line_texels" ? line : wg;
      (key == "cache_line_texels" ? hasLine : hasWg) = true;
      if (parseIntegerList(parser, dst))
        return {};
    } else {
      parser.emitError(keyLoc, "unknown target field '") << key << "'";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  TargetAttr preset = getPreset(ctx, name);
  int64_t values[std::size(intKeys)];
  if (preset) {
    int64_t presetValues[] = {
        preset.getMaxImageWidth(),   preset.getMaxImageHeight(),
        preset.getMaxImageLayers(),  preset.getMaxBufferBytes(),
        preset.getCacheBytes(),      preset.getCacheWays(),
        preset.getMaxWorkgroupSize()};
    std::copy(std::begin(presetValues), std::end(presetValues), values);
  }
  for (size_t i = 0; i < std::size(intKeys); ++i) {
    if (ints[i]) {
      values[i] = *ints[i];
    } else if (!preset) {
      parser.emitError(loc, "target '")
          << name << "' is not a preset (" << llvm::join(getPresetNames(), ", ")
          << "); give '" << intKeys[i] << "'";
      return {};
    }
  }
  if (!preset && (!fp16 || !hasLine || !hasWg)) {
    parser.emitError(loc, "target '")
        << name << "' is not a preset; give fp16, cache_line_texels and "
        << "preferred_workgroup";
    return {};
  }
  if (!hasLine)
    line.assign(preset.getCacheLineTexels().begin(),
                preset.getCacheLineTexels().end());
  if (!hasWg)
    wg.assign(preset.getPreferredWorkgroup().begin(),
              preset.getPreferredWorkgroup().end());
  ::fbl::target::ExecutionModel model = withIntegerFields(
      preset ? preset.getExecution() : ::fbl::target::kDefaultExecution,
      ::fbl::target::kExecutionFields, execution);
  ::fbl::target::KernelArgumentLimits limits = withIntegerFields(
      preset ? preset.getKernelArguments() : ::fbl::target::kMinKernelArguments,
      ::fbl::target::kKernelArgumentFields, arguments);
  return parser.getChecked<TargetAttr>(
      loc, ctx, name, values[0], values[1], values[2], values[3], line,
      values[4], values[5], fp16 ? *fp16 : preset.getFp16(), values[6], wg,
      localTiledGemm ? *localTiledGemm : preset && preset.getLocalTiledGemm(),
      model, halfStorage ? *halfStorage : preset && preset.getHalfStorage(),
      tile     ? *tile
      : preset ? preset.getGemmTile()
               : ::fbl::target::kDefaultGemmTile,
      hasClasses ? ArrayRef<::fbl::target::GemmTileClass>(classes)
      : preset   ? preset.getGemmTileClasses()
                 : ArrayRef<::fbl::target::GemmTileClass>(),
      hasVariants ? ArrayRef<::fbl::target::GemmVariant>(variants)
      : preset    ? preset.getGemmVariants()
                  : ArrayRef<::fbl::target::GemmVariant>(),
      limits);
}

void TargetAttr::print(AsmPrinter &printer) const {
  printer << "<\"" << getName() << '"';
  // A preset prints as its name alone.
  TargetAttr preset = getPreset(getContext(), getName());
  if (preset == *this) {
    printer << '>';
    return;
  }
  printer << ", max_image_width = " << getMaxImageWidth()
          << ", max_image_height = " << getMaxImageHeight()
          << ", max_image_layers = " << getMaxImageLayers()
          << ", max_buffer_bytes = " << getMaxBufferBytes()
          << ", cache_line_texels = [";
  llvm::interleaveComma(getCacheLineTexels(), printer);
  printer << ']' << ", cache_bytes = " << getCacheBytes()
          << ", cache_ways = " << getCacheWays()
          << ", fp16 = " << (getFp16() ? "true" : "false")
          << ", max_workgroup_size = " << getMaxWorkgroupSize()
          << ", preferred_workgroup = [";
  llvm::interleaveComma(getPreferredWorkgroup(), printer);
  printer << ']';
  // Optional field: printed when it differs from what parsing assumes.
  if (getLocalTiledGemm() != (preset && preset.getLocalTiledGemm()))
    printer << ", local_tiled_gemm = "
            << (getLocalTiledGemm() ? "true" : "false");
  if (getHalfStorage() != (preset && preset.getHalfStorage()))
    printer << ", half_storage = " << (getHalfStorage() ? "true" : "false");
  if (::fbl::target::GemmTile t = getGemmTile();
      !(t == (preset ? preset.getGemmTile() : ::fbl::target::kDefaultGemmTile)))
    printer << ", gemm_tile = " << ::fbl::target::tileText(t);
  if (ArrayRef<::fbl::target::GemmTileClass> classes = getGemmTileClasses();
      classes != (preset ? preset.getGemmTileClasses()
                         : ArrayRef<::fbl::target::GemmTileClass>()))
    printer << ", gemm_tile_classes = "
            << ::fbl::target::tileClassesText(classes);
  if (ArrayRef<::fbl::target::GemmVariant> variants = getGemmVariants();
      variants != (preset ? preset.getGemmVariants()
                          : ArrayRef<::fbl::target::GemmVariant>()))
    printer << ", gemm_variants = " << ::fbl::target::variantsText(variants);
  // Execution-model fields that differ from what parsing assumes.
  printDifferingFields(printer, getExecution(),
                       preset ? preset.getExecution()
                              : ::fbl::target::kDefaultExecution,
                       ::fbl::target::kExecutionFields);
  printDifferingFields(printer, getKernelArguments(),
                       preset ? preset.getKernelArguments()
                              : ::fbl::target::kMinKernelArguments,
                       ::fbl::target::kKernelArgumentFields);
  printer << '>';
}
