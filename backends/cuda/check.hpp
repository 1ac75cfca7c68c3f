// SPDX-License-Identifier: Apache-2.0
// calm/backends/cuda/check.hpp: every CUDA runtime call is checked; a failure throws calm::error
// naming the call, the CUDA error and where it was made.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "../../core/error.hpp"

namespace calm {
namespace cuda {
namespace detail {

inline void check(cudaError_t e, char const* what, char const* file, int line) {
  if (e != cudaSuccess)
    raise_error(error(errc::backend_failure, std::string(what) + " failed: " + cudaGetErrorName(e) + " (" +
                                           cudaGetErrorString(e) + ") at " + file + ":" + std::to_string(line)));
}

}  // namespace detail
}  // namespace cuda
}  // namespace calm

/// Check a CUDA runtime call: CALM_CUDA_CHECK(cudaMalloc(&p, bytes));
#define CALM_CUDA_CHECK(call) ::calm::cuda::detail::check((call), #call, __FILE__, __LINE__)
