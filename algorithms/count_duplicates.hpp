// calm/algorithms/count_duplicates.hpp: the distinct keys of an array with their occurrence counts, counted
// by atomics into a table (000 §4: the counting step ahead of merge sort and page view count), then compacted in key order.
#pragma once

#include <algorithm>
#include <string>
#include <type_traits>

#include "../core/error.hpp"
#include "../core/exec.hpp"
#include "scatter.hpp"
#include "workspace.hpp"

namespace calm {

struct count_options {
  /// How the counts are accumulated (calm::histogram's strategy; automatic by default).
  calm::strategy strategy = strategy::automatic;
  /// Check before anything is written that every key is in [0, key_bound) (one pass and a wait);
  /// false: keys outside are not counted.
  bool check_indices = true;
};

namespace detail {

/// Table entries each compaction warp owns (W x this many).
constexpr index_t compact_steps_per_warp = 32;

/// Inclusive sum over the warp's lanes (every lane active).
template <class Warp, class V>
CALM_HD V warp_inclusive_sum(Warp const& w, V x) {
  auto const lane = lane_id(w);
  for (int d = 1; d < Warp::size; d <<= 1) {
    V const y = shuffle_up(w, x, d);
    x = select(lane >= d, x + y, x);
  }
  return x;
}

/// Compaction pass 1 (Count) and 3 (!Count) over a table of `bins` counts: warp g owns entries
/// [g S, (g + 1) S); pass 1 stores its number of nonzero entries in offsets[g], pass 3 (offsets then
/// exclusive sums) writes its entries' keys and counts from offsets[g] on, in key order.
template <bool Count, class K, class C>
struct compact_counts_program {
  C const* table;
  index_t bins;
  index_t* offsets;
  K* unique;
  C* counts;
  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    blk.for_each_warp([&](auto const& w, auto) {
      constexpr int WS = std::decay_t<decltype(w)>::size;
      index_t const g = group_index(w), per = WS * compact_steps_per_warp;
      index_t const begin = g * per, end = std::min(bins, begin + per);
      auto const lane = lane_id(w);
      index_t at = Count ? 0 : offsets[g];
      for (index_t base = begin; base < end; base += WS) {
        auto const j = map([base](int l) { return base + l; }, lane);
        auto const in = j < end;
        auto const c = select(in, load(w, table, select(in, j, index_t(0))), C(0));
        auto const nz = c != C(0);
        auto const mask = ballot(w, nz);
        if constexpr (!Count) {
          auto const pos = map([at](int before) { return at + before; }, popc(w, mask & lanes_lt(w)));
          when(w, nz, [&](auto const& u) {
            store(u, unique, pos, map([](index_t x) { return static_cast<K>(x); }, j));
            store(u, counts, pos, c);
          });
        }
        at += popc(w, mask);
      }
      if constexpr (Count) when(w, lane == 0, [&](auto const& l) { store(l, offsets, g, at); });
    });
  }
};

/// Compaction pass 2: offsets[0, g) to exclusive sums in place, the total to *total; one block.
struct exclusive_scan_program {
  index_t* offsets;
  index_t g;
  index_t* total;
  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    index_t* const o = offsets;
    index_t const count = g;
    int const threads = blk.threads();
    index_t const chunk = (count + threads - 1) / threads;
    index_t* const warp_sums = blk.template scratch<index_t>();  // [warps] inclusive sums, then exclusive
    auto const own_sum = [&](auto const& w, auto const& t) {  // each thread's chunk, summed
      auto s = map([](int) { return index_t(0); }, t);
      for (index_t c = 0; c < chunk; ++c) {
        auto const e = map([chunk, c](int tt) { return tt * chunk + c; }, t);
        auto const in = e < count;
        s = s + select(in, load(w, o, select(in, e, index_t(0))), index_t(0));
      }
      return s;
    };
    blk.for_each_warp([&](auto const& w, auto t) {
      constexpr int WS = std::decay_t<decltype(w)>::size;
      auto const incl = warp_inclusive_sum(w, own_sum(w, t));
      when(w, lane_id(w) == WS - 1, [&](auto const& l) { store(l, warp_sums, map([](int tt) { return tt / WS; }, t), incl); });
    });
    blk.sync();
    blk.for_each_warp([&](auto const& w, auto t) {
      constexpr int WS = std::decay_t<decltype(w)>::size;
      int const warps = (threads + WS - 1) / WS;
      if (uniform_value(shuffle(w, t, 0)) != 0) return;  // the first warp scans the warps' sums (at most W of them)
      auto const in = t < warps;
      auto const v = select(in, load(w, warp_sums, select(in, t, 0)), index_t(0));
      auto const incl = warp_inclusive_sum(w, v);
      when(w, in, [&](auto const& l) { store(l, warp_sums, t + warps, incl - v); });
      when(w, t == warps - 1, [&](auto const& l) { store(l, total, index_t(0), incl); });
    });
    blk.sync();
    blk.for_each_warp([&](auto const& w, auto t) {
      constexpr int WS = std::decay_t<decltype(w)>::size;
      int const warps = (threads + WS - 1) / WS;
      auto const mine = own_sum(w, t);
      auto run = warp_inclusive_sum(w, mine) - mine + load(w, warp_sums, map([warps](int tt) { return warps + tt / WS; }, t));
      for (index_t c = 0; c < chunk; ++c) {
        auto const e = map([chunk, c](int tt) { return tt * chunk + c; }, t);
        auto const in = e < count;
        when(w, in, [&](auto const& u) {
          auto const x = load(u, o, e);
          store(u, o, e, run);
          run = select(in, run + x, run);
        });
      }
    });
  }
};

}  // namespace detail

