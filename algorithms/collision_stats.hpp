// calm/algorithms/collision_stats.hpp: how much a key array's updates collide, measured on the device
// from a sample: intra-warp, intra-block and all-thread collision levels and clustering (000 §3.3),
// and the table lines a warp's keys touch and a direct scatter's lanes wait on (line_share, line_repeats: calm's own).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "../core/error.hpp"
#include "../core/exec.hpp"
#include "group_reduce.hpp"
#include "key_map.hpp"
#include "line_merge_rule.hpp"
#include "private_table.hpp"

namespace calm {

/// The collision statistics of 000 §3.3 over a sample of the keys (see collision_stats below).
struct collision_statistics {
  index_t sampled = 0;       ///< keys in the sample
  index_t out_of_range = 0;  ///< of those, keys outside [0, bins): every scatter skips them
  index_t distinct = 0;      ///< distinct keys among the sampled keys inside the table
  /// Intra-warp level: the mean over the sample's warps of the maximal collision factor, the most
  /// lanes that share one key over the lanes (keys inside the table only). 1/W (no two lanes
  /// collide) to 1 (one key per warp).
  double warp_level = 0;
  /// Intra-block level: the same over groups of block_items consecutive keys. 1/block_items to 1.
  double block_level = 0;
  /// All-thread level: the mean access frequency of the sample's distinct keys (sampled in-table keys
  /// over distinct keys), 1 when none repeats; it grows with the sample size, which is fixed.
  double all_thread_level = 0;
  /// Clustering: of the lanes whose key an earlier lane of the warp also has, the fraction whose key
  /// is the previous lane's (1: equal keys sit next to each other, as in sorted runs; 0 when none repeats).
  double clustering = 0;
  /// Line share: over the sample's warps, the table lines (runs of table_line_entries entries) that
  /// the warps' distinct in-table keys fall in, over those distinct keys (each counted once per warp).
  /// 1 when no two distinct keys of a warp share a line (random keys over a large table), down to
  /// 1/table_line_entries when they are neighbours (sorted keys, images): then even one device atomic
  /// per lane touches few cache lines. 0 when no key is inside the table.
  double line_share = 0;
  /// Line repeats: the sample's warps laid out as a direct scatter's warps meet the keys (lanes
  /// collision_sample_options::line_vec keys apart), for each warp and each table line (of
  /// line_entries entries) its in-table keys fall on, the most lanes on one key there less one, summed
  /// and divided by the warps with an in-table key (detail::line_repeats): 0 when no lane waits for
  /// another on a line (distinct keys), W - 1 when every lane of a warp holds one key (block_items a
  /// multiple of W * line_vec). The device's atomics of a warp on one line are served together but lanes
  /// on one key wait for each other: the collisions a direct scatter meets, where warp_level counts those
  /// of W consecutive keys. 0 when not counted (line_vec 0). A bulk call's automatic choice counts them
  /// in the layout of its own direct scatter (detail::direct_lines_of); statistics passed to it in
  /// scatter_options::stats should be counted so.
  double line_repeats = 0;

  std::string to_string() const {
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "sampled %lld (out of range %lld, distinct %lld): warp %.4f, block %.4f, all-thread %.2f, clustering %.3f, lines %.4f, line repeats %.3f",
                  static_cast<long long>(sampled), static_cast<long long>(out_of_range), static_cast<long long>(distinct), warp_level,
                  block_level, all_thread_level, clustering, line_share, line_repeats);
    return buf;
  }
};

struct collision_sample_options {
  /// Keys sampled (at most; all of them when n is smaller): 2^14 by default, in groups of block_items
  /// consecutive keys spread evenly over the array. 512 warps and 64 blocks put the standard error of
  /// each level near 2% and 6%; on an H100 the whole call takes about 20 us, most of it the fixed cost
  /// of a memset, a launch and a copy back (2^16 keys: 32 us).
  index_t items = index_t(1) << 14;
  /// Keys per block group (the threads of the block the sample is taken as): 32 to 1,024.
  int block_items = 256;
  /// The layout line_repeats is counted in: the keys a direct scatter's lane takes apart (4: its
  /// 16-byte loads of 4-byte keys, as bulk calls load aligned arrays; 1: one key a load; 0: not counted,
  /// one pass over the sampled keys less: 0.1-1.0 us of a sampling on an H200), and the table entries of one line (32: 128
  /// bytes of 4-byte entries; 1: a warp's repeated keys, as bulk calls count them for 8-byte keys or values).
  /// Bulk calls set both to the direct scatter they would run (detail::direct_lines_of).
  int line_vec = 4;
  index_t line_entries = 32;
};

