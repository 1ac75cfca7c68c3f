# SPDX-License-Identifier: Apache-2.0
# Backend selection: BACKEND (from CALM_BACKEND, or -DBACKEND= at the top level) is openmp, cuda or hip.
# An unknown backend, or one whose compiler is missing, stops configuration here with a message that
# says what to do.

string(TOLOWER "${BACKEND}" BACKEND)
if(NOT BACKEND MATCHES "^(openmp|cuda|hip)$")
  message(FATAL_ERROR "calm: unknown backend '${BACKEND}'. Set CALM_BACKEND (or -DBACKEND= where calm is the top-level project) to openmp (default), cuda or hip.")
endif()
string(TOUPPER "${BACKEND}" CALM_BACKEND_UPPER)
message(STATUS "calm: backend ${BACKEND}")

if(BACKEND STREQUAL "openmp")
  if(NOT CALM_HOST_WARP_SIZE MATCHES "^(8|16|32|64)$")
    message(FATAL_ERROR "calm: CALM_HOST_WARP_SIZE must be 8, 16, 32 or 64, not '${CALM_HOST_WARP_SIZE}'.")
  endif()
  find_package(OpenMP)
  if(NOT OpenMP_CXX_FOUND)
    message(FATAL_ERROR "calm: BACKEND=openmp needs a C++ compiler with OpenMP (GCC, or Clang with libomp-dev).")
  endif()

elseif(BACKEND STREQUAL "cuda")
  include(CheckLanguage)
  check_language(CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    message(FATAL_ERROR "calm: BACKEND=cuda but no CUDA compiler was found. Put nvcc on PATH "
                        "(e.g. /usr/local/cuda/bin) or set -DCMAKE_CUDA_COMPILER=/path/to/nvcc.")
  endif()
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "CUDA architectures (default: sm_90, H100/H200)")
  endif()
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  find_package(CUDAToolkit REQUIRED)
  foreach(arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
    string(REGEX MATCH "^[0-9]+" num "${arch}")
    if(num AND num LESS 70)
      message(FATAL_ERROR "calm: CUDA architecture ${arch} is older than sm_70; calm needs __match_any_sync.")
    endif()
  endforeach()

elseif(BACKEND STREQUAL "hip")
  # Debian's ROCm 5.2 layout is not what CMake's HIP language expects: HIP sources are compiled as CXX
  # by clang++-15 with -x hip. The C++ compiler of the build must therefore be that clang.
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "calm: BACKEND=hip compiles HIP as C++ with clang: configure with "
                        "-DCMAKE_CXX_COMPILER=clang++-15 (Debian: apt-get install hipcc clang-15).")
  endif()
  set(CALM_ROCM_PATH "/usr" CACHE PATH "ROCm installation root (Debian: /usr)")
  set(CALM_HIP_ARCHITECTURES "gfx90a;gfx1030" CACHE STRING "AMD GPU targets (gfx90a: wave64 CDNA2, gfx1030: wave32 RDNA2)")
  set(CALM_HIP_IR_ARCHITECTURES "" CACHE STRING "AMD GPU targets the tests' device code is compiled for to LLVM IR only (a compile-check)")
  find_path(CALM_HIP_INCLUDE_DIR hip/hip_runtime.h HINTS "${CALM_ROCM_PATH}/include")
  find_path(CALM_ROCM_DEVICE_LIBS ockl.bc HINTS "${CALM_ROCM_PATH}/lib/x86_64-linux-gnu/amdgcn/bitcode"
            "${CALM_ROCM_PATH}/amdgcn/bitcode" "${CALM_ROCM_PATH}/lib/amdgcn/bitcode")
  find_library(CALM_AMDHIP64 amdhip64 HINTS "${CALM_ROCM_PATH}/lib")
  if(NOT CALM_HIP_INCLUDE_DIR OR NOT CALM_ROCM_DEVICE_LIBS)
    message(FATAL_ERROR "calm: BACKEND=hip needs the HIP headers and the ROCm device libraries "
                        "(Debian: apt-get install hipcc libamdhip64-dev rocm-device-libs).")
  endif()
  # how clang compiles a HIP source, the target architectures aside
  set(CALM_HIP_LANGUAGE_OPTIONS -x hip --rocm-path=${CALM_ROCM_PATH} --rocm-device-lib-path=${CALM_ROCM_DEVICE_LIBS})
endif()

# Mark sources that use calm device code as the backend's language (CUDA sources for nvcc; HIP is CXX).
# Callable from a parent project's directories (it reads CALM_BACKEND, not the caller's BACKEND).
function(calm_use_backend_language)
  string(TOLOWER "${CALM_BACKEND}" backend)
  if(backend STREQUAL "cuda")
    set_source_files_properties(${ARGN} PROPERTIES LANGUAGE CUDA)
  endif()
endfunction()

# The flags every consumer of calm::calm needs for this backend.
function(calm_configure_backend_target target)
  target_compile_definitions(${target} INTERFACE CALM_BACKEND_${CALM_BACKEND_UPPER}=1)
  if(BACKEND STREQUAL "openmp")
    target_compile_definitions(${target} INTERFACE CALM_HOST_WARP_SIZE=${CALM_HOST_WARP_SIZE})
    target_link_libraries(${target} INTERFACE OpenMP::OpenMP_CXX)
  elseif(BACKEND STREQUAL "cuda")
    # CALM_LAMBDA is an extended lambda; calm needs no --expt-relaxed-constexpr (Kokkos's nvcc_wrapper leaves it off)
    target_compile_options(${target} INTERFACE $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda>)
    target_link_libraries(${target} INTERFACE CUDA::cudart)
  elseif(BACKEND STREQUAL "hip")
    set(opts ${CALM_HIP_LANGUAGE_OPTIONS})
    foreach(arch IN LISTS CALM_HIP_ARCHITECTURES)
      list(APPEND opts --offload-arch=${arch})
    endforeach()
    target_compile_options(${target} INTERFACE $<$<COMPILE_LANGUAGE:CXX>:${opts}>)
    target_include_directories(${target} SYSTEM INTERFACE ${CALM_HIP_INCLUDE_DIR})
    if(CALM_AMDHIP64)
      target_link_options(${target} INTERFACE --hip-link --rocm-path=${CALM_ROCM_PATH})
      target_link_libraries(${target} INTERFACE ${CALM_AMDHIP64})
    endif()
  endif()
endfunction()
