//===- SanitizerOptions.cpp - Default options of the sanitizer build ------===//
//
// Linked into every executable of a sanitized build (FBLSanitizers.cmake):
// the sanitizer runtimes call these hooks for their defaults, so a tool run
// by hand behaves as under the test suite. *SAN_OPTIONS override them.
//
//===----------------------------------------------------------------------===//

extern "C" {

const char *__asan_default_options() { return FBL_ASAN_OPTIONS; }
const char *__lsan_default_options() { return FBL_LSAN_OPTIONS; }
const char *__ubsan_default_options() { return FBL_UBSAN_OPTIONS; }

} // extern "C"
