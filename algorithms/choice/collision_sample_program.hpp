// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/choice/collision_sample_program.hpp: the block program that samples a key array's collisions
// (000 §3.3's levels, clustering, and the line counts) and, finished on the device, meets in one sum.
#pragma once

#include "collision_totals.hpp"

namespace calm {
namespace detail {

/// Samples one block group per block into totals[group]. With a meeting place (`meet`, zero before the
/// launch), each block adds its totals to meet->sum instead (device atomics; integers, so the sum is
/// the host's in any order), fences and takes a ticket; the block that takes the last ticket fences,
/// runs finish(blk) (which reads meet->sum) and zeroes the meeting place.
template <class K, class KeyMap, class Finish = no_finish>
struct collision_sample_program {
  K const* keys;
  index_t n, bins, groups, stride;  // group g covers [g * stride, g * stride + block_items) of the keys
  int block_items;
  index_t bits;
  collision_totals* totals;  // one per group (unused with a meeting place)
  std::uint32_t* bitset;     // nullptr: distinct keys are not counted
  KeyMap key_map;
  sample_meeting* meet = nullptr;  // nullptr: totals per group, no finish
  Finish finish = {};
  /// Whether the block level is counted (each lane's key among the group's keys, or, where at most
  /// half of them are warp-distinct, each warp's distinct keys summed over the warps: see below). Off,
  /// the group's block_sum and blocks are 0: for a choice whose walk does not read the block level
  /// (bulk_scatter).
  bool block_level = true;
  /// The line repeats of a direct scatter, where lines.vec > 0: for collision_stats (its options' layout),
  /// for line_merge_rule and for a walk that reads feature::line_repeats (bulk_scatter).
  merge_lines lines_of = {};
  /// The hot share's collision_hot_slots counters (zero before the launch; with a meeting place the last
  /// block leaves them zero again), or nullptr: not counted (hot_most 0).
  std::uint32_t* hot_counts = nullptr;

