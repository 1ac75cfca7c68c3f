# SPDX-License-Identifier: Apache-2.0
# Install calm from CALM_BUILD_DIR into WORK_DIR/prefix, then configure, build and run the consumer
# project against it; with Kokkos (WITH_KOKKOS) a project that uses calm::kokkos::ScatterView too; then the
# first program in a project that adds calm's source with add_subdirectory.
# Run by ctest (test install_consumer).
file(REMOVE_RECURSE "${WORK_DIR}")
function(step)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step failed: ${ARGV}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()
step(${CMAKE_COMMAND} --install "${CALM_BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
step(${CMAKE_COMMAND} -S "${CALM_SOURCE_DIR}/tests/consumer" -B "${WORK_DIR}/build" -DCMAKE_BUILD_TYPE=Release
     -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_CXX_COMPILER=${CXX})
step(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
step("${WORK_DIR}/build/consumer")
if(WITH_KOKKOS)  # calm's build found a Kokkos for its backend: the same install, used with Kokkos
  step(${CMAKE_COMMAND} -S "${CALM_SOURCE_DIR}/tests/consumer/kokkos" -B "${WORK_DIR}/kokkos" -DCMAKE_BUILD_TYPE=Release
       -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_CXX_COMPILER=${CXX})
  step(${CMAKE_COMMAND} --build "${WORK_DIR}/kokkos")
  step("${WORK_DIR}/kokkos/kokkos_consumer")
endif()
step(${CMAKE_COMMAND} -S "${CALM_SOURCE_DIR}/tests/consumer/subproject" -B "${WORK_DIR}/subproject" -DCALM_SOURCE_DIR=${CALM_SOURCE_DIR}
     -DCMAKE_CXX_COMPILER=${CXX})
step(${CMAKE_COMMAND} --build "${WORK_DIR}/subproject")
step("${WORK_DIR}/subproject/consumer")
