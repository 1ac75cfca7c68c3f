// SPDX-License-Identifier: Apache-2.0
// calm/backends/cuda/cuda.hpp: the CUDA backend: 32-lane warps with *_sync intrinsics, native
// match_any (sm_70+), shared memory as block-local memory.
#pragma once

#include "atomic.hpp"
#include "check.hpp"
#include "cluster.hpp"
#include "runtime.hpp"
#include "warp.hpp"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
#error "calm's CUDA backend needs sm_70 or newer (__match_any_sync, independent thread scheduling)"
#endif

namespace calm {
namespace cuda {

constexpr char const* backend_name = "cuda";
using default_warp = warp;

/// The warp of a per-lane call: the lanes that reach it together.
template <class Tag = void>
__device__ inline warp this_warp() { return warp::current(); }

}  // namespace cuda
}  // namespace calm
