// SPDX-License-Identifier: Apache-2.0
// calm/core/config.hpp: the host/device function macros, the index type, and the compile passes.
// Everything here is plain C++17 plus the attributes CUDA and HIP compilers understand.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define CALM_HD __host__ __device__
#define CALM_DEVICE __device__
/// The capture and attributes of a kernel body: `CALM_LAMBDA(auto const& w, auto i) { ... }`.
#define CALM_LAMBDA [=] __device__
#elif defined(__HIP__)
// clang's own spelling: __host__ and __device__ are macros of hip_runtime.h, which core/ does not include
#define CALM_HD __attribute__((host)) __attribute__((device))
#define CALM_DEVICE __attribute__((device))
#define CALM_LAMBDA [=] __attribute__((device))
#else
#define CALM_HD
#define CALM_DEVICE
#define CALM_LAMBDA [=]
#endif

// True while compiling code that runs on a GPU (the device pass of nvcc or clang -x hip).
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define CALM_DEVICE_PASS 1
#else
#define CALM_DEVICE_PASS 0
#endif

// A loop of a small fixed trip count that a GPU compiler must unroll, so that the arrays it indexes stay in
// registers (nvcc left a block program's tile in local memory when the kernel also held hot_key's program).
#if CALM_DEVICE_PASS
#define CALM_UNROLL _Pragma("unroll")
#else
#define CALM_UNROLL
#endif

// A loop of a small fixed trip count that every compiler must unroll, a host compiler at -O2 too (g++ -O2
// left thread_private's fill loop of 8 rounds rolled: 1.9x slower than unrolled).
#if CALM_DEVICE_PASS || defined(__clang__)
#define CALM_UNROLL_ALWAYS _Pragma("unroll")
#elif defined(__NVCC__)  // nvcc's host pass takes no GCC pragma; these CPU loops run in host-backend builds alone
#define CALM_UNROLL_ALWAYS
#elif defined(__GNUC__)
#define CALM_UNROLL_ALWAYS _Pragma("GCC unroll 16")
#else
#define CALM_UNROLL_ALWAYS
#endif

// A loop over the lanes of a host warp that the compiler should vectorize.
#if defined(_OPENMP)
#define CALM_SIMD _Pragma("omp simd")
#else
#define CALM_SIMD
#endif

namespace calm {

/// Signed 64-bit index: bulk extents above 2^31 are normal on a GPU with 141 GB.
using index_t = std::int64_t;

}  // namespace calm