/// The table entries of one line for collision_statistics::line_share: 32 (a 128-byte line of 4-byte entries).
constexpr index_t table_line_entries = 32;

namespace detail {

/// What one sampled block group gathers (fixed point: a factor of 2^20 in the level sums). Each group
/// writes its own (no clearing, no device atomics); statistics_of sums them.
struct collision_totals {
  std::uint64_t warp_sum, warps, block_sum, blocks, distinct, repeats, adjacent, out_of_range, sampled, lines;
  std::uint64_t line_repeats, line_warps;  ///< line_repeats' two counts (0 unless merge_lines asks for them)
};
constexpr std::uint64_t collision_fixed_one = std::uint64_t(1) << 20;
/// Distinct keys are counted in a bitset of one bit per table entry, up to 2^20 bits (128 KiB, cleared
/// in about a microsecond); larger tables hash keys onto those bits (then distinct is an estimate, low
/// by about s^2 / 2^21 for s distinct keys: 3% for 2^16).
constexpr index_t collision_bitset_bits = index_t(1) << 20;

CALM_HD inline index_t collision_bit(index_t k, index_t bits, index_t bins) {
  if (bins <= bits) return k;
  return static_cast<index_t>((static_cast<std::uint64_t>(k) * 0x9e3779b97f4a7c15ull) >> 44);  // 20 bits
}

/// Two groups' totals added (integers: any order of additions gives the same sums).
struct add_totals {
  CALM_HD collision_totals operator()(collision_totals a, collision_totals const& b) const {
    a.warp_sum += b.warp_sum, a.warps += b.warps, a.block_sum += b.block_sum, a.blocks += b.blocks, a.distinct += b.distinct;
    a.repeats += b.repeats, a.adjacent += b.adjacent, a.out_of_range += b.out_of_range, a.sampled += b.sampled, a.lines += b.lines;
    a.line_repeats += b.line_repeats, a.line_warps += b.line_warps;
    return a;
  }
};

/// One sampled statistic as the ratio of two of the totals: its value is num / den, 0 where den is 0.
struct statistic_ratio {
  double num = 0.0, den = 0.0;
  CALM_HD double value() const { return den > 0.0 ? num / den : 0.0; }
  /// Whether value() <= x, tested as num <= x * den: a product, no division (the device's finish of
  /// the automatic choice tests these; its five divisions cost about 0.3 us a call on an H100). The
  /// same answer as value() <= x except where value() lies within a rounding of x.
  CALM_HD bool at_most(double x) const { return den > 0.0 ? num <= x * den : 0.0 <= x; }
};

/// The six statistics of collision_statistics as ratios of summed totals.
struct collision_ratios {
  statistic_ratio warp_level, block_level, all_thread_level, clustering, line_share, line_repeats;
};

/// The ratios of totals `t` (integer sums, exact in double below 2^53). The fixed point of the level
/// sums divides as a factor of the denominator: collision_fixed_one is a power of two, so the value
/// is the one of dividing by it first.
CALM_HD inline collision_ratios ratios_of(collision_totals const& t) {
  double const one = static_cast<double>(collision_fixed_one);
  std::uint64_t const warp_distinct = t.sampled - t.out_of_range - t.repeats;  // each warp's distinct keys, summed
  collision_ratios r;
  r.warp_level = {static_cast<double>(t.warp_sum), one * static_cast<double>(t.warps)};
  r.block_level = {static_cast<double>(t.block_sum), one * static_cast<double>(t.blocks)};
  r.all_thread_level = {static_cast<double>(t.sampled - t.out_of_range), static_cast<double>(t.distinct)};
  r.clustering = {static_cast<double>(t.adjacent), static_cast<double>(t.repeats)};
  r.line_share = {static_cast<double>(t.lines), static_cast<double>(warp_distinct)};
  r.line_repeats = {static_cast<double>(t.line_repeats), static_cast<double>(t.line_warps)};
  return r;
}

/// The statistics of `groups` block groups' totals, the same on the host and on the device (integer
/// sums, then the same divisions of ratios_of): a choice made from them on either side is the same
/// choice. (The device's finish tests the ratios by products instead: statistic_ratio::at_most.)
CALM_HD inline collision_statistics statistics_of(collision_totals const* part, index_t groups) {
  collision_totals t{};
  for (index_t g = 0; g < groups; ++g) t = add_totals{}(t, part[g]);
  collision_statistics s;
  s.sampled = static_cast<index_t>(t.sampled);
  s.out_of_range = static_cast<index_t>(t.out_of_range);
  s.distinct = static_cast<index_t>(t.distinct);
  collision_ratios const r = ratios_of(t);
  s.warp_level = r.warp_level.value();
  s.block_level = r.block_level.value();
  s.all_thread_level = r.all_thread_level.value();
  s.clustering = r.clustering.value();
  s.line_share = r.line_share.value();
  s.line_repeats = r.line_repeats.value();
  return s;
}

/// The highest bit of a count of at most `Lanes` lanes (floor of log2): where a bit-by-bit maximum of
/// such counts starts.
template <int Lanes>
constexpr int count_top_bit = Lanes >= 64 ? 6 : Lanes >= 32 ? 5 : Lanes >= 16 ? 4 : Lanes >= 8 ? 3 : Lanes >= 4 ? 2 : Lanes >= 2 ? 1 : 0;

/// No work after the sampling (collision_stats: the host sums the totals).
struct no_finish {
  template <class Block>
  CALM_HD void operator()(Block const&) const {}
};

/// How a sampling counts line repeats (collision_statistics::line_repeats, for line_merge_rule and the
/// tree's feature::line_repeats): as a direct scatter's warps meet the keys, lanes `vec` keys apart (its
/// loads of vec keys: 4 or 1), over lines of `line_entries` table entries (table_line_entries, or 1 to
/// count a warp's repeated keys). vec 0: not counted.
struct merge_lines {
  int vec = 0;
  index_t line_entries = table_line_entries;
};

/// The line repeats a sampling's summed totals hold.
CALM_HD inline line_repeats line_repeats_of(collision_totals const& t) { return {t.line_repeats, t.line_warps}; }

/// The 4-byte counter words of a sampling block, after its keys in block-local memory.
constexpr int sample_counter_words = 16;

/// Where the blocks of a sampling finished on the device meet: the sum of their groups' totals and the
/// tickets they took. Zero before the launch; the last block leaves it zero again.
struct sample_meeting {
  collision_totals sum;
  std::uint64_t tickets;
};

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

