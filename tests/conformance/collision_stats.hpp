// SPDX-License-Identifier: Apache-2.0
// Conformance: collision_stats against the statistics of 000 §3.3 computed exactly on the host, over
// the same sample (the whole array when it is small, evenly spread groups otherwise), for every key
// kind, ragged sizes, keys outside the table and inputs whose levels are known in closed form.
#pragma once

#include <array>
#include <map>

#include "../support/scatter_reference.hpp"

namespace calm_test {

/// The statistics of keys[g * stride, g * stride + block) for the sampled groups, by their definitions.
template <class K>
calm::collision_statistics reference_stats(std::vector<K> const& keys, index_t bins, calm::collision_sample_options const& opt) {
  calm::collision_statistics s;
  index_t const n = static_cast<index_t>(keys.size()), bi = opt.block_items;
  if (n == 0) return s;
  index_t const all = (n + bi - 1) / bi, groups = std::min((std::min(n, opt.items) + bi - 1) / bi, all);
  index_t const stride = groups == all ? bi : (all / groups) * bi;
  int const W = warp_size();
  std::set<long long> distinct;
  double warp_sum = 0, block_sum = 0;
  long long warps = 0, blocks = 0, repeats = 0, adjacent = 0, lines = 0, warp_distinct = 0;
  std::map<index_t, long long> hot;  // each warp counted once in the counter of each of its distinct in-table keys
  auto inside = [&](index_t i) { return static_cast<long long>(keys[i]) >= 0 && static_cast<long long>(keys[i]) < bins; };
  for (index_t g = 0; g < groups; ++g) {
    index_t const b0 = g * stride, b1 = std::min(n, b0 + bi);
    std::map<long long, int> in_block;
    for (index_t w0 = b0; w0 < b1; w0 += W) {
      std::map<long long, int> in_warp;
      index_t const w1 = std::min(b1, w0 + W);
      for (index_t i = w0; i < w1; ++i) {
        ++s.sampled;
        if (!inside(i)) {
          ++s.out_of_range;
          continue;
        }
        long long const k = static_cast<long long>(keys[i]);
        if (in_warp[k]++ > 0) {
          ++repeats;
          if (i > w0 && inside(i - 1) && static_cast<long long>(keys[i - 1]) == k) ++adjacent;
        }
        ++in_block[k];
        distinct.insert(k);
      }
      int most = 0, lanes = 0;
      std::set<long long> warp_lines;
      for (auto const& [k, c] : in_warp) most = std::max(most, c), lanes += c, warp_lines.insert(k / calm::table_line_entries);
      for (auto const& kc : in_warp) ++hot[calm::detail::collision_hot_slot(static_cast<index_t>(kc.first), bins)];
      lines += static_cast<long long>(warp_lines.size());
      warp_distinct += static_cast<long long>(in_warp.size());
      if (lanes) warp_sum += static_cast<double>(most) / lanes, ++warps;
    }
    int most = 0, items = 0;
    for (auto const& [k, c] : in_block) most = std::max(most, c), items += c;
    if (items) block_sum += static_cast<double>(most) / items, ++blocks;
  }
  s.distinct = static_cast<index_t>(distinct.size());
  s.warp_level = warps ? warp_sum / warps : 0;
  s.block_level = blocks ? block_sum / blocks : 0;
  s.all_thread_level = s.distinct ? static_cast<double>(s.sampled - s.out_of_range) / s.distinct : 0;
  s.clustering = repeats ? static_cast<double>(adjacent) / repeats : 0;
  s.line_share = warp_distinct ? static_cast<double>(lines) / static_cast<double>(warp_distinct) : 0;
  long long hot_most = 0;
  for (auto const& sc : hot) hot_most = std::max(hot_most, sc.second);
  s.hot_share = s.sampled > s.out_of_range ? static_cast<double>(hot_most) / static_cast<double>(s.sampled - s.out_of_range) : 0;
  if (opt.line_vec > 0) {
    auto const [line_repeats, line_warps] = line_repeats_reference(keys, bins, groups, stride, bi, W, opt.line_vec, opt.line_entries);
    s.line_repeats = line_warps ? static_cast<double>(line_repeats) / static_cast<double>(line_warps) : 0;
  }
  return s;
}

/// The statistics a sampling without a distinct-key count gives (sizes, levels, clustering, line share)
/// against the host's definitions; the level sums are kept in fixed point (2^-20 per warp or block).
inline void check_sampled_levels(calm::collision_statistics const& s, calm::collision_statistics const& r) {
  CHECK(s.sampled == r.sampled);
  CHECK(s.out_of_range == r.out_of_range);
  CHECK(s.warp_level == Approx(r.warp_level).margin(1e-5));
  CHECK(s.block_level == Approx(r.block_level).margin(1e-5));
  CHECK(s.clustering == Approx(r.clustering).epsilon(1e-12));
  CHECK(s.line_share == Approx(r.line_share).epsilon(1e-12));
}

template <class K>
calm::collision_statistics measured_stats(std::vector<K> const& keys, index_t bins, calm::collision_sample_options const& opt = {}) {
  buffer<K> d(keys);
  auto const s = calm::collision_stats(d.data(), static_cast<index_t>(keys.size()), bins, opt, exec{});
  auto const r = reference_stats(keys, bins, opt);
  INFO("n " << keys.size() << ", bins " << bins << ", items " << opt.items << ", block " << opt.block_items << "\n got  "
            << s.to_string() << "\n want " << r.to_string());
  check_sampled_levels(s, r);
  CHECK(s.distinct == r.distinct);
  CHECK(s.all_thread_level == Approx(r.all_thread_level).epsilon(1e-12));
  CHECK(s.line_repeats == Approx(r.line_repeats).epsilon(1e-12));
  CHECK(s.hot_share == Approx(r.hot_share).epsilon(1e-12));
  return s;
}

/// A sampling finish that records what the last block sees: the statistics of the groups' summed
/// totals, and one more call.
struct record_finish {
  calm::detail::collision_totals const* sum;
  calm::collision_statistics* seen;
  std::uint32_t* calls;
  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    blk.for_each_warp([&](auto const& w, auto t) {
      calm::when(w, t == 0, [&](auto const& l) {
        *seen = calm::detail::statistics_of(sum, 1);
        calm::atomic_update(l, calm::plus{}, calm::scope::device{}, calls, 1u);
      });
    });
  }
};

}  // namespace calm_test

