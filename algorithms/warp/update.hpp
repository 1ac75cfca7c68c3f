// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/warp/update.hpp: the per-lane front door. Each lane of a warp calls update (or update_n,
// fetch_update) once; the Strategy decides how the warp's lanes are merged before touching memory.
#pragma once

#include <type_traits>

#include "naive.hpp"
#include "peer_reduce.hpp"
#include "scan_reduce.hpp"
#include "vote_reduce.hpp"

namespace calm {

// Strategies: naive, scan_reduce, vote_reduce<M>, peer_reduce. Each has group(w, addr), which finds
// how the warp's lanes merge (once, whatever the number of values), and the functions below apply it.

/// How switch_merge merges a warp's lanes: not at all (naive), runs of neighbouring lanes (scan_reduce)
/// or every group of equal keys (peer_reduce).
enum class merge_kind { none, runs, peers };

/// naive, scan_reduce or peer_reduce, the one `kind` says (uniform over the warp), picked at run time: one
/// program for the three, as peer_reduce_if is for two. strategy::automatic launches it behind a choice
/// on the device that may end at scan_reduce (detail::chosen_merge_program).
struct switch_merge {
  merge_kind kind = merge_kind::peers;  ///< the merge this launch runs
};

namespace detail {

/// f(strategy), or for switch_merge f of the strategy its kind names.
template <class Strategy, class F>
CALM_HD decltype(auto) with_strategy(Strategy const& s, F&& f) {
  return f(s);
}
template <class F>
CALM_HD decltype(auto) with_strategy(switch_merge const& s, F&& f) {
  if (s.kind == merge_kind::runs) return f(scan_reduce{});
  return f(peer_reduce_if{s.kind == merge_kind::peers});
}

/// f of the strategy s stands for, fixed at compile time: for switch_merge naive, scan_reduce or
/// peer_reduce, for peer_reduce_if naive or peer_reduce, for any other s itself.
template <class Strategy, class F>
CALM_HD void with_fixed_strategy(Strategy const& s, F&& f) {
  f(s);
}
template <class F>
CALM_HD void with_fixed_strategy(peer_reduce_if const& s, F&& f) {
  if (s.merge) f(peer_reduce{});
  else f(naive{});
}
template <class F>
CALM_HD void with_fixed_strategy(switch_merge const& s, F&& f) {
  if (s.kind == merge_kind::runs) f(scan_reduce{});
  else if (s.kind == merge_kind::peers) f(peer_reduce{});
  else f(naive{});
}

/// Whether a strategy is picked at run time (switch_merge, peer_reduce_if).
template <class Strategy>
struct picks_at_run_time : std::integral_constant<bool, std::is_same<Strategy, switch_merge>::value || std::is_same<Strategy, peer_reduce_if>::value> {};

template <class Warp, class Op, class Scope, class A, class V>
CALM_HD void apply(Warp const& w, peer_groups<Warp> const& g, Op op, Scope s, A const& addr, V const& v) {
  apply_groups(w, g, op, s, addr, v);
}
template <class Warp, class Op, class Scope, class A, class V>
CALM_HD void apply(Warp const& w, lane_runs<Warp> const& r, Op op, Scope s, A const& addr, V const& v) {
  apply_runs(w, r, op, s, addr, v);
}
template <class Warp, class Op, class Scope, class A, class V>
CALM_HD auto fetch(Warp const& w, peer_groups<Warp> const& g, Op op, Scope s, A const& addr, V const& v) {
  return fetch_groups(w, g, op, s, addr, v);
}
template <class Warp, class Op, class Scope, class A, class V>
CALM_HD auto fetch(Warp const& w, lane_runs<Warp> const& r, Op op, Scope s, A const& addr, V const& v) {
  return fetch_runs(w, r, op, s, addr, v);
}

/// The element type behind an address (T* on a GPU, lane_array<T*, W> on the host).
template <class A>
using element_t = std::remove_pointer_t<std::decay_t<decltype(calm::detail::lane_get(std::declval<A const&>(), 0))>>;

/// The values as lane values of the table's type: per-lane values converted, a value passed alike by
/// every lane broadcast (a same_value stays one).
template <class T, class Warp, class V>
CALM_HD auto as_values(Warp const&, V const& v) {
  if constexpr (is_same_value<V>::value) return same_value<T>{static_cast<T>(v.value)};
  else if constexpr (is_lane_array<V>::value) return map([](auto x) { return static_cast<T>(x); }, v);
  else return varying<Warp, T>(static_cast<T>(v));
}

/// An address as a lane value: per-lane addresses as they are, one address shared by every lane
/// (a counter, a block-local accumulator) broadcast.
template <class Warp, class A>
CALM_HD auto as_addresses(Warp const&, A const& addr) {
  if constexpr (is_lane_array<A>::value) return addr;
  else return varying<Warp, A>(addr);
}

}  // namespace detail

/// *addr = op(*addr, value) for every active lane, merging lanes as Strategy says, with atomics at
/// `scope`. Any active mask works (ragged tails, sparse lanes in a `when`). value may be
/// calm::constant(v) when every lane passes the same v (a histogram's +1): groups then apply
/// k * v (or v) without exchanging values.
///
///   calm::update<calm::peer_reduce>(w, calm::plus{}, calm::scope::device{}, table + key, weight);
template <class Strategy = peer_reduce, class Warp, class Op, class Scope, class A, class V>
CALM_HD void update(Warp const& w, Op op, Scope s, A const& addr, V const& value, Strategy strategy = {}) {
  using T = detail::element_t<A>;
  check_atomic_op<Op, T>();
  auto const a = detail::as_addresses(w, addr);
  detail::with_strategy(strategy, [&](auto const& st) { detail::apply(w, st.group(w, a), op, s, a, detail::as_values<T>(w, value)); });
}

/// As update, with the lanes grouped by `key` instead of by their addresses: lanes' keys must be equal
/// exactly where their addresses are (an entry's index into one table of at most 2^32 entries, as 4
/// bytes). A 4-byte key is cheaper to match than an 8-byte address: on an H200 a
/// histogram of 2^24 keys into 300,000 entries merged by peer_reduce ran 192 us instead of 287 on uniform
/// keys (naive: 188) and 34 instead of 41 on sorted keys (perf/results/cuda-h200-2026-11-28-peer-match-width.txt).
///
///   calm::update_keyed<calm::peer_reduce>(w, calm::plus{}, calm::scope::device{}, table + key, std::uint32_t(key), weight);
template <class Strategy = peer_reduce, class Warp, class Op, class Scope, class A, class Key, class V>
CALM_HD void update_keyed(Warp const& w, Op op, Scope s, A const& addr, Key const& key, V const& value, Strategy strategy = {}) {
  using T = detail::element_t<A>;
  check_atomic_op<Op, T>();
  auto const a = detail::as_addresses(w, addr);
  detail::with_strategy(strategy, [&](auto const& st) { detail::apply(w, st.group(w, key), op, s, a, detail::as_values<T>(w, value)); });
}

/// d components per lane: lane i updates addr[c] with values[c] for c < d (addr: the lane's first
/// component, e.g. table + key * d). The grouping is found once and used for every component.
template <class Strategy = peer_reduce, class Warp, class Op, class Scope, class A, class V>
CALM_HD void update_n(Warp const& w, Op op, Scope s, A const& addr, V const* values, int d, Strategy strategy = {}) {
  using T = detail::element_t<A>;
  check_atomic_op<Op, T>();
  auto const a = detail::as_addresses(w, addr);
  detail::with_strategy(strategy, [&](auto const& st) {
    auto const plan = st.group(w, a);
    for (int c = 0; c < d; ++c) detail::apply(w, plan, op, s, a + c, detail::as_values<T>(w, values[c]));
  });
}

/// As update, and each lane gets the value *addr had before its own update took effect, as if the
/// lanes' naive atomics ran in some order: the lanes merged into one group run back to back in lane
/// order (one atomic fetches for the group and the others get prefixes), so warp-aggregated allocation
/// works: calm::fetch_update(w, calm::plus{}, s, counter, calm::constant(1u)) hands out distinct slots.
template <class Strategy = peer_reduce, class Warp, class Op, class Scope, class A, class V>
CALM_HD auto fetch_update(Warp const& w, Op op, Scope s, A const& addr, V const& value, Strategy strategy = {}) {
  using T = detail::element_t<A>;
  check_atomic_op<Op, T>();
  auto const a = detail::as_addresses(w, addr);
  return detail::with_strategy(strategy, [&](auto const& st) { return detail::fetch(w, st.group(w, a), op, s, a, detail::as_values<T>(w, value)); });
}

}  // namespace calm