  // the block's counters in block-local memory (device atomics on a few addresses from every warp
  // would serialize: one per block at the end instead)
  enum counter { most, in_items, warp_sum, warps, repeats, adjacent, distinct, sampled, out_of_range, lines, merge_repeats, merge_warps, last, counters_used };
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
  }
};

/// Where a sample of n keys lies: `groups` groups of block_items consecutive keys, group g starting at
/// key g * stride.
struct sample_plan {
  index_t groups = 0, stride = 0, block_items = 0;
};

/// Checks the sampling arguments and plans the groups: evenly spread over the array, starting on
/// multiples of block_items (so on warp boundaries); all of the array when n <= opt.items.
template <class K>
sample_plan plan_sample(K const* keys, index_t n, index_t bins, collision_sample_options const& opt) {
  require(n >= 0, errc::invalid_argument, [&] { return "collision_stats: n = " + std::to_string(n) + " is negative"; });
  require(bins >= 0, errc::invalid_argument, [&] { return "collision_stats: negative table size " + std::to_string(bins); });
  require(n == 0 || keys != nullptr, errc::invalid_argument, "collision_stats: keys is null");
  require(opt.block_items >= 32 && opt.block_items <= 1024, errc::invalid_argument, "collision_stats: block_items must be in [32, 1024]");
  require(opt.items >= opt.block_items, errc::invalid_argument, "collision_stats: items must be at least block_items");
  require(opt.line_vec >= 0 && opt.line_vec <= 64, errc::invalid_argument, "collision_stats: line_vec must be in [0, 64]");
  require(opt.line_entries >= 1, errc::invalid_argument, "collision_stats: line_entries must be at least 1");
  sample_plan p;
  p.block_items = opt.block_items;
  if (n == 0) return p;
  index_t const bi = opt.block_items;
  index_t const want = (std::min(n, opt.items) + bi - 1) / bi;
  index_t const all = (n + bi - 1) / bi;
  p.groups = std::min(want, all);
  p.stride = p.groups == all ? bi : (all / p.groups) * bi;
  return p;
}