TEST_CASE("collision sampling: the last block finishes once per launch, on every group's totals, and zeroes the meeting place", "[stats]") {
  using namespace calm_test;
  // n > 0: a sampling has at least one group (with n = 0 nothing is sampled, and automatic does not sample)
  index_t const n = GENERATE(1, 1001, 300007);
  int const block_items = GENERATE(32, 256);
  keys_kind const kind = GENERATE(keys_kind::runs, keys_kind::hot, keys_kind::image);
  CAPTURE(name, warp_size(), n, block_items, to_string(kind));
  auto g = rng(9001 + n + block_items + static_cast<int>(kind) * 17);
  index_t const bins = 4096;
  auto const keys = table_keys<std::uint32_t>(static_cast<std::size_t>(n), kind, bins, g, true);
  buffer<std::uint32_t> dk(keys);
  calm::collision_sample_options const opt{1 << 14, block_items};
  auto const plan = calm::detail::plan_sample(dk.data(), n, bins, opt);
  buffer<calm::detail::sample_meeting> meet(std::vector<calm::detail::sample_meeting>(1));
  buffer<std::uint32_t> calls(std::vector<std::uint32_t>{0u});
  buffer<calm::collision_statistics> seen(1);
  buffer<std::uint32_t> hot(std::vector<std::uint32_t>(static_cast<std::size_t>(calm::detail::collision_hot_slots), 0u));
  calm::collision_statistics const want = calm::collision_stats(dk.data(), n, bins, opt, exec{});
  constexpr int launches = 3;
  for (int i = 0; i < launches; ++i)
    calm::detail::launch_sample(dk.data(), n, bins, plan, calm::detail::identity_key{}, static_cast<calm::detail::collision_totals*>(nullptr), nullptr, 0,
                                exec{}, meet.data(), record_finish{&meet.data()->sum, seen.data(), calls.data()}, true, {}, hot.data());
  CHECK(calls.download()[0] == std::uint32_t(launches));
  auto const left = meet.download()[0];
  CHECK(left.tickets == 0u);
  CHECK(left.sum.sampled == 0u);
  CHECK(left.sum.warp_sum == 0u);
  CHECK(left.sum.lines == 0u);
  CHECK(left.sum.hot_most == 0u);
  auto const counts = hot.download();
  CHECK(std::count(counts.begin(), counts.end(), 0u) == static_cast<std::ptrdiff_t>(counts.size()));
  calm::collision_statistics const s = seen.download()[0];
  // against the definitions, computed on the host
  check_sampled_levels(s, reference_stats(keys, bins, opt));
  // and the same integer sums as the groups' totals summed on the host, to the last bit
  CHECK(s.sampled == want.sampled);
  CHECK(s.out_of_range == want.out_of_range);
  CHECK(s.warp_level == want.warp_level);
  CHECK(s.block_level == want.block_level);
  CHECK(s.clustering == want.clustering);
  CHECK(s.line_share == want.line_share);
  CHECK(s.hot_share == want.hot_share);
}

