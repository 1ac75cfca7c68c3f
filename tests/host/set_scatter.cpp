// SPDX-License-Identifier: Apache-2.0
// set_scatter (000 §3.2, Alg. 3) against a literal transcription of Alg. 3 and its defining properties,
// on random keys of every distribution, awkward sizes and both granularities.
#include <calm/algorithms/bulk/set_scatter.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "support/keys.hpp"

namespace {

/// Alg. 3 as written: sets of items per key (ascending), then rounds over the sets, one item each.
std::vector<calm::index_t> literal_alg3(std::vector<std::uint32_t> const& label) {
  std::map<std::uint32_t, std::vector<calm::index_t>> sets;
  for (std::size_t i = 0; i < label.size(); ++i) sets[label[i]].push_back(static_cast<calm::index_t>(i));
  std::map<std::uint32_t, std::size_t> next;
  std::vector<calm::index_t> out;
  while (out.size() < label.size())
    for (auto& [k, s] : sets)
      if (next[k] < s.size()) out.push_back(s[next[k]++]);
  return out;
}

std::vector<std::uint32_t> keys_of(std::size_t n, calm_test::keys_kind kind, std::mt19937& g) {
  std::uint32_t bins = 0;
  return calm_test::make_keys(n, kind, g, bins);
}

}  // namespace

TEST_CASE("set_scatter per item: Alg. 3's layout, a permutation, the same table", "[set_scatter]") {
  std::mt19937 g(Catch::rngSeed());
  for (auto kind : calm_test::all_key_kinds())
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(2), std::size_t(31), std::size_t(33), std::size_t(1000), std::size_t(70001)}) {
      INFO("keys " << calm_test::to_string(kind) << ", n " << n);
      auto const keys = keys_of(n, kind, g);
      auto const perm = calm::set_scatter(keys.data(), static_cast<calm::index_t>(n));
      if (n <= 1000) REQUIRE(perm == literal_alg3(keys));
      // a permutation
      std::vector<char> seen(n, 0);
      for (auto p : perm) {
        REQUIRE(p >= 0);
        REQUIRE(p < static_cast<calm::index_t>(n));
        REQUIRE(seen[static_cast<std::size_t>(p)] == 0);
        seen[static_cast<std::size_t>(p)] = 1;
      }
      REQUIRE(perm.size() == n);
      // the scatter that follows it gives the same table (integer weights: exact)
      std::map<std::uint32_t, long long> direct, followed;
      for (std::size_t i = 0; i < n; ++i) direct[keys[i]] += static_cast<long long>(i % 13);
      for (auto p : perm) followed[keys[static_cast<std::size_t>(p)]] += static_cast<long long>(p % 13);
      REQUIRE(direct == followed);
      // equal keys are neighbours only once a single key is left: the rounds after the second largest
      // set is used up hold the largest set's last items alone, and the round before them ends with
      // that key when it is the greatest key still dealt there
      std::map<std::uint32_t, std::size_t> count;
      for (auto k : keys) ++count[k];
      std::size_t largest = 0, second = 0;
      std::uint32_t largest_key = 0;
      for (auto const& [k, c] : count) {
        if (c > largest) second = largest, largest = c, largest_key = k;
        else if (c > second) second = c;
      }
      std::size_t expect = 0;
      if (n > 0 && second == 0) expect = largest - 1;
      else if (largest > second) {
        bool last_in_round = true;  // no greater key with `second` or more items
        for (auto const& [k, c] : count) last_in_round = last_in_round && !(k > largest_key && c >= second);
        expect = largest - second - 1 + (last_in_round ? 1 : 0);
      }
      std::size_t adjacent_equal = 0;
      for (std::size_t i = 1; i < n; ++i) adjacent_equal += keys[perm[i]] == keys[perm[i - 1]];
      REQUIRE(adjacent_equal == expect);
    }
}

TEST_CASE("set_scatter per warp: whole warps dealt by their most frequent key", "[set_scatter]") {
  std::mt19937 g(Catch::rngSeed());
  for (int warp : {1, 7, 32, 64})
    for (auto kind : calm_test::all_key_kinds())
      for (std::size_t n : {std::size_t(0), std::size_t(5), std::size_t(100), std::size_t(4099)}) {
        INFO("warp " << warp << ", keys " << calm_test::to_string(kind) << ", n " << n);
        auto const keys = keys_of(n, kind, g);
        auto const perm = calm::set_scatter(keys.data(), static_cast<calm::index_t>(n), calm::scatter_granularity::warp, warp);
        REQUIRE(perm.size() == n);
        // whole warps, in order inside each
        std::vector<calm::index_t> warp_order;
        for (std::size_t i = 0; i < n; ++i) {
          if (i == 0 || perm[i] != perm[i - 1] + 1 || perm[i] % warp == 0) {
            REQUIRE(perm[i] % warp == 0);
            warp_order.push_back(perm[i] / warp);
          }
        }
        std::size_t const warps = (n + warp - 1) / warp;
        REQUIRE(warp_order.size() == warps);
        // the warp order is Alg. 3 over the warps' labels (most frequent key, smallest among equals)
        std::vector<std::uint32_t> label(warps);
        for (std::size_t w = 0; w < warps; ++w) {
          std::map<std::uint32_t, int> c;
          for (std::size_t i = w * warp; i < std::min(n, (w + 1) * warp); ++i) ++c[keys[i]];
          int best = 0;
          for (auto const& [k, v] : c)
            if (v > best) best = v, label[w] = k;
        }
        REQUIRE(warp_order == literal_alg3(label));
      }
}

TEST_CASE("set_scatter: bad arguments are refused", "[set_scatter][errors]") {
  std::vector<std::uint32_t> keys{1, 2};
  REQUIRE_THROWS_AS(calm::set_scatter(keys.data(), -1), calm::error);
  REQUIRE_THROWS_AS(calm::set_scatter(static_cast<std::uint32_t const*>(nullptr), 2), calm::error);
  REQUIRE_THROWS_AS(calm::set_scatter(keys.data(), 2, calm::scatter_granularity::warp, 0), calm::error);
  REQUIRE(calm::set_scatter(static_cast<std::uint32_t const*>(nullptr), 0).empty());
}
