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
#include "thread_tables.hpp"
#include "workspace.hpp"

namespace calm {
namespace detail {

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
