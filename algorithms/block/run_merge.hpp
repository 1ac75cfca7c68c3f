// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/block/run_merge.hpp: add items into a table where equal keys come in runs (sorted keys): each
// warp streams its own contiguous slice, merges runs by a segmented scan and carries the open run on (000 §3.1 Alg. 1, Fig. 1).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "../../core/warp.hpp"
#include "../warp/naive.hpp"
#include "../bulk/privatize.hpp"
#include "../warp/scan_reduce.hpp"
#include "thread_run_merge.hpp"

namespace calm {
namespace detail {

/// One item of a run-merge source: the table index (-1: skip the item) and the value, as lane values.
template <class K, class V>
struct run_item {
  K key;
  V value;
};
template <class K, class V>
CALM_HD run_item<K, V> make_run_item(K const& k, V const& v) {
  return {k, v};
}

/// The value of a lane value that every lane holds alike (lane 0's, on the host).
template <class T>
CALM_HD T uniform_value(T const& x) {
  return x;
}
template <class T, int W>
T uniform_value(lane_array<T, W> const& x) {
  return x.v[0];
}

/// Whether p may be read in chunks of four elements (aligned to them, at most 32 bytes a chunk).
template <class T>
bool chunk_aligned(T const* p) {
  return sizeof(T) <= 8 && reinterpret_cast<std::uintptr_t>(p) % (sizeof(T) * 4) == 0;
}

/// Threads per block of the run-merge programs (a multiple of every warp width, so no warp is ragged).
constexpr int run_merge_threads = 256;

/// Items per lane and step of the run merge (V): loaded together before any is used, so that each
/// lane has this many loads in flight, and the warp's scan is paid once per this many items.
constexpr int run_merge_items = 4;

/// out[key] = op(out[key], value) for the n items of Source (src.item(w, p): the run_item of positions
/// p, all inside [0, n)). Merge: each warp takes a contiguous slice of the items, W x V at a time,
/// lane l the V consecutive items from l V on. Each lane folds its items' runs of equal keys in
/// registers: runs that start and end among its items are complete and written at once; its first
/// and last runs may go on into the neighbouring lanes, so the lanes' last runs are chained by
/// scan_reduce's segmented scan (lanes of one run throughout pass it on) and each run is written by
/// the lane where it ends, one atomic per run. The run reaching the step's end is carried into the
/// next step and only written when its key ends (a key spread over many steps costs one atomic per
/// warp, as the CUSP kernel of 000 Fig. 1 carries its row). Without Merge, one atomic per item (000
/// Fig. 1, right). Keys in any order give the right table; runs are what make it fast.
template <bool Merge, int V, bool PerLane, class Op, class T, class Source>
struct run_merge_program {
  Op op;
  Source src;
  index_t n;
  T* out;
  /// Whether full steps load 16-byte chunks of four items (src.chunk_items; V a multiple of 4, the
  /// arrays aligned to their chunks): one coalesced load per lane and array instead of four.
  bool chunked;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    blk.for_each_warp([&](auto const& w, auto) {
      constexpr int WS = std::decay_t<decltype(w)>::size;
      index_t const g = group_index(w), warps = blk.count() * (blk.threads() / WS);
      if constexpr (PerLane) {
        // each lane its own slice (a scalar loop on the host, where a lane alone folds its runs in
        // registers; on a GPU each_lane is the warp itself and this is the warp's slice)
        each_lane(
            w,
            [&](auto const& w1, int l) {
              constexpr int W1 = std::decay_t<decltype(w1)>::size;
              run_slice(w1, g * (WS / W1) + (W1 == 1 ? l : 0), warps * (WS / W1));
            },
            lane_id(w));
      } else {
        run_slice(w, g, warps);
      }
    });
  }

