// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/thread_slices.hpp: how the CPU forms of the bulk programs (a block is one thread) share
// out their items: contiguous slices of near-equal size.
#pragma once

#include "../../core/exec.hpp"

namespace calm {
namespace detail {

/// Items below which a further thread costs more (its table cleared and merged) than it saves.
constexpr index_t thread_min_items = index_t(1) << 14;

/// Slice s of `slices` near-equal parts of [0, n): [begin, end).
CALM_HD inline void slice_range(index_t n, index_t slices, index_t s, index_t& begin, index_t& end) {
  index_t const per = n / slices, extra = n % slices;
  begin = s * per + (s < extra ? s : extra);
  end = begin + per + (s < extra ? 1 : 0);
}

}  // namespace detail
}  // namespace calm
