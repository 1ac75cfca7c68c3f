// SPDX-License-Identifier: Apache-2.0
// Conformance: ballot, any, all, popc and ffs, on random predicates of every density and on random
// per-lane masks, for full and ragged warps.
#pragma once

TEST_CASE("votes: ballot, any, all, popc, ffs", "[warp][votes]") {
  using namespace calm_test;
  int const W = warp_size();
  index_t const n = GENERATE(from_range(sizes()));
  double const density = GENERATE(0.0, 0.03, 0.5, 0.97, 1.0);
  calm::launch_shape const shape = GENERATE(from_range(shapes()));
  CAPTURE(name, W, n, density, calm::to_string(shape));

  auto g = rng(11);
  auto pred = random_flags(n, g, density);
  auto masks = random_values<std::uint64_t>(n, g, 0, ~0ull);
  std::uint64_t const full = W == 64 ? ~0ull : (1ull << W) - 1;
  for (index_t i = 0; i < n; ++i) masks[i] = i % 7 ? masks[i] & full : 0;  // lanes of this warp; some empty
  buffer<int> dpred(pred);
  buffer<std::uint64_t> dmasks(masks), ballot(n), vpopc(n), vffs(n);
  buffer<int> any(n), all(n), upopc(n), uffs(n);
  auto *pp = dpred.data(), *pany = any.data(), *pall = all.data(), *pup = upopc.data(), *puf = uffs.data();
  auto *pm = dmasks.data(), *pb = ballot.data(), *pvp = vpopc.data(), *pvf = vffs.data();
  for_each_index(n, CALM_LAMBDA(auto const& w, auto i) {
    using M = typename std::decay_t<decltype(w)>::lane_mask;
    auto p = calm::load(w, pp, i) != 0;
    M const b = calm::ballot(w, p);
    calm::store(w, pb, i, std::uint64_t(b));
    calm::store(w, pany, i, int(calm::any(w, p)));
    calm::store(w, pall, i, int(calm::all(w, p)));
    calm::store(w, pup, i, calm::popc(w, b));
    calm::store(w, puf, i, calm::ffs(w, b));
    auto m = calm::map([](std::uint64_t x) { return static_cast<M>(x); }, calm::load(w, pm, i));
    calm::store(w, pvp, i, calm::popc(w, m));
    calm::store(w, pvf, i, calm::ffs(w, m));
  }, shape);
  synchronize();

  std::vector<std::uint64_t> e_ballot(n), e_vpopc(n), e_vffs(n);
  std::vector<int> e_any(n), e_all(n), e_upopc(n), e_uffs(n);
  auto count = [](std::uint64_t m) { return __builtin_popcountll(m); };
  auto first = [](std::uint64_t m) { return m ? __builtin_ctzll(m) + 1 : 0; };
  for (index_t i = 0; i < n; ++i) {
    std::uint64_t const active = tail_mask(n, W, i), expect = selected_mask(pred, n, W, i);
    e_ballot[i] = expect;
    e_any[i] = expect != 0;
    e_all[i] = expect == active;
    e_upopc[i] = count(expect);
    e_uffs[i] = first(expect);
    e_vpopc[i] = static_cast<std::uint64_t>(count(masks[i]));
    e_vffs[i] = static_cast<std::uint64_t>(first(masks[i]));
  }
  require_equal(ballot.download(), e_ballot, "ballot");
  require_equal(any.download(), e_any, "any");
  require_equal(all.download(), e_all, "all");
  require_equal(upopc.download(), e_upopc, "popc(ballot)");
  require_equal(uffs.download(), e_uffs, "ffs(ballot)");
  require_equal(vpopc.download(), e_vpopc, "popc(varying mask)");
  require_equal(vffs.download(), e_vffs, "ffs(varying mask)");
}