/// The distinct keys of keys[0, n), all in [0, key_bound), in increasing order, with the number of
/// times each occurs: unique[u] and counts[u] for u < *num_unique (both arrays need room for
/// min(n, key_bound) entries; num_unique is a device index_t). The counts are taken by atomics into
/// a table of key_bound entries (calm::histogram, so every strategy applies), which is then compacted:
/// no sort, O(n + key_bound). Throws calm::error before anything is written on a null pointer, a
/// size out of range or (opt.check_indices) a key outside [0, key_bound). Asynchronous on a GPU but
/// for the index check and the collision sampling of strategy::automatic.
///
///   calm::count_duplicates(keys, 6, 10, unique, counts, num);  // keys {7, 2, 7, 7, 0, 2}: unique {0, 2, 7}, counts {1, 2, 3}, *num 3
template <class K, class C, class Exec = default_exec>
void count_duplicates(K const* keys, index_t n, index_t key_bound, K* unique, C* counts, index_t* num_unique, count_options const& opt = {},
                      Exec const& ex = Exec{}) {
  static_assert(std::is_integral<K>::value, "count_duplicates: keys must be integers");
  check_atomic_op<plus, C>();
  require(n >= 0 && key_bound >= 0, errc::invalid_argument,
          "count_duplicates: negative size (n " + std::to_string(n) + ", key_bound " + std::to_string(key_bound) + ")");
  require(n == 0 || keys != nullptr, errc::invalid_argument, "count_duplicates: keys is null");
  require(num_unique != nullptr, errc::invalid_argument, "count_duplicates: num_unique is null");
  require(n == 0 || key_bound == 0 || (unique != nullptr && counts != nullptr), errc::invalid_argument, "count_duplicates: unique or counts is null");
  if (opt.check_indices) detail::require_inside("count_duplicates", "keys", keys, n, key_bound, ex);
  using W = typename Exec::warp_type;
  constexpr int threads = 256;
  index_t const per_warp = W::size * detail::compact_steps_per_warp, warps_per_block = threads / W::size;
  index_t const warps = (key_bound + per_warp - 1) / per_warp, blocks = (warps + warps_per_block - 1) / warps_per_block;
  index_t const g = blocks * warps_per_block;
  std::size_t const table_bytes = (static_cast<std::size_t>(key_bound) * sizeof(C) + 15) / 16 * 16;
  detail::workspace<Exec> ws(ex, table_bytes + static_cast<std::size_t>(g) * sizeof(index_t) + 16);
  C* const table = ws.template at<C>(0);
  index_t* const offsets = ws.template at<index_t>(table_bytes);
  ex.fill(num_unique, 0, sizeof(index_t));
  if (n == 0 || key_bound == 0) return;
  ex.fill(table, 0, static_cast<std::size_t>(key_bound) * sizeof(C));
  scatter_options sopt;
  sopt.strategy = opt.strategy;
  histogram(keys, n, table, key_bound, sopt, ex);
  ex.for_each_block(blocks, threads, 0, detail::compact_counts_program<true, K, C>{table, key_bound, offsets, unique, counts});
  int const scan_threads = 1024;
  ex.for_each_block(1, scan_threads, 2 * (scan_threads / W::size + 1) * sizeof(index_t), detail::exclusive_scan_program{offsets, g, num_unique});
  ex.for_each_block(blocks, threads, 0, detail::compact_counts_program<false, K, C>{table, key_bound, offsets, unique, counts});
}

}  // namespace calm
