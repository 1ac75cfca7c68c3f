// SPDX-License-Identifier: Apache-2.0
// Conformance: sparse active masks. Inside calm::when the warp holds only the selected lanes; every
// operation (ballot, any/all, leader, broadcast, match_any, atomics, a nested when) sees just them.
#pragma once

TEST_CASE("divergence: when() with sparse active masks", "[warp][divergence]") {
  using namespace calm_test;
  int const W = warp_size();
  index_t const n = GENERATE(1, 31, 33, 64, 1000, 100003);
  double const density = GENERATE(0.0, 0.05, 0.5, 0.95);
  calm::launch_shape const shape = GENERATE(from_range(shapes()));
  CAPTURE(name, W, n, density, calm::to_string(shape));

  auto g = rng(53);
  auto sel = random_flags(n, g, density), sel2 = random_flags(n, g, 0.5), pred = random_flags(n, g, 0.5);
  auto keys = random_values<int>(n, g, 0, 3);
  auto vals = random_values<std::uint32_t>(n, g, 0, 1u << 30);
  constexpr std::uint64_t untouched = 0xDEADBEEFCAFEull;
  std::vector<std::uint64_t> poison(n, untouched);
  buffer<int> dsel(sel), dsel2(sel2), dpred(pred), dkeys(keys);
  buffer<std::uint32_t> dvals(vals);
  buffer<std::uint64_t> active(poison), leader(poison), elected(poison), ballot(poison), anyall(poison), bcast(poison),
      match(poison), nested(poison), counts(n);
  counts.fill_bytes(0);
  auto *ps = dsel.data(), *ps2 = dsel2.data(), *pp = dpred.data(), *pk = dkeys.data();
  auto* pv = dvals.data();
  auto *pa = active.data(), *pl = leader.data(), *pe = elected.data(), *pb = ballot.data(), *paa = anyall.data();
  auto *pbc = bcast.data(), *pm = match.data(), *pn = nested.data(), *pc = counts.data();
  for_each_index(n, CALM_LAMBDA(auto const& w, auto i) {
    calm::when(w, calm::load(w, ps, i) != 0, [&](auto const& s) {
      calm::store(s, pa, i, std::uint64_t(calm::active_mask(s)));
      calm::store(s, pl, i, std::uint64_t(calm::leader_lane(s)));
      calm::store(s, pe, i, calm::elect_leader(s));
      auto p = calm::load(s, pp, i) != 0;
      calm::store(s, pb, i, std::uint64_t(calm::ballot(s, p)));
      calm::store(s, paa, i, std::uint64_t(calm::any(s, p)) * 2 + std::uint64_t(calm::all(s, p)));
      calm::store(s, pbc, i, calm::shuffle(s, calm::load(s, pv, i), calm::leader_lane(s)));
      calm::store(s, pm, i, calm::match_any(s, calm::load(s, pk, i)));
      // one count per selected lane into the slot of the warp's first index
      constexpr int lanes = std::decay_t<decltype(s)>::size;
      calm::atomic_update(s, calm::plus{}, calm::scope::device{}, pc + (i - i % lanes), std::uint64_t(1));
      calm::when(s, calm::load(s, ps2, i) != 0, [&](auto const& t) { calm::store(t, pn, i, std::uint64_t(calm::active_mask(t))); });
    });
  }, shape);
  synchronize();

  std::vector<std::uint64_t> e_active(n, untouched), e_leader(n, untouched), e_elected(n, untouched), e_ballot(n, untouched),
      e_anyall(n, untouched), e_bcast(n, untouched), e_match(n, untouched), e_nested(n, untouched), e_counts(n, 0);
  for (index_t i = 0; i < n; ++i) {
    index_t const base = warp_base(i, W);
    int const lane = lane_of(i, W);
    std::uint64_t const sub = selected_mask(sel, n, W, i);
    if (lane == 0) e_counts[i] = static_cast<std::uint64_t>(__builtin_popcountll(sub));
    if (!sel[i]) continue;  // f never ran for this lane: its outputs stay untouched
    int const lead = __builtin_ctzll(sub);
    std::uint64_t p = 0, m = 0, nest = 0;
    for (int j = 0; j < W; ++j) {
      if (!((sub >> j) & 1)) continue;
      if (pred[base + j]) p |= 1ull << j;
      if (keys[base + j] == keys[i]) m |= 1ull << j;
      if (sel2[base + j]) nest |= 1ull << j;
    }
    e_active[i] = sub;
    e_leader[i] = static_cast<std::uint64_t>(lead);
    e_elected[i] = lane == lead;
    e_ballot[i] = p;
    e_anyall[i] = (p != 0 ? 2u : 0u) + (p == sub ? 1u : 0u);
    e_bcast[i] = vals[base + lead];
    e_match[i] = m;
    if (sel2[i]) e_nested[i] = nest;
  }
  require_equal(counts.download(), e_counts, "atomic count of selected lanes");
  require_equal(active.download(), e_active, "active_mask in when");
  require_equal(leader.download(), e_leader, "leader_lane in when");
  require_equal(elected.download(), e_elected, "elect_leader in when");
  require_equal(ballot.download(), e_ballot, "ballot in when");
  require_equal(anyall.download(), e_anyall, "any/all in when");
  require_equal(bcast.download(), e_bcast, "shuffle from the leader in when");
  require_equal(match.download(), e_match, "match_any in when");
  require_equal(nested.download(), e_nested, "active_mask in a nested when");
}
