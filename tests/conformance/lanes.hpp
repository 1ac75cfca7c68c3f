// SPDX-License-Identifier: Apache-2.0
// Conformance: lane ids, active masks, lanes below/above, the leader, over both launch shapes.
#pragma once

TEST_CASE("lanes: lane id, active mask, lanes lt/le/gt/ge, leader", "[warp][lanes]") {
  using namespace calm_test;
  int const W = warp_size();
  index_t const n = GENERATE(from_range(sizes()));
  calm::launch_shape const shape = GENERATE(from_range(shapes()));
  CAPTURE(name, W, n, calm::to_string(shape));

  buffer<std::uint64_t> lane(n), active(n), lt(n), le(n), gt(n), ge(n), leader(n), elected(n), hits(n);
  hits.fill_bytes(0);
  auto *pl = lane.data(), *pa = active.data(), *plt = lt.data(), *ple = le.data(), *pgt = gt.data(), *pge = ge.data();
  auto *pld = leader.data(), *pel = elected.data(), *ph = hits.data();
  for_each_index(n, CALM_LAMBDA(auto const& w, auto i) {
    calm::store(w, pl, i, calm::lane_id(w));
    calm::store(w, pa, i, std::uint64_t(calm::active_mask(w)));
    calm::store(w, plt, i, calm::lanes_lt(w));
    calm::store(w, ple, i, calm::lanes_le(w));
    calm::store(w, pgt, i, calm::lanes_gt(w));
    calm::store(w, pge, i, calm::lanes_ge(w));
    calm::store(w, pld, i, std::uint64_t(calm::leader_lane(w)));
    calm::store(w, pel, i, calm::elect_leader(w));
    calm::atomic_update(w, calm::plus{}, calm::scope::device{}, ph + i, std::uint64_t(1));
  }, shape);
  synchronize();

  std::uint64_t const full = W == 64 ? ~0ull : (1ull << W) - 1;
  std::vector<std::uint64_t> e_lane(n), e_active(n), e_lt(n), e_le(n), e_gt(n), e_ge(n), e_elected(n);
  for (index_t i = 0; i < n; ++i) {
    int const l = lane_of(i, W);
    std::uint64_t const below = (1ull << l) - 1, at = 1ull << l;
    e_lane[i] = l;
    e_active[i] = tail_mask(n, W, i);
    e_lt[i] = below;
    e_le[i] = below | at;
    e_gt[i] = full & ~(below | at);
    e_ge[i] = full & ~below;
    e_elected[i] = l == 0;
  }
  require_equal(hits.download(), std::vector<std::uint64_t>(n, 1), "each index runs exactly once");
  require_equal(lane.download(), e_lane, "lane_id");
  require_equal(active.download(), e_active, "active_mask");
  require_equal(lt.download(), e_lt, "lanes_lt");
  require_equal(le.download(), e_le, "lanes_le");
  require_equal(gt.download(), e_gt, "lanes_gt");
  require_equal(ge.download(), e_ge, "lanes_ge");
  // lane 0 is always active in a warp formed from consecutive indices
  require_equal(leader.download(), std::vector<std::uint64_t>(n, 0), "leader_lane");
  require_equal(elected.download(), e_elected, "elect_leader");
}