TEST_CASE("collision sampling without the block level: every other total as with it, the block level 0", "[stats]") {
  using namespace calm_test;
  index_t const n = GENERATE(1, 1001, 300007);
  keys_kind const kind = GENERATE(from_range(all_key_kinds()));
  CAPTURE(name, warp_size(), n, to_string(kind));
  auto g = rng(9101 + n + static_cast<int>(kind) * 19);
  index_t const bins = 70001;
  auto const keys = table_keys<std::uint32_t>(static_cast<std::size_t>(n), kind, bins, g, true);
  buffer<std::uint32_t> dk(keys);
  calm::collision_sample_options const opt{};
  auto const plan = calm::detail::plan_sample(dk.data(), n, bins, opt);
  buffer<calm::detail::sample_meeting> meet(std::vector<calm::detail::sample_meeting>(1));
  buffer<std::uint32_t> calls(std::vector<std::uint32_t>{0u});
  buffer<calm::collision_statistics> with(1), without(1);
  buffer<std::uint32_t> hot(std::vector<std::uint32_t>(static_cast<std::size_t>(calm::detail::collision_hot_slots), 0u));
  calm::detail::launch_sample(dk.data(), n, bins, plan, calm::detail::identity_key{}, static_cast<calm::detail::collision_totals*>(nullptr), nullptr, 0, exec{},
                              meet.data(), record_finish{&meet.data()->sum, with.data(), calls.data()}, true, {}, hot.data());
  calm::detail::launch_sample(dk.data(), n, bins, plan, calm::detail::identity_key{}, static_cast<calm::detail::collision_totals*>(nullptr), nullptr, 0, exec{},
                              meet.data(), record_finish{&meet.data()->sum, without.data(), calls.data()}, false);
  CHECK(calls.download()[0] == 2u);
  calm::collision_statistics const a = with.download()[0], b = without.download()[0];
  calm::collision_statistics const r = reference_stats(keys, bins, opt);
  check_sampled_levels(a, r);
  CHECK(a.hot_share == Approx(r.hot_share).epsilon(1e-12));  // 70,001 entries: keys share the counters by their hash
  CHECK(b.hot_share == 0.0);  // not counted
  auto const counts = hot.download();
  CHECK(std::count(counts.begin(), counts.end(), 0u) == static_cast<std::ptrdiff_t>(counts.size()));
  CHECK(b.block_level == 0.0);
  CHECK(b.sampled == a.sampled);
  CHECK(b.out_of_range == a.out_of_range);
  CHECK(b.warp_level == a.warp_level);
  CHECK(b.clustering == a.clustering);
  CHECK(b.line_share == a.line_share);
  CHECK(meet.download()[0].tickets == 0u);
}

TEST_CASE("collision sampling: the line repeats of a direct scatter's warps (the line rule's), against the host's count", "[stats]") {
  using namespace calm_test;
  index_t const n = GENERATE(1, 1001, 300007);
  int const block_items = GENERATE(32, 256);
  keys_kind const kind = GENERATE(from_range(all_key_kinds()));
  CAPTURE(name, warp_size(), n, block_items, to_string(kind));
  auto g = rng(9203 + n + block_items + static_cast<int>(kind) * 23);
  index_t const bins = kind == keys_kind::one ? 1 : 70001;
  auto const keys = table_keys<std::uint32_t>(static_cast<std::size_t>(n), kind, bins, g, true);
  buffer<std::uint32_t> dk(keys);
  calm::collision_sample_options const opt{1 << 14, block_items};
  // the groups, as reference_stats plans them
  index_t const all = (n + block_items - 1) / block_items, groups = std::min((std::min(n, opt.items) + block_items - 1) / block_items, all);
  index_t const stride = groups == all ? block_items : (all / groups) * block_items;
  auto const plan = calm::detail::plan_sample(dk.data(), n, bins, opt);
  REQUIRE(plan.groups == groups);
  REQUIRE(plan.stride == stride);
  buffer<calm::detail::collision_totals> totals(static_cast<std::size_t>(groups));
  for (int vec : {0, 1, 4})
    for (index_t entries : {index_t(32), index_t(1)}) {
      INFO("vec " << vec << ", line entries " << entries);
      totals.fill_bytes(0xff);
      calm::detail::launch_sample(dk.data(), n, bins, plan, calm::detail::identity_key{}, totals.data(), nullptr, 0, exec{}, nullptr, calm::detail::no_finish{},
                                  true, calm::detail::merge_lines{vec, entries});
      std::uint64_t repeats = 0, warps = 0;
      for (auto const& t : totals.download()) repeats += t.line_repeats, warps += t.line_warps;
      auto const want = vec > 0 ? line_repeats_reference(keys, bins, groups, stride, block_items, warp_size(), vec, entries) : std::pair<std::uint64_t, std::uint64_t>{0, 0};
      CHECK(repeats == want.first);
      CHECK(warps == want.second);
    }
}

