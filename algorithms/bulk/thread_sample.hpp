// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/thread_sample.hpp: what thread_private reads of the keys before it fills its tables: each
// slice's first keys (a hot entry, runs), and the keys' spread over the cache's sets.
#pragma once

#include <algorithm>
#include <cstdint>

#include "../../core/exec.hpp"
#include "thread_slices.hpp"

namespace calm {
namespace detail {

/// Items of a slice's start that sample_slice reads, and the buckets it hashes their slots into.
constexpr index_t hot_sample_items = 512;
constexpr int hot_sample_buckets = 64;

/// What the first items of a slice show (those inside the table): `eighths` (0 to 8), the largest count
/// that a slot keeps in its hashed bucket (one of hot_sample_buckets; a bucket's slot counts up, another
/// slot counts it down or takes it over at 0: exact for a slot alone in its bucket, a bound below
/// otherwise), or the items whose slot repeats the one before (runs), whichever is larger; `one`: the
/// slot of every one of them, where they all share one (else -1); `top`, the slot of the largest count;
/// `long_runs`: one group of thread_fold_group items in eight or more is of one slot.
struct slice_sample {
  int eighths = 0;
  index_t one = -1;
  index_t top = -1;     ///< the slot of the largest bucket count
  int top_eighths = 0;  ///< that count's share, in eighths of the items inside the table
  bool long_runs = false;
};

template <class K, class KeyMap>
CALM_HD slice_sample sample_slice(K const* keys, index_t begin, index_t end, index_t bins, KeyMap const& key_map) {
  index_t slots[hot_sample_buckets];
  int counts[hot_sample_buckets] = {};
  index_t const stop = begin + (end - begin < hot_sample_items ? end - begin : hot_sample_items);
  int inside = 0, most = 0, repeats = 0, groups = 0, one_groups = 0, group_run = 0;
  index_t before = -1, first = -1, top = -1, group_slot = -1;
  bool alike = true;
  for (index_t i = begin; i < stop; ++i) {
    index_t const slot = key_map(keys[i]);
    if ((i - begin) % thread_fold_group == 0) group_slot = slot, group_run = 0;  // the groups as a fill meets them
    group_run += slot == group_slot && slot >= 0 && slot < bins;
    if ((i - begin) % thread_fold_group == thread_fold_group - 1) ++groups, one_groups += group_run == thread_fold_group;
    if (slot < 0 || slot >= bins) continue;
    if (inside++ == 0) first = slot;
    alike = alike && slot == first;
    repeats += slot == before;
    before = slot;
    int const h = static_cast<int>((static_cast<unsigned long long>(slot) * 0x9E3779B97F4A7C15ull) >> 58);
    if (counts[h] == 0) slots[h] = slot;
    if (slots[h] != slot) {
      --counts[h];
    } else if (++counts[h] > most) {
      most = counts[h];
      top = slot;
    }
  }
  slice_sample r;
  r.eighths = inside > 0 ? (most > repeats ? most : repeats) * 8 / inside : 0;
  r.one = inside > 0 && alike ? first : -1;
  r.top = top;
  r.top_eighths = inside > 0 ? most * 8 / inside : 0;
  r.long_runs = groups > 0 && 8 * one_groups >= groups;
  return r;
}

/// Whether the keys crowd a few sets of the cache: of the lines that 512 keys read at the start and the
/// middle of the array meet (inside the table, 64 lines at least), three quarters fall into 16 of the 64 sets
/// an L1 has (keys a power of two apart, 1,024 entries or so: a column of a row-major matrix). A line counts
/// once, however many keys meet it: a hot key does not crowd. Only then is a large private table spread
/// (plan_thread_tables): on uniform keys into 2^18-2^20 entries a spread table ran 15-20% slower on 2 cores.
template <class T, class K, class KeyMap>
bool keys_crowd_sets(K const* keys, index_t n, index_t bins, KeyMap const& key_map) {
  constexpr index_t line = 64 / sizeof(T) > 0 ? index_t(64 / sizeof(T)) : 1;
  int per_set[64] = {};
  std::uint64_t lines[16] = {};  // a 1,024-bit filter of the lines met
  int met = 0;
  for (index_t start : {index_t(0), std::max<index_t>(256, n / 2)})  // two windows that do not overlap
    for (index_t i = start; i < std::min(n, start + 256); ++i) {
      index_t const slot = key_map(keys[i]);
      if (slot < 0 || slot >= bins) continue;
      index_t const l = slot / line;
      std::uint64_t const h = (static_cast<std::uint64_t>(l) * 0x9E3779B97F4A7C15ull) >> 54;
      std::uint64_t const bit = std::uint64_t(1) << (h & 63);
      if (lines[h >> 6] & bit) continue;  // (a line that shares a bit with one met is missed: a bound below)
      lines[h >> 6] |= bit;
      ++per_set[l & 63], ++met;
    }
  std::sort(per_set, per_set + 64, [](int a, int b) { return a > b; });
  int crowded = 0;
  for (int s = 0; s < 16; ++s) crowded += per_set[s];
  return met >= 64 && 4 * crowded >= 3 * met;
}

}  // namespace detail
}  // namespace calm
