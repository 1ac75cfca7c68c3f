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
#include "../block/private_table.hpp"
#include "../block/run_merge.hpp"
#include "../warp/group_reduce.hpp"
#include "../warp/update.hpp"
#include "key_map.hpp"
#include "thread_slices.hpp"

namespace calm {
namespace detail {

/// What every pass of a partitioned scatter knows: n items into `bins` entries, in `ranges` ranges of
/// range_entries = 2^shift entries; the counting and bucketing passes run `blocks` blocks, block b on
/// slice b of the items (slice_range). counts[r * blocks + b]: block b's items of range r, then (after
/// the scan) where they start in the bucketed arrays; counts[ranges * blocks]: the items bucketed.
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

/// An item's entry in the table (lane values; 0 where it lies outside) and whether it lies inside.
template <class E, class In>
struct partition_entry {
  E entry;
  In in;
};

/// The entry of each item's key, and whether it lies in [0, bins) for an item that `has`; `any`:
/// whether some lane's does.
template <class Warp, class K, class KeyMap, class H, class I>
CALM_HD auto partition_key(Warp const& w, K const* keys, KeyMap const& key_map, index_t bins, H const& has, I const& i, bool& any) {
  auto const key = map_keys(w, key_map, load(w, keys, i));
  auto const in = map([bins](bool h, index_t k) { return h && k >= 0 && k < bins; }, has, key);
  any = ballot(w, in) != 0;
  auto const entry = select(in, key, index_t(0));
  return partition_entry<std::decay_t<decltype(entry)>, std::decay_t<decltype(in)>>{entry, in};
}

/// Pass 1: block b counts its slice's items per range in block-local counters (ranges x 4 bytes of
/// scratch) and writes them to counts[r * blocks + b]. A warp's items of one range add once (peer_reduce
/// over the range): with a few ranges a block's lanes would otherwise queue on a few counters.
template <class K, class KeyMap>
struct partition_count_program {
  K const* keys;
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
    index_t begin, end;
    slice_range(s.n, s.blocks, blk.index(), begin, end);
    int const shift = s.shift;
    for_block_items(blk, begin, end, [&](auto const& w, auto const& has, auto const& i) {
      bool any = false;
      auto const ki = partition_key(w, keys, key_map, s.bins, has, i, any);
      if (!any) return;
      auto const range = map([shift](index_t k) { return static_cast<std::uint32_t>(k >> shift); }, ki.entry);
      when(w, ki.in, [&](auto const& l) { update_keyed(l, plus{}, scope::block_local{}, c + range, range, constant(std::uint32_t(1)), peer_reduce{}); });
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

/// Pass 3: block b puts its slice's items where the scan says, range by range: each item's entry in
/// its range (32 bits) into slots and, unless every item adds the same value, its value into values. A
/// warp's items of one range take their places with one fetch (warp-aggregated, as pass 1 counts).
/// Scratch: ranges x (8 + 4) bytes (each range's start, then a cursor).
template <class K, class VS, class T, class KeyMap>
struct partition_bucket_program {
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
    index_t begin, end;
    slice_range(s.n, s.blocks, blk.index(), begin, end);
    int const shift = s.shift;
    index_t const low = s.range_entries - 1;
    for_block_items(blk, begin, end, [&](auto const& w, auto const& has, auto const& i) {
      bool any = false;
      auto const ki = partition_key(w, keys, key_map, s.bins, has, i, any);
      if (!any) return;
      auto const range = map([shift](index_t k) { return k >> shift; }, ki.entry);
      when(w, ki.in, [&](auto const& l) {
        auto const offset = fetch_update(l, plus{}, scope::block_local{}, cursor + range, constant(std::uint32_t(1)), peer_reduce{});
        auto const at = map([](index_t s0, std::uint32_t o) { return s0 + static_cast<index_t>(o); }, load(l, start, range), offset);
        store(l, slots, at, map([low](index_t k) { return static_cast<std::uint32_t>(k & low); }, ki.entry));
        if constexpr (!is_same_value<VS>::value) store(l, values, at, map([](auto x) { return static_cast<T>(x); }, load(l, vals, i)));
      });
    });
  }
};

/// Pass 4: the bucketed items split evenly over the blocks; each block folds each range's run of its
/// part into a private table in block-local memory (one range's entries) and merges it into the table. A
/// warp's items of one entry update it once (peer_reduce on the 4-byte entry: a hot key's lanes otherwise
/// queue on one block-local address, float sums worst of all).
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
      T* const d = tab.data;
      Op const o = op;
      for_block_items(blk, a, e, [&](auto const& w, auto const& has, auto const& i) {
        auto const slot = load(w, slots, i);
        auto const at = map([d](std::uint32_t x) { return d + static_cast<index_t>(x); }, slot);
        if constexpr (is_same_value<VS>::value) {
          when(w, has, [&](auto const& l) { update_keyed(l, o, scope::block_local{}, at, slot, vals, peer_reduce{}); });
        } else {
          auto const v = load(w, values, i);
          when(w, has, [&](auto const& l) { update_keyed(l, o, scope::block_local{}, at, slot, v, peer_reduce{}); });
        }
      });
      tab.merge_into(blk, op, scope::device{}, table + r * s.range_entries);
      blk.sync();  // the merge's reads done before the next range clears the table
    }
  }
};

}  // namespace detail
}  // namespace calm