TEST_CASE("collision_stats: the levels of 000 §3.3 against exact values on the host", "[stats]") {
  using namespace calm_test;
  int const n_i = GENERATE(0, 1, 2, 3, 4, 5);
  keys_kind const kind = GENERATE(from_range(all_key_kinds()));
  int const bins_i = GENERATE(0, 1, 2);
  bool const stray = GENERATE(false, true);
  index_t const n = std::array<index_t, 6>{0, 1, 33, 1001, 65536, 300007}[n_i], bins = std::array<index_t, 3>{3, 4096, 1 << 20}[bins_i];
  CAPTURE(name, warp_size(), n, to_string(kind), bins, stray);
  if (!runs_in_this_build(static_cast<std::size_t>(n_i + bins_i + static_cast<int>(kind) + stray), 3)) return;
  auto g = rng(7001 + n + static_cast<int>(kind) * 31 + bins);
  measured_stats(table_keys<std::uint32_t>(static_cast<std::size_t>(n), kind, bins, g, stray), bins);
  measured_stats(table_keys<std::int32_t>(static_cast<std::size_t>(n), kind, bins, g, stray), bins, {4096, 100});
  measured_stats(table_keys<std::uint16_t>(static_cast<std::size_t>(n), kind, std::min<index_t>(bins, 65536), g, stray),
                 std::min<index_t>(bins, 65536), {1 << 14, 1024});
  // the line repeats in the other layouts bulk calls count them in: one key a load, a warp's repeated keys; and none
  for (auto const& [vec, entries] : {std::pair<int, index_t>{1, 32}, {4, 1}, {1, 1}, {0, 32}}) {
    calm::collision_sample_options opt;
    opt.line_vec = vec, opt.line_entries = entries;
    INFO("line_vec " << vec << ", line_entries " << entries);
    auto const s = measured_stats(table_keys<std::uint32_t>(static_cast<std::size_t>(n), kind, bins, g, stray), bins, opt);
    if (vec == 0) CHECK(s.line_repeats == 0.0);
  }
}

TEST_CASE("collision_stats: levels known in closed form", "[stats]") {
  using namespace calm_test;
  int const W = warp_size();
  index_t const n = 1 << 17;
  // one key: every factor is 1, every repeat is next to its twin
  auto s = measured_stats(std::vector<std::uint32_t>(n, 5u), 16);
  CHECK(s.warp_level == Approx(1.0));
  CHECK(s.block_level == Approx(1.0));
  CHECK(s.clustering == Approx(1.0));
  CHECK(s.distinct == 1);
  CHECK(s.sampled == calm::collision_sample_options{}.items);
  CHECK(s.line_share == Approx(1.0));  // one key, one line
  CHECK(s.line_repeats == Approx(W - 1));  // every lane waits on the one key
  CHECK(s.hot_share == Approx(1.0 / W));   // the one key in every warp
  // every key distinct: 1/W, 1/256, no repeats, each key seen once
  std::vector<std::uint32_t> ids(n);
  for (index_t i = 0; i < n; ++i) ids[i] = static_cast<std::uint32_t>(i);
  s = measured_stats(ids, n);
  CHECK(s.warp_level == Approx(1.0 / W));
  CHECK(s.block_level == Approx(1.0 / 256));
  CHECK(s.all_thread_level == Approx(1.0));
  CHECK(s.clustering == 0.0);
  CHECK(s.line_repeats == 0.0);  // no two lanes on one key
  CHECK(s.hot_share * static_cast<double>(s.sampled) >= 1.0);  // each key in one warp; keys of more than 4,096 entries share counters by hash
  // a warp's W consecutive keys start on a multiple of W: one line of 32 entries per warp, or W / 32
  CHECK(s.line_share == Approx(1.0 / std::min<index_t>(W, calm::table_line_entries)));
  // every key distinct and 32 entries apart: a line each
  for (index_t i = 0; i < n; ++i) ids[i] = static_cast<std::uint32_t>(i * calm::table_line_entries);
  s = measured_stats(ids, n * calm::table_line_entries);
  CHECK(s.line_share == Approx(1.0));
  // keys i % 4: W/4 lanes per key, none next to its twin
  for (index_t i = 0; i < n; ++i) ids[i] = static_cast<std::uint32_t>(i % 4);
  s = measured_stats(ids, 4);
  CHECK(s.warp_level == Approx(0.25));
  CHECK(s.hot_share == Approx(1.0 / W));  // each of the four keys in every warp
  CHECK(s.clustering == 0.0);
  CHECK(s.line_share == Approx(0.25));  // four keys in one line
  // every key outside the table
  s = measured_stats(std::vector<std::uint32_t>(1000, 9u), 4);
  CHECK(s.out_of_range == 1000);
  CHECK(s.warp_level == 0.0);
  CHECK(s.line_share == 0.0);
}

