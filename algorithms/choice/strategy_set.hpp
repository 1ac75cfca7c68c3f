// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/choice/strategy_set.hpp: which strategies a bulk call compiles: a forced strategy alone, or the
// leaves automatic's fitted tree (000 §3.3) can reach for the op and the types known at compile time.
#pragma once

#include <string>
#include <type_traits>

#include "../../core/error.hpp"
#include "choose.hpp"

namespace calm {

/// A strategy as a type: what calm::scatter<S>, calm::histogram<S> and for_strategy hand over.
template <strategy S>
using strategy_constant = std::integral_constant<strategy, S>;

/// f(strategy_constant<s>{}) for a strategy known only at run time. It instantiates f for every
/// strategy: for tests and benchmarks that sweep strategies. A call site that names its strategy
/// (calm::histogram<calm::strategy::privatize>(...)) compiles that one alone.
///
///   calm::for_strategy(s, [&](auto S) { calm::histogram<S()>(keys, n, hist, bins); });
template <class F>
decltype(auto) for_strategy(strategy s, F&& f) {
  switch (s) {
    case strategy::automatic: return f(strategy_constant<strategy::automatic>{});
    case strategy::naive: return f(strategy_constant<strategy::naive>{});
    case strategy::scan_reduce: return f(strategy_constant<strategy::scan_reduce>{});
    case strategy::vote_reduce: return f(strategy_constant<strategy::vote_reduce>{});
    case strategy::peer_reduce: return f(strategy_constant<strategy::peer_reduce>{});
    case strategy::privatize: return f(strategy_constant<strategy::privatize>{});
    case strategy::privatize_peer_reduce: return f(strategy_constant<strategy::privatize_peer_reduce>{});
    case strategy::hot_key: return f(strategy_constant<strategy::hot_key>{});
    case strategy::cluster_privatize: return f(strategy_constant<strategy::cluster_privatize>{});
    case strategy::privatize_adaptive: return f(strategy_constant<strategy::privatize_adaptive>{});
    case strategy::thread_private: return f(strategy_constant<strategy::thread_private>{});
  }
  raise_error(error(errc::invalid_argument, "unknown strategy " + std::to_string(static_cast<int>(s))));
}

/// A fitted tree as a type (Model::nodes, a well_formed array of tree_node), so that the strategies
/// its walks can reach are known at compile time: family_model<F> for each device family's tree.
template <device_family F>
struct family_model {
  static constexpr auto& nodes = models::hopper;  ///< the GPUs' tree (fitted on Hopper)
};
/// The host's tree.
template <>
struct family_model<device_family::host> {
  static constexpr auto& nodes = models::host;  ///< the host's tree
};

/// The features of a scatter known at compile time: from its op and types.
struct static_shape {
  int value_bytes = 4;    ///< sizeof an entry
  bool is_float = false;  ///< floating-point entries
  bool counting = false;  ///< the same value for every key
  int op_kind = 0;        ///< 0 plus, 1 min or max, 2 a bit operation
};

namespace detail {

/// Whether f is known at compile time for s, and its value (as known_value gives it at run time).
constexpr bool static_value(feature f, static_shape const& s, double& v) {
  switch (f) {
    case feature::value_bytes: v = s.value_bytes; return true;
    case feature::is_float: v = s.is_float; return true;
    case feature::counting: v = s.counting; return true;
    case feature::op_kind: v = s.op_kind; return true;
    default: return false;
  }
}

/// The leaves (bits) of Model's tree below node i that some call of shape s can reach, and (`sampled`)
/// whether a walk from there can reach a test of a sampled statistic.
template <class Model>
constexpr unsigned tree_leaves(static_shape const& s, bool& sampled, int i = 0) {
  tree_node const& t = Model::nodes[i];
  if (t.left < 0) return strategy_bit(t.leaf);
  if (is_sampled(t.test)) sampled = true;
  double v = 0.0;
  if (static_value(t.test, s, v)) return tree_leaves<Model>(s, sampled, v <= t.threshold ? t.left : t.right);
  return tree_leaves<Model>(s, sampled, t.left) | tree_leaves<Model>(s, sampled, t.right);
}

/// Every strategy that fitting_strategy may turn one of `leaves` into (bits): the closure of its rules.
/// plain_keys: the keys index the table as they are (identity_key); clusters: clusters_for the call;
/// thread_tables: the exec's (a block is a CPU thread with a table of its own).
constexpr unsigned fitted_reach(unsigned leaves, bool plain_keys, bool clusters, bool thread_tables) {
  constexpr unsigned block_local = strategy_bit(strategy::privatize) | strategy_bit(strategy::privatize_peer_reduce) | strategy_bit(strategy::privatize_adaptive);
  constexpr unsigned beyond_warp = block_local | strategy_bit(strategy::hot_key) | strategy_bit(strategy::cluster_privatize);
  constexpr unsigned cached = strategy_bit(strategy::hot_key) | strategy_bit(strategy::cluster_privatize);
  unsigned r = leaves;
  if (reaches(r, strategy::automatic)) r = (r & ~strategy_bit(strategy::automatic)) | strategy_bit(strategy::peer_reduce);
  if (reaches(r, strategy::thread_private)) {
    r |= strategy_bit(strategy::peer_reduce) | strategy_bit(strategy::naive);  // in a set_scatter order; too large a table
    if (!thread_tables) r = (r & ~strategy_bit(strategy::thread_private)) | strategy_bit(strategy::privatize);
  }
  if (r & beyond_warp) r |= strategy_bit(strategy::peer_reduce);  // in a set_scatter order
  if (r & block_local) r |= strategy_bit(strategy::hot_key);       // a table larger than a block
  if (reaches(r, strategy::cluster_privatize)) {
    r |= strategy_bit(strategy::hot_key);  // a table larger than a cluster
    if (!clusters) r &= ~strategy_bit(strategy::cluster_privatize);
  }
  if (!plain_keys && (r & cached)) r = (r & ~cached) | strategy_bit(strategy::peer_reduce);
  return r;
}

/// What a bulk call compiles (a strategy_set): the strategies it can run (`runs`, bits), and whether it
/// may sample the keys to finish automatic's walk.
struct strategy_set {
  unsigned runs = 0;
  bool samples = false;
  constexpr bool has(strategy s) const { return reaches(runs, s); }
};

/// The strategies automatic compiles for a call of shape s through Model's tree.
template <class Model>
constexpr strategy_set automatic_set(static_shape const& s, bool plain_keys, bool clusters, bool thread_tables) {
  bool sampled = false;
  unsigned const leaves = tree_leaves<Model>(s, sampled);
  return {fitted_reach(leaves, plain_keys, clusters, thread_tables), sampled};
}

/// What a call forced to strategy S compiles; automatic's set where S is automatic.
template <strategy S, class Model>
constexpr strategy_set compiled_set(static_shape const& s, bool plain_keys, bool clusters, bool thread_tables) {
  if constexpr (S == strategy::automatic) return automatic_set<Model>(s, plain_keys, clusters, thread_tables);
  else return {strategy_bit(S), false};
}

}  // namespace detail
}  // namespace calm
