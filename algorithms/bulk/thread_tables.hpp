// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/thread_tables.hpp: thread_private's layout: how many private tables, of how many sub-tables,
// spread or narrow, and when automatic may run it at all.
#pragma once

#include <algorithm>
#include <cstddef>

#include "../../core/exec.hpp"
#include "thread_counts.hpp"
#include "thread_slices.hpp"

namespace calm {
namespace detail {

/// The slots after a private table that a slice's hot key is dealt over (fill_kind::hot_slots).
constexpr int hot_slots = 8;

/// thread_private's layout: `blocks` private tables (one per block of the launch: a thread on the host),
/// each `subtables` tables `stride` entries apart (whole 64-byte lines: no line shared; after each table's
/// entries, hot_slots more: hot_base). In a `spread` table entry k lies at k + k / 64, so that keys a
/// power of two apart (a column of a row-major matrix) do not all fall into one set of the cache: single
/// tables beyond spread_entries whose keys crowd the cache's sets (keys_crowd_sets). A `narrow` plan counts
/// (thread_counts.hpp): its tables are of narrow_count, each block's spill log of spill_capacity entries.
struct thread_tables_plan {
  index_t blocks = 1;
  int subtables = 1;
  index_t stride = 0;
  bool spread = false;
  bool small = false;     ///< the sub-tables of one thread, hot slots aside, within four_subtables_bytes
  bool narrow = false;
  index_t spill_capacity = 0;
  std::size_t sizes_offset = 0, logs_offset = 0;  ///< bytes: the spill logs' sizes (index_t), their entries
  std::size_t bytes = 0;  ///< of all the private tables (and spill logs)
  static constexpr int spread_shift = 6;
  template <bool Spread>
  CALM_HD static index_t place(index_t k) { return Spread ? k + (k >> spread_shift) : k; }
  CALM_HD index_t at(index_t k) const { return spread ? place<true>(k) : k; }
  /// Where a table's hot_slots begin, for a table of `bins` entries.
  CALM_HD index_t hot_base(index_t bins) const { return at(bins - 1) + 1; }
};

/// Four interleaved sub-tables while they take at most this, two while they take at most the next, one
/// beyond: a hot key's updates then form four or two chains, at the cost of more cache for the tables
/// (two are used only where a slice shows such a key: plan_slice).
constexpr std::size_t four_subtables_bytes = std::size_t(16) << 10;
constexpr std::size_t two_subtables_bytes = std::size_t(512) << 10;
/// The largest table automatic keeps one private copy of per thread (beyond it: naive).
constexpr std::size_t thread_table_max_bytes = std::size_t(64) << 20;
/// Entries beyond which a private table may be spread (thread_tables_plan: its one shift and add per key
/// cost more than they save in tables the caches hold).
constexpr index_t spread_entries = index_t(1) << 16;

/// The private tables for n items into `bins` entries: one per thread that has thread_min_items, sub-tables
/// where they fit (four_subtables_bytes, two_subtables_bytes), spread where `crowded` (keys_crowd_sets).
/// A count is narrow where keys do not crowd and the share of the table's bytes its items spread over
/// reaches narrow_count_bytes: `spread_eighths` (0: not a count) is the share of the items outside the
/// sampled hot entry, in eighths (halfhot keys into 2^18 4-byte entries: narrow 0.89x, 2^20: 1.09x).
template <class T, class Exec>
thread_tables_plan plan_thread_tables(index_t n, index_t bins, bool crowded, int spread_eighths, Exec const& ex) {
  thread_tables_plan p;
  index_t const useful = std::max<index_t>(1, n / thread_min_items);
  p.blocks = std::max<index_t>(1, std::min<index_t>(ex.resident_blocks_hint(), useful));
  if (!crowded && static_cast<std::size_t>(bins) * sizeof(T) * static_cast<std::size_t>(spread_eighths) >= 8 * narrow_count_bytes) {
    auto const round = [](std::size_t b) { return (b + 63) / 64 * 64; };
    p.narrow = true;
    p.stride = static_cast<index_t>(round(static_cast<std::size_t>(bins) + hot_slots));
    p.spill_capacity = spill_capacity((n + p.blocks - 1) / p.blocks);
    p.sizes_offset = static_cast<std::size_t>(p.blocks) * static_cast<std::size_t>(p.stride);
    p.logs_offset = p.sizes_offset + round(static_cast<std::size_t>(p.blocks) * sizeof(index_t));
    p.bytes = p.logs_offset + static_cast<std::size_t>(p.blocks) * static_cast<std::size_t>(p.spill_capacity) * sizeof(count_spill<T>);
    return p;
  }
  constexpr index_t line = 64 / sizeof(T) > 0 ? index_t(64 / sizeof(T)) : 1;
  p.stride = (bins + line - 1) / line * line;
  std::size_t const table_bytes = static_cast<std::size_t>(p.stride) * sizeof(T);
  p.subtables = table_bytes * 4 <= four_subtables_bytes ? 4 : table_bytes * 2 <= two_subtables_bytes ? 2 : 1;
  p.small = p.subtables > 1 && table_bytes * static_cast<std::size_t>(p.subtables) <= four_subtables_bytes;
  p.spread = p.subtables == 1 && bins > spread_entries && crowded;
  p.stride = (p.at(bins - 1) + 1 + hot_slots + line - 1) / line * line;  // the table, then a hot key's slots (slice_fill)
  p.bytes = static_cast<std::size_t>(p.blocks) * static_cast<std::size_t>(p.subtables) * static_cast<std::size_t>(p.stride) * sizeof(T);
  return p;
}

/// Whether automatic may run thread_private on this table: the exec runs a block as one thread with a
/// table of its own (Exec::thread_tables), and one copy stays within thread_table_max_bytes.
template <class T, class Exec>
constexpr bool thread_tables_fit(index_t bins) {
  return Exec::thread_tables && static_cast<std::size_t>(bins) <= thread_table_max_bytes / sizeof(T);
}

}  // namespace detail
}  // namespace calm
