# SPDX-License-Identifier: Apache-2.0
# calm::nccl: calm/nccl.hpp's tables over NCCL ranks (the CUDA backend), defined where NCCL's header and library
# are found (CALM_NCCL_ROOT, the CUDA toolkit's folders, the system's); included by the build and by the
# installed package config alike.
function(calm_define_nccl_target)
  if(TARGET calm::nccl)
    return()
  endif()
  find_package(CUDAToolkit QUIET)
  set(hints ${CALM_NCCL_ROOT} $ENV{CALM_NCCL_ROOT})
  if(CUDAToolkit_FOUND)
    list(APPEND hints "${CUDAToolkit_LIBRARY_ROOT}" "${CUDAToolkit_TARGET_DIR}")
  endif()
  find_path(CALM_NCCL_INCLUDE_DIR nccl.h HINTS ${hints} PATH_SUFFIXES include)
  find_library(CALM_NCCL_LIBRARY nccl HINTS ${hints} PATH_SUFFIXES lib lib64)
  if(NOT CALM_NCCL_INCLUDE_DIR OR NOT CALM_NCCL_LIBRARY OR NOT CUDAToolkit_FOUND)
    return()
  endif()
  add_library(calm_nccl INTERFACE IMPORTED GLOBAL)
  target_include_directories(calm_nccl INTERFACE "${CALM_NCCL_INCLUDE_DIR}")
  target_link_libraries(calm_nccl INTERFACE calm::calm "${CALM_NCCL_LIBRARY}" CUDA::cudart)
  add_library(calm::nccl ALIAS calm_nccl)
endfunction()
