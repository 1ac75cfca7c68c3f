// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/warp/scan_reduce.hpp: merge runs of equal keys in neighbouring lanes by a log-step
// segmented reduction; the last lane of each run does one atomic. Follows 000 section 3.1, Alg. 1.
#pragma once

#include "group_reduce.hpp"
#include "../choice/thresholds.hpp"

namespace calm {

/// The runs of a warp: maximal sets of consecutive active lanes with equal keys.
template <class Warp>
struct lane_runs {
  using mask_t = typename Warp::lane_mask;  ///< the warp's lane mask
  varying<Warp, bool> head;  ///< the lane starts a run
  mask_t heads;              ///< the lanes that start a run
  mask_t tails;              ///< the lanes that end one
  bool reduce = false;          ///< uniform: a run reaches the threshold (Alg. 1 lines 10-15)
  bool reduce_counted = false;  ///< uniform: merge where every lane adds the same value (no scan needed)
};

/// Alg. 1 at warp scope. Example (000 Fig. 4, 8 lanes, keys 0 1 1 1 3 3 3 3, value 1): lane 0 adds 1
/// to A[0], lane 3 adds 3 to A[1], lane 7 adds 4 to A[3]; two reduction steps.
/// Differences from the text: a lane stops at its run's first lane, found from head flags carried along
/// the scan, rather than at the first distance-2^i key mismatch, which double-counts when a key comes
/// back after a gap (keys A B A A A). The pre-check is exact: some run has at least `threshold` lanes.
/// threshold: 0 (default) solves inequality (1) with the backend's measured set-up cost
/// (Warp::scan_reduce_setup_steps): a run of 6 lanes on CUDA. Where every lane adds the same value
/// (calm::constant, a histogram's +1) a run's total is its length times the value, with no scan steps:
/// the grouping is paid either way and the tail's one atomic never costs more than the run's own, so
/// every run merges (on an H200 a histogram of sorted keys into 5,000,000 entries at 2^26 keys, runs of
/// 3-4 lanes, went from 271 to 161 us: perf/results/cuda-h200-2026-11-29-scan-counted.md). A threshold
/// given applies to both; 1 always reduces.
struct scan_reduce {
  int threshold = 0;  ///< the lanes a run needs to be merged (0: the backend's measured threshold)

  /// The warp's runs of equal addresses, and whether to merge them.
  template <class Warp, class A>
  CALM_HD lane_runs<Warp> group(Warp const& w, A const& addr) const {
    using mask_t = typename Warp::lane_mask;
    mask_t const active = active_mask(w);
    auto const own = detail::own_lane(w);
    auto const prev_active = ((own >> 1) & active) != decltype(own)(0);
    auto const prev_addr = shuffle_up(w, addr, 1);
    lane_runs<Warp> r;
    r.head = select(prev_active, prev_addr != addr, true);
    r.heads = ballot(w, r.head);
    mask_t const breaks = static_cast<mask_t>(r.heads | ~active);  // a run cannot continue into these lanes
    r.tails = static_cast<mask_t>((breaks >> 1) | (mask_t(1) << (Warp::size - 1))) & active;
    int const need = threshold > 0 ? threshold : scan_reduce_threshold(Warp::scan_reduce_setup_steps);
    if (need <= 1) {
      r.reduce = true;
    } else if (need > Warp::size) {
      r.reduce = false;  // no run can be that long
    } else {
      // a run of `need` lanes ends at lane t iff none of lanes t - need + 2 .. t starts a run or is idle
      auto const window = lanes_le(w) & ~(lanes_le(w) >> (need - 1));
      r.reduce = any(w, (window & breaks) == decltype(own)(0));
    }
    r.reduce_counted = threshold > 0 ? r.reduce : true;
    return r;
  }
};

namespace detail {

/// Segmented inclusive scan over runs: each lane ends with op over its run's lanes up to itself.
template <class Warp, class Op, class V>
CALM_HD V scan_runs(Warp const& w, lane_runs<Warp> const& r, Op op, V x) {
  auto done = r.head;  // the scan has reached the lane's run head
  for (int d = 1; d < Warp::size; d <<= 1) {
    if (all(w, done)) break;  // Alg. 1 line 22: every lane has crossed its run boundary
    V const t = shuffle_up(w, x, d);
    auto const f = shuffle_up(w, done, d);
    x = select(done, x, map(op, t, x));
    done = select(done, done, f);
  }
  return x;
}

template <class Warp, class Op, class Scope, class A, class V>
CALM_HD void apply_runs(Warp const& w, lane_runs<Warp> const& r, Op op, Scope s, A const& addr, V const& value) {
  if (!(is_same_value<V>::value ? r.reduce_counted : r.reduce)) return update_each(w, op, s, addr, value);
  auto const own = own_lane(w);
  auto const tail = (own & r.tails) != decltype(own)(0);
  if constexpr (is_same_value<V>::value) {
    auto const length = lane_id(w) - (fls(w, r.heads & lanes_le(w)) - 1) + 1;
    auto const total = repeat(op, value.value, length);
    when(w, tail, [&](auto const& t) { atomic_update(t, op, s, addr, total); });
  } else {
    auto const total = scan_runs(w, r, op, value);
    when(w, tail, [&](auto const& t) { atomic_update(t, op, s, addr, total); });
  }
}

/// The fetch form: the run's last lane applies the run's total and fetches the old value; each lane
/// gets op(old, values of the lanes before it in its run).
template <class Warp, class Op, class Scope, class A, class V>
CALM_HD auto fetch_runs(Warp const& w, lane_runs<Warp> const& r, Op op, Scope s, A const& addr, V const& value) {
  if (!(is_same_value<V>::value ? r.reduce_counted : r.reduce)) return fetch_each(w, op, s, addr, value);
  auto const own = own_lane(w);
  auto const tail = (own & r.tails) != decltype(own)(0);
  auto const rank = lane_id(w) - (fls(w, r.heads & lanes_le(w)) - 1);  // lanes before this one in its run
  auto incl = [&] {
    if constexpr (is_same_value<V>::value) return repeat(op, value.value, rank + 1);
    else return scan_runs(w, r, op, value);
  }();
  using T = std::decay_t<decltype(incl)>;
  T old = incl;
  when(w, tail, [&](auto const& t) { old = select(tail, atomic_fetch_update(t, op, s, addr, incl), old); });
  old = shuffle(w, old, ffs(w, r.tails & lanes_ge(w)) - 1);
  T excl;
  if constexpr (is_same_value<V>::value) excl = repeat(op, value.value, select(r.head, 1, rank));
  else excl = shuffle_up(w, incl, 1);
  return select(r.head, old, map(op, old, excl));
}

}  // namespace detail
}  // namespace calm
