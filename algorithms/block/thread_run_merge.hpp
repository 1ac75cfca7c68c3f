// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/block/thread_run_merge.hpp: the run merge on a CPU: each thread folds a contiguous slice of the
// items in a scalar loop and writes each run once, without an atomic where no other thread can meet its key (000 §3.1).
#pragma once

#include <algorithm>
#include <type_traits>
#include <utility>

#include "../../core/exec.hpp"
#include "../../core/warp.hpp"
#include "../bulk/thread_private.hpp"
#include "../bulk/workspace.hpp"
#include "../warp/naive.hpp"
#include "../warp/update.hpp"

namespace calm {
namespace detail {

/// The keys a slice of a run merge meets (skipped items, key < 0, left out): its first and last, and
/// whether they never decrease. first < 0: the slice meets none.
struct slice_keys {
  index_t first;
  index_t last;
  int ascending;
};

/// Items per slice at least (a slice's runs at its ends cost an atomic each), and slices per thread at
/// most (several, so that slices of unequal cost still share the threads).
constexpr index_t thread_run_min_items = index_t(1) << 12;
constexpr index_t thread_run_slices_per_thread = 4;

/// Runs f(w) on the one lane of a block of one thread (the host's thread programs).
template <class Block, class F>
CALM_HD void on_the_lane(Block const& blk, F&& f) {
  blk.for_each_warp([&](auto const& w, auto) { each_lane(w, [&](auto const& w1, int) { f(w1); }, lane_id(w)); });
}

/// Block s (one thread) records the keys of slice s: src.order_key(w, i) of its items.
template <class Source>
struct slice_keys_program {
  Source src;
  index_t n, slices;
  slice_keys* out;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    on_the_lane(blk, [&](auto const& w) {
      index_t begin, end;
      slice_range(n, slices, blk.index(), begin, end);
      slice_keys k{-1, -1, 1};
      for (index_t i = begin; i < end; ++i) {
        index_t const key = src.order_key(w, i);
        if (key < 0) continue;
        if (k.first < 0) k.first = key;
        else if (key < k.last) k.ascending = 0;
        k.last = key;
      }
      out[blk.index()] = k;
    });
  }
};

/// Whether a key that slice s meets only inside its run (neither its first key nor its last) is met by
/// no other slice: every slice ascending and each beginning at or after the last key of the one before.
/// keys == nullptr: the source's keys ascend throughout (Source::ascending_keys).
CALM_HD inline bool slices_in_key_order(slice_keys const* keys, index_t slices) {
  if (keys == nullptr || slices == 1) return true;
  index_t last = -1;
  for (index_t s = 0; s < slices; ++s) {
    if (keys[s].first < 0) continue;
    if (!keys[s].ascending || keys[s].first < last) return false;
    last = keys[s].last;
  }
  return true;
}

/// Whether Source says where its runs end: src.run_end(i), the end of the run of item i, whose items
/// are all inside the table (src.run_key(i) its key, src.run_value(j) its values). Such runs are folded
/// by a plain loop with four accumulators (the op's order of application within a run is free).
template <class S, class = void>
struct has_run_ends : std::false_type {};
template <class S>
struct has_run_ends<S, std::void_t<decltype(std::declval<S const&>().run_end(index_t(0)))>> : std::true_type {};

/// Block s (one thread) folds slice s: out[key] = op(out[key], value) once per run of equal keys
/// (skipped items do not break a run). The slice's first and last runs, and every run where the
/// slices are not in key order, are written by an atomic; the others, whose keys no other slice meets,
/// by a plain read and write.
template <class Op, class T, class Source>
struct thread_run_merge_program {
  Op op;
  Source src;
  index_t n, slices;
  T* out;
  slice_keys const* keys;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    if constexpr (has_run_ends<Source>::value) fold_runs(blk);
    else fold_items(blk);
  }

  /// The items one by one, a run ending where the key changes.
  template <class Block>
  CALM_HD void fold_items(Block const& blk) const {
    bool const own_inner_runs = slices_in_key_order(keys, slices);
    on_the_lane(blk, [&](auto const& w) {
      index_t begin, end;
      slice_range(n, slices, blk.index(), begin, end);
      Op const o = op;
      T* const table = out;
      index_t open = -1;
      T acc = Op::template identity<T>();
      bool first_run = true;
      auto const write = [&](bool shared) {
        if (shared) update(w, o, scope::device{}, table + open, acc, naive{});
        else table[open] = o(table[open], acc);
      };
      auto const fold = [&](index_t key, T value) {
        if (key < 0) return;
        if (key == open) {
          acc = o(acc, value);
          return;
        }
        if (open >= 0) {
          write(first_run || !own_inner_runs);
          first_run = false;
        }
        open = key;
        acc = value;
      };
      constexpr int group = thread_fold_group;
      bool const long_runs = long_runs_ahead(src, w, begin, end);
      index_t i = begin;
      for (; i + group <= end; i += group) {
        index_t key[group];
        T value[group];
        load_group<group>(src, w, i, key, value);
        fold_group<group>(o, key, value, long_runs, fold);
      }
      for (; i < end; ++i) {
        auto const item = src.item(w, i);
        fold(item.key, static_cast<T>(item.value));
      }
      if (open >= 0) write(true);
    });
  }

