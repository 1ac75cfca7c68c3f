// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/thread_slices.hpp: how the CPU forms of the bulk programs (a block is one thread) share
// out their items (contiguous slices of near-equal size) and fold groups of them.
#pragma once

#include <algorithm>

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
  CALM_UNROLL_ALWAYS for (int j = 0; j < G; ++j) v[j] = values[j];
  CALM_UNROLL_ALWAYS for (int width = G / 2; width >= 1; width /= 2)
    CALM_UNROLL_ALWAYS for (int j = 0; j < width; ++j) v[j] = op(v[j], v[j + width]);
  return v[0];
}

/// Whether the G keys of a group are one key inside the table.
template <int G>
CALM_HD bool one_key(index_t const* key) {
  bool same = key[0] >= 0;
  CALM_UNROLL_ALWAYS for (int j = 1; j < G; ++j) same &= key[j] == key[0];
  return same;
}

/// Items of its slice a thread looks at to tell long runs (long_runs_ahead).
constexpr index_t thread_run_sample = 1024;

/// Items [i, i + G) of src: their keys into key, their values into value (all loads before any fold).
template <int G, class Source, class Warp, class T>
CALM_HD void load_group(Source const& src, Warp const& w, index_t i, index_t* key, T* value) {
  CALM_UNROLL_ALWAYS for (int j = 0; j < G; ++j) {
    auto const item = src.item(w, i + j);
    key[j] = item.key;
    value[j] = static_cast<T>(item.value);
  }
}

/// fold(key, value) for a loaded group, as one item where `whole` allows and its keys are one.
template <int G, class Op, class T, class Fold>
CALM_HD void fold_group(Op const& op, index_t const* key, T const* value, bool whole, Fold&& fold) {
  if (whole && one_key<G>(key)) {
    fold(key[0], fold_tree<G>(op, value));
  } else {
    CALM_UNROLL_ALWAYS for (int j = 0; j < G; ++j) fold(key[j], value[j]);
  }
}

/// Whether, among the first thread_run_sample items of [begin, end), one group of thread_fold_group in
/// eight or more holds one key (rows of sorted matrix entries): a thread then folds each such group as
/// one item, which where they are rare costs more than it saves (2 cores: spmv 1.2-2x faster on rows of
/// 27 to 16,384 entries and power-law rows, 0.9x on rows of 1 to 7 entries).
template <class Source, class Warp>
CALM_HD bool long_runs_ahead(Source const& src, Warp const& w, index_t begin, index_t end) {
  constexpr int group = thread_fold_group;
  index_t const groups = std::min<index_t>(end - begin, thread_run_sample) / group;
  index_t one = 0;
  for (index_t g = 0; g < groups; ++g) {
    index_t key[group];
    for (int j = 0; j < group; ++j) key[j] = src.order_key(w, begin + g * group + j);
    one += one_key<group>(key) ? 1 : 0;
  }
  return groups > 0 && 8 * one >= groups;
}

}  // namespace detail
}  // namespace calm
