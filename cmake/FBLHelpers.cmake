# Helpers for fbl's CMake.

# fbl_add_library(name sources... [DEPENDS targets...] [LINK_LIBS libs...])
#
# A static, position-independent library exported as FBL::<name>. MLIR
# libraries named in LINK_LIBS resolve to libMLIR.so (one copy of MLIR's
# global state for every library and tool), LLVM to libLLVM.so.
function(fbl_add_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK_LIBS" ${ARGN})
  add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  add_library(FBL::${name} ALIAS ${name})
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  set(mlir_libs)
  set(other_libs)
  foreach(lib ${ARG_LINK_LIBS})
    if(lib MATCHES "^MLIR")
      list(APPEND mlir_libs ${lib})
    else()
      list(APPEND other_libs ${lib})
    endif()
  endforeach()
  target_link_libraries(${name} PUBLIC ${other_libs})
  if(mlir_libs)
    mlir_target_link_libraries(${name} PUBLIC ${mlir_libs})
  endif()
  target_link_libraries(${name} PUBLIC LLVM)
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${FBL_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${FBL_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  install(TARGETS ${name} EXPORT FBLTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()
