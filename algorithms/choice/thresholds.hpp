// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/choice/thresholds.hpp: when merging pays, from inequalities (1) and (2) of 000 section 3.1
// ("Performance Guarantee"), with the set-up cost s measured per device (perf/bench_setup_cost.cpp).
#pragma once

#include "../../core/config.hpp"
#include "../../core/warp.hpp"

namespace calm {

/// Steps of a tree reduction of x values: ceil(log2 x), 0 for x <= 1.
CALM_HD constexpr int reduction_steps(int x) {
  int s = 0;
  while ((1 << s) < x) ++s;
  return s;
}

/// Inequality (1), scan_reduce: the smallest run length x with log2(x) + s <= x. A warp whose runs
/// of equal keys are all shorter than this does one naive atomic per lane.
CALM_HD constexpr int scan_reduce_threshold(float setup_steps) {
  int x = 1;
  while (reduction_steps(x) + setup_steps > x) ++x;
  return x;
}

/// Inequality (2), vote_reduce: among n lanes, the smallest count x of lanes sharing the sampled key
/// with (n - x) + log2(x) + s <= x (the n - x others assumed to collide, the worst case). n + 1 when
/// no x <= n satisfies it (then nothing is merged).
CALM_HD constexpr int vote_reduce_threshold(int n, float setup_steps) {
  int x = (n + static_cast<int>(setup_steps)) / 2;
  if (x < 1) x = 1;
  while (x <= n && (n - x) + reduction_steps(x) + setup_steps > x) ++x;
  return x <= n ? x : n + 1;
}

/// vote_reduce_threshold for a run-time n inside a kernel, without loops over x: the least fixed
/// point of x = ceil((n + s + log2 x) / 2), reached from below in a few steps (log2 x grows by one per
/// doubling of x). Equal to vote_reduce_threshold(n, s) for every n <= 64 (tested).
template <class Warp>
CALM_HD int vote_reduce_threshold(Warp const& w, int n, float setup_steps) {
  using mask_t = typename Warp::lane_mask;
  int const base = n + static_cast<int>(setup_steps + 0.999f);  // n + ceil(s)
  int x = (base + 1) / 2;
  for (int k = 0; k < 3; ++k) x = (base + fls(w, static_cast<mask_t>(x - 1)) + 1) / 2;
  return x > n ? n + 1 : x;
}

}  // namespace calm
