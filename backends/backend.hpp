// SPDX-License-Identifier: Apache-2.0
// calm/backends/backend.hpp: includes the one backend this build selected (CMake's -DBACKEND, which
// defines CALM_BACKEND_CUDA / _HIP / _OPENMP) and names it calm::backend. Without a definition the
// compiler decides: nvcc gives CUDA, clang -x hip gives HIP, anything else the OpenMP host backend.
#pragma once

#include "../core/exec.hpp"

#if !defined(CALM_BACKEND_CUDA) && !defined(CALM_BACKEND_HIP) && !defined(CALM_BACKEND_OPENMP)
#if defined(__CUDACC__)
#define CALM_BACKEND_CUDA 1
#elif defined(__HIP__)
#define CALM_BACKEND_HIP 1
#else
#define CALM_BACKEND_OPENMP 1
#endif
#endif

#if defined(CALM_BACKEND_CUDA)
#if !defined(__CUDACC__)
#error "calm was configured with BACKEND=cuda: compile this file as CUDA (nvcc, or LANGUAGE CUDA in CMake)"
#endif
#include "cuda/cuda.hpp"
namespace calm {
namespace backend = cuda;
struct default_exec : cuda::exec {};
/// The default execution policy with its launches on `stream` (bulk calls take it as their last argument).
inline default_exec on_stream(cudaStream_t stream) {
  default_exec e;
  e.stream = stream;
  return e;
}
}
#elif defined(CALM_BACKEND_HIP)
#if !defined(__HIP__)
#error "calm was configured with BACKEND=hip: compile this file as HIP (clang++ -x hip)"
#endif
#include "hip/hip.hpp"
namespace calm {
namespace backend = hip;
struct default_exec : hip::exec {};
/// The default execution policy with its launches on `stream` (bulk calls take it as their last argument).
inline default_exec on_stream(hipStream_t stream) {
  default_exec e;
  e.stream = stream;
  return e;
}
}
#else
#include "openmp/openmp.hpp"
namespace calm {
namespace backend = openmp;
struct default_exec : openmp::exec<CALM_HOST_WARP_SIZE> {};
}
#endif
