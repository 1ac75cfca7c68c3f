// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/scatter.hpp: the bulk front door: calm::scatter, calm::histogram and calm::histogram_even
// over whole arrays, every strategy forcible by name, strategy::automatic by the fitted tree (000 §3.3).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "../../core/error.hpp"
#include "../../core/exec.hpp"
#include "../../core/launch_key.hpp"
#include "arguments.hpp"
#include "../choice/choose.hpp"
#include "chosen_launches.hpp"
#include "cluster_privatize.hpp"
#include "../choice/collision_stats.hpp"
#include "../choice/device_choice.hpp"
#include "direct_scatter.hpp"
#include "hot_key_cache.hpp"
#include "privatize.hpp"
#include "../choice/strategy_set.hpp"
#include "table_fill.hpp"
#include "thread_private.hpp"
#include "workspace.hpp"

namespace calm {

/// The options of a bulk scatter (calm::scatter, calm::histogram, calm::histogram_even). The strategy is
/// not one of them: it is the call's template argument (automatic by default), so that a call compiles
/// only what it can run.
struct scatter_options {
  /// A device array of n item positions (a layout from calm::set_scatter, uploaded): the i-th item
  /// processed is item order[i]. Followed by the warp strategies (naive to peer_reduce; automatic then
  /// chooses among those); block-local strategies accumulate in their own order. nullptr: in order.
  index_t const* order = nullptr;
  /// A device counter (zeroed by the caller) to which the number of keys outside the table is added:
  /// one more pass over the keys. nullptr: they are skipped uncounted.
  std::uint64_t* skipped = nullptr;
  /// Statistics to choose from (strategy::automatic) instead of sampling the keys. Ignored by forced
  /// strategies. The tree reads line_repeats as counted in the layout of the call's direct scatter:
  /// collision_sample_options line_vec 4 (1 for 8-byte keys, and on an exec without chunk loads) and
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
  /// false (the default): the call accumulates into the table as it is (table[k] = op(table[k], ...)).
  /// true: the table is first set to the op's identity (0 for sums and counts), so that it holds this
  /// call's result alone, as CUB's histograms write theirs.
  bool overwrite = false;
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
  if (s == strategy::thread_private && !Exec::thread_tables) s = strategy::privatize;
  if (s == strategy::thread_private && !thread_tables_fit<T, Exec>(shape.bins)) s = strategy::naive;
  if (is_block_local(s) && !shape.fits_block) s = strategy::hot_key;
  if (s == strategy::cluster_privatize && !(clusters_for<Exec, Op, T>() && shape.bins <= cluster_capacity<T>(ex))) s = strategy::hot_key;
  if ((s == strategy::hot_key || s == strategy::cluster_privatize) && !std::is_same<KeyMap, identity_key>::value) s = strategy::peer_reduce;
  if (s == strategy::automatic) s = strategy::peer_reduce;
  return s;
}

/// Launch the strategy S (not automatic) for n > 0 items into bins > 0 entries.
template <strategy S, class Op, class K, class Values, class VS, class T, class KeyMap, class Exec>
void launch_forced(Op op, K const* keys, Values values, VS const& vals, index_t const* order, index_t n, T* table, index_t bins, KeyMap const& key_map,
                   bool counting, Exec const& ex) {
  constexpr bool plain = std::is_same<KeyMap, identity_key>::value;
  auto const privatized = [&](auto merge) {
    launch_privatized_scatter(op, keys, vals, n, table, plan_privatize<T>(bins, privatize_options{}, ex, counting), key_map, merge, ex);
  };
  if constexpr (S == strategy::naive) launch_direct_scatter(op, keys, vals, order, n, table, bins, key_map, naive{}, ex);
  else if constexpr (S == strategy::scan_reduce) launch_direct_scatter(op, keys, vals, order, n, table, bins, key_map, scan_reduce{}, ex);
  else if constexpr (S == strategy::vote_reduce) launch_direct_scatter(op, keys, vals, order, n, table, bins, key_map, vote_reduce<1>{}, ex);
  else if constexpr (S == strategy::peer_reduce) launch_direct_scatter(op, keys, vals, order, n, table, bins, key_map, peer_reduce{}, ex);
  else if constexpr (S == strategy::privatize) privatized(naive{});
  else if constexpr (S == strategy::privatize_peer_reduce) privatized(peer_reduce{});
  else if constexpr (S == strategy::privatize_adaptive) privatized(adaptive_merge{});
  else if constexpr (S == strategy::thread_private && Exec::thread_tables) launch_thread_private(op, keys, vals, n, table, bins, key_map, ex);
  else if constexpr (S == strategy::thread_private) {  // a GPU: a table per block where it fits one, else as hot_key
    if (bins <= privatize_capacity<T>(ex)) privatized(naive{});
    else launch_forced<strategy::hot_key>(op, keys, values, vals, order, n, table, bins, key_map, counting, ex);
  } else if constexpr (!plain)  // even binning or hashed slots: hot_key and cluster_privatize go straight to the table
    launch_direct_scatter(op, keys, vals, order, n, table, bins, key_map, peer_reduce{}, ex);
  else if constexpr (S == strategy::hot_key) hot_key_scatter(op, keys, values, n, table, bins, hot_key_options{}, ex);
  else cluster_privatize_scatter(op, keys, values, n, table, bins, cluster_options{}, merge_runs{}, ex);
}

/// Launch s, one of the strategies `Runs` (bits) holds. Behind: the call compiled the launches behind a
/// device's choice (launch_chosen); a strategy they serve runs through them, so that it is compiled once.
template <unsigned Runs, bool Behind, class Op, class K, class Values, class VS, class T, class KeyMap, class Exec>
void launch_strategy(strategy s, Op op, K const* keys, Values values, VS const& vals, index_t const* order, index_t n, T* table, index_t bins,
                     KeyMap const& key_map, bool counting, Exec const& ex) {
  for_strategy(s, [&](auto c) {
    constexpr strategy S = decltype(c)::value;
    if constexpr (S != strategy::automatic && reaches(Runs, S) && Behind && chosen_launches_serve<S, Op, T, KeyMap, Exec>())
      launch_chosen<Runs>(nullptr, strategy_bit(S), op, keys, vals, order, n, table, bins, key_map, counting, ex);
    else if constexpr (S != strategy::automatic && reaches(Runs, S))
      launch_forced<S>(op, keys, values, vals, order, n, table, bins, key_map, counting, ex);
    else  // fitting_strategy and strategy_set's closure of it disagree: a defect of calm's, not of the call
      raise_error(error(errc::unsupported, std::string("strategy ") + to_string(S) + " was chosen but not compiled for this call"));
  });
}

/// Checks the arguments of a bulk scatter before anything is launched (throws calm::error).
template <strategy S, class Op, class K, class Values, class T, class Exec>
void check_bulk_arguments(char const* who, K const* keys, Values const& values, index_t n, T* table, index_t bins, scatter_options const& opt,
                          scatter_shape const& shape, Exec const& ex) {
  check_atomic_op<Op, T>();
  check_scatter_arguments(who, n, keys, values, table, bins);
  constexpr bool over_clusters = S == strategy::cluster_privatize && clusters_for<Exec, Op, T>();
  check_bulk_options(who, to_string(S), bins, opt.min_line_repeats, is_block_local(S), shape.fits_block, sizeof(T),
                     is_block_local(S) ? privatize_capacity<T>(ex) : 0, over_clusters ? cluster_capacity<T>(ex) : -1);
}

/// automatic on the device: the sampling finishes the walk (choice_program) and each strategy of
/// `reach` is launched behind it (launch_chosen); as one recorded graph where the exec records them.
template <unsigned Runs, class Op, class K, class VS, class T, class KeyMap, class Exec>
void launch_device_choice(tree_walk const& walk, unsigned reach, unsigned reads, sample_plan const& plan, line_merge_rule rule, Op op, K const* keys,
                          VS const& vals, index_t n, T* table, index_t bins, KeyMap const& key_map, bool counting, scatter_options const& opt,
                          Exec const& ex, recorder_of<Exec>* rec) {
  // the block level only where the walk reads it (on a table larger than a block the hopper tree reads it where
  // the keys are not clustered: keys that crowd a block but not a warp, where hot_key beats naive)
  bool const reads_block_level = tree_walk::reads_feature(reads, feature::block_level) || tree_walk::reads_feature(reads, feature::block_excess);
  // the line rule, where the choice may end at naive or peer_reduce: counted by the sampling, applied by the
  // finish; the line repeats counted also where the walk reads them
  merge_lines const rule_lines = merge_lines_of<Exec, K, VS, T>(rule, reach, keys, vals, opt.order);
  merge_lines const lines = sampled_lines_of<Exec, K, VS, T>(rule_lines, reads, keys, vals);
  line_merge_rule const device_rule = rule_lines.vec > 0 ? rule : line_merge_rule{};
  // the workspace: the sampling's meeting place and, where the walk reads the hot share, its counters (zero), then the choice
  std::size_t const hot_bytes = tree_walk::reads_feature(reads, feature::hot_share) ? static_cast<std::size_t>(collision_hot_slots) * 4 : 0;
  std::size_t const zeroed = sizeof(sample_meeting) + hot_bytes;
  auto const launches = [&](Exec const& e, unsigned char* ws) {
    auto* const meet = reinterpret_cast<sample_meeting*>(ws);
    auto* const hot = hot_bytes > 0 ? reinterpret_cast<std::uint32_t*>(ws + sizeof(sample_meeting)) : nullptr;
    auto* const decided = reinterpret_cast<strategy*>(ws + zeroed);
    launch_sample(keys, n, bins, plan, key_map, static_cast<collision_totals*>(nullptr), nullptr, 0, e, meet,
                  choice_program{&meet->sum, walk, decided, opt.chosen, device_rule}, reads_block_level, lines, hot);
    launch_chosen<Runs>(decided, reach, op, keys, vals, opt.order, n, table, bins, key_map, counting, overlapping(e));
  };
  auto const make_key = [&] {
    launch_key key = launch_key::of<Op, K, VS, T, KeyMap, Exec>();
    key.add(keys).add(vals).add(opt.order).add(n).add(table).add(bins).add(key_map).add(opt.chosen).add(plan).add(reach).add(walk.size);
    key.add(device_rule.min_line_repeats).add(lines.vec).add(lines.line_entries);
    for (int i = 0; i < walk.size; ++i)
      key.add(walk.nodes[i].threshold).add(walk.nodes[i].test).add(walk.nodes[i].left).add(walk.nodes[i].right).add(walk.nodes[i].leaf);
    return key;
  };
  launch_decided(ex, rec, make_key, zeroed + sizeof(strategy), zeroed, launches);
}

/// automatic's choice through Model's tree: the strategy to launch, or strategy::automatic where the
/// choice was finished on the device and its launches made (launch_device_choice). Runs and Samples:
/// the call's strategy_set (what it compiled).
template <class Model, unsigned Runs, bool Samples, class Op, class K, class VS, class T, class KeyMap, class Exec>
strategy choose_automatic(Op op, K const* keys, VS const& vals, index_t n, T* table, index_t bins, KeyMap const& key_map, scatter_options const& opt,
                          scatter_shape const& shape, line_merge_rule rule, Exec const& ex, recorder_of<Exec>* rec) {
  tree_view const tree = view_of(Model::nodes);
  auto const fit = [&](strategy s) { return fitting_strategy<Op, T, KeyMap>(s, opt, shape, ex); };
  int const start = walk_known(tree, shape);
  if (tree[start].left < 0) return fit(tree[start].leaf);  // no statistics needed
  if constexpr (!Samples) {
    return fit(tree[start].leaf);  // not reached: no walk of this call's shape tests a sampled statistic
  } else {
    if (opt.stats != nullptr || n == 0 || bins == 0) return fit(walk_tree(tree, shape, [&] { return opt.stats ? *opt.stats : collision_statistics{}; }));
    sample_plan const plan = plan_sample(keys, n, bins, opt.sample);
    tree_walk walk;
    bool const carried = make_walk(tree, shape, start, fit, walk);
    unsigned reads = 0;
    unsigned const reach = carried ? walk.reachable(&reads) : 0u;  // a walk that did not fit is not read
    bool const on_device = carried && (reach & ~device_choosable) == 0 && (reads & ~device_readable) == 0;
    if (!on_device) {
      collision_sample_options sample = opt.sample;  // line repeats, where read, as the direct scatter would meet them
      merge_lines const direct = direct_lines_of<Exec, K, VS, T>(keys, vals);
      bool const counts_lines = !carried || tree_walk::reads_feature(reads, feature::line_repeats);
      sample.line_vec = counts_lines ? direct.vec : 0, sample.line_entries = direct.line_entries;
      return fit(walk_tree(tree, shape, [&] { return sample_collisions(keys, n, bins, sample, key_map, ex); }));
    }
    launch_device_choice<Runs>(walk, reach, reads, plan, rule, op, keys, vals, n, table, bins, key_map, shape.counting, opt, ex, rec);
    return strategy::automatic;  // chosen on the device
  }
}

/// What a bulk scatter of strategy S compiles for its op, types, key map and exec (strategy_set).
template <strategy S, class Model, class Op, class Values, class T, class KeyMap, class Exec>
constexpr strategy_set bulk_set() {
  constexpr static_shape known{static_cast<int>(sizeof(T)), std::is_floating_point<T>::value, is_same_value<Values>::value, op_kind<Op>()};
  return compiled_set<S, Model>(known, std::is_same<KeyMap, identity_key>::value, clusters_for<Exec, Op, T>(), Exec::thread_tables);
}

/// Every bulk scatter comes here with its key map, the tree automatic walks (Model: the family's) and
/// the strategy S of the call (automatic, or forced): check, resolve, launch. Only what S can run is
/// compiled (strategy_set). rec: a plan's recorder (its decided calls as one recorded graph), or none;
/// decided: for S automatic, a strategy of the compiled set that the call runs instead of choosing
/// (a measuring plan's), or automatic.
template <class Model, strategy S, class Op, class K, class Values, class T, class KeyMap, class Exec>
strategy bulk_scatter(char const* who, Op op, K const* keys, Values values, index_t n, T* table, index_t bins, KeyMap const& key_map,
                      scatter_options const& opt, Exec const& ex, recorder_of<Exec>* rec = nullptr, strategy decided = strategy::automatic) {
  constexpr strategy_set set = bulk_set<S, Model, Op, Values, T, KeyMap, Exec>();
  check_scatter_sizes(who, n, bins);
  scatter_shape const shape = shape_of<Op, T>(n, bins, is_same_value<Values>::value, ex);
  check_bulk_arguments<S, Op>(who, keys, values, n, table, bins, opt, shape, ex);
  line_merge_rule const rule = line_merge_rule::resolved(opt.min_line_repeats, Exec::family, sizeof(K), sizeof(T),
                                                              static_cast<std::uint64_t>(bins) * sizeof(T));
  auto const vals = as_value_source<T>(values);
  if (opt.overwrite) fill_identity<Op>(table, bins, ex);
  strategy s = S;
  if constexpr (S == strategy::automatic) {
    s = decided != strategy::automatic ? decided : choose_automatic<Model, set.runs, set.samples>(op, keys, vals, n, table, bins, key_map, opt, shape, rule, ex, rec);
    if (s == strategy::automatic) {
      if (opt.skipped != nullptr) launch_count_outside(keys, n, bins, key_map, opt.skipped, ex);
      return s;
    }
  }
  if (n == 0) return s;
  if (bins == 0) {  // every key is outside the table
    if (opt.skipped != nullptr) launch_count_outside(keys, n, bins, key_map, opt.skipped, ex);
    return s;
  }
  launch_strategy<set.runs, S == strategy::automatic && set.samples>(s, op, keys, values, vals, opt.order, n, table, bins, key_map, shape.counting, ex);
  if (opt.skipped != nullptr) launch_count_outside(keys, n, bins, key_map, opt.skipped, ex);
  return s;
}

}  // namespace detail