  // the block's counters in block-local memory (device atomics on a few addresses from every warp
  // would serialize: one per block at the end instead)
  enum counter { most, in_items, warp_sum, warps, repeats, adjacent, distinct, sampled, out_of_range, lines, merge_repeats, merge_warps, hot_most, last,
                 counters_used };
  static_assert(counters_used <= sample_counter_words, "the counters fit the words sample_block_bytes gives them");

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    index_t* const skeys = blk.template scratch<index_t>();  // block_items keys (-1: none), then the counters
    std::uint32_t* const c = reinterpret_cast<std::uint32_t*>(skeys + block_items);
    // for the block level: each warp's distinct keys from its first slot on (block_items slots: a key,
    // then its count in the warp), and how many each warp has (one count per warp)
    index_t* const dkeys = reinterpret_cast<index_t*>(c + sample_counter_words);
    std::uint32_t* const dcount = reinterpret_cast<std::uint32_t*>(dkeys + block_items);
    std::uint32_t* const wdistinct = dcount + block_items;
    index_t const first = blk.index() * stride, nn = n, nbins = bins, nbits = bits;
    int const items = block_items;
    sample_meeting* const m = meet;
    collision_totals* const tot = m == nullptr ? totals + blk.index() : nullptr;  // totals may be null with a meeting place
    index_t const ngroups = groups;
    std::uint32_t* const set = bitset;
    std::uint32_t* const hot = hot_counts;
    K const* const k = keys;
    // a choice's launches, launched to overlap this one, may begin now: they load their first keys, then
    // wait for this launch to end (chosen_merge_program)
    if (m != nullptr) blk.allow_next_launch();
    blk.for_each_warp([&](auto const& w, auto t) { when(w, t < int(counters_used), [&](auto const& l) { store(l, c, t, 0u); }); });
    blk.sync();
    auto const add = [c](auto const& l, counter at, int v) { atomic_update(l, plus{}, scope::block_local{}, c + at, static_cast<std::uint32_t>(v)); };
    bool const count_block = block_level;
    blk.for_each_warp([&](auto const& w, auto t) {
      constexpr int lanes_per_warp = std::decay_t<decltype(w)>::size;
      auto const warp_at = map([](int tt) { return tt / lanes_per_warp; }, t);  // uniform over the warp
      auto const i = map([first](int tt) { return first + tt; }, t);
      auto const valid = map([nn](index_t ii) { return ii < nn; }, i);
      // every lane loads (an invalid lane key 0, which exists as n > 0), then keeps -1 where it has no key in the table
      auto const kk = map_keys(w, key_map, load(w, k, select(valid, i, index_t(0))));
      auto const in = valid & map([nbins](index_t x) { return x >= 0 && x < nbins; }, kk);
      auto const key = select(in, kk, index_t(-1));
      store(w, skeys, t, key);
      int const lanes = popc(w, ballot(w, valid));
      int const in_lanes = popc(w, ballot(w, in));
      if (count_block && in_lanes == 0) when(w, elect_leader(w), [&](auto const& l) { store(l, wdistinct, warp_at, 0u); });
      if (lanes == 0) return;
      when(w, elect_leader(w), [&](auto const& l) {
        add(l, sampled, lanes);
        add(l, out_of_range, lanes - in_lanes);
      });
      if (in_lanes == 0) return;
      when(w, in, [&](auto const& v) {
        auto const peers = match_any(v, key);
        auto const mult = popc(v, peers);
        int top = 0;  // the warp's maximal collision factor times in_lanes, bit by bit from the top
        for (int b = count_top_bit<std::decay_t<decltype(w)>::size>; b >= 0; --b)
          if (any(v, mult >= (top | (1 << b)))) top |= 1 << b;
        auto const repeat = (peers & lanes_lt(v)) != 0;
        auto const firsts = ballot(v, !repeat);  // one lane per distinct key of the warp
        if (count_block) when(v, !repeat, [&](auto const& u) {
          auto const slot = map([](int at, int rank) { return at * lanes_per_warp + rank; }, warp_at, popc(u, firsts & lanes_lt(u)));
          store(u, dkeys, slot, key);
          store(u, dcount, slot, map([](auto m) { return static_cast<std::uint32_t>(m); }, mult));
        });
        auto const in_mask = ballot(v, true);
        auto const prev = shuffle_up(v, key, 1);
        auto const lane = lane_id(v);
        auto const prev_in = map([in_mask](int ln) { return ln > 0 && ((in_mask >> (ln - 1)) & 1) != 0; }, lane);
        int const reps = popc(v, ballot(v, repeat));
        int const adj = popc(v, ballot(v, prev_in & (prev == key)));
        // the table lines of the warp's keys: one lane per line
        auto const line = map([](index_t kk) { return kk / table_line_entries; }, key);
        int const line_count = popc(v, ballot(v, (match_any(v, line) & lanes_lt(v)) == 0));
        int fresh = 0;
        if (set != nullptr) {
          // first sighting of a key in the bitset: the lanes that set its bit
          auto const bit = map([nbits, nbins](index_t kk) { return collision_bit(kk, nbits, nbins); }, key);
          auto const word = map([](index_t b) { return b >> 5; }, bit);
          auto const mask = map([](index_t b) { return 1u << (b & 31); }, bit);
          auto const leader = !repeat;  // one lane per distinct key of the warp
          when(v, leader, [&](auto const& u) {
            auto const old = atomic_fetch_update(u, bit_or{}, scope::device{}, set + word, mask);
            fresh = popc(u, ballot(u, (old & mask) == 0u));
          });
        }
        if (hot != nullptr) when(v, !repeat, [&](auto const& u) {  // each distinct key of the warp counts the warp once
          auto const slot = map([nbins](index_t kk) { return collision_hot_slot(kk, nbins); }, key);
          auto const old = atomic_fetch_update(u, plus{}, scope::device{}, hot + slot, 1u);
          atomic_update(u, max{}, scope::block_local{}, c + hot_most, map([](std::uint32_t o) { return o + 1u; }, old));
        });
        when(v, elect_leader(v), [&](auto const& l) {
          add(l, warp_sum, static_cast<int>(static_cast<std::uint64_t>(top) * collision_fixed_one / static_cast<std::uint64_t>(in_lanes)));
          add(l, warps, 1);
          add(l, repeats, reps);
          add(l, adjacent, adj);
          add(l, distinct, fresh);
          add(l, in_items, in_lanes);
          add(l, lines, line_count);
          if (count_block) store(l, wdistinct, warp_at, static_cast<std::uint32_t>(popc(l, firsts)));
        });
      });
    });
    blk.sync();
    // the line repeats of a direct scatter's warps: the group's keys in stretches of W * vec, warp
    // s * vec + j taking keys j, j + vec, ... of stretch s, as a direct scatter's warp meets them
    if (lines_of.vec > 0) blk.for_each_warp([&](auto const& w, auto t) {
      constexpr int lanes = std::decay_t<decltype(w)>::size;
      int const vec = lines_of.vec;
      index_t const entries = lines_of.line_entries;
      auto const at = map([vec](int tt) { return tt / (lanes * vec) * (lanes * vec) + tt % lanes * vec + tt / lanes % vec; }, t);
      auto const inside = map([items](int a) { return a < items; }, at);
      auto const key = select(inside, load(w, skeys, select(inside, at, 0)), index_t(-1));
      when(w, key >= 0, [&](auto const& u) {
        auto const group = map([](auto g) { return static_cast<int>(g); }, popc(u, match_any(u, key)));
        auto const line = match_any(u, map([entries](index_t kk) { return kk / entries; }, key));
        // the most lanes on one key of each line, bit by bit from the top: the lanes of a line share
        // their candidate, so a ballot masked to the line says whether one of them reaches it (0.35 us
        // less a sampling than reduce_peers over the line on an H100)
        auto most = map([](int) { return 0; }, group);
        for (int b = count_top_bit<lanes>; b >= 0; --b) {
          auto const candidate = map([b](int m) { return m | (1 << b); }, most);
          auto const reached = ballot(u, group >= candidate);
          most = select((reached & line) != decltype(line)(0), candidate, most);
        }
        when(u, (line & lanes_lt(u)) == decltype(line)(0), [&](auto const& f) {
          atomic_update(f, plus{}, scope::block_local{}, c + merge_repeats, map([](int m) { return static_cast<std::uint32_t>(m - 1); }, most));
        });
        when(u, elect_leader(u), [&](auto const& l) { add(l, merge_warps, 1); });
      });
    });
    // the block's maximal collision factor. Where the warps' keys are mostly distinct, each lane counts
    // its key among the group's keys (block_items steps); where at most half are, each warp's distinct
    // key sums its counts in every warp (as many steps as the group has warp-distinct keys: a few where
    // equal keys crowd the warps; on an H200 that made a sampling of sorted keys 2 us shorter, and the
    // first way kept where keys are mostly distinct: there the second took 1.6-3.8 us longer)
    bool const few_distinct = count_block && 2 * (c[in_items] - c[repeats]) <= static_cast<std::uint32_t>(items);  // uniform
    if (count_block && !few_distinct) blk.for_each_warp([&](auto const& w, auto t) {
      auto const mine = load(w, skeys, t);
      when(w, mine >= 0, [&](auto const& u) {
        auto const mult = map(
            [skeys, items](index_t kk) {
              std::uint32_t m = 0;
              for (int j = 0; j < items; ++j) m += skeys[j] == kk;
              return m;
            },
            mine);
        atomic_update(u, max{}, scope::block_local{}, c + most, mult);
      });
    });
    if (few_distinct) blk.for_each_warp([&](auto const& w, auto t) {
      constexpr int lanes_per_warp = std::decay_t<decltype(w)>::size;
      int const warps_in = (items + lanes_per_warp - 1) / lanes_per_warp;
      auto const has = map([wdistinct](int tt) { return static_cast<std::uint32_t>(tt % lanes_per_warp) < wdistinct[tt / lanes_per_warp]; }, t);
      when(w, has, [&](auto const& u) {
        auto const mult = map(
            [dkeys, dcount, wdistinct, warps_in](index_t kk) {
              std::uint32_t m = 0;
              for (int ww = 0; ww < warps_in; ++ww) {
                index_t const* const wk = dkeys + ww * lanes_per_warp;
                std::uint32_t const* const wc = dcount + ww * lanes_per_warp;
                std::uint32_t const count = wdistinct[ww];
                for (std::uint32_t j = 0; j < count; ++j) m += wk[j] == kk ? wc[j] : 0u;
              }
              return m;
            },
            load(u, dkeys, t));
        atomic_update(u, max{}, scope::block_local{}, c + most, mult);
      });
    });
    blk.sync();
    blk.for_each_warp([&](auto const& w, auto t) {
      when(w, t == 0, [&](auto const& l) {
        std::uint32_t const top = c[most], inside = c[in_items];
        collision_totals r{};
        bool const counted = inside > 0 && block_level;
        r.block_sum = counted ? static_cast<std::uint64_t>(top) * collision_fixed_one / inside : 0;
        r.blocks = counted ? 1 : 0;
        r.warp_sum = c[warp_sum];
        r.warps = c[warps];
        r.repeats = c[repeats];
        r.adjacent = c[adjacent];
        r.distinct = c[distinct];
        r.sampled = c[sampled];
        r.out_of_range = c[out_of_range];
        r.lines = c[lines];
        r.line_repeats = c[merge_repeats];
        r.line_warps = c[merge_warps];
        r.hot_most = c[hot_most];
        if (m == nullptr) {
          *tot = r;
          return;
        }
        collision_totals& sum = m->sum;
        auto const into = [&l](std::uint64_t& to, std::uint64_t v) {
          if (v != 0) atomic_update(l, plus{}, scope::device{}, &to, v);
        };
        into(sum.warp_sum, r.warp_sum), into(sum.warps, r.warps), into(sum.block_sum, r.block_sum), into(sum.blocks, r.blocks);
        into(sum.distinct, r.distinct), into(sum.repeats, r.repeats), into(sum.adjacent, r.adjacent);
        into(sum.out_of_range, r.out_of_range), into(sum.sampled, r.sampled), into(sum.lines, r.lines);
        into(sum.line_repeats, r.line_repeats), into(sum.line_warps, r.line_warps);
        if (r.hot_most != 0) atomic_update(l, max{}, scope::device{}, &sum.hot_most, r.hot_most);
        fence(l, scope::device{});  // this group's sums before its ticket
        auto const before = atomic_fetch_update(l, plus{}, scope::device{}, &m->tickets, std::uint64_t(1));
        store(l, c, int(last), map([ngroups](std::uint64_t b) { return std::uint32_t(index_t(b) + 1 == ngroups); }, before));
      });
    });
    if (m == nullptr) return;
    blk.sync();
    if (c[last] == 0u) return;  // uniform over the block
    blk.for_each_warp([&](auto const& w, auto) { fence(w, scope::device{}); });  // every group's sums after the tickets
    finish(blk);
    blk.sync();
    blk.for_each_warp([&](auto const& w, auto t) { when(w, t == 0, [&](auto const&) { *m = sample_meeting{}; }); });
    if (hot != nullptr)  // every block's counts were added before its ticket
      for (int s0 = 0; s0 < int(collision_hot_slots); s0 += blk.threads())
        blk.for_each_warp([&](auto const& w, auto t) {
          auto const s = map([s0](int tt) { return s0 + tt; }, t);
          when(w, s < int(collision_hot_slots), [&](auto const& l) { store(l, hot, s, 0u); });
        });
  }
};


}  // namespace detail
}  // namespace calm
