// SPDX-License-Identifier: Apache-2.0
// calm/core/launch.hpp: the shapes of the per-index launch helper. Every backend's for_each_index
// forms warps from consecutive indices; the shape says how the GPU threads are laid out.
#pragma once

#include <type_traits>

namespace calm {

/// How many blocks of 1,024 threads a block program asks to have on one multiprocessor at once
/// (Body::resident_1024_blocks; 0, no request, when it has none). A GPU backend compiles such a
/// program's kernel with that bound, which caps its registers (1: 64 per thread, 2: 32), so that a
/// program with two paths keeps the occupancy of the lighter one; the host ignores it.
template <class Body, class = void>
struct resident_1024_blocks_of : std::integral_constant<int, 0> {};
template <class Body>
struct resident_1024_blocks_of<Body, std::void_t<decltype(Body::resident_1024_blocks)>> : std::integral_constant<int, Body::resident_1024_blocks> {};

/// The same for a block program whose blocks have at most 512 threads (Body::resident_512_blocks; 0
/// when it has none): 2 caps its registers at 64 per thread, 3 at 40, 4 at 32. A GPU backend then
/// launches it with blocks of 512 threads at most. A program asks for one of the two, not both.
template <class Body, class = void>
struct resident_512_blocks_of : std::integral_constant<int, 0> {};
template <class Body>
struct resident_512_blocks_of<Body, std::void_t<decltype(Body::resident_512_blocks)>> : std::integral_constant<int, Body::resident_512_blocks> {};

/// Whether a block program waits itself for the launch before it (Body::awaits_prior_launch): a GPU
/// backend's kernel launched to overlap that launch then does not wait at its start, and the program
/// calls blk.await_prior_launch() before it reads anything that launch writes, so that it can read
/// what that launch leaves alone (its keys, say) first. Every thread must call it. The host ignores it.
template <class Body, class = void>
struct awaits_prior_launch_of : std::false_type {};
template <class Body>
struct awaits_prior_launch_of<Body, std::void_t<decltype(Body::awaits_prior_launch)>> : std::integral_constant<bool, Body::awaits_prior_launch> {};

enum class launch_shape {
  /// A plain 1-D grid, one index per thread, `if (i < n)` cutting the last warp.
  linear,
  /// What Kokkos does for a RangePolicy on CUDA/HIP: blocks of (1, N, 1) threads, a grid-stride loop,
  /// and a ragged last warp. threadIdx.x is always 0, so only the hardware lane id is the lane.
  kokkos_range,
};

inline char const* to_string(launch_shape s) { return s == launch_shape::linear ? "linear" : "kokkos_range"; }

}  // namespace calm
