// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/choice/collision_totals.hpp: the collision statistics (000 §3.3; line_share and line_repeats are
// calm's own), the totals a sampled block group gathers and the ratios they are computed from.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "../../core/error.hpp"
#include "../../core/exec.hpp"
#include "../warp/group_reduce.hpp"
#include "../bulk/key_map.hpp"
#include "line_merge_rule.hpp"
#include "../block/private_table.hpp"

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
  /// Hot share: the most of the sample's warps whose in-table keys include one table entry, over the
  /// sampled in-table keys: the largest share of a warp-merged scatter's device atomics (peer_reduce's)
  /// that one entry receives across the whole array, whatever the order of the keys within a warp. About
  /// 1/sampled for keys spread over a large table and for runs (each run's key in a few warps), 1/W where
  /// one key is in every warp. Counted in detail::collision_hot_slots counters: keys of larger tables share
  /// them by a hash, which can only raise the count (by about 13 / sampled for 2^14 distinct keys).
  double hot_share = 0;

  /// The statistics as text, for logs and test messages.
  std::string to_string() const {
    char buf[360];
    std::snprintf(buf, sizeof buf,
                  "sampled %lld (out of range %lld, distinct %lld): warp %.4f, block %.4f, all-thread %.2f, clustering %.3f, lines %.4f, line "
                  "repeats %.3f, hot share %.5f",
                  static_cast<long long>(sampled), static_cast<long long>(out_of_range), static_cast<long long>(distinct), warp_level,
                  block_level, all_thread_level, clustering, line_share, line_repeats, hot_share);
    return buf;
  }
};

/// How collision_stats (and automatic's sampling) samples the keys.
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
  index_t line_entries = 32;  ///< the table entries of one line (above)
};

/// The table entries of one line for collision_statistics::line_share: 32 (a 128-byte line of 4-byte entries).
constexpr index_t table_line_entries = 32;

namespace detail {

/// What one sampled block group gathers (fixed point: a factor of 2^20 in the level sums). Each group
/// writes its own (no clearing, no device atomics); statistics_of sums them (hot_most: their maximum).
struct collision_totals {
  std::uint64_t warp_sum, warps, block_sum, blocks, distinct, repeats, adjacent, out_of_range, sampled, lines;
  std::uint64_t line_repeats, line_warps;  ///< line_repeats' two counts (0 unless merge_lines asks for them)
  std::uint64_t hot_most;  ///< the highest count the group's warps left in the hot counters (0 unless counted)
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

/// The counters of collision_statistics::hot_share (16 KiB of 4-byte counts): each warp adds 1 to its
/// distinct in-table keys' counters; a table of at most this many entries has one per entry.
constexpr index_t collision_hot_slots = index_t(1) << 12;
CALM_HD inline index_t collision_hot_slot(index_t k, index_t bins) {
  if (bins <= collision_hot_slots) return k;
  return static_cast<index_t>((static_cast<std::uint64_t>(k) * 0x9e3779b97f4a7c15ull) >> 52);  // 12 bits
}

/// Two groups' totals added (integers: any order of additions gives the same sums).
struct add_totals {
  CALM_HD collision_totals operator()(collision_totals a, collision_totals const& b) const {
    a.warp_sum += b.warp_sum, a.warps += b.warps, a.block_sum += b.block_sum, a.blocks += b.blocks, a.distinct += b.distinct;
    a.repeats += b.repeats, a.adjacent += b.adjacent, a.out_of_range += b.out_of_range, a.sampled += b.sampled, a.lines += b.lines;
    a.line_repeats += b.line_repeats, a.line_warps += b.line_warps;
    a.hot_most = a.hot_most > b.hot_most ? a.hot_most : b.hot_most;
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

/// The seven statistics of collision_statistics as ratios of summed totals.
struct collision_ratios {
  statistic_ratio warp_level, block_level, all_thread_level, clustering, line_share, line_repeats, hot_share;
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
  r.hot_share = {static_cast<double>(t.hot_most), static_cast<double>(t.sampled - t.out_of_range)};
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
  s.hot_share = r.hot_share.value();
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


}  // namespace detail
}  // namespace calm