/// table[keys[i]] = op(table[keys[i]], values[i]) for i < n, by strategy S: automatic (the default), the
/// one the device family's fitted tree picks from the table, the types, the op and (where the tree
/// asks) collision statistics sampled from the keys; or any strategy forced by name. The call compiles
/// what S can run: a forced strategy alone, or the strategies automatic's tree can reach for Op and T
/// (for_strategy turns a strategy known only at run time into S). values: a T const* of n values, or
/// calm::constant(v) for every item. Keys outside [0, bins) are skipped (counted into opt.skipped if
/// given). Throws calm::error before launching on a bad argument (null pointers, negative sizes, a
/// block-local strategy forced on a table too large for it), leaving the table as it was.
/// Asynchronous on a GPU (ex's stream), automatic included: where the tree asks for sampled statistics
/// (and opt.stats gives none), a small kernel samples the keys, its last block finishes the choice on
/// the device, and each strategy the choice may end at is launched behind it (a calm::scatter_plan
/// launches these as one recorded graph on CUDA when its call repeats). Returns the strategy that ran, or
/// strategy::automatic when the device chose (opt.chosen then receives it).
///
///   calm::scatter(calm::plus{}, keys, weights, n, table, bins);                            // automatic
///   calm::scatter<calm::strategy::peer_reduce>(calm::max{}, keys, values, n, table, bins);  // forced
template <strategy S = strategy::automatic, class Op, class K, class Values, class T, class Exec = default_exec>
strategy scatter(Op op, K const* keys, Values values, index_t n, T* table, index_t bins, scatter_options const& opt = {}, Exec const& ex = Exec{}) {
  static_assert(std::is_integral<K>::value, "scatter: keys must be integers (histogram_even bins samples of any type)");
  return detail::bulk_scatter<family_model<Exec::family>, S>("scatter", op, keys, values, n, table, bins, detail::identity_key{}, opt, ex);
}

