// SPDX-License-Identifier: Apache-2.0
// Conformance: the worked examples of the sources, exactly, and (host backend, which counts its
// operations) the number of atomics each strategy issues and that update_n groups once per warp.
#pragma once

#include "../support/keys.hpp"

TEST_CASE("000 Fig. 4: scan_reduce on keys 0 1 1 1 3 3 3 3", "[strategy][example]") {
  using namespace calm_test;
  CAPTURE(name, warp_size());
  std::vector<std::uint32_t> const keys{0, 1, 1, 1, 3, 3, 3, 3};
  buffer<std::uint32_t> dkeys(keys), table(std::vector<std::uint32_t>(4, 0));
  std::uint32_t const* pk = dkeys.data();
  std::uint32_t* pt = table.data();
  if constexpr (counting) reset_counts();
  for_each_index(8, CALM_LAMBDA(auto const& w, auto i) {
    calm::update(w, calm::plus{}, calm::scope::device{}, pt + calm::load(w, pk, i), 1u, calm::scan_reduce{1});
  }, calm::launch_shape::linear);
  synchronize();
  require_equal(table.download(), std::vector<std::uint32_t>{1, 3, 0, 4}, "A");
  if constexpr (counting) {
    if (warp_size() >= 8) REQUIRE(read_counts().atomics == 3);  // threads 0, 3 and 7
  }
}

TEST_CASE("002 stage 2: add_peers over three peer groups of 16 lanes", "[strategy][example]") {
  using namespace calm_test;
  int const W = warp_size();
  CAPTURE(name, W);
  std::vector<int> const keys{0, 1, 1, 2, 0, 1, 2, 0, 1, 2, 0, 2, 0, 0, 1, 2};  // groups A, B, C of the slides
  std::vector<int> const vals{9, 8, 2, 6, 2, 7, 1, 4, 7, 6, 1, 8, 7, 8, 4, 7};
  buffer<int> dkeys(keys), dvals(vals), reduced(16), table(std::vector<int>(3, 0));
  int const *pk = dkeys.data(), *pv = dvals.data();
  int *pr = reduced.data(), *pt = table.data();
  for_each_index(16, CALM_LAMBDA(auto const& w, auto i) {
    auto const key = calm::load(w, pk, i);
    calm::store(w, pr, i, calm::reduce_peers(w, calm::plus{}, calm::match_any(w, key), calm::load(w, pv, i)));
    calm::update<calm::peer_reduce>(w, calm::plus{}, calm::scope::device{}, pt + key, calm::load(w, pv, i));
  }, calm::launch_shape::linear);
  synchronize();
  require_equal(table.download(), std::vector<int>{31, 28, 28}, "group sums");
  if (W >= 16) {
    auto r = reduced.download();
    CHECK(r[0] == 31);  // leaders: lane 0 (A), lane 1 (B), lane 3 (C)
    CHECK(r[1] == 28);
    CHECK(r[3] == 28);
  }
}

namespace calm_test {

/// The atomics a strategy issues for one warp's keys (lanes active: sel), computed independently.
inline std::uint64_t expected_atomics(std::string const& strategy, std::vector<std::uint32_t> const& k, int threshold) {
  std::uint64_t lanes = k.size(), distinct = std::set<std::uint32_t>(k.begin(), k.end()).size(), runs = 0, longest = 0, len = 0;
  for (std::size_t j = 0; j < k.size(); ++j) {
    len = (j > 0 && k[j] == k[j - 1]) ? len + 1 : 1;
    runs += len == 1;
    longest = std::max(longest, len);
  }
  if (strategy == "naive") return lanes;
  if (strategy == "peer_reduce") return distinct;
  return longest >= static_cast<std::uint64_t>(threshold) ? runs : lanes;  // scan_reduce
}

/// Count what one launch of `strategy` does: a +1 histogram (components == 1: calm::constant(1u); 0: a
/// value of 1u in every lane, which scan_reduce merges by its segmented scan) or update_n of ones.
template <class S>
op_counts count_launch(S strategy, index_t n, std::uint32_t const* pk, std::uint32_t* pt, int components) {
  reset_counts();
  for_each_index(n, CALM_LAMBDA(auto const& w, auto i) {
    auto const key = calm::load(w, pk, i);
    std::uint32_t const ones[3] = {1u, 1u, 1u};
    if (components == 1) calm::update(w, calm::plus{}, calm::scope::device{}, pt + key, calm::constant(1u), strategy);
    else if (components == 0) calm::update(w, calm::plus{}, calm::scope::device{}, pt + key, calm::map([](auto) { return 1u; }, key), strategy);
    else calm::update_n(w, calm::plus{}, calm::scope::device{}, pt + key * 3u, ones, components, strategy);
  }, calm::launch_shape::linear);
  synchronize();
  return read_counts();
}

}  // namespace calm_test

