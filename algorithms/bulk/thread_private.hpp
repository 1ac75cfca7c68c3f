// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/thread_private.hpp: scatter whole arrays on a CPU through a private table per thread,
// merged once; small tables as interleaved sub-tables, so that a hot key's updates do not form one chain (001 §3).
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "../../core/exec.hpp"
#include "../../core/ops.hpp"
#include "../warp/group_reduce.hpp"
#include "thread_counts.hpp"
#include "thread_sample.hpp"
#include "thread_slices.hpp"
#include "workspace.hpp"

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

template <class VS>
CALM_HD auto value_at(VS const& vals, index_t i) {
  if constexpr (is_same_value<VS>::value) return vals.value;
  else return vals[i];
}

/// How a slice fills its table (thread_table_fill_program::fill): item by item into `subtables` interleaved
/// sub-tables (table); the items of entry `hot` in four accumulators (hot_registers) or dealt over the
/// table's hot slots, a select and not a branch on the key (hot_slots), either added to the entry at the
/// end; or groups of thread_fold_group items that are one entry folded and added as one (runs).
enum class fill_kind { table, hot_registers, hot_slots, runs };

struct slice_fill {
  fill_kind kind = fill_kind::table;
  int subtables = 1;
  index_t hot = -1;
};

/// A slice whose sampled items all share one entry folds that entry in registers (a chain through
/// memory on one address is what would bound it otherwise), and one whose sampled groups of 8 are often
/// of one entry folds each such group first (runs of 32 equal keys on 2 cores: 1.0-1.2x faster than four
/// sub-tables into 16-256 entries, 2.2-2.4x than one table into 4,096-2^18). Else the plan's sub-tables always where all of them fit in
/// four_subtables_bytes (one small table's speed varies between processes, four's does not); beyond,
/// where one entry takes a quarter of the sampled items, that entry dealt over the hot slots (one table:
/// 4,096 entries with half the keys on one 1.6-1.9x faster on 2 cores than two sub-tables), and two
/// sub-tables where runs do: elsewhere two sub-tables only take L1 from the keys.
template <class K, class KeyMap>
CALM_HD slice_fill plan_slice(thread_tables_plan const& plan, K const* keys, index_t begin, index_t end, index_t bins, KeyMap const& key_map) {
  slice_sample const sample = sample_slice(keys, begin, end, bins, key_map);
  slice_fill f;
  if (sample.one >= 0) f.kind = fill_kind::hot_registers, f.hot = sample.one;
  else if (sample.long_runs) f.kind = fill_kind::runs;
  else if (plan.small) f.subtables = plan.subtables;
  else if (sample.top_eighths >= 2) f.kind = fill_kind::hot_slots, f.hot = sample.top;
  else if (plan.subtables > 1 && sample.eighths >= 2) f.subtables = plan.subtables;
  return f;
}

template <fill_kind F>
using fill_constant = std::integral_constant<fill_kind, F>;

