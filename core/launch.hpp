// calm/core/launch.hpp: the shapes of the per-index launch helper. Every backend's for_each_index
// forms warps from consecutive indices; the shape says how the GPU threads are laid out.
#pragma once

namespace calm {

enum class launch_shape {
  /// A plain 1-D grid, one index per thread, `if (i < n)` cutting the last warp.
  linear,
  /// What Kokkos does for a RangePolicy on CUDA/HIP: blocks of (1, N, 1) threads, a grid-stride loop,
  /// and a ragged last warp. threadIdx.x is always 0, so only the hardware lane id is the lane.
  kokkos_range,
};

inline char const* to_string(launch_shape s) { return s == launch_shape::linear ? "linear" : "kokkos_range"; }

}  // namespace calm
