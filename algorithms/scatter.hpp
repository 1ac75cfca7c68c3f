// calm/algorithms/scatter.hpp: the bulk front door: calm::scatter, calm::histogram and calm::histogram_even
// over whole arrays, every strategy forcible by name, strategy::automatic by the fitted tree (000 §3.3).
#pragma once

#include <algorithm>
#include <string>
#include <type_traits>

#include "../core/error.hpp"
#include "../core/exec.hpp"
#include "../core/launch_key.hpp"
#include "choose.hpp"
#include "cluster_privatize.hpp"
#include "collision_stats.hpp"
#include "device_choice.hpp"
#include "direct_scatter.hpp"
#include "hot_key_cache.hpp"
#include "privatize.hpp"
#include "workspace.hpp"

namespace calm {

struct scatter_options {
  calm::strategy strategy = strategy::automatic;
  /// A device array of n item positions (a layout from calm::set_scatter, uploaded): the i-th item
  /// processed is item order[i]. Followed by the warp strategies (naive to peer_reduce; automatic then
  /// chooses among those); block-local strategies accumulate in their own order. nullptr: in order.
  index_t const* order = nullptr;
  /// A device counter (zeroed by the caller) to which the number of keys outside the table is added:
  /// one more pass over the keys. nullptr: they are skipped uncounted.
  std::uint64_t* skipped = nullptr;
  /// Statistics to choose from (strategy::automatic) instead of sampling the keys. Ignored by forced
  /// strategies. The tree reads line_repeats as counted in the layout of the call's direct scatter:
  /// collision_sample_options line_vec 4 (1 where keys or values are not aligned to 4 of them) and
  /// line_entries 32 for 4-byte keys and values, 1 where either has 8 bytes.
  collision_statistics const* stats = nullptr;
  /// How automatic samples the keys (items, block_items; checked as collision_stats checks them). Its
  /// line_vec and line_entries are checked, then replaced by the layout of the call's own direct scatter,
  /// the one the tree reads line_repeats in (above).
  collision_sample_options sample = {};
  /// Where the tree asks for sampled statistics, automatic samples the keys and finishes the choice on
  /// the device (no wait) and the call returns strategy::automatic; a device location given here then
  /// receives the strategy that ran (stream-ordered). Not written when the call returns another strategy.
  calm::strategy* chosen = nullptr;
  /// Where automatic ends at peer_reduce on the device (sampled) and could end at naive, it keeps
  /// peer_reduce only where the sampled warps, laid out as the direct scatter meets the keys, repeat a
  /// key on a table line (128 bytes) more than this many times per warp (line_merge_rule.hpp; with
  /// 8-byte keys or values, repeats of a key per warp, whatever its line), and runs naive elsewhere.
  /// 0: always peer_reduce; infinity: naive. Negative (the default):
  /// line_merge_rule::resolved, 0.25 on a GPU for keys and values of at most 4 bytes (measured on an
  /// H200 with 32-lane warps, not yet on AMD GPUs) and for 8-byte values in a table of at most 16 MiB;
  /// 0 for 8-byte values in a larger table, for 8-byte keys and on the host.
  /// NaN is rejected. histogram_even and count_duplicates use the default.
  float min_line_repeats = -1.0f;
};

namespace detail {

template <class Op>
constexpr int op_kind() {
  if constexpr (std::is_same<Op, plus>::value) return 0;
  else if constexpr (std::is_same<Op, min>::value || std::is_same<Op, max>::value) return 1;
  else return 2;
}

/// What the tree knows of a scatter of n items into `bins` entries of T by Op on ex without reading
/// the keys (counting: every item adds the same value).
template <class Op, class T, class Exec>
scatter_shape shape_of(index_t n, index_t bins, bool counting, Exec const& ex) {
  scatter_shape shape;
  shape.bins = bins;
  shape.items = n;
  shape.value_bytes = static_cast<int>(sizeof(T));
  shape.is_float = std::is_floating_point<T>::value;
  shape.counting = counting;
  shape.op_kind = op_kind<Op>();
  shape.fits_block = bins <= privatize_capacity<T>(ex);
  shape.copies = shape.fits_block ? replication_for(bins, sizeof(T), ex.replication_budget_bytes(), counting ? 8 : 32) : 0;
  return shape;
}

/// The strategy a leaf of the tree turns into for this call: strategies the table, the key map or
/// the order cannot take replaced by the nearest that can.
template <class Op, class T, class KeyMap, class Exec>
strategy fitting_strategy(strategy s, scatter_options const& opt, scatter_shape const& shape, Exec const& ex) {
  bool const warp_only = opt.order != nullptr;
  if (warp_only && s >= strategy::privatize) s = strategy::peer_reduce;
  if (is_block_local(s) && !shape.fits_block) s = strategy::hot_key;
  if (s == strategy::cluster_privatize && !(clusters_for<Exec, Op, T>() && shape.bins <= cluster_capacity<T>(ex))) s = strategy::hot_key;
  if ((s == strategy::hot_key || s == strategy::cluster_privatize) && !std::is_same<KeyMap, identity_key>::value) s = strategy::peer_reduce;
  if (s == strategy::automatic) s = strategy::peer_reduce;
  return s;
}

/// The direct scatters, which differ only in their merge (one launch behind a choice serves them: launch_chosen).
constexpr unsigned direct_strategies = strategy_bit(strategy::naive) | strategy_bit(strategy::scan_reduce) | strategy_bit(strategy::peer_reduce);
/// The strategies a choice finished on the device may run (launch_chosen launches each), as bits:
/// the direct scatters, hot_key, the block-local three, cluster_privatize.
constexpr unsigned device_choosable = direct_strategies | strategy_bit(strategy::hot_key) | strategy_bit(strategy::privatize) | strategy_bit(strategy::privatize_peer_reduce) |
                                      strategy_bit(strategy::privatize_adaptive) | strategy_bit(strategy::cluster_privatize);
/// The sampled features a choice finished on the device can read (distinct keys, behind the
/// all-thread level, need a cleared table of every key: a memset and a wait, so the host does that).
constexpr unsigned device_readable = feature_bit(feature::warp_level) | feature_bit(feature::block_level) | feature_bit(feature::clustering) |
                                     feature_bit(feature::line_share) | feature_bit(feature::line_repeats);

/// Whether naive, scan_reduce and peer_reduce behind a choice share one launch (launch_chosen): keys and
/// values of at most 4 bytes.
template <class K, class T>
constexpr bool one_direct_launch = sizeof(K) <= 4 && sizeof(T) <= 4;

/// Whether naive and peer_reduce alone share one (launch_chosen): 4-byte keys with 8-byte values. Their
/// program takes 82 registers on sm_90 and spills nothing (tiles in registers); on an H100 it ran naive
/// and peer_reduce as fast as their own launches, where one with scan_reduce too ran scan_reduce and
/// peer_reduce up to 1.35x slower (perf/results/cuda-h100-2026-11-27-merge-per-tile.md).
template <class K, class T>
constexpr bool naive_peer_launch = sizeof(K) <= 4 && sizeof(T) == 8;

/// The layout a sampling counts line repeats in (collision_statistics::line_repeats) for a direct scatter
/// of these keys and values: as the direct scatter of launch_chosen meets the keys (its load form), on
/// 128-byte lines for keys and values of at most 4 bytes, else a warp's repeated keys (lines of one
/// entry): with 8-byte values COO rows of 16 keys and more put a warp's few rows on one line, where
/// only the longest counts, and fell below the rule of 10 of the 8-byte address match (naive ran them
/// 1.4x slower, over lines of 16 doubles in cuda-h100-2026-11-25-line-rule-f64-train.md and of 32 in
/// -f64-keys.md); runs of 1 to 8 keys repeat about 8.6 keys a warp either way.
template <class Exec, class K, class VS, class T>
merge_lines direct_lines_of(K const* keys, VS const& vals) {
  int const vec = load_form_of<Exec>(keys, vals) == load_form::chunks ? vec_of<load_form::chunks> : vec_of<load_form::items>;
  return {vec, one_direct_launch<K, T> ? table_line_entries : index_t(1)};
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

/// Launch the strategies of `reach` (bits) the choice may end at, each behind the choice (chosen_program
/// reads it at `decided`; naive, scan_reduce and peer_reduce share one launch, chosen_merge_program, where
/// keys and values have at most 4 bytes; with 8-byte values naive and peer_reduce share one; hot_key
/// and the block-local strategies each have their own after those): the blocks of a
/// strategy not chosen end at once, so each costs an empty grid
/// (about 1.5 us each in a recorded graph on an H100, 2-3 us launched from the host; with launches that
/// overlap, as bulk_scatter passes them (detail::overlapping), two not chosen cost about 1 us less in
/// all; and the chosen launch lets those after it be placed while it runs (chosen_program): on an H200,
/// calls whose best is a direct scatter with hot_key's launch after it took 0.5-1.2 us less, hist_u32
/// sorted into 300,000 entries at 2^24 keys 1.3 us; where the launches end as one, in a recorded graph, the
/// blocks of those after the chosen one end at once too: 1.0 us less a call on an H200 over 34 held-out inputs
/// at 2^24 keys, perf/results/cuda-h200-2026-12-01-graph-tail.md). One launch per strategy, not one
/// program over all: a fused kernel takes the registers of its heaviest program, and on an H100 that
/// halved the occupancy of naive and privatize (20-200 us more per call, measured).
template <class Op, class K, class VS, class T, class KeyMap, class Exec>
void launch_chosen(strategy const* decided, unsigned reach, Op op, K const* keys, VS const& vals, index_t const* order, index_t n, T* table,
                   index_t bins, KeyMap const& key_map, bool counting, Exec const& ex) {
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
  auto const shared_direct = [&](index_t blocks, auto const& make) {
    auto const launch = [&](auto merge) {
      auto const program = make(merge);
      ex.for_each_resident_block(blocks, direct_threads, 0, chosen_merge_program<std::decay_t<decltype(program)>>{decided, program, reach});
      launched(reach & direct_strategies);
    };
    if (has(strategy::scan_reduce)) launch(switch_merge{});
    else launch(peer_reduce_if{});
  };
  bool const shares_direct =
      one_direct_launch<K, T> && int(has(strategy::naive)) + int(has(strategy::scan_reduce)) + int(has(strategy::peer_reduce)) >= 2;
  auto const direct = [&](index_t blocks, auto const& make) {
    if constexpr (one_direct_launch<K, T>) {
      if (shares_direct) {
        shared_direct(blocks, make);
        return;
      }
    } else if constexpr (naive_peer_launch<K, T>) {
      if (has(strategy::naive) && has(strategy::peer_reduce)) {
        auto const program = make(peer_reduce_if{});
        ex.for_each_resident_block(blocks, direct_threads, 0, chosen_merge_program<std::decay_t<decltype(program)>>{decided, program, reach});
        launched(strategy_bit(strategy::naive) | strategy_bit(strategy::peer_reduce));
        if (has(strategy::scan_reduce)) guarded(strategy::scan_reduce, blocks, direct_threads, 0, make(scan_reduce{}));
        return;
      }
    }
    if (has(strategy::naive)) guarded(strategy::naive, blocks, direct_threads, 0, make(naive{}));
    if (has(strategy::scan_reduce)) guarded(strategy::scan_reduce, blocks, direct_threads, 0, make(scan_reduce{}));
    if (has(strategy::peer_reduce)) guarded(strategy::peer_reduce, blocks, direct_threads, 0, make(peer_reduce{}));
  };
  constexpr bool plain = std::is_same<KeyMap, identity_key>::value;
  if (order != nullptr) {  // fitting_strategy left only warp strategies
    index_t const blocks = blocks_with_work(n, direct_threads, load_form::items);
    if (has(strategy::naive))
      guarded(strategy::naive, blocks, direct_threads, 0, ordered_scatter_program<naive, Op, K, VS, T, KeyMap>{op, keys, vals, order, n, table, bins, key_map, {}});
    if (has(strategy::scan_reduce))
      guarded(strategy::scan_reduce, blocks, direct_threads, 0,
              ordered_scatter_program<scan_reduce, Op, K, VS, T, KeyMap>{op, keys, vals, order, n, table, bins, key_map, {}});
    if (has(strategy::peer_reduce))
      guarded(strategy::peer_reduce, blocks, direct_threads, 0,
              ordered_scatter_program<peer_reduce, Op, K, VS, T, KeyMap>{op, keys, vals, order, n, table, bins, key_map, {}});
    return;
  }
  load_form const form = load_form_of<Exec>(keys, vals);
  with_load_form(form, [&](auto f) {
    constexpr load_form F = decltype(f)::value;
    // hot_key in its own launch after the direct ones: right after the sampling, the shared direct
    // launch loads its first tile while the sampling ends (chosen_merge_program); after hot_key's launch,
    // those loads were wasted where hot_key or scan_reduce ran (2.5-3.7 us more a call on an H100:
    // cuda-h100-2026-11-27-merge-per-tile.md). hot_key rode in the shared launch of 4-byte values from
    // 781c507, which then took hot_key's registers: 53 for histograms, 2 blocks of 512 an SM where
    // the direct scatters' own launches have 3, and on an H200 hist_u32 calls that ran peer_reduce took
    // up to 12% longer, those that ran hot_key 2-9 us longer than now (cuda-h200-2026-11-28-shared-launch-occupancy.md).
    index_t const blocks = blocks_with_work(n, direct_threads, form);
    auto const make = [&](auto merge) { return direct_program<F>(op, keys, vals, n, table, bins, key_map, merge); };
    direct(blocks, make);
    if constexpr (plain) {
      if (has(strategy::hot_key)) {
        hot_key_options const h = resolved_hot_key_options<T>(hot_key_options{}, ex);
        auto const hot = hot_key_program_for<F>(op, keys, vals, n, table, bins, h);
        guarded(strategy::hot_key, blocks_with_work(n, h.threads, form), h.threads, hot_key_layout<T>{h.slots, h.line_entries}.bytes(), hot);
      }
    }
    if (has(strategy::privatize) || has(strategy::privatize_peer_reduce) || has(strategy::privatize_adaptive)) {
      privatize_plan const plan = plan_privatize<T>(bins, {}, ex, counting);
      index_t const pb = blocks_with_work(n, plan.threads, form);
      auto const guarded_private = [&](strategy s, auto merge) {
        if (has(s))
          with_privatized_program<F>(op, keys, vals, n, table, plan, key_map, merge, ex,
                                     [&](auto const& program, std::size_t bytes) { guarded(s, pb, plan.threads, bytes, program); });
      };
      guarded_private(strategy::privatize, naive{});
      guarded_private(strategy::privatize_peer_reduce, peer_reduce{});
      guarded_private(strategy::privatize_adaptive, adaptive_merge{});
    }
    if constexpr (clusters_for<Exec, Op, T>() && plain) {
      if (has(strategy::cluster_privatize)) {
        cluster_options const copt{};
        cluster_plan const plan = plan_clusters<T>(bins, copt, ex);
        cluster_scatter_program<vec_of<F>, naive, Op, K, VS, T> const program{op, keys, vals, n, table, bins, plan.per, naive{}};
        launch_clusters(run_if_chosen(decided, strategy::cluster_privatize, program, settled, earlier, as_one), plan, n, copt.threads,
                        cluster_bytes<T>(plan), form, ex);
      }
    }
  });
}

/// Launch the strategy s (not automatic) for n > 0 items into bins > 0 entries.
template <class Op, class K, class Values, class VS, class T, class KeyMap, class Exec>
void launch_strategy(strategy s, Op op, K const* keys, Values values, VS const& vals, index_t const* order, index_t n, T* table, index_t bins,
                     KeyMap const& key_map, bool counting, Exec const& ex) {
  privatize_options popt;
  switch (s) {
    case strategy::automatic:  // resolved before
    case strategy::naive: launch_direct_scatter(op, keys, vals, order, n, table, bins, key_map, naive{}, ex); break;
    case strategy::scan_reduce: launch_direct_scatter(op, keys, vals, order, n, table, bins, key_map, scan_reduce{}, ex); break;
    case strategy::vote_reduce: launch_direct_scatter(op, keys, vals, order, n, table, bins, key_map, vote_reduce<1>{}, ex); break;
    case strategy::peer_reduce: launch_direct_scatter(op, keys, vals, order, n, table, bins, key_map, peer_reduce{}, ex); break;
    case strategy::privatize:
      launch_privatized_scatter(op, keys, vals, n, table, plan_privatize<T>(bins, popt, ex, counting), key_map, naive{}, ex);
      break;
    case strategy::privatize_peer_reduce:
      launch_privatized_scatter(op, keys, vals, n, table, plan_privatize<T>(bins, popt, ex, counting), key_map, peer_reduce{}, ex);
      break;
    case strategy::privatize_adaptive:
      launch_privatized_scatter(op, keys, vals, n, table, plan_privatize<T>(bins, popt, ex, counting), key_map, adaptive_merge{}, ex);
      break;
    case strategy::hot_key:
    case strategy::cluster_privatize:
      if constexpr (std::is_same<KeyMap, identity_key>::value) {
        if (s == strategy::hot_key) hot_key_scatter(op, keys, values, n, table, bins, hot_key_options{}, ex);
        else cluster_privatize_scatter(op, keys, values, n, table, bins, cluster_options{}, naive{}, ex);
      } else {  // even binning: the bins are few enough for a block's memory, or the samples go straight to the table
        launch_direct_scatter(op, keys, vals, order, n, table, bins, key_map, peer_reduce{}, ex);
      }
      break;
  }
}

/// Every bulk scatter comes here with its key map and the tree automatic walks (the family's): check,
/// resolve, launch.
template <class Op, class K, class Values, class T, class KeyMap, class Exec>
strategy bulk_scatter(tree_view tree, char const* who, Op op, K const* keys, Values values, index_t n, T* table, index_t bins, KeyMap const& key_map,
                      scatter_options const& opt, Exec const& ex) {
  check_atomic_op<Op, T>();
  check_scatter_arguments(who, n, keys, values, table, bins);
  int const si = static_cast<int>(opt.strategy);
  require(si >= 0 && si < strategy_count, errc::invalid_argument, [&] { return std::string(who) + ": unknown strategy " + std::to_string(si); });
  require(opt.min_line_repeats == opt.min_line_repeats, errc::invalid_argument,  // NaN
          [&] { return std::string(who) + ": min_line_repeats is NaN; give a number of repeats, or a negative value for the exec's default"; });
  line_merge_rule const rule = line_merge_rule::resolved(opt.min_line_repeats, Exec::family, sizeof(K), sizeof(T),
                                                              static_cast<std::uint64_t>(bins) * sizeof(T));
  scatter_shape const shape = shape_of<Op, T>(n, bins, is_same_value<Values>::value, ex);
  require(!is_block_local(opt.strategy) || shape.fits_block, errc::out_of_range,
          [&] { return std::string(who) + ": strategy " + to_string(opt.strategy) + " needs the table in one block's memory; " + std::to_string(bins) + " entries of " +
              std::to_string(sizeof(T)) + " bytes exceed " + std::to_string(privatize_capacity<T>(ex)); });
  if constexpr (clusters_for<Exec, Op, T>() && std::is_same<KeyMap, identity_key>::value)
    require(opt.strategy != strategy::cluster_privatize || bins <= cluster_capacity<T>(ex), errc::out_of_range,
            [&] { return std::string(who) + ": strategy cluster_privatize needs the table in one cluster's memory; " + std::to_string(bins) + " entries exceed " +
                std::to_string(cluster_capacity<T>(ex)); });
  auto const vals = as_value_source<T>(values);
  auto const fit = [&](strategy s) { return fitting_strategy<Op, T, KeyMap>(s, opt, shape, ex); };
  strategy s = opt.strategy;
  if (s == strategy::automatic) {
    auto const choose = [&] {
      int const start = walk_known(tree, shape);
      if (tree[start].left < 0) return fit(tree[start].leaf);  // no statistics needed
      if (opt.stats != nullptr || n == 0 || bins == 0) return fit(walk_tree(tree, shape, [&] { return opt.stats ? *opt.stats : collision_statistics{}; }));
      sample_plan const plan = plan_sample(keys, n, bins, opt.sample);
      tree_walk walk;
      bool const carried = make_walk(tree, shape, start, fit, walk);
      unsigned reads = 0;
      unsigned const reach = carried ? walk.reachable(&reads) : 0u;  // a walk that did not fit is not read
      bool const on_device = carried && (reach & ~device_choosable) == 0 && (reads & ~device_readable) == 0;
      if (!on_device) {
        collision_sample_options sample = opt.sample;  // line repeats, where read, as the direct scatter would meet them
        merge_lines const direct = direct_lines_of<Exec, K, decltype(vals), T>(keys, vals);
        bool const counts_lines = !carried || tree_walk::reads_feature(reads, feature::line_repeats);
        sample.line_vec = counts_lines ? direct.vec : 0, sample.line_entries = direct.line_entries;
        return fit(walk_tree(tree, shape, [&] { return sample_collisions(keys, n, bins, sample, key_map, ex); }));
      }
      // the block level only where the walk reads it (on a table larger than a block the hopper tree reads it where
      // the keys are not clustered: keys that crowd a block but not a warp, where hot_key beats naive)
      bool const reads_block_level = tree_walk::reads_feature(reads, feature::block_level);
      // the line rule, where the choice may end at naive or peer_reduce: counted by the sampling, applied by the
      // finish; the line repeats counted also where the walk reads them
      merge_lines const rule_lines = merge_lines_of<Exec, K, decltype(vals), T>(rule, reach, keys, vals, opt.order);
      merge_lines const lines = sampled_lines_of<Exec, K, decltype(vals), T>(rule_lines, reads, keys, vals);
      line_merge_rule const device_rule = rule_lines.vec > 0 ? rule : line_merge_rule{};
      // the workspace: the sampling's meeting place (zero), then the choice
      auto const launches = [&](Exec const& e, unsigned char* ws) {
        auto* const meet = reinterpret_cast<sample_meeting*>(ws);
        auto* const decided = reinterpret_cast<strategy*>(ws + sizeof(sample_meeting));
        launch_sample(keys, n, bins, plan, key_map, static_cast<collision_totals*>(nullptr), nullptr, 0, e, meet,
                      choice_program{&meet->sum, walk, decided, opt.chosen, device_rule}, reads_block_level, lines);
        launch_chosen(decided, reach, op, keys, vals, opt.order, n, table, bins, key_map, shape.counting, overlapping(e));
      };
      auto const make_key = [&] {
        launch_key key = launch_key::of<Op, K, decltype(vals), T, KeyMap, Exec>();
        key.add(keys).add(vals).add(opt.order).add(n).add(table).add(bins).add(key_map).add(opt.chosen).add(plan).add(reach).add(walk.size);
        key.add(device_rule.min_line_repeats).add(lines.vec).add(lines.line_entries);
        for (int i = 0; i < walk.size; ++i)
          key.add(walk.nodes[i].threshold).add(walk.nodes[i].test).add(walk.nodes[i].left).add(walk.nodes[i].right).add(walk.nodes[i].leaf);
        return key;
      };
      launch_decided(ex, make_key, sizeof(sample_meeting) + sizeof(strategy), sizeof(sample_meeting), launches);
      return strategy::automatic;  // chosen on the device
    };
    s = choose();
    if (s == strategy::automatic) {
      if (opt.skipped != nullptr) launch_count_outside(keys, n, bins, key_map, opt.skipped, ex);
      return s;
    }
  }
  if (n == 0 || bins == 0) return s;
  launch_strategy(s, op, keys, values, vals, opt.order, n, table, bins, key_map, shape.counting, ex);
  if (opt.skipped != nullptr) launch_count_outside(keys, n, bins, key_map, opt.skipped, ex);
  return s;
}

}  // namespace detail

/// table[keys[i]] = op(table[keys[i]], values[i]) for i < n, by the strategy opt.strategy names, or the
/// one the device family's fitted tree picks from the table, the types, the op and (where the tree
/// asks) collision statistics sampled from the keys (strategy::automatic, the default). values: a
/// T const* of n values, or calm::constant(v) for every item. Keys outside [0, bins) are skipped
/// (counted into opt.skipped if given). Throws calm::error before launching on a bad argument (null
/// pointers, negative sizes, a block-local strategy forced on a table too large for it), leaving the
/// table as it was. Asynchronous on a GPU (ex's stream), automatic included: where the tree asks for
/// sampled statistics (and opt.stats gives none), a small kernel samples the keys, its last block
/// finishes the choice on the device, and each strategy the choice may end at is launched behind it (on CUDA,
/// a call repeated with the same arguments, buffers and stream launches these as one graph recorded at
/// the second call; exec.launch_graphs = false turns that off). Returns the strategy that ran, or
/// strategy::automatic when the device chose (opt.chosen then receives it).
///
///   calm::scatter(calm::plus{}, keys, weights, n, table, bins);                 // automatic
///   calm::scatter(calm::max{}, keys, values, n, table, bins, {calm::strategy::peer_reduce});
template <class Op, class K, class Values, class T, class Exec = default_exec>
strategy scatter(Op op, K const* keys, Values values, index_t n, T* table, index_t bins, scatter_options const& opt = {}, Exec const& ex = Exec{}) {
  static_assert(std::is_integral<K>::value, "scatter: keys must be integers (histogram_even bins samples of any type)");
  return detail::bulk_scatter(family_tree(Exec::family), "scatter", op, keys, values, n, table, bins, detail::identity_key{}, opt, ex);
}

/// hist[keys[i]] += 1 for i < n: scatter with calm::plus and calm::constant(T(1)).
///
///   calm::histogram(keys, n, hist, 256);  // keys {3, 3, 5}: hist[3] += 2, hist[5] += 1
template <class K, class T, class Exec = default_exec>
strategy histogram(K const* keys, index_t n, T* hist, index_t bins, scatter_options const& opt = {}, Exec const& ex = Exec{}) {
  static_assert(std::is_integral<K>::value, "histogram: keys must be integers (histogram_even bins samples of any type)");
  return detail::bulk_scatter(family_tree(Exec::family), "histogram", plus{}, keys, constant(T(1)), n, hist, bins, detail::identity_key{}, opt, ex);
}

/// CUB's HistogramEven: `bins` bins of equal width over [lower, upper); hist[b] += 1 for each sample in
/// bin b, samples outside [lower, upper) (and NaNs) skipped. Throws calm::error unless lower < upper.
///
///   calm::histogram_even(samples, n, hist, 10, 0.0, 1.0);  // 0.25 goes to bin 2
template <class S, class T, class Exec = default_exec>
strategy histogram_even(S const* samples, index_t n, T* hist, index_t bins, double lower, double upper, scatter_options const& opt = {},
                        Exec const& ex = Exec{}) {
  static_assert(std::is_arithmetic<S>::value, "histogram_even: samples must be numbers");
  require(lower < upper, errc::invalid_argument, "histogram_even: lower must be below upper");
  require(bins >= 1, errc::invalid_argument, "histogram_even: bins must be at least 1");
  detail::even_bin_key<S> const key_map{lower, upper, static_cast<double>(bins) / (upper - lower), bins};
  return detail::bulk_scatter(family_tree(Exec::family), "histogram_even", plus{}, samples, constant(T(1)), n, hist, bins, key_map, opt, ex);
}

}  // namespace calm
