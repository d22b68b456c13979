# Sanitized builds and libFuzzer coverage, on top of LLVM's own switches:
#
#   -DLLVM_USE_SANITIZER="Address;Undefined"
#   -DFBL_BUILD_FUZZERS=ON                     (clang only)
#
# HandleLLVMOptions (included after this file) turns LLVM_USE_SANITIZER into
# compile and link flags for every target; this file fills in what Debian's
# LLVM modules leave to LLVM's own top-level build, links one shared ASan
# runtime everywhere, and says how tests must run (FBL_SANITIZER_ENV,
# FBL_ASAN_RUNTIME).

option(FBL_BUILD_FUZZERS "Build the libFuzzer targets (needs clang)" OFF)

# LLVM's top-level CMakeLists defines the UBSan flags HandleLLVMOptions
# appends; Debian's modules do not. Every UBSan report is fatal, as ASan's.
if(NOT DEFINED LLVM_UBSAN_FLAGS)
  set(LLVM_UBSAN_FLAGS "-fsanitize=undefined -fno-sanitize-recover=all")
endif()

if(FBL_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "FBL_BUILD_FUZZERS needs clang (libFuzzer): "
      "configure with -DCMAKE_C_COMPILER=clang-22 "
      "-DCMAKE_CXX_COMPILER=clang++-22")
  endif()
  # Edge coverage in every fbl library for libFuzzer to steer by
  # (HandleLLVMOptions adds it when a sanitizer is on).
  set(LLVM_USE_SANITIZE_COVERAGE ON)
  if(NOT LLVM_USE_SANITIZER)
    string(APPEND CMAKE_C_FLAGS " -fsanitize=fuzzer-no-link")
    string(APPEND CMAKE_CXX_FLAGS " -fsanitize=fuzzer-no-link")
  endif()
  # add_llvm_fuzzer links this archive (libFuzzer with its main) rather
  # than passing -fsanitize=fuzzer, with which clang puts libstdc++ ahead of
  # the shared ASan runtime, which must load first.
  execute_process(
    COMMAND ${CMAKE_CXX_COMPILER}
      -print-file-name=libclang_rt.fuzzer-${CMAKE_SYSTEM_PROCESSOR}.a
    OUTPUT_VARIABLE LLVM_LIB_FUZZING_ENGINE
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT EXISTS "${LLVM_LIB_FUZZING_ENGINE}")
    message(FATAL_ERROR "${CMAKE_CXX_COMPILER} has no libFuzzer "
      "(on Debian: apt-get install libclang-rt-22-dev)")
  endif()
endif()

