// SPDX-License-Identifier: Apache-2.0
// The reference of the bulk scatters (privatize_scatter, hot_key_scatter): keys folded into a table of
// any size, some outside it, and the sequential fold that skips those; the line repeats a sampling counts.
#pragma once

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include "atomic_reference.hpp"
#include "keys.hpp"

namespace calm_test {

/// f(calm::strategy_constant<s>{}) where s is one of Ss (the strategies a test sweeps): compiles those
/// alone, where calm::for_strategy compiles every strategy.
template <calm::strategy... Ss, class F>
void with_one_of(calm::strategy s, F&& f) {
  bool const found = ((s == Ss && (f(calm::strategy_constant<Ss>{}), true)) || ...);
  REQUIRE(found);
}


/// The reference: keys outside [0, bins) are skipped, the rest fold into the table in index order.
template <class Op, class T, class K>
void verify_scatter(std::vector<T> const& init, std::vector<K> const& keys, std::vector<T> const& vals,
                    std::vector<T> const& got, char const* what) {
  std::vector<T> kept;
  std::vector<index_t> slot;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    long long const k = static_cast<long long>(keys[i]);
    if (k < 0 || k >= static_cast<long long>(init.size())) continue;
    kept.push_back(vals[i]);
    slot.push_back(static_cast<index_t>(k));
  }
  verify_atomics<Op, T>(init, kept, slot, got, nullptr, what);
}

/// Keys of `kind` folded into [0, bins); with `stray`, about 1 in 50 lands outside the table.
template <class K, class G>
std::vector<K> table_keys(std::size_t n, keys_kind kind, index_t bins, G& g, bool stray) {
  std::uint32_t kind_bins = 0;
  auto raw = make_keys(n, kind, g, kind_bins);
  std::vector<K> keys(n);
  std::uniform_int_distribution<int> pick(0, 49);
  for (std::size_t i = 0; i < n; ++i) {
    keys[i] = static_cast<K>(raw[i] % static_cast<std::uint64_t>(bins));
    if (stray && pick(g) == 0) {  // outside the table: negative, just past it, or at the extremes of K
      if (i % 4 == 0) keys[i] = std::numeric_limits<K>::max() - static_cast<K>(i % 2);
      else if (i % 4 == 1) keys[i] = std::is_signed<K>::value ? std::numeric_limits<K>::lowest() : static_cast<K>(std::numeric_limits<K>::max() / 2 + 1 + i % 4);
      else keys[i] = std::is_signed<K>::value && (i & 1) ? static_cast<K>(-1 - static_cast<long long>(i % 5)) : static_cast<K>(bins + i % 3);
    }
  }
  return keys;
}

/// The line repeats a sampling counts (calm::detail::line_repeats, for the line rule), from the host:
/// each of `groups` groups covers keys [g * stride, g * stride + block_items) below n, taken by
/// block_items threads in warps of w lanes; thread t takes the key at position
/// t / (w * vec) * (w * vec) + t % w * vec + t / w % vec of its group (lanes vec keys apart, as a
/// direct scatter's warp meets them), if that is a position of the group below n and the key lies in
/// [0, bins). Per warp and table line of line_entries entries, the most threads on one key less one,
/// summed (first); the warps with a key (second).
template <class K>
std::pair<std::uint64_t, std::uint64_t> line_repeats_reference(std::vector<K> const& keys, index_t bins, index_t groups, index_t stride, index_t block_items,
                                                                int w, int vec, index_t line_entries) {
  std::uint64_t repeats = 0, warps = 0;
  index_t const n = static_cast<index_t>(keys.size());
  for (index_t g = 0; g < groups; ++g)
    for (index_t first = 0; first < block_items; first += w) {  // one warp: threads first .. first + w - 1
      std::map<long long, std::map<long long, int>> lines;       // line -> key -> threads
      for (index_t t = first; t < std::min(block_items, first + w); ++t) {
        index_t const span = static_cast<index_t>(w) * vec;
        index_t const at = t / span * span + t % w * vec + t / w % vec;
        if (at >= block_items || g * stride + at >= n) continue;
        long long const k = static_cast<long long>(keys[static_cast<std::size_t>(g * stride + at)]);
        if (k < 0 || k >= bins) continue;
        ++lines[k / line_entries][k];
      }
      if (lines.empty()) continue;
      ++warps;
      for (auto const& line : lines) {
        int most = 0;
        for (auto const& kc : line.second) most = std::max(most, kc.second);
        repeats += static_cast<std::uint64_t>(most - 1);
      }
    }
  return {repeats, warps};
}

}  // namespace calm_test
