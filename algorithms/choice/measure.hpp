// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/choice/measure.hpp: choosing by timing (a plan's measure mode, as FFTW_MEASURE): the
// candidates a call compiled, timed on the call's own keys, the fastest kept.
#pragma once

#include <algorithm>

#include "../../core/config.hpp"
#include "choose.hpp"

namespace calm {

/// How a plan of strategy::automatic chooses. estimate: the fitted tree (and, where it asks, statistics
/// sampled from the keys) at every run. measure: the plan's first run, and the first after remeasure(),
/// times the strategies automatic compiled for the plan's types that can take its table, on that run's
/// keys into scratch (its last round within measure_rounds::budget_runs), and every run from then on
/// launches the fastest (no sampling).
enum class plan_mode { estimate, measure };

/// One strategy timed by a measuring run: its seconds on the first `items` keys, the most it was timed on
/// (the run's n where it reached the final round).
struct measured_candidate {
  strategy s = strategy::automatic;  ///< the strategy
  index_t items = 0;                 ///< the keys of its last round
  double seconds = 0.0;              ///< its device seconds on them
};

/// What a measuring run found (scatter_plan::measured).
struct measurement {
  strategy chosen = strategy::automatic;  ///< the fastest; automatic: nothing measured (yet)
  int count = 0;                          ///< candidates timed: timed[0, count), the fastest of the last round first
  measured_candidate timed[strategy_count];  ///< the candidates, the chosen one first
  double chosen_seconds = 0;  ///< the winner's seconds on all the keys (a run's cost from then on); 0 where no rival (or no budget) was left to time it so
  double seconds = 0;         ///< the measuring's whole cost (scratch, rounds, waits), beyond the run it ends in
};

namespace detail {

/// The rounds of a measuring run over n keys: every candidate left is timed on the first items(r) keys,
/// more each round, after one untimed launch of each that loads its kernels. From two rounds, a
/// candidate's time on all n keys lies within a range extrapolated from its last two (the timing noise
/// widened by the distance); a candidate whose range lies wholly above another's is dropped, by a margin
/// while the rounds have seen few of the keys; the last round takes the `finalists` of best estimate.
struct measure_rounds {
  static constexpr int count = 4;
  static constexpr int finalists = 3;
  static constexpr index_t warm_items = 4096;  ///< the keys of the untimed launches that load the candidates' kernels
  static constexpr index_t items(int r, index_t n) {
    index_t const sizes[count] = {index_t(1) << 16, index_t(1) << 18, std::max<index_t>(index_t(1) << 22, n / 16), n};
    return std::min<index_t>(n, sizes[r]);
  }
  /// How far a timing of t seconds may stray from the time of the same work: 1 us and 2%.
  static constexpr double noise(double t) { return 1e-6 + 0.02 * t; }
  /// How much slower than the best a candidate's range must lie to be dropped after a round of `items`
  /// of the n keys: keys are not uniform over an array (a stream changes, sorted runs, phases), and a
  /// prefix under a sixteenth of them is not taken for the whole unless the gap is wide.
  static constexpr double margin(index_t items, index_t n) { return items < n / 16 ? 4.0 : 1.0; }
  /// The device time the whole measuring may spend, in runs of the best estimate on all the keys: the last
  /// round takes only the finalists of best estimate whose predicted times fit what is left (none: the best
  /// estimate is chosen untimed).
  static constexpr double budget_runs = 8.0;
};

/// Where a candidate's time on n keys lies, from its timings t0 on m0 keys and t1 on m1 > m0 (m0 0: one
/// timing, scaled in proportion): [low, high] and the estimate between.
struct measured_range {
  double low, estimate, high;
  static measured_range of(index_t m0, double t0, index_t m1, double t1, index_t n) {
    double const rest = static_cast<double>(n - m1);
    if (m0 == 0) return {t1, t1 * n / m1, t1 * n / m1};
    double const slope = std::max(0.0, (t1 - t0) / static_cast<double>(m1 - m0));
    double const spread = (measure_rounds::noise(t0) + measure_rounds::noise(t1)) / static_cast<double>(m1 - m0);
    // the high bound doubles the slope: the rounds reread keys from cache where a whole run reads memory
    return {t1 + std::max(0.0, slope - spread) * rest, t1 + slope * rest, t1 + (2.0 * slope + spread) * rest};
  }
};

/// Times the strategies of `candidates` (bits, those that can take the call) in rounds of more keys
/// (measure_rounds, within its budget) and returns the fastest on all n keys, or of best estimate where the
/// budget left none to time on all of them (measurement::seconds left to the caller).
/// time(strategies, count, items, seconds) launches each of strategies[0, count) over the first `items`
/// keys into scratch and writes their device seconds.
template <class Time>
measurement measure_candidates(unsigned candidates, index_t n, Time&& time) {
  measurement m;
  strategy live[strategy_count];
  double seconds[strategy_count];
  index_t before_items[strategy_count] = {};  // each candidate's round before its last (0: none)
  double before_seconds[strategy_count] = {};
  for (int i = 0; i < strategy_count; ++i)
    if (reaches(candidates, static_cast<strategy>(i))) m.timed[m.count++].s = static_cast<strategy>(i);
  int left = m.count;
  double spent = 0.0;  // the device seconds of every launch so far
  auto const estimate = [&](measured_candidate const& c, index_t items) {
    int const k = static_cast<int>(c.s);
    return measured_range::of(before_items[k], before_seconds[k], c.items, c.seconds, items).estimate;
  };
  auto const cost = [&](int count, index_t items) {
    double sum = 0.0;
    for (int i = 0; i < count; ++i) sum += estimate(m.timed[i], items);
    return sum;
  };
  for (int r = 0; r < measure_rounds::count && left > 1; ++r) {
    index_t const items = measure_rounds::items(r, n);
    if (r > 0 && items == measure_rounds::items(r - 1, n)) continue;
    // the budget, before the last round where the candidates' last timings cover a sixteenth of the keys or more
    // (m.timed[0, left) are by estimate): estimates from fewer keys are mostly the launches' fixed costs, whose
    // flat slope makes a slow candidate look fast
    if (r >= 2 && items == n && m.timed[0].items >= n / 16) {
      double const budget = measure_rounds::budget_runs * estimate(m.timed[0], n);
      while (left > 1 && spent + cost(left, items) > budget) --left;
      if (left == 1) break;
    }
    for (int i = 0; i < left; ++i) live[i] = m.timed[i].s;
    // untimed, before the first round: every candidate's kernels loaded (a first launch also loads them), on
    // all the keys where one round takes them all, else on a few
    if (r == 0) {
      time(live, left, items == n ? n : std::min<index_t>(n, measure_rounds::warm_items), seconds);
      for (int i = 0; i < left; ++i) spent += seconds[i];
    }
    time(live, left, items, seconds);
    for (int i = 0; i < left; ++i) spent += seconds[i];
    measured_range range[strategy_count];
    double best_high = 0.0;
    for (int i = 0; i < left; ++i) {  // m.timed[0, left) are the live candidates, in the order of `live`
      int const c = static_cast<int>(m.timed[i].s);
      if (r > 0) before_items[c] = m.timed[i].items, before_seconds[c] = m.timed[i].seconds;
      m.timed[i].items = items, m.timed[i].seconds = seconds[i];
      range[c] = measured_range::of(before_items[c], before_seconds[c], items, seconds[i], n);
      best_high = i == 0 ? range[c].high : std::min(best_high, range[c].high);
    }
    auto const by_estimate = [&](measured_candidate const& a, measured_candidate const& b) {
      return items == n ? a.seconds < b.seconds : range[static_cast<int>(a.s)].estimate < range[static_cast<int>(b.s)].estimate;
    };
    std::sort(m.timed, m.timed + left, by_estimate);
    if (items == n) break;
    // those whose range reaches below the lowest high bound (times the margin) go on; to the last round the finalists
    // of best estimate
    double const drop_above = best_high * measure_rounds::margin(items, n);
    auto const reaches_best = [&](measured_candidate const& c) { return range[static_cast<int>(c.s)].low <= drop_above; };
    int const going_on = static_cast<int>(std::stable_partition(m.timed, m.timed + left, reaches_best) - m.timed);
    // (after one round an estimate is that round's time scaled, blind to fixed costs: every survivor goes on)
    left = std::min(going_on, r > 0 && measure_rounds::items(r + 1, n) == n ? measure_rounds::finalists : left);
  }
  m.chosen = m.timed[0].s;
  m.chosen_seconds = m.timed[0].items == n ? m.timed[0].seconds : 0.0;
  return m;
}

}  // namespace detail
}  // namespace calm
