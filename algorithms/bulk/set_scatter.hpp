// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/set_scatter.hpp: the thread-layout transform that spreads colliding updates in time:
// items grouped by key, then dealt one per group in rounds (000 §3.2, Alg. 3), per item or per warp.
#pragma once

#include <algorithm>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "../../core/config.hpp"
#include "../../core/error.hpp"

namespace calm {

/// What set_scatter moves: single items, or whole warps of consecutive items (000 §3.2: "regroup and
/// reorder thread warps instead of threads"), each labelled by its most frequent key.
enum class scatter_granularity { item, warp };

namespace detail {

/// Alg. 3 over groups given as [begin, end) ranges of `order` in ascending key order: round r takes
/// the r-th member of every group that has one, groups in ascending key order. O(total) with a list
/// of the groups still active.
inline void deal_rounds(std::vector<index_t> const& order, std::vector<index_t> const& group_begin, std::vector<index_t>& out) {
  std::size_t const groups = group_begin.size() - 1;
  std::vector<std::size_t> active(groups);
  std::iota(active.begin(), active.end(), std::size_t(0));
  for (index_t r = 0; !active.empty(); ++r) {
    std::size_t kept = 0;
    for (std::size_t a : active) {
      out.push_back(order[static_cast<std::size_t>(group_begin[a] + r)]);
      if (group_begin[a] + r + 1 < group_begin[a + 1]) active[kept++] = a;
    }
    active.resize(kept);
  }
}

/// Indices 0..n-1 stably sorted by label, and the start of each run of equal labels (plus n).
template <class L>
void group_by_label(std::vector<L> const& label, std::vector<index_t>& order, std::vector<index_t>& group_begin) {
  order.resize(label.size());
  std::iota(order.begin(), order.end(), index_t(0));
  std::stable_sort(order.begin(), order.end(), [&](index_t a, index_t b) { return label[a] < label[b]; });
  group_begin.clear();
  for (std::size_t i = 0; i < order.size(); ++i)
    if (i == 0 || label[order[i]] != label[order[i - 1]]) group_begin.push_back(static_cast<index_t>(i));
  group_begin.push_back(static_cast<index_t>(order.size()));
}

}  // namespace detail

/// The new layout of Alg. 3: perm[i] is the item that position i processes. Items with equal keys are
/// placed as far apart as the other keys allow: round r holds the r-th item of every key that has r + 1
/// or more, keys in ascending order, items of one key in their original order. With
/// scatter_granularity::warp, the items are cut into warps of `warp_size` consecutive items (the last
/// may be short), each labelled by its most frequent key (the smallest among equals), and whole warps
/// are dealt the same way; items keep their order inside a warp. Runs on the host (000 §3.2 runs it on
/// the CPU, overlapped with GPU work); a scatter that follows perm gives the same table.
///
///   keys {5, 5, 5, 2, 2, 9}: perm {3, 0, 5, 4, 1, 2}, i.e. keys 2 5 9 | 2 5 | 5
template <class K>
std::vector<index_t> set_scatter(K const* keys, index_t n, scatter_granularity g = scatter_granularity::item, int warp_size = 32) {
  static_assert(std::is_integral<K>::value, "set_scatter: keys must be integers");
  require(n >= 0, errc::invalid_argument, [&] { return "set_scatter: n = " + std::to_string(n) + " is negative"; });
  require(n == 0 || keys != nullptr, errc::invalid_argument, "set_scatter: keys is null");
  require(warp_size >= 1, errc::invalid_argument, "set_scatter: warp_size must be at least 1");
  require(static_cast<std::uint64_t>(n) <= std::vector<index_t>().max_size() / 4, errc::out_of_range,
          [&] { return "set_scatter: n = " + std::to_string(n) + " is more keys than a host layout can hold"; });
  std::vector<index_t> perm;
  perm.reserve(static_cast<std::size_t>(n));
  std::vector<index_t> order, group_begin;
  if (g == scatter_granularity::item) {
    std::vector<K> const label(keys, keys + n);
    detail::group_by_label(label, order, group_begin);
    detail::deal_rounds(order, group_begin, perm);
    return perm;
  }
  index_t const warps = (n + warp_size - 1) / warp_size;
  std::vector<K> label(static_cast<std::size_t>(warps));
  std::vector<K> members;
  for (index_t w = 0; w < warps; ++w) {  // each warp's most frequent key, the smallest among equals
    index_t const b = w * warp_size, e = std::min(n, b + warp_size);
    members.assign(keys + b, keys + e);
    std::sort(members.begin(), members.end());
    std::size_t best = 0, run = 0;
    for (std::size_t i = 0; i < members.size(); ++i) {
      run = (i > 0 && members[i] == members[i - 1]) ? run + 1 : 1;
      if (run > best) best = run, label[static_cast<std::size_t>(w)] = members[i];  // sorted: the first to reach it is the smallest
    }
  }
  std::vector<index_t> warp_perm;
  detail::group_by_label(label, order, group_begin);
  detail::deal_rounds(order, group_begin, warp_perm);
  for (index_t w : warp_perm)
    for (index_t i = w * warp_size; i < std::min(n, (w + 1) * warp_size); ++i) perm.push_back(i);
  return perm;
}

}  // namespace calm
