//===- fbl-translate.cpp - fbl translation driver -------------------------===//
//
// mlir-translate with fbl's translations out of MLIR. The bundle
// translations (--fbl-to-opencl, --fbl-to-spirv) take their directory from
// `-o DIR` themselves. mlirTranslateMain opens `-o` as a file before any
// translation runs, so the one thing left here is making that possible when
// DIR is a bundle written before (it is replaced, as a rerun expects) or
// its parent does not exist yet.
//
//===----------------------------------------------------------------------===//

#include "fbl/Target/LayoutReport/LayoutReport.h"
#include "fbl/Target/OpenCL/OpenCLEmitter.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

/// Prepares the `-o` path of a bundle translation; false (with a message)
/// when it is a directory that holds no bundle.
static bool prepareBundleOutput(int argc, char **argv) {
  bool bundle = false;
  llvm::StringRef out;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef a(argv[i]);
    bundle |= a.ends_with("-fbl-to-opencl") || a.ends_with("-fbl-to-spirv");
    if (a == "-o" && i + 1 < argc)
      out = argv[i + 1];
  }
  if (!bundle || out.empty() || out == "-")
    return true;
  if (!llvm::sys::fs::is_directory(out)) {
    llvm::StringRef parent = llvm::sys::path::parent_path(out);
    if (!parent.empty())
      (void)llvm::sys::fs::create_directories(parent);
    return true;
  }
  llvm::SmallString<256> manifest(out);
  llvm::sys::path::append(manifest, "manifest.json");
  if (!llvm::sys::fs::exists(manifest)) {
    llvm::errs() << "fbl-translate: " << out
                 << " is a directory that holds no bundle; give a new path\n";
    return false;
  }
  for (const char *name : {"kernels.cl", "kernels.spv", "manifest.json"}) {
    llvm::SmallString<256> file(out);
    llvm::sys::path::append(file, name);
    (void)llvm::sys::fs::remove(file);
  }
  if (std::error_code ec = llvm::sys::fs::remove(out)) {
    llvm::errs() << "fbl-translate: cannot replace the bundle " << out << ": "
                 << ec.message() << "\n";
    return false;
  }
  return true;
}

/// Output streams report a failed write (`-o /dev/full`, a full disk) as a
/// fatal error when they close; make that one diagnostic line instead of
/// "LLVM ERROR" (report_fatal_error exits 1 after the handler).
static void ioErrorHandler(void *, const char *reason, bool) {
  llvm::errs() << "fbl-translate: error: " << reason << "\n";
}

int main(int argc, char **argv) {
  llvm::install_fatal_error_handler(ioErrorHandler);
  if (!prepareBundleOutput(argc, argv))
    return 1;
  mlir::fbl::registerToLayoutReportTranslation();
  mlir::fbl::registerToOpenCLTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "fbl translation driver\n"));
}
