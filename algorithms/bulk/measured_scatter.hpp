// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/measured_scatter.hpp: a bulk scatter's candidates timed on its own keys into
// scratch (a measuring plan's first run; algorithms/choice/measure.hpp).
#pragma once

#include <chrono>
#include <cstddef>

#include "../choice/measure.hpp"
#include "scatter.hpp"

namespace calm {
namespace detail {

/// The strategies automatic compiled for this call (Model's tree) that can take it as they are:
/// every member of the compiled set, each turned into the strategy that fits the table, key map and
/// order (fitting_strategy), as bits.
template <class Model, class Op, class Values, class T, class KeyMap, class Exec>
unsigned measure_candidates_of(scatter_options const& opt, scatter_shape const& shape, Exec const& ex) {
  constexpr strategy_set set = bulk_set<strategy::automatic, Model, Op, Values, T, KeyMap, Exec>();
  unsigned fitting = 0;
  for (int i = 0; i < strategy_count; ++i)
    if (set.has(static_cast<strategy>(i))) fitting |= strategy_bit(fitting_strategy<Op, T, KeyMap>(static_cast<strategy>(i), opt, shape, ex));
  return fitting;
}

/// Times the candidates of an automatic scatter (measure_candidates_of) on these keys and values into a
/// scratch table of `bins` entries, and returns what it found; the table is not touched. Checks the
/// arguments as calm::scatter does first (throws calm::error before anything is launched). Nothing is
/// measured (chosen: automatic) where n or bins is 0.
template <class Model, class Op, class K, class Values, class T, class KeyMap, class Exec>
measurement measure_scatter(char const* who, Op op, K const* keys, Values values, index_t n, T* table, index_t bins, KeyMap const& key_map,
                            scatter_options const& opt, Exec const& ex) {
  constexpr strategy_set set = bulk_set<strategy::automatic, Model, Op, Values, T, KeyMap, Exec>();
  auto const start = std::chrono::steady_clock::now();
  check_scatter_sizes(who, n, bins);
  scatter_shape const shape = shape_of<Op, T>(n, bins, is_same_value<Values>::value, ex);
  check_bulk_arguments<strategy::automatic, Op>(who, keys, values, n, table, bins, opt, shape, ex);
  if (n == 0 || bins == 0) return measurement{};
  unsigned const candidates = measure_candidates_of<Model, Op, Values, T, KeyMap>(opt, shape, ex);
  bool const several = (candidates & (candidates - 1)) != 0;
  workspace<Exec> scratch(ex, several ? static_cast<std::size_t>(bins) * sizeof(T) : 0);
  T* const into = scratch.template at<T>(0);
  if (several) fill_identity<Op>(into, bins, ex);
  auto const vals = as_value_source<T>(values);
  measurement m = measure_candidates(candidates, n, [&](strategy const* ss, int count, index_t items, double* seconds) {
    ex.seconds_of_each(
        count, [&](int i) { launch_strategy<set.runs, set.samples>(ss[i], op, keys, values, vals, opt.order, items, into, bins, key_map, shape.counting, ex); },
        seconds);
  });
  ex.synchronize();
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return m;
}

}  // namespace detail
}  // namespace calm
