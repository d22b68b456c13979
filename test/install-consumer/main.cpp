//===- main.cpp - A consumer of the installed fbl package -----------------===//
//
// Loads the fbl dialect into a context of its own, parses an encoded tensor
// type and prints the image extents the layout algebra gives it.
//
//===----------------------------------------------------------------------===//

#include "fbl/Dialect/FBL/IR/FBLAttrs.h"
#include "fbl/Dialect/FBL/IR/FBLDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

int main() {
  mlir::MLIRContext context;
  context.loadDialect<mlir::fbl::FBLDialect>();
  mlir::Type type = mlir::parseType(
      "tensor<64x128xf32, #fbl.rtile<tile = [4, 4], packed = 1>>", &context);
  auto layout = mlir::fbl::getLayoutEncoding(type);
  if (!layout)
    return 1;
  auto tensor = llvm::cast<mlir::RankedTensorType>(type);
  fbl::layout::Extents e = layout.getExtents(tensor.getShape());
  llvm::outs() << type << ": image " << e.width << "x" << e.height << "x"
               << e.layers << "\n";
  return 0;
}