/// One block's share of the items into its private table: cleared to the op's identity, filled as
/// plan_slice says (item i into sub-table i % s), the sub-tables folded into the first.
template <class Op, class K, class VS, class T, class KeyMap>
struct thread_table_fill_program {
  Op op;
  K const* keys;
  VS vals;
  index_t n, bins;
  T* tables;
  thread_tables_plan plan;
  KeyMap key_map;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    index_t const b = blk.index();
    index_t begin, end;
    slice_range(n, plan.blocks, b, begin, end);
    index_t const stride = plan.stride, size = bins;
    slice_fill const f = plan_slice(plan, keys, begin, end, size, key_map);
    if (plan.narrow) return count(b, begin, end, f);
    T* const mine = tables + b * plan.subtables * stride;
    int const subtables = f.subtables;
    for (index_t k = 0; k < subtables * stride; ++k) mine[k] = Op::template identity<T>();
    auto const one_table = [&](auto kind) {
      if (plan.spread) fill<1, true, decltype(kind)::value>(mine, begin, end, f.hot);
      else fill<1, false, decltype(kind)::value>(mine, begin, end, f.hot);
    };
    if (f.kind == fill_kind::hot_registers) one_table(fill_constant<fill_kind::hot_registers>{});
    else if (f.kind == fill_kind::hot_slots) one_table(fill_constant<fill_kind::hot_slots>{});
    else if (f.kind == fill_kind::runs) one_table(fill_constant<fill_kind::runs>{});
    else if (subtables == 4) fill<4, false>(mine, begin, end);
    else if (subtables == 2) fill<2, false>(mine, begin, end);
    else one_table(fill_constant<fill_kind::table>{});
    for (int s = 1; s < subtables; ++s)  // (sub-tables are never spread)
      for (index_t k = 0; k < size; ++k) mine[k] = op(mine[k], mine[s * stride + k]);
  }

  /// A narrow plan's slice: block b's counters cleared and filled as `f` says, its spill log's size kept.
  CALM_HD void count(index_t b, index_t begin, index_t end, slice_fill const& f) const {
    if constexpr (may_count<Op, VS, T>()) {
      auto* const base = reinterpret_cast<unsigned char*>(tables);
      narrow_count* const mine = base + b * plan.stride;
      spill_log<T> log{reinterpret_cast<count_spill<T>*>(base + plan.logs_offset) + b * plan.spill_capacity};
      for (index_t k = 0; k < plan.stride; ++k) mine[k] = 0;
      if (f.kind == fill_kind::hot_registers) fill<1, false, fill_kind::hot_registers>(mine, begin, end, f.hot, &log);
      else if (f.kind == fill_kind::hot_slots) fill<1, false, fill_kind::hot_slots>(mine, begin, end, f.hot, &log);
      else if (f.kind == fill_kind::runs) fill<1, false, fill_kind::runs>(mine, begin, end, f.hot, &log);
      else fill<1, false>(mine, begin, end, f.hot, &log);
      reinterpret_cast<index_t*>(base + plan.sizes_offset)[b] = log.size;
    }
  }

  /// Items [begin, end) into the S sub-tables at t as `Kind` says (fill_kind; item begin + j into sub-table
  /// j % S, accumulator j % 4 or hot slot j % 8). Counters C other than T are narrow: what they cannot
  /// hold, and the hot entry's total, go to `spills`.
  template <int S, bool Spread, fill_kind Kind = fill_kind::table, class C = T>
  CALM_HD void fill(C* __restrict__ t, index_t begin, index_t end, index_t hot = -1, spill_log<T>* spills = nullptr) const {
    constexpr bool narrow = !std::is_same<C, T>::value;
    // the members as locals: a store into the table would otherwise make each item re-read them
    K const* __restrict__ const k = keys;
    VS const v = vals;
    KeyMap const map = key_map;
    Op const o = op;
    index_t const stride = plan.stride, size = bins;
    index_t const base = plan.hot_base(size);
    T acc[4] = {Op::template identity<T>(), Op::template identity<T>(), Op::template identity<T>(), Op::template identity<T>()};
    spill_log<T> log = narrow ? *spills : spill_log<T>{nullptr};  // a local: the size stays in a register
    auto const put_at = [&](C* __restrict__ sub, index_t at, T x) {
      if constexpr (narrow) narrow_add(sub, at, x, log);
      else sub[at] = o(sub[at], x);
    };
    auto const add = [&](C* __restrict__ sub, index_t i, int q) {
      index_t const slot = map(k[i]);
      if (Kind == fill_kind::hot_registers && slot == hot) {
        acc[q] = o(acc[q], static_cast<T>(value_at(v, i)));
      } else if (slot >= 0 && slot < size) {
        index_t at = thread_tables_plan::place<Spread>(slot);
        if (Kind == fill_kind::hot_slots) at = slot == hot ? base + q : at;
        put_at(sub, at, static_cast<T>(value_at(v, i)));
      }
    };
    index_t i = begin;
    if constexpr (Kind == fill_kind::runs) {
      constexpr int G = thread_fold_group;
      auto const put = [&](index_t slot, T value) {  // slot: -1 outside the table
        if (slot < 0) return;
        put_at(t, thread_tables_plan::place<Spread>(slot), value);
      };
      for (; i + G <= end; i += G) {
        index_t slot[G];
        T value[G];
        CALM_UNROLL_ALWAYS for (int j = 0; j < G; ++j) {
          index_t const s = map(k[i + j]);
          slot[j] = s < size ? s : -1;
          value[j] = static_cast<T>(value_at(v, i + j));
        }
        if (one_key<G>(slot)) put(slot[0], fold_tree<G>(o, value));
        else
          CALM_UNROLL_ALWAYS for (int j = 0; j < G; ++j) put(slot[j], value[j]);
      }
    } else {
      // unrolled twice over the accumulators or sub-tables (a loop of one round ran 1.1-1.3x longer on 2 cores)
      constexpr int U = Kind == fill_kind::hot_registers ? 8 : Kind == fill_kind::hot_slots ? hot_slots : 2 * S;
      for (; i + U <= end; i += U)
        CALM_UNROLL_ALWAYS for (int u = 0; u < U; ++u) add(t + (u % S) * stride, i + u, Kind == fill_kind::hot_slots ? u : u % 4);
    }
    for (; i < end; ++i) add(t, i, 0);
    if (Kind == fill_kind::hot_registers || Kind == fill_kind::hot_slots) {
      index_t const at = thread_tables_plan::place<Spread>(hot);
      T total = o(o(acc[0], acc[1]), o(acc[2], acc[3]));
      if (Kind == fill_kind::hot_slots)
        for (int q = 0; q < hot_slots; ++q) total = o(total, static_cast<T>(t[base + q]));
      if constexpr (narrow) {
        for (index_t s = 0; s < log.size; ++s)  // a hot slot's spills are the hot entry's
          if (log.entries[s].slot >= base) log.entries[s].slot = hot;
        log.push(hot, total);
      } else {
        t[at] = o(t[at], total);
      }
    }
    if constexpr (narrow) *spills = log;
  }
};

