// SPDX-License-Identifier: Apache-2.0
// calm/core/lane_mask.hpp: the lane-mask type that follows from a compile-time warp width, and
// portable bit helpers for host code and references (backends use their own intrinsics on the GPU).
#pragma once

#include <cstdint>
#include <type_traits>

#include "config.hpp"

namespace calm {

/// The mask type for a warp of W lanes: 32-bit up to 32 lanes (CUDA, RDNA, host W <= 32),
/// 64-bit for 64 lanes (CDNA wavefronts, host W = 64). Bit i is lane i.
template <int W>
using lane_mask_t = std::conditional_t<(W <= 32), std::uint32_t, std::uint64_t>;

/// True for the warp widths calm supports.
constexpr bool valid_warp_size(int w) { return w == 8 || w == 16 || w == 32 || w == 64; }

/// The mask of lanes [0, n) for 0 <= n <= bits of M.
template <class M>
CALM_HD constexpr M first_lanes(int n) {
  return n >= static_cast<int>(8 * sizeof(M)) ? ~M(0) : static_cast<M>((M(1) << n) - M(1));
}

namespace bits {

/// Number of set bits (host-side helper; constexpr, no intrinsics).
template <class M>
constexpr int popcount(M m) {
  static_assert(std::is_unsigned<M>::value, "lane masks are unsigned");
  int c = 0;
  for (; m; m &= static_cast<M>(m - 1)) ++c;
  return c;
}

/// 1 + index of the lowest set bit, 0 for an empty mask (the convention of CUDA's __ffs).
template <class M>
constexpr int find_first_set(M m) {
  static_assert(std::is_unsigned<M>::value, "lane masks are unsigned");
  if (m == 0) return 0;
  int i = 1;
  while (!(m & M(1))) { m >>= 1; ++i; }
  return i;
}

}  // namespace bits
}  // namespace calm
