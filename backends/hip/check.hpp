// SPDX-License-Identifier: Apache-2.0
// calm/backends/hip/check.hpp: every HIP runtime call is checked; a failure throws calm::error
// naming the call, the HIP error and where it was made.
#pragma once

#include <hip/hip_runtime.h>

#include <string>

#include "../../core/error.hpp"

namespace calm {
namespace hip {
namespace detail {

inline void check(hipError_t e, char const* what, char const* file, int line) {
  if (e != hipSuccess)
    raise_error(error(errc::backend_failure, std::string(what) + " failed: " + hipGetErrorName(e) + " (" +
                                           hipGetErrorString(e) + ") at " + file + ":" + std::to_string(line)));
}

}  // namespace detail
}  // namespace hip
}  // namespace calm

/// Check a HIP runtime call: CALM_HIP_CHECK(hipMalloc(&p, bytes));
#define CALM_HIP_CHECK(call) ::calm::hip::detail::check((call), #call, __FILE__, __LINE__)