/// The private tables merged into the table: each block a range of entries, every table's entry folded
/// into it (no two blocks write one entry: no atomics); a narrow plan's counters, then every spill log's
/// entries for the range.
template <class Op, class T>
struct thread_table_merge_program {
  Op op;
  T const* tables;
  T* table;
  index_t bins;
  thread_tables_plan plan;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    index_t begin, end;
    slice_range(bins, blk.count(), blk.index(), begin, end);
    if (plan.narrow) return merge_counts(begin, end);
    index_t const step = plan.subtables * plan.stride;
    for (index_t k = begin; k < end; ++k) {
      T acc = table[k];
      index_t const at = plan.at(k);
      for (index_t c = 0; c < plan.blocks; ++c) acc = op(acc, tables[c * step + at]);
      table[k] = acc;
    }
  }

  CALM_HD void merge_counts(index_t begin, index_t end) const {
    auto const* const base = reinterpret_cast<unsigned char const*>(tables);
    index_t const step = plan.stride;
    for (index_t k = begin; k < end; ++k) {
      T acc = table[k];
      for (index_t c = 0; c < plan.blocks; ++c) acc = op(acc, static_cast<T>(base[c * step + k]));
      table[k] = acc;
    }
    add_spills(op, table, begin, end, plan.blocks, reinterpret_cast<count_spill<T> const*>(base + plan.logs_offset),
               reinterpret_cast<index_t const*>(base + plan.sizes_offset), plan.spill_capacity);
  }
};

/// Launch thread_private (arguments checked, n > 0, bins > 0): the private tables in a workspace, one
/// launch to fill them and one to merge them. Each block of both runs on one thread.
template <class Op, class K, class VS, class T, class KeyMap, class Exec>
void launch_thread_private(Op op, K const* keys, VS const& vals, index_t n, T* table, index_t bins, KeyMap const& key_map, Exec const& ex) {
  bool const crowded = bins > spread_entries && keys_crowd_sets<T>(keys, n, bins, key_map);
  int const spread_eighths = counts_ones<Op, VS, T>(vals) ? 8 - sample_slice(keys, 0, n, bins, key_map).top_eighths : 0;
  thread_tables_plan const plan = plan_thread_tables<T>(n, bins, crowded, spread_eighths, ex);
  workspace<Exec> ws(ex, plan.bytes);
  T* const tables = ws.template at<T>(0);
  ex.for_each_block(plan.blocks, 1, 0, thread_table_fill_program<Op, K, VS, T, KeyMap>{op, keys, vals, n, bins, tables, plan, key_map});
  index_t const merge_blocks = std::max<index_t>(1, std::min<index_t>(ex.resident_blocks_hint(), bins / 1024));
  ex.for_each_block(merge_blocks, 1, 0, thread_table_merge_program<Op, T>{op, tables, table, bins, plan});
}

}  // namespace detail
}  // namespace calm