TEST_CASE("atomic counts: one per lane, per distinct key, per run; update_n groups once", "[strategy][count]") {
  using namespace calm_test;
  if constexpr (!counting) {
    SUCCEED("this backend does not count its operations");
  } else {
    int const W = warp_size();
    index_t const n = GENERATE(1, 37, 1000);
    keys_kind const kind = GENERATE(from_range(all_key_kinds()));
    CAPTURE(name, W, n, to_string(kind));
    auto g = rng(313);
    std::uint32_t bins = 0;
    auto keys = make_keys(n, kind, g, bins);
    int const d = 3;
    buffer<std::uint32_t> dkeys(keys), table(bins * d);
    std::uint32_t const* pk = dkeys.data();
    std::uint32_t* pt = table.data();
    auto run = [&](auto strategy, int components) {
      table.fill_bytes(0);
      return count_launch(strategy, n, pk, pt, components);
    };
    int const sr = calm::scan_reduce_threshold(backend::default_warp::scan_reduce_setup_steps);
    std::uint64_t naive = 0, peer = 0, scan1 = 0, scan = 0, warps = 0;
    for (index_t b = 0; b < n; b += W, ++warps) {
      std::vector<std::uint32_t> k(keys.begin() + b, keys.begin() + std::min<index_t>(n, b + W));
      naive += expected_atomics("naive", k, 0);
      peer += expected_atomics("peer_reduce", k, 0);
      scan1 += expected_atomics("scan_reduce", k, 1);
      scan += expected_atomics("scan_reduce", k, sr);
    }
    CHECK(run(calm::naive{}, 1).atomics == naive);
    CHECK(run(calm::peer_reduce{}, 1).atomics == peer);
    CHECK(run(calm::scan_reduce{1}, 1).atomics == scan1);
    CHECK(run(calm::scan_reduce{}, 1).atomics == scan1);   // the same +1 in every lane: no scan, every run merges
    CHECK(run(calm::scan_reduce{}, 0).atomics == scan);    // a value per lane: runs of inequality (1)'s threshold
    CHECK(run(calm::scan_reduce{sr}, 1).atomics == scan);  // a threshold given applies to both
    // vote_reduce: one atomic for the sampled key's lanes plus one per other lane
    auto const vr = run(calm::vote_reduce<1>{7u, 2}, 1).atomics;
    if (kind == keys_kind::one) CHECK(vr == warps);
    CHECK(vr <= naive);
    CHECK(vr >= peer);
    // update_n: d atomics per group, and the grouping (match_any) once per warp, not once per component
    auto const pn = run(calm::peer_reduce{}, d);
    CHECK(pn.atomics == d * peer);
    CHECK(pn.matches == warps);
    CHECK(run(calm::scan_reduce{1}, d).atomics == d * scan1);
    std::vector<std::uint32_t> expect(bins * d, 0);
    for (index_t i = 0; i < n; ++i)
      for (int c = 0; c < d; ++c) expect[keys[i] * d + c]++;
    require_equal(table.download(), expect, "update_n table");
  }
}

TEST_CASE("atomic counts: scan_reduce merges short runs of the same value, not of values per lane", "[strategy][count]") {
  using namespace calm_test;
  if constexpr (!counting) {
    SUCCEED("this backend does not count its operations");
  } else {
    int const W = warp_size();
    int const sr = calm::scan_reduce_threshold(backend::default_warp::scan_reduce_setup_steps);
    int const len = GENERATE(2, 3);  // runs shorter than inequality (1)'s threshold on every backend that counts
    index_t const n = GENERATE(37, 1000);
    CAPTURE(name, W, sr, len, n);
    REQUIRE(len < sr);
    std::vector<std::uint32_t> keys(static_cast<std::size_t>(n));
    for (index_t i = 0; i < n; ++i) keys[i] = static_cast<std::uint32_t>(i / len);
    std::uint32_t const bins = keys.back() + 1;
    buffer<std::uint32_t> dkeys(keys), table(bins);
    auto run = [&](auto strategy, int components) {
      table.fill_bytes(0);
      auto const c = count_launch(strategy, n, dkeys.data(), table.data(), components);
      std::vector<std::uint32_t> expect(bins, 0);
      for (auto k : keys) ++expect[k];
      require_equal(table.download(), expect, "histogram");
      return c.atomics;
    };
    std::uint64_t runs = 0;
    for (index_t b = 0; b < n; b += W) {
      std::vector<std::uint32_t> k(keys.begin() + b, keys.begin() + std::min<index_t>(n, b + W));
      runs += expected_atomics("scan_reduce", k, 1);
    }
    CHECK(runs < static_cast<std::uint64_t>(n));
    CHECK(run(calm::naive{}, 1) == static_cast<std::uint64_t>(n));
    CHECK(run(calm::scan_reduce{1}, 0) == runs);
    CHECK(run(calm::scan_reduce{}, 1) == runs);                                  // +1 in every lane: every run merges
    CHECK(run(calm::scan_reduce{}, 0) == static_cast<std::uint64_t>(n));         // a value per lane: below the threshold
    CHECK(run(calm::scan_reduce{sr}, 1) == static_cast<std::uint64_t>(n));       // a threshold given holds for both
  }
}

