// SPDX-License-Identifier: Apache-2.0
// Sequential references for the atomics tests: random operands per (op, type), the final table by a
// fold in index order, and a check that fetched values form a valid order of the updates.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>

namespace calm_test {

inline char const* op_name(calm::plus) { return "plus"; }
inline char const* op_name(calm::min) { return "min"; }
inline char const* op_name(calm::max) { return "max"; }
inline char const* op_name(calm::bit_and) { return "bit_and"; }
inline char const* op_name(calm::bit_or) { return "bit_or"; }
inline char const* op_name(calm::bit_xor) { return "bit_xor"; }

/// Operands for op on T: plus gets small positive terms (no overflow, and fetched values strictly
/// increase, so their order is recoverable); the others get values over the whole range.
template <class Op, class T, class G>
std::vector<T> random_operands(std::size_t n, G& g) {
  if constexpr (std::is_same<Op, calm::plus>::value) {
    if constexpr (std::is_floating_point<T>::value) return random_values<T>(n, g, T(0.5), T(2));
    else if constexpr (sizeof(T) == 8) return random_values<T>(n, g, 1, T(1) << 40);
    else return random_values<T>(n, g, 1, 1000);
  } else if constexpr (std::is_floating_point<T>::value) {
    return random_values<T>(n, g, T(-1e6), T(1e6));
  } else {
    auto raw = random_values<std::uint64_t>(n, g, 0, ~0ull);
    std::vector<T> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(raw[i]);
    return v;
  }
}

/// Check a table updated by lanes i = 0..n-1 (lane i: table[slot[i]] op= vals[i]) and, if given, the
/// value each lane fetched. Integers exactly; float sums to sum_bound().
template <class Op, class T>
void verify_atomics(std::vector<T> const& init, std::vector<T> const& vals, std::vector<index_t> const& slot,
                    std::vector<T> const& table, std::vector<T> const* fetched, char const* what) {
  Op op;
  INFO(what << ": op " << op_name(op) << ", " << sizeof(T) << "-byte " << (std::is_floating_point<T>::value ? "float" : "int"));
  std::size_t const slots = init.size();
  REQUIRE(table.size() == slots);
  std::vector<T> expect = init;
  std::vector<double> exact(slots), sum_abs(slots);
  std::vector<std::size_t> terms(slots, 0);
  for (std::size_t s = 0; s < slots; ++s) exact[s] = static_cast<double>(init[s]), sum_abs[s] = std::fabs(static_cast<double>(init[s]));
  for (std::size_t i = 0; i < vals.size(); ++i) {
    expect[slot[i]] = op(expect[slot[i]], vals[i]);
    exact[slot[i]] += static_cast<double>(vals[i]);
    sum_abs[slot[i]] += std::fabs(static_cast<double>(vals[i]));
    terms[slot[i]]++;
  }
  if constexpr (std::is_floating_point<T>::value && std::is_same<Op, calm::plus>::value) {
    std::size_t bad = 0, first = 0;
    for (std::size_t s = 0; s < slots; ++s)
      if (!(std::fabs(static_cast<double>(table[s]) - exact[s]) <= sum_bound<T>(terms[s], sum_abs[s]))) {
        if (!bad) first = s;
        ++bad;
      }
    INFO("slots off the bound: " << bad << "; first " << first << ": got " << (slots ? table[first] : T{}) << ", exact "
                                  << (slots ? exact[first] : 0.0));
    REQUIRE(bad == 0);
  } else {
    require_equal(table, expect, "final table");
  }
  if (!fetched) return;
  REQUIRE(fetched->size() == vals.size());
  if constexpr (std::is_same<Op, calm::plus>::value && std::is_integral<T>::value) {
    // sorted by fetched value, each lane must have seen init plus the terms of the lanes before it
    std::vector<std::vector<std::pair<T, T>>> seen(slots);
    for (std::size_t i = 0; i < vals.size(); ++i) seen[slot[i]].push_back({(*fetched)[i], vals[i]});
    std::size_t bad = 0;
    for (std::size_t s = 0; s < slots; ++s) {
      std::sort(seen[s].begin(), seen[s].end());
      T running = init[s];
      for (auto const& fv : seen[s]) {
        bad += fv.first != running;
        running = static_cast<T>(running + fv.second);
      }
    }
    INFO("fetched values that break the chain init, init + v1, init + v1 + v2, ...: " << bad);
    REQUIRE(bad == 0);
  } else if constexpr (Op::idempotent) {
    // every fetched value was a state of the slot, so the final value absorbs it
    std::vector<T> absorbed(vals.size());
    for (std::size_t i = 0; i < vals.size(); ++i) absorbed[i] = op(table[slot[i]], (*fetched)[i]);
    std::vector<T> finals(vals.size());
    for (std::size_t i = 0; i < vals.size(); ++i) finals[i] = table[slot[i]];
    require_equal(absorbed, finals, "final op fetched == final");
  }
}

}  // namespace calm_test
