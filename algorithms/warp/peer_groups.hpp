// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/warp/peer_groups.hpp: apply an update given a grouping of the warp's lanes into peer
// groups: reduce each group (002 add_peers), one atomic per group from its lowest lane.
#pragma once

#include "group_reduce.hpp"

namespace calm {

/// A grouping of the active lanes: each lane's peers (itself included). Singletons update naively.
template <class Warp>
struct peer_groups {
  varying<Warp, typename Warp::lane_mask> peers;  ///< each lane's group, as a mask
  bool merged;  ///< uniform: false when every group is a single lane (skip the reduction)
};

namespace detail {

template <class Warp, class Op, class Scope, class A, class V>
CALM_HD void apply_groups(Warp const& w, peer_groups<Warp> const& g, Op op, Scope s, A const& addr, V const& value) {
  if (!g.merged) return update_each(w, op, s, addr, value);
  auto const leader = (g.peers & lanes_lt(w)) == decltype(g.peers)(0);
  if constexpr (is_same_value<V>::value) {
    auto const total = repeat(op, value.value, popc(w, g.peers));
    when(w, leader, [&](auto const& l) { atomic_update(l, op, s, addr, total); });
  } else {
    auto const total = reduce_peers(w, op, g.peers, value);
    when(w, leader, [&](auto const& l) { atomic_update(l, op, s, addr, total); });
  }
}

/// The fetch form: the group's highest lane applies the group's total and fetches the old value; each
/// lane gets op(old, values of the group's lanes below it), as if the group's naive atomics ran back to
/// back in lane order.
template <class Warp, class Op, class Scope, class A, class V>
CALM_HD auto fetch_groups(Warp const& w, peer_groups<Warp> const& g, Op op, Scope s, A const& addr, V const& value) {
  if (!g.merged) return fetch_each(w, op, s, addr, value);
  auto const below = g.peers & lanes_lt(w);
  auto const last = fls(w, g.peers) - 1;
  auto const is_last = lane_id(w) == last;
  // inclusive and exclusive prefixes of the caller within its group
  auto incl = [&] {
    if constexpr (is_same_value<V>::value) return repeat(op, value.value, popc(w, below) + 1);
    else return scan_peers(w, op, g.peers, value);
  }();
  using T = std::decay_t<decltype(incl)>;
  T old = incl;
  when(w, is_last, [&](auto const& l) { old = select(is_last, atomic_fetch_update(l, op, s, addr, incl), old); });
  old = shuffle(w, old, last);
  auto const has_below = below != decltype(below)(0);
  T excl;
  if constexpr (is_same_value<V>::value) {
    excl = repeat(op, value.value, select(has_below, popc(w, below), 1));
  } else {
    auto const prev = fls(w, below) - 1;
    excl = shuffle(w, incl, select(has_below, prev, lane_id(w)));
  }
  return select(has_below, map(op, old, excl), old);
}

}  // namespace detail
}  // namespace calm
