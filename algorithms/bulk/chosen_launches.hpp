// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/chosen_launches.hpp: the launches behind automatic's choice finished on the device (000 §3.3):
// each strategy the choice may end at, run only if chosen; the direct scatters share one launch.
#pragma once

#include <type_traits>

#include "cluster_privatize.hpp"
#include "../choice/device_choice.hpp"
#include "direct_scatter.hpp"
#include "hot_key_cache.hpp"
#include "privatize.hpp"
#include "../choice/strategy_set.hpp"

namespace calm {
namespace detail {

/// The direct scatters, which differ only in their merge (one launch behind a choice serves them: launch_chosen).
constexpr unsigned direct_strategies = strategy_bit(strategy::naive) | strategy_bit(strategy::scan_reduce) | strategy_bit(strategy::peer_reduce);
/// The strategies a choice finished on the device may run (launch_chosen launches each), as bits:
/// the direct scatters, hot_key, the block-local three, cluster_privatize.
constexpr unsigned device_choosable = direct_strategies | strategy_bit(strategy::hot_key) | strategy_bit(strategy::privatize) | strategy_bit(strategy::privatize_peer_reduce) |
                                      strategy_bit(strategy::privatize_adaptive) | strategy_bit(strategy::cluster_privatize);
/// The sampled features a choice finished on the device can read (distinct keys, behind the
/// all-thread level, need a cleared table of every key: a memset and a wait, so the host does that;
/// the hot share's counters are few, and the sampling's last block clears them again).
constexpr unsigned device_readable = feature_bit(feature::warp_level) | feature_bit(feature::block_level) | feature_bit(feature::clustering) |
                                     feature_bit(feature::line_share) | feature_bit(feature::line_repeats) | feature_bit(feature::block_excess) |
                                     feature_bit(feature::hot_share);

/// Whether naive, scan_reduce and peer_reduce behind a choice share one launch (launch_chosen): keys and
/// values of at most 4 bytes.
template <class K, class T>
constexpr bool one_direct_launch = sizeof(K) <= 4 && sizeof(T) <= 4;

/// Whether naive and peer_reduce alone share one (launch_chosen): 4-byte keys with 8-byte values (82
/// registers on sm_90, no spills; with scan_reduce too the shared program ran up to 1.35x slower).
template <class K, class T>
constexpr bool naive_peer_launch = sizeof(K) <= 4 && sizeof(T) == 8;

/// The layout a sampling counts line repeats in (collision_statistics::line_repeats) for a direct scatter
/// of these keys and values: as the direct scatter of launch_chosen meets the keys (chunk_items), on
/// 128-byte lines for keys and values of at most 4 bytes, else a warp's repeated keys (lines of one
/// entry: with 8-byte values a line of a warp's few COO rows counted only the longest).
template <class Exec, class K, class VS, class T>
merge_lines direct_lines_of(K const*, VS const&) {
  return {chunk_items<Exec, K, VS>(), one_direct_launch<K, T> ? table_line_entries : index_t(1)};
}

/// How the sampling of a choice that may end at naive or peer_reduce counts line repeats for `rule`:
/// direct_lines_of, or none where the rule is 0, or in a set_scatter order (launch_chosen launches naive
/// and peer_reduce apart there and no rule applies).
template <class Exec, class K, class VS, class T>
merge_lines merge_lines_of(line_merge_rule rule, unsigned reach, K const* keys, VS const& vals, index_t const* order) {
  if (!(rule.min_line_repeats > 0.0f) || order != nullptr || !reaches(reach, strategy::naive) || !reaches(reach, strategy::peer_reduce)) return {};
  return direct_lines_of<Exec, K, VS, T>(keys, vals);
}

/// The layout the sampling of a choice finished on the device counts line repeats in: the rule's
/// (merge_lines_of), where the rule applies; else the direct scatter's (direct_lines_of), where the walk
/// reads feature::line_repeats (`reads`: tree_walk::reachable's); else none.
template <class Exec, class K, class VS, class T>
merge_lines sampled_lines_of(merge_lines rule_lines, unsigned reads, K const* keys, VS const& vals) {
  if (rule_lines.vec > 0 || !tree_walk::reads_feature(reads, feature::line_repeats)) return rule_lines;
  return direct_lines_of<Exec, K, VS, T>(keys, vals);
}

/// Whether launch_chosen launches S for this call (as it compiles: hot_key and cluster_privatize over
/// plain keys, the latter where the exec has clusters for Op and T), so that a strategy the host chose
/// can run through it.
template <strategy S, class Op, class T, class KeyMap, class Exec>
constexpr bool chosen_launches_serve() {
  constexpr bool plain = std::is_same<KeyMap, identity_key>::value;
  if (!reaches(device_choosable, S)) return false;
  if (S == strategy::hot_key) return plain;
  if (S == strategy::cluster_privatize) return plain && clusters_for<Exec, Op, T>();
  return true;
}

/// Launch the strategies of `reach` (bits) the choice may end at, each behind the choice (chosen_program
/// reads it at `decided`; naive, scan_reduce and peer_reduce share one launch, chosen_merge_program, where
/// keys and values have at most 4 bytes; with 8-byte values naive and peer_reduce share one; hot_key
/// and the block-local strategies each have their own after those): the blocks of a strategy not chosen
/// end at once, so each costs an empty grid (about 1.5 us in a recorded graph, 2-3 us launched from the
/// host); the chosen launch lets those after it be placed while it runs (chosen_program). One launch per
/// strategy, not one program over all: a fused kernel takes the registers of its heaviest program.
/// Runs: the strategies the call compiled (strategy_set::runs, bits); reach holds no other. decided
/// nullptr: the host has chosen, and reach holds that one strategy (launch_strategy; chosen_launches_serve).
template <unsigned Runs, class Op, class K, class VS, class T, class KeyMap, class Exec>
void launch_chosen(strategy const* decided, unsigned reach, Op op, K const* keys, VS const& vals, index_t const* order, index_t n, T* table,
                   index_t bins, KeyMap const& key_map, bool counting, Exec const& ex) {
  reach &= Runs;
  require(decided != nullptr || (reach != 0 && (reach & (reach - 1)) == 0), errc::unsupported, "launch_chosen: a choice made on the host runs one strategy");
  auto const has = [reach](strategy s) { return reaches(reach, s); };
  // what chosen_program needs to know of the launches before each: whether there was one, and which
  // strategies they run
  bool settled = false;
  unsigned earlier = 0;
  bool const as_one = launches_end_as_one(ex);
  auto const launched = [&](unsigned strategies) { settled = true, earlier |= strategies; };
  auto const guarded = [&](strategy s, index_t blocks, int threads, std::size_t bytes, auto const& program) {
    ex.for_each_resident_block(blocks, threads, bytes, run_if_chosen(decided, s, program, settled, earlier, as_one));
    launched(strategy_bit(s));
  };
  // naive, scan_reduce and peer_reduce: direct scatters that differ only in the merge, so one launch
  // serves those the choice may end at, where there are two or more (make(merge) builds the program:
  // peer_reduce_if for naive and peer_reduce, switch_merge where scan_reduce is one). For keys and values of
  // at most 4 bytes; with 8-byte values naive and peer_reduce only (naive_peer_launch), scan_reduce and
  // hot_key on their own. Not in a set_scatter order: there naive alone needs fewer registers (float values: 32
  // against 37, 4 blocks an SM against 3). The line rule (line_merge_rule) is the choice's: the
  // launches read naive or peer_reduce at `decided` and probe nothing.
  constexpr bool compiles_naive = reaches(Runs, strategy::naive), compiles_scan = reaches(Runs, strategy::scan_reduce),
                 compiles_peer = reaches(Runs, strategy::peer_reduce);
  // a strategy's own launch behind the choice, compiled only where the call may run it
  auto const own = [&](auto c, index_t blocks, auto const& make_program) {
    if constexpr (reaches(Runs, decltype(c)::value))
      if (has(c)) guarded(c, blocks, direct_threads, 0, make_program(c));
  };
  auto const shared_direct = [&](index_t blocks, auto const& make) {
    auto const launch = [&](auto merge) {
      auto const program = make(merge);
      ex.for_each_resident_block(blocks, direct_threads, 0, chosen_merge_program<std::decay_t<decltype(program)>>{decided, program, reach});
      launched(reach & direct_strategies);
    };
    if constexpr (compiles_scan) {
      if (has(strategy::scan_reduce)) {
        launch(switch_merge{});
        return;
      }
    }
    if constexpr (compiles_naive && compiles_peer) launch(peer_reduce_if{});  // two of the three, scan_reduce not one
  };
  auto const merge_of = [](auto c) {
    constexpr strategy s = decltype(c)::value;
    if constexpr (s == strategy::naive) return naive{};
    else if constexpr (s == strategy::scan_reduce) return scan_reduce{};
    else return peer_reduce{};
  };
  auto const direct = [&](index_t blocks, auto const& make) {
    auto const own_program = [&](auto c) { return make(merge_of(c)); };
    if constexpr (one_direct_launch<K, T> && int(compiles_naive) + int(compiles_scan) + int(compiles_peer) >= 2) {
      if (int(has(strategy::naive)) + int(has(strategy::scan_reduce)) + int(has(strategy::peer_reduce)) >= 2) {
        shared_direct(blocks, make);
        return;
      }
    } else if constexpr (naive_peer_launch<K, T> && compiles_naive && compiles_peer) {
      if (has(strategy::naive) && has(strategy::peer_reduce)) {
        auto const program = make(peer_reduce_if{});
        ex.for_each_resident_block(blocks, direct_threads, 0, chosen_merge_program<std::decay_t<decltype(program)>>{decided, program, reach});
        launched(strategy_bit(strategy::naive) | strategy_bit(strategy::peer_reduce));
        own(strategy_constant<strategy::scan_reduce>{}, blocks, own_program);
        return;
      }
    }
    own(strategy_constant<strategy::naive>{}, blocks, own_program);
    own(strategy_constant<strategy::scan_reduce>{}, blocks, own_program);
    own(strategy_constant<strategy::peer_reduce>{}, blocks, own_program);
  };
  constexpr bool plain = std::is_same<KeyMap, identity_key>::value;
  if (order != nullptr) {  // fitting_strategy left only warp strategies
    index_t const blocks = blocks_with_work(n, direct_threads, 1);
    auto const ordered = [&](auto c) {
      using merge = decltype(merge_of(c));
      return ordered_scatter_program<merge, Op, K, VS, T, KeyMap>{op, keys, vals, order, n, table, bins, key_map, {}};
    };
    own(strategy_constant<strategy::naive>{}, blocks, ordered);
    own(strategy_constant<strategy::scan_reduce>{}, blocks, ordered);
    own(strategy_constant<strategy::peer_reduce>{}, blocks, ordered);
    return;
  }
  {
    constexpr int F = chunk_items<Exec, K, VS>();
    // hot_key in its own launch after the direct ones: right after the sampling, the shared direct
    // launch loads its first tile while the sampling ends (chosen_merge_program); inside the shared
    // launch hot_key's registers lowered the direct scatters' occupancy.
    index_t const blocks = blocks_with_work(n, direct_threads, F);
    auto const make = [&](auto merge) { return direct_program<F>(op, keys, vals, n, table, bins, key_map, merge); };
    direct(blocks, make);
    if constexpr (plain && reaches(Runs, strategy::hot_key)) {
      if (has(strategy::hot_key)) {
        hot_key_options const h = resolved_hot_key_options<T>(hot_key_options{}, ex);
        auto const hot = hot_key_program_for<F>(op, keys, vals, n, table, bins, h);
        guarded(strategy::hot_key, blocks_with_work(n, h.threads, F), h.threads, hot_key_layout<T>{h.slots, h.line_entries}.bytes(), hot);
      }
    }
    if (has(strategy::privatize) || has(strategy::privatize_peer_reduce) || has(strategy::privatize_adaptive)) {
      privatize_plan const plan = plan_privatize<T>(bins, {}, ex, counting);
      index_t const pb = blocks_with_work(n, plan.threads, F);
      auto const guarded_private = [&](auto c, auto merge) {
        if constexpr (reaches(Runs, decltype(c)::value))
          if (has(c))
            with_privatized_program<F>(op, keys, vals, n, table, plan, key_map, merge, ex,
                                       [&](auto const& program, std::size_t bytes) { guarded(c, pb, plan.threads, bytes, program); });
      };
      guarded_private(strategy_constant<strategy::privatize>{}, naive{});
      guarded_private(strategy_constant<strategy::privatize_peer_reduce>{}, peer_reduce{});
      guarded_private(strategy_constant<strategy::privatize_adaptive>{}, adaptive_merge{});
    }
    if constexpr (clusters_for<Exec, Op, T>() && plain && reaches(Runs, strategy::cluster_privatize)) {
      if (has(strategy::cluster_privatize)) {
        cluster_options const copt{};
        cluster_plan const plan = plan_clusters<T>(bins, copt, ex);
        cluster_scatter_program<F, merge_runs, Op, K, VS, T> const program{op, keys, vals, n, table, bins, plan.per, merge_runs{}};
        launch_clusters(run_if_chosen(decided, strategy::cluster_privatize, program, settled, earlier, as_one), plan, n, copt.threads,
                        cluster_bytes<T>(plan), F, ex);
      }
    }
  }
}

}  // namespace detail
}  // namespace calm
