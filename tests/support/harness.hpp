// SPDX-License-Identifier: Apache-2.0
// What every conformance test shares: buffers, seeds, sizes and the warp-structure references.
// The references are plain sequential loops over std::vector, independent of calm.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <ostream>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace calm_test {

using calm::index_t;
template <class T>
using buffer = backend::device_buffer<T>;
inline void synchronize() { backend::synchronize(); }

/// Whether a test's combination runs: always, but in a sanitizer build (CALM_TEST_SANITIZED, whose run
/// of the whole matrix is several times slower) only where the sum of its axes' indices is a multiple of
/// `every`. Any two values of two axes then still meet, the third axis rotating through its values.
inline bool runs_in_this_build(std::size_t axes_sum, std::size_t every) {
#if defined(CALM_TEST_SANITIZED)
  return axes_sum % every == 0;
#else
  (void)axes_sum, (void)every;
  return true;
#endif
}
/// `n`, or an eighth of it in a sanitizer build: for sizes chosen for a GPU's timing, not for coverage.
inline index_t size_for_build(index_t n) {
#if defined(CALM_TEST_SANITIZED)
  return n / 8 + n % 8;
#else
  return n;
#endif
}

/// A generator seeded from Catch's --rng-seed (ctest passes `time`) and a salt, so runs draw fresh inputs.
inline std::mt19937_64 rng(std::uint64_t salt) {
  return std::mt19937_64(static_cast<std::uint64_t>(Catch::rngSeed()) * 0x9E3779B97F4A7C15ull + salt);
}

/// Sizes for per-index tests: empty, one lane, ragged warps, several blocks, and enough for the
/// Kokkos-shaped launch to go round its grid-stride loop (1024 blocks of 256 threads) twice.
inline std::vector<index_t> sizes() { return {0, 1, 5, 31, 32, 33, 63, 64, 65, 257, 1000, 4099, 600011}; }

inline index_t warp_base(index_t i, int w) { return i - i % w; }
inline int lane_of(index_t i, int w) { return static_cast<int>(i % w); }
/// The lanes of the warp holding index i when n indices run: all but a ragged tail.
inline std::uint64_t tail_mask(index_t n, int w, index_t i) {
  index_t c = std::min<index_t>(w, n - warp_base(i, w));
  return c >= 64 ? ~0ull : (1ull << c) - 1;
}
/// The lanes of i's warp whose sel[] is set, among the tail mask.
template <class S>
std::uint64_t selected_mask(std::vector<S> const& sel, index_t n, int w, index_t i) {
  std::uint64_t m = 0, t = tail_mask(n, w, i);
  index_t base = warp_base(i, w);
  for (int j = 0; j < w; ++j)
    if (((t >> j) & 1) && sel[base + j]) m |= 1ull << j;
  return m;
}

template <class T, class G>
std::vector<T> random_values(std::size_t n, G& g, T lo, T hi) {
  std::vector<T> v(n);
  if constexpr (std::is_floating_point<T>::value) {
    std::uniform_real_distribution<T> d(lo, hi);
    for (auto& x : v) x = d(g);
  } else {
    std::uniform_int_distribution<long long> d(static_cast<long long>(lo), static_cast<long long>(hi));
    for (auto& x : v) x = static_cast<T>(d(g));
  }
  return v;
}
template <class G>
std::vector<int> random_flags(std::size_t n, G& g, double p) {
  std::bernoulli_distribution d(p);
  std::vector<int> v(n);
  for (auto& x : v) x = d(g) ? 1 : 0;
  return v;
}

/// Error bound for a float sum of terms in any order: (terms + 1) * epsilon * sum of |terms|.
template <class T>
double sum_bound(std::size_t terms, double sum_abs) {
  return (static_cast<double>(terms) + 1.0) * std::numeric_limits<T>::epsilon() * sum_abs;
}

/// One assertion for a whole output: counts mismatches (where care[i], if given) and reports the first.
template <class T, class U>
void require_equal(std::vector<T> const& got, std::vector<U> const& expect, char const* what,
                   std::vector<char> const* care = nullptr) {
  REQUIRE(got.size() == expect.size());
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if ((!care || (*care)[i]) && !(got[i] == static_cast<T>(expect[i]))) {
      if (!bad) first = i;
      ++bad;
    }
  if (bad) {
    INFO(what << ": " << bad << " of " << got.size() << " differ; first at index " << first << ": got " << got[first]
              << ", expected " << expect[first]);
    REQUIRE(bad == 0);
  }
  REQUIRE(bad == 0);
}

/// A 12-byte value: shuffles and matches must move and compare it word by word.
struct triple {
  std::int32_t a, b, c;
  friend bool operator==(triple const& x, triple const& y) { return x.a == y.a && x.b == y.b && x.c == y.c; }
  friend std::ostream& operator<<(std::ostream& o, triple const& t) { return o << '{' << t.a << ',' << t.b << ',' << t.c << '}'; }
};
template <class T>
T make_value(std::uint64_t r) {
  if constexpr (std::is_same<T, triple>::value)
    return triple{static_cast<std::int32_t>(r), static_cast<std::int32_t>(r >> 21), static_cast<std::int32_t>(~r)};
  else if constexpr (std::is_floating_point<T>::value)
    return static_cast<T>(static_cast<std::int64_t>(r >> 11)) * T(0.25);
  else
    return static_cast<T>(r);
}

}  // namespace calm_test
