// SPDX-License-Identifier: Apache-2.0
// calm/backends/openmp/openmp.hpp: the OpenMP-host backend: a warp of CALM_HOST_WARP_SIZE lanes per
// OpenMP thread, lane values as lane arrays, block-local memory as a per-thread buffer.
#pragma once

#include "atomic.hpp"
#include "lane_warp.hpp"
#include "launch.hpp"
#include "memory.hpp"
#include "warp.hpp"

namespace calm {
namespace openmp {

constexpr char const* backend_name = "openmp";
/// The warp kernel bodies receive from for_each_index and for_each_warp by default.
using default_warp = warp<CALM_HOST_WARP_SIZE>;

}  // namespace openmp
}  // namespace calm