# The OpenCL drivers tests see under the sanitizers: the ICD loader reads
# its driver list from OCL_ICD_VENDORS, here a copy of the system's
# (/etc/OpenCL/vendors) without Mesa's clover (libMesaOpenCL), which no test
# runs on. clover probes a Gallium driver (pipe_swrast.so) on every
# clGetPlatformIDs, unloads it, and leaves it a 128-byte allocation: by exit
# the code that made it is unmapped, LeakSanitizer can name neither module
# nor function, and no suppression can match the report. Re-read when the
# system's list changes.
function(fbl_sanitizer_opencl_vendors out)
  set(system_dir /etc/OpenCL/vendors)
  set(dir ${CMAKE_BINARY_DIR}/opencl-vendors)
  file(REMOVE_RECURSE ${dir})
  file(MAKE_DIRECTORY ${dir})
  if(IS_DIRECTORY ${system_dir})
    set_property(DIRECTORY ${CMAKE_SOURCE_DIR} APPEND PROPERTY
      CMAKE_CONFIGURE_DEPENDS ${system_dir})
    file(GLOB icds ${system_dir}/*.icd)
    foreach(icd ${icds})
      file(READ ${icd} library)
      if(NOT library MATCHES "libMesaOpenCL")
        file(COPY ${icd} DESTINATION ${dir})
      endif()
    endforeach()
  endif()
  set(${out} ${dir} PARENT_SCOPE)
endfunction()

set(FBL_ASAN_RUNTIME "")
set(FBL_SANITIZER_ENV "")
if(LLVM_USE_SANITIZER)
  if(LLVM_USE_SANITIZER MATCHES "Address")
    # One shared ASan runtime for every binary and libfbl_runtime.so: the
    # Python tests load the library into /usr/bin/python3, which needs the
    # runtime preloaded (LD_PRELOAD), and the tools those tests start then
    # inherit the preload; a tool with its own static copy would abort on
    # the second runtime. GCC links libasan.so by default.
    if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
      set(asan_lib libclang_rt.asan-${CMAKE_SYSTEM_PROCESSOR}.so)
      string(APPEND CMAKE_C_FLAGS " -shared-libasan")
      string(APPEND CMAKE_CXX_FLAGS " -shared-libasan")
    else()
      set(asan_lib libasan.so)
    endif()
    execute_process(
      COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${asan_lib}
      OUTPUT_VARIABLE FBL_ASAN_RUNTIME OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT IS_ABSOLUTE "${FBL_ASAN_RUNTIME}" OR
       NOT EXISTS "${FBL_ASAN_RUNTIME}")
      message(FATAL_ERROR "${CMAKE_CXX_COMPILER} has no ${asan_lib} "
        "(on Debian: apt-get install libclang-rt-22-dev)")
    endif()
    # clang's runtime directory is not on the loader's path.
    get_filename_component(asan_dir "${FBL_ASAN_RUNTIME}" DIRECTORY)
    foreach(kind EXE SHARED MODULE)
      string(APPEND CMAKE_${kind}_LINKER_FLAGS " -Wl,-rpath,${asan_dir}")
    endforeach()
    message(STATUS "ASan runtime: ${FBL_ASAN_RUNTIME}")
  endif()
  # The options every sanitized process runs with. allow_user_poisoning=0:
  # LLVM's headers poison the unused part of a BumpPtrAllocator slab in
  # fbl's instrumented code, while the uninstrumented libMLIR.so allocates
  # from the same slabs (a context's uniquer) without unpoisoning: every
  # attribute libMLIR then builds would read as a use-after-poison. The
  # LeakSanitizer suppressions cover the OpenCL drivers (PoCL, Mesa's
  # rusticl) and the Python interpreter only (lsan.supp says why for each).
  set(FBL_ASAN_OPTIONS "allow_user_poisoning=0:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1")
  set(FBL_LSAN_OPTIONS "suppressions=${CMAKE_CURRENT_SOURCE_DIR}/test/sanitizers/lsan.supp:print_suppressions=0")
  set(FBL_UBSAN_OPTIONS "print_stacktrace=1")
  # Built into every executable as the sanitizers' defaults (a user's
  # *SAN_OPTIONS still win), and the environment lit and ctest give tests,
  # which reaches the uninstrumented python3 that loads libfbl_runtime.
  set(FBL_SANITIZER_ENV "ASAN_OPTIONS=${FBL_ASAN_OPTIONS}"
    "LSAN_OPTIONS=${FBL_LSAN_OPTIONS}" "UBSAN_OPTIONS=${FBL_UBSAN_OPTIONS}")
  fbl_sanitizer_opencl_vendors(vendors_dir)
  list(APPEND FBL_SANITIZER_ENV "OCL_ICD_VENDORS=${vendors_dir}")
  add_library(FBLSanitizerOptions OBJECT
    ${CMAKE_CURRENT_SOURCE_DIR}/test/sanitizers/SanitizerOptions.cpp)
  target_compile_definitions(FBLSanitizerOptions PRIVATE
    "FBL_ASAN_OPTIONS=\"${FBL_ASAN_OPTIONS}\""
    "FBL_LSAN_OPTIONS=\"${FBL_LSAN_OPTIONS}\""
    "FBL_UBSAN_OPTIONS=\"${FBL_UBSAN_OPTIONS}\"")
  # Once every directory is read, link the defaults into every executable.
  cmake_language(DEFER DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
    CALL fbl_link_sanitizer_options ${CMAKE_CURRENT_SOURCE_DIR})
endif()

# Links FBLSanitizerOptions into every executable defined in `dir` and below.
function(fbl_link_sanitizer_options dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target ${targets})
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE")
      # The property, not target_link_libraries: the targets mix its plain
      # and keyword signatures.
      set_property(TARGET ${target} APPEND PROPERTY LINK_LIBRARIES
        FBLSanitizerOptions)
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir ${subdirs})
    fbl_link_sanitizer_options(${subdir})
  endforeach()
endfunction()