/// Block-local bytes of a sampling block: its keys, its counters, then each warp's distinct keys,
/// their counts and how many each warp has (the block level's).
inline std::size_t sample_block_bytes(sample_plan const& p) {
  std::size_t const items = static_cast<std::size_t>(p.block_items);
  std::size_t const warps = items;  // at most one a key
  return items * sizeof(index_t) + sample_counter_words * sizeof(std::uint32_t) + items * (sizeof(index_t) + sizeof(std::uint32_t)) +
         warps * sizeof(std::uint32_t);
}

/// Launches the sampling of plan (groups > 0) on ex: group g's totals to totals[g]; distinct keys
/// counted in `bitset` (bits bits, cleared by the caller) unless it is nullptr. With a meeting place
/// `meet` (zero, and zero again when the launch ends), the groups' totals are summed there instead and
/// the last block to finish runs finish(blk) on the sum. The block level is left out (0) unless
/// block_level; line repeats are counted where lines.vec > 0. Asynchronous on a GPU.
template <class K, class KeyMap, class Exec, class Finish = no_finish>
void launch_sample(K const* keys, index_t n, index_t bins, sample_plan const& p, KeyMap const& key_map, collision_totals* totals,
                   std::uint32_t* bitset, index_t bits, Exec const& ex, sample_meeting* meet = nullptr, Finish const& finish = {},
                   bool block_level = true, merge_lines lines = {}) {
  ex.for_each_block(p.groups, static_cast<int>(p.block_items), sample_block_bytes(p),
                    collision_sample_program<K, KeyMap, Finish>{keys, n, bins, p.groups, p.stride, static_cast<int>(p.block_items), bits, totals,
                                                                bitset, key_map, meet, finish, block_level, lines});
}

/// collision_stats with the keys mapped to table indices by key_map: sampled on the device, the
/// groups' totals copied back (a wait) and summed here.
template <class K, class KeyMap, class Exec>
collision_statistics sample_collisions(K const* keys, index_t n, index_t bins, collision_sample_options const& opt, KeyMap const& key_map, Exec const& ex) {
  sample_plan const p = plan_sample(keys, n, bins, opt);
  if (p.groups == 0) return {};
  index_t const bits = std::max<index_t>(32, std::min(bins, collision_bitset_bits));
  std::size_t const set_bytes = static_cast<std::size_t>((bits + 31) / 32) * 4;
  std::size_t const totals_bytes = static_cast<std::size_t>(p.groups) * sizeof(collision_totals);
  auto* const mem = static_cast<unsigned char*>(ex.allocate(totals_bytes + set_bytes));
  std::vector<collision_totals> t(static_cast<std::size_t>(p.groups));
  try {
    auto* const totals = reinterpret_cast<collision_totals*>(mem);
    auto* const set = reinterpret_cast<std::uint32_t*>(mem + totals_bytes);
    ex.fill(set, 0, set_bytes);
    launch_sample(keys, n, bins, p, key_map, totals, set, bits, ex, nullptr, no_finish{}, true, merge_lines{opt.line_vec, opt.line_entries});
    ex.to_host(t.data(), totals, totals_bytes);
  } catch (...) {
    ex.release(mem);
    throw;
  }
  ex.release(mem);
  return statistics_of(t.data(), p.groups);
}

}  // namespace detail

/// The collision statistics (000 §3.3) of keys[0, n) scattered into a table of `bins` entries,
/// measured on the device (ex's stream) over a sample of opt.items keys in groups of opt.block_items
/// consecutive keys spread evenly over the array (all of it when n <= opt.items), then copied to the
/// host: the call waits for ex's stream. Throws calm::error on bad arguments.
///
///   calm::collision_statistics s = calm::collision_stats(keys, n, 256);
///   std::puts(s.to_string().c_str());  // "sampled 65536 (...): warp 0.0938, block 0.0195, all-thread 256.00, ..."
template <class K, class Exec = default_exec>
collision_statistics collision_stats(K const* keys, index_t n, index_t bins, collision_sample_options const& opt = {}, Exec const& ex = Exec{}) {
  static_assert(std::is_integral<K>::value, "collision_stats: keys must be integers");
  return detail::sample_collisions(keys, n, bins, opt, detail::identity_key{}, ex);
}

}  // namespace calm
