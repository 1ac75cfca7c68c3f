// calm/algorithms/scatter.hpp: the bulk front door: calm::scatter, calm::histogram and calm::histogram_even
// over whole arrays, every strategy forcible by name, strategy::automatic by the fitted tree (000 §3.3).
#pragma once

#include <string>
#include <type_traits>

#include "../core/error.hpp"
#include "../core/exec.hpp"
#include "choose.hpp"
#include "cluster_privatize.hpp"
#include "collision_stats.hpp"
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
  /// Statistics to choose from (strategy::automatic) instead of sampling the keys, which waits for the
  /// stream. Ignored by forced strategies.
  collision_statistics const* stats = nullptr;
  collision_sample_options sample = {};
};

namespace detail {

template <class Op>
constexpr int op_kind() {
  if constexpr (std::is_same<Op, plus>::value) return 0;
  else if constexpr (std::is_same<Op, min>::value || std::is_same<Op, max>::value) return 1;
  else return 2;
}

/// The strategy a request comes to: automatic resolved by the tree (sampling the keys if it asks),
/// strategies the table cannot take replaced by the nearest that can.
template <class T, class K, class KeyMap, class Exec>
strategy resolve_strategy(scatter_options const& opt, scatter_shape const& shape, K const* keys, index_t n, KeyMap const& key_map, Exec const& ex) {
  strategy s = opt.strategy;
  if (s == strategy::automatic) {
    s = choose_strategy(Exec::family, shape, [&] {
      if (opt.stats) return *opt.stats;
      if (n == 0 || shape.bins == 0) return collision_statistics{};
      return sample_collisions(keys, n, shape.bins, opt.sample, key_map, ex);
    });
    bool const warp_only = opt.order != nullptr;
    if (warp_only && s >= strategy::privatize) s = strategy::peer_reduce;
    if ((s == strategy::privatize || s == strategy::privatize_peer_reduce) && !shape.fits_block) s = strategy::hot_key;
    if (s == strategy::cluster_privatize && shape.bins > cluster_capacity<T>(ex)) s = strategy::hot_key;
    if (s == strategy::automatic) s = strategy::peer_reduce;
  }
  return s;
}

/// Every bulk scatter comes here with its key map: check, resolve, launch.
template <class Op, class K, class Values, class T, class KeyMap, class Exec>
strategy bulk_scatter(char const* who, Op op, K const* keys, Values values, index_t n, T* table, index_t bins, KeyMap const& key_map,
                      scatter_options const& opt, Exec const& ex) {
  check_atomic_op<Op, T>();
  check_scatter_arguments(who, n, keys, values, table, bins);
  std::string const w(who);
  int const si = static_cast<int>(opt.strategy);
  require(si >= 0 && si < strategy_count, errc::invalid_argument, w + ": unknown strategy " + std::to_string(si));
  scatter_shape shape;
  shape.bins = bins;
  shape.value_bytes = static_cast<int>(sizeof(T));
  shape.is_float = std::is_floating_point<T>::value;
  shape.counting = is_same_value<Values>::value;
  shape.op_kind = op_kind<Op>();
  shape.fits_block = bins <= privatize_capacity<T>(ex);
  shape.copies = shape.fits_block ? replication_for(bins, sizeof(T), ex.replication_budget_bytes(), shape.counting ? 8 : 32) : 0;
  bool const block_local = opt.strategy == strategy::privatize || opt.strategy == strategy::privatize_peer_reduce;
  require(!block_local || shape.fits_block, errc::out_of_range,
          w + ": strategy " + to_string(opt.strategy) + " needs the table in one block's memory; " + std::to_string(bins) + " entries of " +
              std::to_string(sizeof(T)) + " bytes exceed " + std::to_string(privatize_capacity<T>(ex)));
  if constexpr (clusters_for<Exec, Op, T>() && std::is_same<KeyMap, identity_key>::value)
    require(opt.strategy != strategy::cluster_privatize || bins <= cluster_capacity<T>(ex), errc::out_of_range,
            w + ": strategy cluster_privatize needs the table in one cluster's memory; " + std::to_string(bins) + " entries exceed " +
                std::to_string(cluster_capacity<T>(ex)));
  strategy const s = resolve_strategy<T>(opt, shape, keys, n, key_map, ex);
  if (n == 0 || bins == 0) return s;
  auto const vals = as_value_source<T>(values);
  using VS = std::decay_t<decltype(vals)>;
  privatize_options popt;
  switch (s) {
    case strategy::automatic:  // resolved above
    case strategy::naive: launch_direct_scatter(op, keys, vals, opt.order, n, table, bins, key_map, naive{}, ex); break;
    case strategy::scan_reduce: launch_direct_scatter(op, keys, vals, opt.order, n, table, bins, key_map, scan_reduce{}, ex); break;
    case strategy::vote_reduce: launch_direct_scatter(op, keys, vals, opt.order, n, table, bins, key_map, vote_reduce<1>{}, ex); break;
    case strategy::peer_reduce: launch_direct_scatter(op, keys, vals, opt.order, n, table, bins, key_map, peer_reduce{}, ex); break;
    case strategy::privatize:
      launch_privatized_scatter(op, keys, vals, n, table, plan_privatize<T>(bins, popt, ex, shape.counting), key_map, naive{}, ex);
      break;
    case strategy::privatize_peer_reduce:
      launch_privatized_scatter(op, keys, vals, n, table, plan_privatize<T>(bins, popt, ex, shape.counting), key_map, peer_reduce{}, ex);
      break;
    case strategy::hot_key:
    case strategy::cluster_privatize:
      if constexpr (std::is_same<KeyMap, identity_key>::value) {
        if (s == strategy::hot_key) hot_key_scatter(op, keys, values, n, table, bins, hot_key_options{}, ex);
        else cluster_privatize_scatter(op, keys, values, n, table, bins, cluster_options{}, naive{}, ex);
      } else {  // even binning: the bins are few enough for a block's memory, or the samples go straight to the table
        launch_direct_scatter(op, keys, vals, opt.order, n, table, bins, key_map, peer_reduce{}, ex);
      }
      break;
  }
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
/// table as it was. Asynchronous on a GPU (ex's stream), except that automatic waits for the sampled
/// statistics when the tree needs them and opt.stats does not give them. Returns the strategy that ran.
///
///   calm::scatter(calm::plus{}, keys, weights, n, table, bins);                 // automatic
///   calm::scatter(calm::max{}, keys, values, n, table, bins, {calm::strategy::peer_reduce});
template <class Op, class K, class Values, class T, class Exec = default_exec>
strategy scatter(Op op, K const* keys, Values values, index_t n, T* table, index_t bins, scatter_options const& opt = {}, Exec const& ex = Exec{}) {
  static_assert(std::is_integral<K>::value, "scatter: keys must be integers (histogram_even bins samples of any type)");
  return detail::bulk_scatter("scatter", op, keys, values, n, table, bins, detail::identity_key{}, opt, ex);
}

/// hist[keys[i]] += 1 for i < n: scatter with calm::plus and calm::constant(T(1)).
///
///   calm::histogram(keys, n, hist, 256);  // keys {3, 3, 5}: hist[3] += 2, hist[5] += 1
template <class K, class T, class Exec = default_exec>
strategy histogram(K const* keys, index_t n, T* hist, index_t bins, scatter_options const& opt = {}, Exec const& ex = Exec{}) {
  static_assert(std::is_integral<K>::value, "histogram: keys must be integers (histogram_even bins samples of any type)");
  return detail::bulk_scatter("histogram", plus{}, keys, constant(T(1)), n, hist, bins, detail::identity_key{}, opt, ex);
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
  return detail::bulk_scatter("histogram_even", plus{}, samples, constant(T(1)), n, hist, bins, key_map, opt, ex);
}

}  // namespace calm