TEST_CASE("per-lane front door: calm::update(op, addr, value) without a warp", "[strategy][per_lane]") {
  using namespace calm_test;
  index_t const n = GENERATE(0, 1, 45, 10007);
  CAPTURE(name, n);
  auto g = rng(401);
  std::uint32_t bins = 0;
  auto keys = make_keys(n, keys_kind::hot, g, bins);
  auto vals = random_values<std::int64_t>(n, g, -1000, 1000);
  buffer<std::uint32_t> dkeys(keys);
  buffer<std::int64_t> dvals(vals), sums(std::vector<std::int64_t>(bins, 0)), maxima(std::vector<std::int64_t>(bins, -5000));
  std::uint32_t const* pk = dkeys.data();
  std::int64_t const* pv = dvals.data();
  std::int64_t *ps = sums.data(), *pm = maxima.data();
  for_each_index(n, CALM_LAMBDA(auto const& w, auto i) {
    auto const key = calm::load(w, pk, i);
    auto const v = calm::load(w, pv, i);
    std::int64_t *sums_at = ps, *maxima_at = pm;  // captured outside the constexpr-if (nvcc needs that)
    if constexpr (calm::is_lane_array<std::decay_t<decltype(i)>>::value) {
      // the host warp's lanes, each calling as scalar code would (a warp of one)
      for (int l = 0; l < std::decay_t<decltype(w)>::size; ++l)
        if ((calm::active_mask(w) >> l) & 1) {
          calm::update<calm::peer_reduce>(calm::plus{}, sums_at + key[l], v[l]);
          calm::update<calm::vote_reduce<1>>(calm::max{}, maxima_at + key[l], v[l]);
        }
    } else {
      calm::update<calm::peer_reduce>(calm::plus{}, sums_at + key, v);
      calm::update<calm::vote_reduce<1>>(calm::max{}, maxima_at + key, v);
    }
  }, calm::launch_shape::kokkos_range);
  synchronize();
  std::vector<std::int64_t> es(bins, 0), em(bins, -5000);
  for (index_t i = 0; i < n; ++i) es[keys[i]] += vals[i], em[keys[i]] = std::max(em[keys[i]], vals[i]);
  require_equal(sums.download(), es, "per-lane plus");
  require_equal(maxima.download(), em, "per-lane max");
}

TEST_CASE("thresholds: inequality (1) solved for the smallest run", "[strategy][threshold]") {
  CHECK(calm::scan_reduce_threshold(2.1f) == 6);  // CUDA's s: 3 steps + 2.1 <= 6, and 3 + 2.1 > 5
  CHECK(calm::scan_reduce_threshold(0.0f) == 1);
  for (int i = 0; i <= 80; ++i) {  // the smallest run length the inequality holds for
    float const s = 0.1f * static_cast<float>(i);
    int const x = calm::scan_reduce_threshold(s);
    CAPTURE(s, x);
    CHECK(static_cast<float>(calm::reduction_steps(x)) + s <= static_cast<float>(x));
    CHECK((x == 1 || static_cast<float>(calm::reduction_steps(x - 1)) + s > static_cast<float>(x - 1)));
  }
}

TEST_CASE("thresholds: the in-kernel solution of inequality (2) equals the direct one", "[strategy][threshold]") {
  using namespace calm_test;
  buffer<int> out(65 * 4);
  int* po = out.data();
  for_each_index(65 * 4, CALM_LAMBDA(auto const& w, auto i) {
    auto const n = calm::map([](index_t j) { return static_cast<int>(j % 65); }, i);
    auto const s = calm::map([](index_t j) { return static_cast<float>(j / 65) * 1.5f; }, i);
    calm::store(w, po, i, calm::map([&](int nn, float ss) { return calm::vote_reduce_threshold(w, nn, ss); }, n, s));
  }, calm::launch_shape::linear);
  synchronize();
  std::vector<int> expect(65 * 4);
  for (int j = 0; j < 65 * 4; ++j) expect[j] = calm::vote_reduce_threshold(j % 65, static_cast<float>(j / 65) * 1.5f);
  require_equal(out.download(), expect, "vote_reduce_threshold");
}
