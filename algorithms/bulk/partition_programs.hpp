// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/partition_programs.hpp: the block programs of partitioned_scatter (partitioned.hpp): count
// each block's items per range of the table, bucket the items by range, privatize each range (the counts
// are scanned between by compact_counts.hpp's exclusive_scan_program).
#pragma once

#include <cstdint>
#include <type_traits>

#include "../../core/config.hpp"
#include "../../core/ops.hpp"
#include "../../core/scope.hpp"
#include "../block/block_stream.hpp"
#include "../block/private_table.hpp"
#include "../block/run_merge.hpp"
#include "../warp/group_reduce.hpp"
#include "../warp/update.hpp"
#include "key_map.hpp"
#include "thread_slices.hpp"

namespace calm {
namespace detail {

/// What every pass of a partitioned scatter knows: n items into `bins` entries, in `ranges` ranges of
/// range_entries = 2^shift entries; the counting and bucketing passes run `blocks` blocks, each streaming the
/// same tiles of the items in both (stream_items_with_state). counts[r * blocks + b]: block b's items of range
/// r, then (after the scan) where they start in the bucketed arrays; counts[ranges * blocks]: the items bucketed.
struct partition_shape {
  index_t n, bins;
  int shift;
  index_t ranges, blocks, range_entries;
};

/// f(w, has, i) for the items [begin, end), a block's threads taking consecutive ones (i: lane values,
/// `has` false beyond end, where i is begin).
template <class Block, class F>
CALM_HD void for_block_items(Block const& blk, index_t begin, index_t end, F const& f) {
  int const threads = blk.threads();
  for (index_t base = begin; base < end; base += threads)
    blk.for_each_warp([&](auto const& w, auto t) {
      auto const i = map([base](int x) { return base + static_cast<index_t>(x); }, t);
      auto const has = map([end](index_t x) { return x < end; }, i);
      f(w, has, select(has, i, begin));
    });
}

/// Pass 1: block b counts its items (stream_items_with_state's tiles of this block, as pass 3 meets them) per
/// range in block-local counters (ranges x 4 bytes of scratch) and writes them to counts[r * blocks + b]. A warp's
/// items of one range add once (peer_reduce over the range): with a few ranges a block's lanes would otherwise
/// queue on a few counters.
template <int Vec, class K, class VS, class KeyMap>
struct partition_count_program {
  K const* keys;
  VS vals;  ///< values_unread or a same_value: streamed for their alignment, never read
  KeyMap key_map;
  partition_shape s;
  index_t* counts;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    auto* const c = blk.template scratch<std::uint32_t>();
    for_block_items(blk, 0, s.ranges, [&](auto const& w, auto const& has, auto const& r) {
      when(w, has, [&](auto const& l) { store(l, c, r, std::uint32_t(0)); });
    });
    blk.sync();
    int const shift = s.shift;
    index_t const bins = s.bins;
    stream_items_with_state<Vec, false>(
        blk, keys, vals, s.n, [](auto const&, auto const&) { return 0; },
        [&](auto const& w, auto const&, int, int, auto const& k, auto const&) {
          auto const key = map_keys(w, key_map, k);
          auto const in = map([bins](index_t x) { return x >= 0 && x < bins; }, key);
          auto const entry = select(in, key, index_t(0));  // 0 in the lanes outside: their addresses are formed too
          when(w, in, [&](auto const& l) {
            auto const range = map([shift](index_t x) { return static_cast<std::uint32_t>(x >> shift); }, entry);
            update_keyed(l, plus{}, scope::block_local{}, c + range, range, constant(std::uint32_t(1)), peer_reduce{});
          });
        });
    blk.sync();
    index_t const b = blk.index(), blocks = s.blocks;
    index_t* const out = counts;
    for_block_items(blk, 0, s.ranges, [&](auto const& w, auto const& has, auto const& r) {
      when(w, has, [&](auto const& l) {
        auto const at = map([b, blocks](index_t x) { return x * blocks + b; }, r);
        store(l, out, at, map([](std::uint32_t x) { return static_cast<index_t>(x); }, load(l, c, r)));
      });
    });
  }
};

/// Pass 3: block b puts its items (the tiles pass 1 counted) where the scan says, range by range: each item's
/// entry in its range (32 bits) into slots and, unless every item adds the same value, its value into values.
/// A warp's items of one range take their places with one fetch (warp-aggregated, as pass 1 counts). Scratch:
/// ranges x (8 + 4) bytes (each range's start, then a cursor).
template <int Vec, class K, class VS, class T, class KeyMap>
struct partition_bucket_program {
  /// 8-byte values: registers capped so that blocks of 1,024 threads launch (72 uncapped on sm_90 allowed 896).
  static constexpr int resident_1024_blocks = sizeof(T) > 4 ? 1 : 0;
  K const* keys;
  VS vals;
  KeyMap key_map;
  partition_shape s;
  index_t const* counts;
  std::uint32_t* slots;
  T* values;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    index_t* const start = blk.template scratch<index_t>();
    auto* const cursor = reinterpret_cast<std::uint32_t*>(start + s.ranges);
    index_t const b = blk.index(), blocks = s.blocks;
    index_t const* const in_counts = counts;
    for_block_items(blk, 0, s.ranges, [&](auto const& w, auto const& has, auto const& r) {
      when(w, has, [&](auto const& l) {
        store(l, start, r, load(l, in_counts, map([b, blocks](index_t x) { return x * blocks + b; }, r)));
        store(l, cursor, r, std::uint32_t(0));
      });
    });
    blk.sync();
    int const shift = s.shift;
    index_t const low = s.range_entries - 1, bins = s.bins;
    std::uint32_t* const out_slots = slots;
    T* const out_values = values;
    stream_items_with_state<Vec, false>(
        blk, keys, vals, s.n, [](auto const&, auto const&) { return 0; },
        [&](auto const& w, auto const&, int, int, auto const& k, auto const& v) {
          auto const key = map_keys(w, key_map, k);
          auto const in = map([bins](index_t x) { return x >= 0 && x < bins; }, key);
          auto const entry = select(in, key, index_t(0));  // 0 in the lanes outside: their addresses are formed too
          when(w, in, [&](auto const& l) {
            auto const range = map([shift](index_t x) { return x >> shift; }, entry);
            auto const offset = fetch_update(l, plus{}, scope::block_local{}, cursor + range, constant(std::uint32_t(1)), peer_reduce{});
            auto const at = map([](index_t s0, std::uint32_t o) { return s0 + static_cast<index_t>(o); }, load(l, start, range), offset);
            store(l, out_slots, at, map([low](index_t x) { return static_cast<std::uint32_t>(x & low); }, entry));
            if constexpr (!is_same_value<VS>::value) store(l, out_values, at, map([](auto x) { return static_cast<T>(x); }, v));
          });
        });
  }
};