TEST_CASE("collision ratios: the device's product test answers as the value's comparison", "[stats]") {
  using calm::detail::statistic_ratio;
  // exact ties and values either side, a denominator of 0 (value 0), thresholds below 0
  for (double x : {-1.0, 0.0, 0.25, 0.75, 1.0, 1.5, 4.0})
    for (statistic_ratio r : {statistic_ratio{3.0, 4.0}, statistic_ratio{0.0, 5.0}, statistic_ratio{5.0, 0.0}, statistic_ratio{0.0, 0.0},
                              statistic_ratio{7.0, 7.0}, statistic_ratio{12.0, 3.0}, statistic_ratio{1.0, 1048576.0 * 3.0}}) {
      CAPTURE(r.num, r.den, x);
      CHECK(r.at_most(x) == (r.value() <= x));
    }
  // random counts against a threshold of the hopper tree's kind (six digits)
  auto g = calm_test::rng(1618);
  std::uniform_int_distribution<std::uint64_t> count(0, std::uint64_t(1) << 40);
  std::uniform_real_distribution<double> level(0.0, 1.0);
  for (int trial = 0; trial < 10000; ++trial) {
    statistic_ratio const r{static_cast<double>(count(g)), static_cast<double>(count(g) + 1)};
    double const x = std::round(level(g) * 1e6) / 1e6;
    CAPTURE(r.num, r.den, x);
    CHECK(r.at_most(x) == (r.value() <= x));
  }
  // ratios_of gives the values statistics_of gives
  calm::detail::collision_totals t{};
  t.warp_sum = 3u << 20, t.warps = 4, t.block_sum = 1u << 19, t.blocks = 2, t.sampled = 100, t.out_of_range = 10, t.distinct = 30;
  t.repeats = 60, t.adjacent = 45, t.lines = 12;
  calm::collision_statistics const st = calm::detail::statistics_of(&t, 1);
  calm::detail::collision_ratios const r = calm::detail::ratios_of(t);
  CHECK(r.warp_level.value() == st.warp_level);
  CHECK(st.warp_level == 0.75);
  CHECK(r.block_level.value() == st.block_level);
  CHECK(st.block_level == 0.25);
  CHECK(r.all_thread_level.value() == st.all_thread_level);
  CHECK(st.all_thread_level == 3.0);
  CHECK(r.clustering.value() == st.clustering);
  CHECK(st.clustering == 0.75);
  CHECK(r.line_share.value() == st.line_share);
  CHECK(st.line_share == 0.4);  // 12 lines over 90 - 60 distinct keys
}

TEST_CASE("collision_stats: bad arguments throw", "[stats]") {
  using namespace calm_test;
  buffer<std::uint32_t> d(std::vector<std::uint32_t>(10, 1u));
  REQUIRE_THROWS_AS(calm::collision_stats(d.data(), -1, 4, {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::collision_stats(static_cast<std::uint32_t const*>(nullptr), 10, 4, {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::collision_stats(d.data(), 10, -4, {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::collision_stats(d.data(), 10, 4, {1 << 16, 16}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::collision_stats(d.data(), 10, 4, {100, 256}, exec{}), calm::error);
  calm::collision_sample_options opt;
  opt.line_vec = -1;
  REQUIRE_THROWS_AS(calm::collision_stats(d.data(), 10, 4, opt, exec{}), calm::error);
  opt.line_vec = 4, opt.line_entries = 0;
  REQUIRE_THROWS_AS(calm::collision_stats(d.data(), 10, 4, opt, exec{}), calm::error);
}
