// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/thread_slices.hpp: how the CPU forms of the bulk programs (a block is one thread) share
// out their items (contiguous slices of near-equal size) and fold groups of them.
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

/// Items a CPU fold loads before it folds any (their loads all issued before the first branch on a key).
constexpr int thread_fold_group = 8;

/// op over values[0..G) as a tree (three levels for 8, not a chain of seven).
template <int G, class Op, class T>
CALM_HD T fold_tree(Op const& op, T const* values) {
  T v[G];
  for (int j = 0; j < G; ++j) v[j] = values[j];
  for (int width = G / 2; width >= 1; width /= 2)
    for (int j = 0; j < width; ++j) v[j] = op(v[j], v[j + width]);
  return v[0];
}

/// Whether the G keys of a group are one key inside the table.
template <int G>
CALM_HD bool one_key(index_t const* key) {
  bool same = key[0] >= 0;
  for (int j = 1; j < G; ++j) same &= key[j] == key[0];
  return same;
}

}  // namespace detail
}  // namespace calm
