// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/warp/group_reduce.hpp: reduce and scan values over groups of lanes given by peer masks
// (each lane holds the mask of its group), after 002's add_peers (stage 2, reduction sub-trees).
#pragma once

#include <type_traits>

#include "../../core/warp.hpp"

namespace calm {

/// A value that every lane passes identically (a +1 count, a constant weight). Strategies apply it
/// without exchanging values: a group of k lanes applies op to it k times in one update (k * v for
/// plus, v for min/max/and/or, v or nothing for xor).
template <class T>
struct same_value {
  T value;  ///< every lane's value
};
template <class T>
CALM_HD constexpr same_value<T> constant(T v) {
  return {v};
}
template <class V>
struct is_same_value : std::false_type {};
template <class T>
struct is_same_value<same_value<T>> : std::true_type {};

namespace detail {

/// v combined with itself k times under op (k >= 1), without a loop.
template <class Op, class T>
CALM_HD T repeat_scalar(Op op, T v, int k) {
  if constexpr (std::is_same<Op, plus>::value) return detail::wrapping_multiply(v, static_cast<T>(k));
  else if constexpr (std::is_same<Op, bit_xor>::value) return (k & 1) ? v : T(0);
  else return op(v, v);  // idempotent: v
}
template <class Op, class T, class K>
CALM_HD auto repeat(Op op, T v, K const& k) {
  return map([op, v](int n) { return repeat_scalar(op, v, n); }, k);
}

/// One atomic per active lane, unmerged: the fallback of every strategy (a same_value is unwrapped).
template <class Warp, class Op, class Scope, class A, class V>
CALM_HD void update_each(Warp const& w, Op op, Scope s, A const& addr, V const& value) {
  if constexpr (is_same_value<V>::value) atomic_update(w, op, s, addr, value.value);
  else atomic_update(w, op, s, addr, value);
}
template <class Warp, class Op, class Scope, class A, class V>
CALM_HD auto fetch_each(Warp const& w, Op op, Scope s, A const& addr, V const& value) {
  if constexpr (is_same_value<V>::value) return atomic_fetch_update(w, op, s, addr, value.value);
  else return atomic_fetch_update(w, op, s, addr, value);
}

/// The calling lane's own bit.
template <class Warp>
CALM_HD auto own_lane(Warp const& w) {
  return lanes_le(w) ^ lanes_lt(w);
}

}  // namespace detail

/// Reduce x over each group (peers: the lanes of the caller's group, itself included, all active).
/// The group's lowest lane ends with op over the whole group; other lanes hold partial values.
/// 002 stage 2: each round a lane folds in the next remaining peer above it, and lanes whose value
/// was used drop out; ceil(log2(group size)) rounds, one shuffle and one ballot each.
template <class Warp, class Op, class M, class V>
CALM_HD V reduce_peers(Warp const& w, Op op, M const& peers, V x) {
  auto rank = popc(w, peers & lanes_lt(w));  // position among the peers
  M rest = peers & lanes_gt(w);              // peers above this lane, not yet folded in
  while (any(w, rest != M(0))) {
    auto const next = ffs(w, rest) - 1;  // nearest remaining peer above, -1 if none
    auto const has_next = next >= 0;
    V const t = shuffle(w, x, select(has_next, next, lane_id(w)));
    x = select(has_next, map(op, x, t), x);
    rest = rest & ballot(w, (rank & 1) == 0);  // odd ranks were just folded into their left neighbour
    rank = rank >> 1;
  }
  return x;
}

/// Inclusive scan of x in lane order within each group (pointer jumping: each round a lane adds the
/// partial result of the peer 2^k places before it). ceil(log2(group size)) rounds.
template <class Warp, class Op, class M, class V>
CALM_HD V scan_peers(Warp const& w, Op op, M const& peers, V x) {
  auto prev = fls(w, peers & lanes_lt(w)) - 1;  // the peer just below, -1 if none
  while (any(w, prev >= 0)) {
    auto const has_prev = prev >= 0;
    auto const src = select(has_prev, prev, lane_id(w));
    V const t = shuffle(w, x, src);
    auto const before = shuffle(w, prev, src);
    x = select(has_prev, map(op, t, x), x);
    prev = select(has_prev, before, prev);
  }
  return x;
}

}  // namespace calm