/// hist[keys[i]] += 1 for i < n: scatter<S> with calm::plus and calm::constant(T(1)).
///
///   calm::histogram(keys, n, hist, 256);  // keys {3, 3, 5}: hist[3] += 2, hist[5] += 1
///   calm::histogram<calm::strategy::privatize>(keys, n, hist, 256);
template <strategy S = strategy::automatic, class K, class T, class Exec = default_exec>
strategy histogram(K const* keys, index_t n, T* hist, index_t bins, scatter_options const& opt = {}, Exec const& ex = Exec{}) {
  static_assert(std::is_integral<K>::value, "histogram: keys must be integers (histogram_even bins samples of any type)");
  return detail::bulk_scatter<family_model<Exec::family>, S>("histogram", plus{}, keys, constant(T(1)), n, hist, bins, detail::identity_key{}, opt, ex);
}

/// CUB's HistogramEven: `bins` bins of equal width over [lower, upper); hist[b] += 1 for each sample in
/// bin b, samples outside [lower, upper) (and NaNs) skipped. A sample x's bin is
/// floor((x - lower) * (bins / (upper - lower))) in double arithmetic, at most bins - 1 (a sample
/// within rounding of a bin edge may land on either side of it). Throws calm::error unless lower <
/// upper, both finite and upper - lower finite.
///
///   calm::histogram_even(samples, n, hist, 10, 0.0, 1.0);  // 0.25 goes to bin 2
template <strategy S = strategy::automatic, class Sample, class T, class Exec = default_exec>
strategy histogram_even(Sample const* samples, index_t n, T* hist, index_t bins, double lower, double upper, scatter_options const& opt = {},
                        Exec const& ex = Exec{}) {
  static_assert(std::is_arithmetic<Sample>::value, "histogram_even: samples must be numbers");
  require(lower < upper, errc::invalid_argument, "histogram_even: lower must be below upper");
  require(std::isfinite(lower) && std::isfinite(upper) && std::isfinite(upper - lower), errc::invalid_argument, [&] {
    return "histogram_even: the bounds [" + std::to_string(lower) + ", " + std::to_string(upper) + ") must be finite, and so must their width";
  });
  require(bins >= 1, errc::invalid_argument, "histogram_even: bins must be at least 1");
  detail::even_bin_key<Sample> const key_map{lower, upper, static_cast<double>(bins) / (upper - lower), bins};
  return detail::bulk_scatter<family_model<Exec::family>, S>("histogram_even", plus{}, samples, constant(T(1)), n, hist, bins, key_map, opt, ex);
}

}  // namespace calm
