# Installs fbl into a scratch prefix, then builds and runs a consumer that
# finds it with find_package(FBL). Fails on any step.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(run_step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc
    OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step failed (${rc}): ${ARGN}\n${out}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

run_step(${CMAKE_COMMAND} --install ${FBL_BINARY_DIR}
  --prefix ${WORK_DIR}/prefix)
# A sanitized fbl (test/CMakeLists.txt) passes the compiler and flags the
# consumer must build with.
set(consumer_args)
if(CONSUMER_CXX_COMPILER)
  set(consumer_args "-DCMAKE_CXX_COMPILER=${CONSUMER_CXX_COMPILER}"
    "-DCMAKE_CXX_FLAGS=${CONSUMER_CXX_FLAGS}"
    "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_EXE_LINKER_FLAGS}")
endif()
run_step(${CMAKE_COMMAND} -G ${GENERATOR} -S ${CONSUMER_SOURCE_DIR}
  -B ${WORK_DIR}/build
  -DFBL_DIR=${WORK_DIR}/prefix/lib/cmake/fbl -DMLIR_DIR=${MLIR_DIR}
  ${consumer_args})
run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run_step(${WORK_DIR}/build/fbl-consumer)
message("${step_output}")
string(FIND "${step_output}"
  "tensor<64x128xf32, #fbl.rtile<tile = [4, 4], packed = 1>>: image 32x64x1" found)
if(found EQUAL -1)
  message(FATAL_ERROR "unexpected consumer output:\n${step_output}")
endif()

# The installed Python package finds the installed tools and runtime: it
# compiles the MLP's gradient and runs it.
set(ENV{PYTHONPATH} ${WORK_DIR}/prefix/python_packages)
if(ASAN_RUNTIME)
  set(ENV{LD_PRELOAD} ${ASAN_RUNTIME})
endif()
run_step(/usr/bin/python3 -c "
import numpy as np, fbl
assert fbl.__file__.startswith('${WORK_DIR}/prefix/'), fbl.__file__
b = fbl.compile('${CONSUMER_SOURCE_DIR}/../../examples/mlp.mlir', target='pocl-cpu')
s = fbl.Session(b, 'cpu')
outs = s.run([np.full(i.shape, 0.5, i.dtype) if i.dtype == np.float32 else np.zeros(i.shape, i.dtype) for i in s.inputs])
assert np.isfinite(outs[0]) and len(outs) == 5
print('python package: loss', float(outs[0]))
")
message("${step_output}")
