// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/partitioned.hpp: scatter into tables larger than a block in two steps, as a radix sort's
// pass does: the items bucketed by range of the table into a workspace, then each range privatized.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "../../core/error.hpp"
#include "../../core/exec.hpp"
#include "../block/compact_counts.hpp"
#include "arguments.hpp"
#include "partition_programs.hpp"
#include "privatize.hpp"
#include "workspace.hpp"

namespace calm {

/// What partitioned_scatter may be told; 0 leaves the choice to plan_partitioned.
struct partition_options {
  /// Entries of each range of the table, a power of two that one block's block-local memory holds
  /// (0: the largest such power of two, or the table's size rounded up to one where that is smaller).
  index_t range_entries = 0;
  int threads = 0;  ///< threads per block, at most 1024 (0: 512)
};

/// The chosen shape of a partitioned scatter, and the workspace it takes.
struct partition_plan {
  index_t range_entries = 0;  ///< entries per range (a power of two)
  int shift = 0;              ///< log2(range_entries): an entry's range is its index >> shift
  index_t ranges = 0;         ///< ranges over the table
  index_t bucket_blocks = 0;  ///< blocks of the counting and bucketing passes
  index_t fill_blocks = 0;    ///< blocks of the privatized pass
  int threads = 512;          ///< threads per block
  std::size_t slots_at = 0;   ///< where the bucketed entries start in the workspace (after the counts)
  std::size_t values_at = 0;  ///< where the bucketed values start in the workspace (0: none kept)
  std::size_t bytes = 0;      ///< the workspace: counts, bucketed entries, bucketed values
};

/// The plan for n items into `bins` entries of T on ex (counting: every item adds the same value, and
/// no values are bucketed). Throws errc::invalid_argument for options out of their range and
/// errc::out_of_range where the ranges' counters do not fit one block (before anything runs).
template <class T, class Exec>
partition_plan plan_partitioned(index_t n, index_t bins, bool counting, partition_options const& opt, Exec const& ex) {
  index_t const capacity = privatize_capacity<T>(ex);
  require(opt.threads >= 0 && opt.threads <= 1024, errc::invalid_argument, "partitioned_scatter: threads must be in [0, 1024]");
  require(opt.range_entries == 0 || (opt.range_entries > 0 && (opt.range_entries & (opt.range_entries - 1)) == 0 && opt.range_entries <= capacity),
          errc::invalid_argument, [&] {
            return "partitioned_scatter: range_entries must be 0 or a power of two of at most " + std::to_string(capacity) +
                   " (one block's block-local memory), not " + std::to_string(opt.range_entries);
          });
  partition_plan p;
  p.threads = opt.threads > 0 ? opt.threads : 512;
  p.range_entries = opt.range_entries;
  if (p.range_entries == 0)
    for (p.range_entries = 1; p.range_entries * 2 <= capacity && p.range_entries < bins; p.range_entries *= 2) {}
  while ((index_t(1) << p.shift) < p.range_entries) ++p.shift;
  p.ranges = std::max<index_t>(1, (bins + p.range_entries - 1) / p.range_entries);
  std::size_t const counter_bytes = static_cast<std::size_t>(p.ranges) * (sizeof(index_t) + sizeof(std::uint32_t));
  require(counter_bytes <= ex.block_local_bytes(), errc::out_of_range, [&] {
    return "partitioned_scatter: " + std::to_string(p.ranges) + " ranges of " + std::to_string(p.range_entries) +
           " entries need more counters than one block's block-local memory holds";
  });
  // counting and bucketing: enough blocks to fill the device, each at most 2^31 items (32-bit counters)
  index_t const resident = std::max<index_t>(1, ex.resident_blocks_hint());
  index_t const tile = static_cast<index_t>(p.threads) * detail::loads_in_flight * 4;  // a tile of 4-item chunks
  p.bucket_blocks = std::max<index_t>({index_t(1), std::min<index_t>(2 * resident, (n + tile - 1) / tile), n >> 31});
  // the privatized pass: each block clears and merges one range per run of its part, so a part
  // should hold at least a range's worth of items
  p.fill_blocks = std::max<index_t>(1, std::min<index_t>(resident, n / p.range_entries));
  std::size_t const counts = (static_cast<std::size_t>(p.ranges) * static_cast<std::size_t>(p.bucket_blocks) + 1) * sizeof(index_t);
  p.slots_at = (counts + 15) / 16 * 16;
  std::size_t const slots = static_cast<std::size_t>(n) * sizeof(std::uint32_t);
  p.values_at = counting ? 0 : (p.slots_at + slots + 15) / 16 * 16;
  p.bytes = counting ? p.slots_at + slots : p.values_at + static_cast<std::size_t>(n) * sizeof(T);
  return p;
}

namespace detail {

/// Launch the four passes of a partitioned scatter (arguments checked, n > 0, bins > 0).
template <class Op, class K, class VS, class T, class KeyMap, class Exec>
void launch_partitioned(Op op, K const* keys, VS const& vals, index_t n, T* table, index_t bins, partition_plan const& plan, KeyMap const& key_map,
                        Exec const& ex) {
  workspace<Exec> ws(ex, plan.bytes);
  index_t* const counts = ws.template at<index_t>(0);
  auto* const slots = ws.template at<std::uint32_t>(plan.slots_at);
  T* const bucket_values = plan.values_at > 0 ? ws.template at<T>(plan.values_at) : nullptr;
  partition_shape const shape{n, bins, plan.shift, plan.ranges, plan.bucket_blocks, plan.range_entries};
  std::size_t const counters = static_cast<std::size_t>(plan.ranges) * (sizeof(index_t) + sizeof(std::uint32_t));
  constexpr int vec = chunk_items<Exec, K, VS>();  // passes 1 and 3 stream the same tiles: each block meets the same items
  using unread_values = decltype(unread(vals));
  ex.for_each_block(plan.bucket_blocks, plan.threads, counters, partition_count_program<vec, K, unread_values, KeyMap>{keys, unread(vals), key_map, shape, counts});
  index_t const m = plan.ranges * plan.bucket_blocks;  // the counts to exclusive sums, their total to counts[m]: one block
  using W = typename Exec::warp_type;
  ex.for_each_block(1, exclusive_scan_threads<W>, exclusive_scan_bytes<W>, exclusive_scan_program{counts, m, counts + m});
  ex.for_each_block(plan.bucket_blocks, plan.threads, counters,
                    partition_bucket_program<vec, K, VS, T, KeyMap>{keys, vals, key_map, shape, counts, slots, bucket_values});
  private_layout layout;
  layout.bins = std::min(plan.range_entries, bins);
  ex.for_each_block(plan.fill_blocks, plan.threads, layout.template bytes<T>(),
                    partition_fill_program<Op, VS, T>{op, vals, shape, counts, slots, bucket_values, table});
}

}  // namespace detail

/// table[keys[i]] = op(table[keys[i]], values[i]) for i < n, for tables larger than one block's
/// block-local memory: the items are bucketed by range of the table (plan_partitioned's ranges, each
/// one block's table) into a workspace, then each range's items are privatized in block-local memory
/// and merged with one device atomic per entry and block. values: a T const* of n values, or
/// calm::constant(v). Keys outside [0, bins) are skipped. Throws calm::error before anything is
/// written if an argument is wrong or the workspace cannot be allocated. Asynchronous on a GPU.
///
///   calm::partitioned_scatter(calm::plus{}, keys, calm::constant(1u), n, hist, 1 << 20);  // a histogram
template <class Op, class K, class Values, class T, class Exec = default_exec>
void partitioned_scatter(Op op, K const* keys, Values values, index_t n, T* table, index_t bins, partition_options const& opt = {},
                         Exec const& ex = Exec{}) {
  check_atomic_op<Op, T>();
  static_assert(std::is_integral<K>::value, "partitioned_scatter: keys must be integers");
  detail::check_scatter_arguments("partitioned_scatter", n, keys, values, table, bins);
  partition_plan const plan = plan_partitioned<T>(n, bins, is_same_value<Values>::value, opt, ex);
  if (n == 0 || bins == 0) return;
  detail::launch_partitioned(op, keys, detail::as_value_source<T>(values), n, table, bins, plan, detail::identity_key{}, ex);
}

}  // namespace calm
