// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/warp/known_keys.hpp: the lanes of one or two keys known before the update (a block's hot keys)
// merged by a ballot and a butterfly per key, the others naive (calm's own; 002's reduce_peers on a partial warp).
#pragma once

#include "../../core/ops.hpp"
#include "../../core/warp.hpp"
#include "group_reduce.hpp"
#include "peer_groups.hpp"
#include "update.hpp"

namespace calm {
namespace detail {

/// The merge of a block whose probe found hot keys that do not call for merging every lane
/// (adaptive_merge::known_keys): the lanes of `first` merge, and those of `second` (first again where
/// one key merges), found by a ballot each; the others update on their own.
struct known_keys_merge {
  index_t first = -1, second = -1;
};

/// A strategy whose groups were found before the update (known_keys_merge's ballots).
template <class Warp>
struct preset_groups {
  peer_groups<Warp> groups;
  template <class W, class A>
  CALM_HD peer_groups<Warp> group(W const&, A const&) const { return groups; }
};

/// known_keys_merge's update of lane key `key` (its table entry `addr`, value v): the lanes of each
/// known key combine their values and the lowest applies the total at its own entry, in its own copy
/// of the table (every copy is summed at the end); the other lanes update on their own. A full warp
/// combines by a butterfly per key over every lane (the others give op's identity: log2(W) shuffles);
/// a partial warp, whose missing lanes cannot take part in a shuffle, by reduce_peers. On an H100 the
/// butterfly made floats into 6,144 bins with half the keys on one 3.0x faster than peer_reduce,
/// where reduce_peers's rounds had made them 1.9x faster (perf/results/cuda-h100-2026-11-27-known-keys.md).
template <class Warp, class Op, class Scope, class A, class K, class V>
CALM_HD void update_known_keys(Warp const& w, Op op, Scope s, A const& addr, K const& key, V const& v, known_keys_merge const& m) {
  using T = element_t<A>;
  using M = typename Warp::lane_mask;
  constexpr int W = Warp::size;
  index_t const first = m.first, second = m.second == m.first ? index_t(-1) : m.second;
  auto const k = map([](auto kk) { return static_cast<index_t>(kk); }, key);
  auto const is_first = k == first;
  auto const is_second = k == second;
  M const m1 = ballot(w, is_first), m2 = ballot(w, is_second);
  if constexpr (!is_same_value<V>::value) {  // a count never merges by known keys (adaptive_merge::merge_for)
    if (active_mask(w) == static_cast<M>(~M(0) >> (8 * sizeof(M) - W))) {
      auto const x = as_values<T>(w, v);
      auto const total = [&](index_t kk0) {
        auto t = map([kk0](index_t kk, T y) { return kk == kk0 ? y : Op::template identity<T>(); }, k, x);
        for (int d = 1; d < W; d <<= 1) t = map(op, t, shuffle_xor(w, t, d));
        return t;
      };
      auto mine = x;
      if (m1 != M(0)) mine = select(is_first, total(first), mine);  // a warp without the key skips its butterfly
      if (m2 != M(0)) mine = select(is_second, total(second), mine);
      auto const below = lanes_lt(w);
      auto const applies = map([m1, m2](bool f, bool sc, M lt) { return f ? (m1 & lt) == M(0) : !sc || (m2 & lt) == M(0); }, is_first, is_second, below);
      when(w, applies, [&](auto const& l) { atomic_update(l, op, s, addr, mine); });
      return;
    }
  }
  auto const peers = select(is_first, m1, select(is_second, m2, own_lane(w)));
  update(w, op, s, addr, v, preset_groups<Warp>{peer_groups<Warp>{peers, (m1 | m2) != M(0)}});
}

}  // namespace detail
}  // namespace calm