  /// Whole runs as the source gives them.
  template <class Block>
  CALM_HD void fold_runs(Block const& blk) const {
    bool const own_inner_runs = slices_in_key_order(keys, slices);
    on_the_lane(blk, [&](auto const& w) {
      index_t begin, end;
      slice_range(n, slices, blk.index(), begin, end);
      Op const o = op;
      T const id = Op::template identity<T>();
      for (index_t i = begin; i < end;) {
        index_t const stop = std::min(end, src.run_end(i));
        T a[4] = {id, id, id, id};
        index_t j = i;
        for (; j + 4 <= stop; j += 4)
          CALM_UNROLL_ALWAYS for (int q = 0; q < 4; ++q) a[q] = o(a[q], static_cast<T>(src.run_value(j + q)));
        for (; j < stop; ++j) a[0] = o(a[0], static_cast<T>(src.run_value(j)));
        T const acc = o(o(a[0], a[1]), o(a[2], a[3]));
        T* const at = out + src.run_key(i);
        if (i == begin || stop == end || !own_inner_runs) update(w, o, scope::device{}, at, acc, naive{});
        else *at = o(*at, acc);
        i = stop;
      }
    });
  }
};

/// Whether Source says how many entries its table has (src.entries()): its items may then go to tables
/// private to each thread instead (thread_items_fill_program).
template <class S, class = void>
struct has_entries : std::false_type {};
template <class S>
struct has_entries<S, std::void_t<decltype(std::declval<S const&>().entries())>> : std::true_type {};

/// Block b (one CPU thread) folds slice b of the items (keys -1 or in [0, entries)) into a table of its
/// own, set to the identity first; where its keys run long (long_runs_ahead), a group of one key folded
/// as one item.
template <class Op, class T, class Source>
struct thread_items_fill_program {
  Op op;
  Source src;
  index_t n;
  T* tables;
  index_t stride;  ///< entries from one thread's table to the next one's

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    on_the_lane(blk, [&](auto const& w) {
      index_t begin, end;
      slice_range(n, blk.count(), blk.index(), begin, end);
      T* const t = tables + blk.index() * stride;
      for (index_t e = 0, size = src.entries(); e < size; ++e) t[e] = Op::template identity<T>();
      Op const o = op;
      auto const fold = [&](index_t key, T value) {
        if (key >= 0) t[key] = o(t[key], value);
      };
      index_t i = begin;
      if (long_runs_ahead(src, w, begin, end)) {  // each update of an entry waits for the last: a group of one key updates it once
        constexpr int group = thread_fold_group;
        for (; i + group <= end; i += group) {
          index_t key[group];
          T value[group];
          load_group<group>(src, w, i, key, value);
          fold_group<group>(o, key, value, true, fold);
        }
      }
      for (; i + 4 <= end; i += 4)
        CALM_UNROLL_ALWAYS for (int j = 0; j < 4; ++j) {
          auto const item = src.item(w, i + j);
          fold(item.key, static_cast<T>(item.value));
        }
      for (; i < end; ++i) {
        auto const item = src.item(w, i);
        fold(item.key, static_cast<T>(item.value));
      }
    });
  }
};

/// The run merge of n > 0 items on an exec whose blocks are CPU threads (Exec::thread_tables). A source
/// that gives its table's size, where each thread's share of the items is at least the table, goes to
/// tables private to each thread, merged once (as an OpenMP array reduction). Otherwise slices of at
/// least thread_run_min_items, a few per thread, where a first pass records each slice's keys unless
/// they are known to ascend (Source::ascending_keys).
template <class Op, class T, class Source, class Exec>
void launch_thread_run_merge(Op op, Source const& src, index_t n, T* table, Exec const& ex) {
  if constexpr (has_entries<Source>::value && !has_run_ends<Source>::value) {
    index_t const threads = std::max<index_t>(1, std::min<index_t>(ex.resident_blocks_hint(), n / thread_min_items));
    index_t const entries = src.entries();
    if (entries * threads <= n && thread_tables_fit<T, Exec>(entries)) {
      thread_tables_plan plan;
      plan.blocks = threads;
      plan.stride = (entries + 15) / 16 * 16;
      workspace<Exec> ws(ex, static_cast<std::size_t>(plan.blocks * plan.stride) * sizeof(T));
      T* const tables = ws.template at<T>(0);
      ex.for_each_block(plan.blocks, 1, 0, thread_items_fill_program<Op, T, Source>{op, src, n, tables, plan.stride});
      ex.for_each_block(std::max<index_t>(1, std::min<index_t>(ex.resident_blocks_hint(), entries / 1024)), 1, 0,
                        thread_table_merge_program<Op, T>{op, tables, table, entries, plan});
      return;
    }
  }
  index_t const most = thread_run_slices_per_thread * std::max<index_t>(1, ex.resident_blocks_hint());
  index_t const slices = std::max<index_t>(1, std::min<index_t>(most, n / thread_run_min_items));
  slice_keys* keys = nullptr;
  workspace<Exec> ws(ex, Source::ascending_keys || slices == 1 ? 0 : static_cast<std::size_t>(slices) * sizeof(slice_keys));
  if constexpr (!Source::ascending_keys) {
    if (slices > 1) {
      keys = ws.template at<slice_keys>(0);
      ex.for_each_block(slices, 1, 0, slice_keys_program<Source>{src, n, slices, keys});
    }
  }
  ex.for_each_block(slices, 1, 0, thread_run_merge_program<Op, T, Source>{op, src, n, slices, table, keys});
}

}  // namespace detail
}  // namespace calm
