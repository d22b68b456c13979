//===- FBLInterfaces.td - Layout encoding interface --------*- tablegen -*-===//
//
// The one interface every fbl layout encoding implements. Passes ask layouts
// questions only through it, so new layout kinds need no pass changes.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_DIALECT_FBL_IR_FBLINTERFACES_TD
#define FBL_DIALECT_FBL_IR_FBLINTERFACES_TD

include "mlir/IR/OpBase.td"

def FBL_LayoutEncodingAttrInterface
    : AttrInterface<"LayoutEncodingAttrInterface"> {
  let cppNamespace = "::mlir::fbl";
  let description = [{
    A layout of a tensor in OpenCL image or buffer memory, carried in the
    encoding slot of `RankedTensorType`. The arithmetic lives in the layout
    algebra (`fbl/Layout/Layout.h`, shared with the runtime); this interface
    exposes it to passes: storage kind, physical extents, the logical→texel
    map as an `AffineMap`, and the layouts of tile-preserving views.
  }];
  let methods = [
    InterfaceMethod<[{
        Returns the algebra layout for tensors of rank `rank`.
      }],
      "::fbl::layout::Layout", "getLayout", (ins "unsigned":$rank)>,
  ];
  let extraSharedClassDeclaration = [{
    /// The OpenCL memory object holding a tensor of rank `rank`.
    ::fbl::layout::StorageKind getStorageKind(unsigned rank) const {
      return $_attr.getLayout(rank).storage();
    }
    /// Physical extents (texels and channels) for a static shape.
    ::fbl::layout::Extents getExtents(::llvm::ArrayRef<int64_t> shape) const {
      return $_attr.getLayout(shape.size()).extents(
          ::std::vector<int64_t>(shape.begin(), shape.end()));
    }
    /// Bytes of device memory a tensor of static `shape` with `elementType`
    /// takes in this layout (padding included).
    int64_t getDeviceBytes(::llvm::ArrayRef<int64_t> shape,
                           ::mlir::Type elementType) const {
      return getExtents(shape).elements() *
             ::mlir::fbl::getElementBytes(elementType);
    }
    /// The map (d0, ..., dn-1) -> (layer, y, x, channel) for a static shape.
    ::mlir::AffineMap getTexelMap(::llvm::ArrayRef<int64_t> shape) const {
      return ::mlir::fbl::buildTexelMap($_attr.getLayout(shape.size()), shape,
                                        $_attr.getContext());
    }
    /// The encoding of `transpose(x, permutation)` viewing x's memory.
    ::mlir::FailureOr<::mlir::Attribute>
    getTransposedEncoding(::llvm::ArrayRef<int64_t> permutation) const {
      return ::mlir::fbl::getTransposedEncoding(
          $_attr.getLayout(permutation.size()), permutation,
          $_attr.getContext());
    }
    /// The encoding of a reshape (collapse or expand with `reassociation`,
    /// grouping the dims of the larger shape) viewing the source's memory,
    /// or failure when the reshape splits a tile or a texel.
    ::mlir::FailureOr<::mlir::Attribute>
    getReshapedEncoding(::llvm::ArrayRef<int64_t> sourceShape,
                        ::llvm::ArrayRef<int64_t> resultShape,
                        ::llvm::ArrayRef<::mlir::ReassociationIndices>
                            reassociation) const {
      return ::mlir::fbl::getReshapedEncoding(
          $_attr.getLayout(sourceShape.size()), sourceShape, resultShape,
          reassociation, $_attr.getContext());
    }
  }];
}

#endif // FBL_DIALECT_FBL_IR_FBLINTERFACES_TD
