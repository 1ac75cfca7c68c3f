// SPDX-License-Identifier: Apache-2.0
// calm's per-lane calls inside Kokkos parallel_for bodies: RangePolicy, MDRangePolicy and TeamPolicy
// with vector lanes, on Kokkos's default execution space (the lanes that reach a call together merge
// on a GPU; a host body is a warp of one), each against a sequential count.
#include "kokkos_support.hpp"

namespace calm_kokkos_test {

struct range_body {
  view1<int const> keys;
  view1<unsigned> table;
  KOKKOS_INLINE_FUNCTION void operator()(int i) const { calm::update<calm::peer_reduce>(calm::plus{}, &table(keys(i)), 1u); }
};

struct md_body {
  view1<int const> keys;
  view1<double> table;
  int cols;
  KOKKOS_INLINE_FUNCTION void operator()(int r, int c) const {
    calm::update<calm::scan_reduce>(calm::plus{}, &table(keys(r * cols + c)), 0.5 * (c + 1));
  }
};

struct team_body {
  view1<int const> keys;
  view1<int> table;
  int per_team, n, vl;
  template <class Member>
  KOKKOS_INLINE_FUNCTION void operator()(Member const& m) const {
    int const base = m.league_rank() * per_team;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, per_team / vl), [&](int t) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, vl), [&](int v) {
        int const i = base + t * vl + v;
        if (i < n) calm::update<calm::vote_reduce<1>>(calm::max{}, &table(keys(i)), i);
      });
    });
  }
};

}  // namespace calm_kokkos_test

using namespace calm_kokkos_test;

TEST_CASE("per-lane calm::update inside RangePolicy, MDRangePolicy and TeamPolicy bodies", "[kokkos][per_lane]") {
  std::mt19937 g(Catch::rngSeed());
  for (auto kind : calm_test::all_key_kinds())
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(1000), std::size_t(65537)}) {
      INFO("keys " << calm_test::to_string(kind) << ", n " << n);
      int const bins = 97;
      auto const keys = keys_in(n, kind, bins, g);
      auto const dkeys = to_device(keys, "keys");

      view1<unsigned> counts("counts", bins);
      Kokkos::parallel_for(Kokkos::RangePolicy<space>(0, n), range_body{dkeys, counts});
      std::vector<unsigned> expect(bins, 0);
      for (int k : keys) ++expect[k];
      REQUIRE(to_host(counts) == expect);

      int const cols = 7, rows = static_cast<int>(n / cols);
      view1<double> sums("sums", bins);
      Kokkos::parallel_for(Kokkos::MDRangePolicy<space, Kokkos::Rank<2>>({0, 0}, {rows, cols}), md_body{dkeys, sums, cols});
      std::vector<double> esum(bins, 0.0);
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) esum[keys[r * cols + c]] += 0.5 * (c + 1);
      REQUIRE(to_host(sums) == esum);  // halves of small integers: exact in any order

      int const per_team = 64;
      int const teams = static_cast<int>((n + per_team - 1) / per_team);
      // vector lengths 1 to 32 (on a GPU a team's vector lanes are consecutive lanes of a warp)
      std::vector<int> emax(bins, -1);
      for (std::size_t i = 0; i < n; ++i) emax[keys[i]] = std::max(emax[keys[i]], static_cast<int>(i));
      for (int vl = 1; vl <= std::min(32, Kokkos::TeamPolicy<space>::vector_length_max()); vl *= 2) {
        INFO("vector length " << vl);
        view1<int> maxima("maxima", bins);
        Kokkos::deep_copy(maxima, -1);
        Kokkos::parallel_for(Kokkos::TeamPolicy<space>(teams, Kokkos::AUTO, vl), team_body{dkeys, maxima, per_team, static_cast<int>(n), vl});
        REQUIRE(to_host(maxima) == emax);
      }
    }
}
