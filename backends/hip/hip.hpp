// SPDX-License-Identifier: Apache-2.0
// calm/backends/hip/hip.hpp: the HIP backend for ROCm 5.2 and newer: wave64 on gfx9 (CDNA), wave32
// on gfx10+ (RDNA), match_any emulated, LDS as block-local memory.
#pragma once

#include "atomic.hpp"
#include "check.hpp"
#include "runtime.hpp"
#include "warp.hpp"

namespace calm {
namespace hip {

constexpr char const* backend_name = "hip";
using default_warp = warp;

/// The warp of a per-lane call: the lanes that reach it together.
template <class Tag = void>
__device__ inline warp this_warp() { return warp::current(); }

}  // namespace hip
}  // namespace calm