  /// The items of slice `slice` of `slices` equal ones, on warp w.
  template <class Warp>
  CALM_HD void run_slice(Warp const& w, index_t slice, index_t slices) const {
    {
      constexpr int WS = Warp::size;
      constexpr index_t step = WS * V;
      Op const o = op;
      T* const table = out;
      index_t const items = n;
      Source const& s = src;
      T const id = Op::template identity<T>();
      index_t const per = ((items + slices - 1) / slices + step - 1) / step * step;
      index_t const begin = slice * per, end = begin + per < items ? begin + per : items;
      auto const lane = lane_id(w);
      auto const write = [&](auto const& pred, auto const& key, auto const& value) {  // lanes where pred holds and key >= 0 add value at key
        auto const go = map([](bool p, index_t k) { return p && k >= 0; }, pred, key);
        when(w, go, [&](auto const& u) { atomic_update(u, o, scope::device{}, table + select(go, key, index_t(0)), value); });
      };
      [[maybe_unused]] index_t carry_key = -1;  // the run open at the end of the last step (-1: none)
      [[maybe_unused]] T carry = id;
      for (index_t base = begin; base < end; base += step) {
        using item_t = decltype(s.item(w, lane));
        std::decay_t<decltype(std::declval<item_t>().key)> key[V];
        std::decay_t<decltype(std::declval<item_t>().value)> value[V];
        if (V % 4 == 0 && chunked && base + step <= end) {  // every load first
          for (int c = 0; c < V / 4; ++c)
            s.chunk_items(w, map([base, c](int l) { return base / 4 + l * (V / 4) + c; }, lane), key + 4 * c, value + 4 * c);
        } else {
          for (int j = 0; j < V; ++j) {
            auto const i = map([base, j](int l) { return base + l * V + j; }, lane);
            auto const ok = map([end](index_t x) { return x < end; }, i);
            auto const item = s.item(w, select(ok, i, end - 1));
            key[j] = select(ok, item.key, index_t(-1));
            value[j] = select(ok, item.value, id);
          }
        }
        if constexpr (!Merge) {
          for (int j = 0; j < V; ++j) write(true, key[j], value[j]);
          continue;
        } else {
          // the lane's runs: first (key[0], f), complete ones written, last (b, x); single: one run only
          auto const a = key[0];
          auto b = key[0];
          auto x = value[0];
          auto f = value[0];
          auto single = map([](index_t) { return true; }, a);
          for (int j = 1; j < V; ++j) {
            auto const brk = key[j] != b;
            write(map([](bool k, bool one) { return k && !one; }, brk, single), b, x);  // a complete run inside the lane
            f = select(map([](bool k, bool one) { return k && one; }, brk, single), x, f);
            single = map([](bool k, bool one) { return one && !k; }, brk, single);
            x = select(brk, value[j], map(o, x, value[j]));
            b = select(brk, key[j], b);
          }
          // the run carried from the last step joins lane 0's first run, or is written
          auto const lane0 = map([](int l) { return l == 0; }, lane);
          if (carry_key >= 0 && uniform_value(shuffle(w, a, 0)) == carry_key) {
            x = select(map([](bool l0, bool one) { return l0 && one; }, lane0, single), map(o, x, carry), x);
            f = select(map([](bool l0, bool one) { return l0 && !one; }, lane0, single), map(o, f, carry), f);
          } else if (carry_key >= 0) {
            when(w, lane0, [&](auto const& l) { update(l, o, scope::device{}, table + carry_key, carry, naive{}); });
          }
          // chain the last runs: a single-run lane continues the lane before it when their keys agree
          auto const prev_b = shuffle_up(w, b, 1);
          auto const after = map([](int l) { return l > 0; }, lane);
          lane_runs<std::decay_t<decltype(w)>> runs;
          runs.head = map([](bool af, bool one, index_t pb, index_t bb) { return !(af && one && pb == bb); }, after, single, prev_b, b);
          auto const total = scan_runs(w, runs, o, x);
          // a lane with several runs closes its first one, with what the lanes before it carried in
          auto const prev_total = shuffle_up(w, total, 1);
          auto const joins = map([](bool af, index_t pb, index_t aa) { return af && pb == aa; }, after, prev_b, a);
          write(map([](bool one) { return !one; }, single), a, select(joins, map(o, f, prev_total), f));
          // the last run ends here unless the next lane goes on with it (or the step ends and more follow)
          bool const more = base + step < end;
          auto const next_a = shuffle_down(w, a, 1);
          auto const ends = map([more](int l, index_t na, index_t bb) { return l < WS - 1 ? na != bb : !more; }, lane, next_a, b);
          write(ends, b, total);
          if (more) {
            carry_key = uniform_value(shuffle(w, b, WS - 1));
            carry = uniform_value(shuffle(w, total, WS - 1));
          } else {
            carry_key = -1;
          }
        }
      }
    }
  }
};

/// Launch a run merge of n > 0 items on ex, V items per lane and step, as many warps as run at once.
/// PerLane (the routines' choice): where blocks are CPU threads (Exec::thread_tables), a merge runs as
/// thread_run_merge, each thread a slice, and the naive form gives each host lane a slice of its own;
/// false keeps the host's W lanes together, as on a GPU (the tests run both).
template <bool Merge, int V = run_merge_items, bool PerLane = true, class Op, class T, class Source, class Exec>
void launch_run_merge(Op op, Source const& src, index_t n, T* table, bool chunked, Exec const& ex) {
  if constexpr (Merge && PerLane && Exec::thread_tables) {
    launch_thread_run_merge(op, src, n, table, ex);
  } else {
    constexpr int threads = run_merge_threads;
    index_t const blocks = (n + threads * 2 * V - 1) / (threads * 2 * V);  // two steps per warp at least
    ex.for_each_resident_block(std::max<index_t>(1, blocks), threads, 0,
                               run_merge_program<Merge, V, PerLane, Op, T, Source>{op, src, n, table, chunked && Exec::vector_loads});
  }
}

}  // namespace detail
}  // namespace calm
