//===- NpyChecks.h - Reading and checking training .npy files ---*- C++ -*-===//
//
// What ClassData and DiffusionData share: an .npy read whose every error is
// one line naming the option and file, and the shape check and its text.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_TOOLS_FINETUNE_NPYCHECKS_H
#define FBL_TOOLS_FINETUNE_NPYCHECKS_H

#include "Npy.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace fbl::finetune {

/// "WHAT: WHY" as an error.
llvm::Error npyError(const std::string &what, const llvm::Twine &why);
/// `path` as an .npy array; a read failure names `what` (e.g. "--data 'x'").
llvm::Expected<npy::Array> readNpy(const std::string &what,
                                   const std::string &path);
/// Whether `shape` has the rank of `want` and its extents (-1: any
/// positive extent).
bool shapeMatches(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> want);
/// "[2, any, 24]".
std::string shapeText(llvm::ArrayRef<int64_t> shape);

} // namespace fbl::finetune

#endif // FBL_TOOLS_FINETUNE_NPYCHECKS_H