/// Pass 4: the bucketed items split evenly over the blocks; each block folds each range's run of its
/// part into a private table in block-local memory (one range's entries) and merges it into the table. A
/// warp's items of one entry update it once (peer_reduce on the 4-byte entry: a hot key's lanes otherwise
/// queue on one block-local address, float sums worst of all). Each thread loads loads_in_flight items
/// before it updates.
template <class Op, class VS, class T>
struct partition_fill_program {
  Op op;
  VS vals;
  partition_shape s;
  index_t const* counts;
  std::uint32_t const* slots;
  T const* values;
  T* table;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    index_t const blocks = s.blocks;
    index_t lo, hi;
    slice_range(counts[s.ranges * blocks], blk.count(), blk.index(), lo, hi);
    for (index_t r = 0; r < s.ranges && lo < hi; ++r) {
      index_t const a = lo > counts[r * blocks] ? lo : counts[r * blocks];
      index_t const e = hi < counts[(r + 1) * blocks] ? hi : counts[(r + 1) * blocks];
      if (a >= e) continue;
      private_layout layout;
      index_t const left = s.bins - r * s.range_entries;
      layout.bins = left < s.range_entries ? left : s.range_entries;
      private_table<T> const tab{blk.template scratch<T>(), layout, blk.threads()};
      tab.clear(blk, op);
      fill_range(blk, tab.data, a, e);
      tab.merge_into(blk, op, scope::device{}, table + r * s.range_entries);
      blk.sync();  // the merge's reads done before the next range clears the table
    }
  }

  /// The bucketed items [a, e) into the private table d: each thread loads loads_in_flight of them, then updates.
  template <class Block>
  CALM_HD void fill_range(Block const& blk, T* d, index_t a, index_t e) const {
    constexpr int U = loads_in_flight;
    index_t const threads = blk.threads();
    Op const o = op;
    for (index_t base = a; base < e; base += threads * U)
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const i0 = map([base](int x) { return base + static_cast<index_t>(x); }, t);
        auto const first = map([e](index_t x) { return x < e; }, i0);
        std::decay_t<decltype(first)> has[U];
        std::decay_t<decltype(i0)> item[U];  // the lane's item, a where it has none
        decltype(load(w, slots, i0)) slot[U];
        CALM_UNROLL for (int u = 0; u < U; ++u) {
          auto const i = map([u, threads](index_t x) { return x + u * threads; }, i0);
          has[u] = map([e](index_t x) { return x < e; }, i);
          item[u] = select(has[u], i, a);
          slot[u] = load(w, slots, item[u]);
        }
        auto const update = [&](int u, auto const& v) {
          auto const at = map([d](std::uint32_t x) { return d + static_cast<index_t>(x); }, slot[u]);
          when(w, has[u], [&](auto const& l) { update_keyed(l, o, scope::block_local{}, at, slot[u], v, peer_reduce{}); });
        };
        if constexpr (is_same_value<VS>::value) {
          CALM_UNROLL for (int u = 0; u < U; ++u) update(u, vals);
        } else {
          decltype(load(w, values, i0)) value[U];  // every load before the first update
          CALM_UNROLL for (int u = 0; u < U; ++u) value[u] = load(w, values, item[u]);
          CALM_UNROLL for (int u = 0; u < U; ++u) update(u, value[u]);
        }
      });
  }
};

}  // namespace detail
}  // namespace calm
