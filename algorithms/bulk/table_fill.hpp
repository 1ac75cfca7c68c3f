// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/table_fill.hpp: set a table to its op's identity before a bulk call that overwrites it
// (scatter_options::overwrite: the table then holds the call's result alone, as CUB's histograms write theirs).
#pragma once

#include <cstddef>
#include <type_traits>

#include "../../core/exec.hpp"
#include "../../core/ops.hpp"
#include "../../core/warp.hpp"

namespace calm {
namespace detail {

/// table[i] = value for i < n: each block a share of the tiles, a lane an entry.
template <class T>
struct fill_program {
  T* table;
  index_t n;
  T value;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    int const threads = blk.threads();
    T* const t = table;
    index_t const size = n;
    T const v = value;
    blk.for_each_tile((size + threads - 1) / threads, [&](index_t tile) {
      index_t const base = tile * threads;
      blk.for_each_warp([&](auto const& w, auto th) {
        auto const e = map([base](int x) { return base + x; }, th);
        when(w, e < size, [&](auto const& l) { store(l, t, e, v); });
      });
    });
  }
};

/// table[0, bins) = Op's identity, in order with the launches after it: a byte fill where the identity
/// is all zero bits (sums, or, xor), else one launch.
template <class Op, class T, class Exec>
void fill_identity(T* table, index_t bins, Exec const& ex) {
  if (bins <= 0) return;
  if constexpr (std::is_same<Op, plus>::value || std::is_same<Op, bit_or>::value || std::is_same<Op, bit_xor>::value) {
    ex.fill(table, 0, static_cast<std::size_t>(bins) * sizeof(T));
  } else {
    index_t const tiles = (bins + 255) / 256;
    ex.for_each_resident_block(tiles, 256, 0, fill_program<T>{table, bins, Op::template identity<T>()});
  }
}

}  // namespace detail
}  // namespace calm
