// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/block/compact_counts.hpp: the nonzero entries of a count table written out in entry order with
// their keys (count per warp, scan, write): the compaction of count_duplicates (000 §4's counting step).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "../../core/error.hpp"
#include "../../core/exec.hpp"
#include "../bulk/scatter.hpp"
#include "../bulk/workspace.hpp"
#include "run_merge.hpp"  // uniform_value

namespace calm {
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

/// The key of table entry j when the table is indexed by the key itself.
template <class K>
struct index_as_key {
  CALM_HD K operator()(index_t j) const { return static_cast<K>(j); }
};

/// Compaction pass 1 (Count) and 3 (!Count) over a table of `bins` counts: warp g owns entries
/// [g S, (g + 1) S); pass 1 stores its number of nonzero entries in offsets[g], pass 3 (offsets then
/// exclusive sums) writes its entries' keys (key_of(entry)) and counts from offsets[g] on, in entry order.
template <bool Count, class K, class C, class KeyOf = index_as_key<K>>
struct compact_counts_program {
  C const* table;
  index_t bins;
  index_t* offsets;
  K* unique;
  C* counts;
  KeyOf key_of = {};
  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    blk.for_each_warp([&](auto const& w, auto) {
      constexpr int WS = std::decay_t<decltype(w)>::size;
      index_t const g = group_index(w), per = WS * compact_steps_per_warp;
      index_t const begin = g * per, end = begin + per < bins ? begin + per : bins;
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
            // key_of only on entries of the table (on the host map runs over every lane)
            store(u, unique, pos, map([ko = key_of](index_t x) { return ko(x); }, select(in, j, index_t(0))));
            store(u, counts, pos, c);
          });
        }
        at += popc(w, mask);
      }
      if constexpr (Count) when(w, lane == 0, [&](auto const& l) { store(l, offsets, g, at); });
    });
  }
};

/// Compaction pass 2: offsets[0, g) to exclusive sums in place, the total to *total; one block of at most
/// exclusive_scan_threads<Warp> threads (its first warp scans the warps' sums), block-local memory
/// exclusive_scan_bytes.
template <class Warp>
constexpr int exclusive_scan_threads = Warp::size * Warp::size < 1024 ? Warp::size * Warp::size : 1024;
template <class Warp>
constexpr std::size_t exclusive_scan_bytes = 2 * (exclusive_scan_threads<Warp> / Warp::size + 1) * sizeof(index_t);

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

/// Writes the nonzero entries of table[0, bins) (bins > 0) as unique[u] = key_of(entry), counts[u],
/// in entry order, and their number to *num_unique: count per warp, scan, write (three launches).
template <class K, class C, class KeyOf, class Exec>
void launch_compact_counts(C const* table, index_t bins, KeyOf const& key_of, K* unique, C* counts, index_t* num_unique, Exec const& ex) {
  using W = typename Exec::warp_type;
  constexpr int threads = 256;
  index_t const per_warp = W::size * compact_steps_per_warp, warps_per_block = threads / W::size;
  index_t const warps = (bins + per_warp - 1) / per_warp, blocks = (warps + warps_per_block - 1) / warps_per_block;
  index_t const g = blocks * warps_per_block;
  workspace<Exec> ws(ex, static_cast<std::size_t>(g) * sizeof(index_t));
  index_t* const offsets = ws.template at<index_t>(0);
  ex.for_each_block(blocks, threads, 0, compact_counts_program<true, K, C, KeyOf>{table, bins, offsets, unique, counts, key_of});
  ex.for_each_block(1, exclusive_scan_threads<W>, exclusive_scan_bytes<W>, exclusive_scan_program{offsets, g, num_unique});
  ex.for_each_block(blocks, threads, 0, compact_counts_program<false, K, C, KeyOf>{table, bins, offsets, unique, counts, key_of});
}

}  // namespace detail
}  // namespace calm
