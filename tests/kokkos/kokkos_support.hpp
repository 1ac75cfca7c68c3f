// SPDX-License-Identifier: Apache-2.0
// Helpers of the Kokkos tests: device views from host vectors and back, the sequential reference of
// each Scatter op, random keys of every distribution, written once for any Kokkos execution space.
#pragma once

#include <calm/kokkos.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "support/keys.hpp"

namespace calm_kokkos_test {

using space = Kokkos::DefaultExecutionSpace;
template <class T>
using view1 = Kokkos::View<T*, space>;

template <class T>
view1<T> to_device(std::vector<T> const& h, char const* label) {
  view1<T> d(std::string(label), h.size());
  Kokkos::deep_copy(d, Kokkos::View<T const*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(h.data(), h.size()));
  return d;
}
template <class V>
std::vector<typename V::non_const_value_type> to_host(V const& d) {
  auto m = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d);
  return std::vector<typename V::non_const_value_type>(m.data(), m.data() + m.span());
}

/// The sequential fold of each op.
template <class Op>
struct fold;
template <>
struct fold<calm::kokkos::ScatterSum> {
  template <class T> static T apply(T a, T b) { return static_cast<T>(a + b); }
  template <class T> static T identity() { return T(0); }
};
template <>
struct fold<calm::kokkos::ScatterProd> {
  template <class T> static T apply(T a, T b) { return static_cast<T>(a * b); }
  template <class T> static T identity() { return T(1); }
};
template <>
struct fold<calm::kokkos::ScatterMax> {
  template <class T> static T apply(T a, T b) { return a < b ? b : a; }
  template <class T> static T identity() { return Kokkos::reduction_identity<T>::max(); }
};
template <>
struct fold<calm::kokkos::ScatterMin> {
  template <class T> static T apply(T a, T b) { return b < a ? b : a; }
  template <class T> static T identity() { return Kokkos::reduction_identity<T>::min(); }
};

/// Values for op: sums of any sign, products of +-1 (exact in every type), max/min of any value.
template <class Op, class T, class G>
std::vector<T> values_for(std::size_t n, G& g) {
  std::vector<T> v(n);
  std::uniform_int_distribution<int> small(-50, 50), sign(0, 1);
  for (auto& x : v) {
    if constexpr (std::is_same<Op, calm::kokkos::ScatterProd>::value) x = sign(g) ? T(1) : T(-1);
    else if constexpr (std::is_floating_point<T>::value) x = static_cast<T>(small(g)) / T(8) + T(0.001) * static_cast<T>(small(g));
    else x = static_cast<T>(small(g));
  }
  return v;
}

/// table (which started as init) against the fold of vals into init by keys: exact for integers and
/// for max/min/prod; float sums to a bound that grows with the terms of each entry.
template <class Op, class T, class K>
void check_table(std::vector<T> const& init, std::vector<K> const& keys, std::vector<T> const& vals, std::vector<T> const& table) {
  REQUIRE(table.size() == init.size());
  std::vector<T> expect = init;
  std::vector<double> abs_sum(init.size());
  for (std::size_t s = 0; s < init.size(); ++s) abs_sum[s] = std::fabs(static_cast<double>(init[s]));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    expect[keys[i]] = fold<Op>::apply(expect[keys[i]], vals[i]);
    abs_sum[keys[i]] += std::fabs(static_cast<double>(vals[i]));
  }
  std::size_t bad = 0, first = 0;
  for (std::size_t s = 0; s < init.size(); ++s) {
    bool ok;
    if constexpr (std::is_floating_point<T>::value && std::is_same<Op, calm::kokkos::ScatterSum>::value)
      ok = std::fabs(static_cast<double>(table[s]) - static_cast<double>(expect[s])) <=
           4.0 * static_cast<double>(std::numeric_limits<T>::epsilon()) * abs_sum[s] * std::log2(2.0 + static_cast<double>(keys.size()));
    else
      ok = table[s] == expect[s];
    if (!ok && bad++ == 0) first = s;
  }
  INFO("entries wrong: " << bad << "; first " << first << ": got " << (bad ? table[first] : T{}) << ", expected "
                         << (bad ? expect[first] : T{}));
  REQUIRE(bad == 0);
}

/// Keys of `kind` folded into [0, bins).
template <class G>
std::vector<int> keys_in(std::size_t n, calm_test::keys_kind kind, int bins, G& g) {
  std::uint32_t kind_bins = 0;
  auto raw = calm_test::make_keys(n, kind, g, kind_bins);
  std::vector<int> k(n);
  for (std::size_t i = 0; i < n; ++i) k[i] = static_cast<int>(raw[i] % static_cast<std::uint32_t>(bins));
  return k;
}

}  // namespace calm_kokkos_test
