// SPDX-License-Identifier: Apache-2.0
// Conformance: plans (calm::scatter_plan, calm::histogram_plan) run again and again over new keys of
// their shape against the sequential reference; runs of another shape rejected before anything is
// launched; a plan destroyed with its work in flight; on CUDA its repeated runs as one recorded graph;
// measuring plans (plan_mode::measure); a user's workspace_resource.
#pragma once

#include <stdexcept>
#include <utility>
#include <vector>

#include "../support/bulk_check.hpp"

namespace calm_test {

/// A plan of strategy S run `rounds` times, each on fresh keys of every kind in turn (the same buffers,
/// as a user's loop has them), the table checked against the reference after each run.
template <calm::strategy S, class T>
void check_plan_rounds(index_t n, index_t bins, bool weighted, int rounds) {
  auto g = rng(7001 + n + bins * 3 + static_cast<int>(S) * 17 + weighted);
  buffer<std::uint32_t> dk(static_cast<std::size_t>(n));
  buffer<T> dv(static_cast<std::size_t>(n)), table(static_cast<std::size_t>(bins));
  calm::scatter_plan<calm::plus, std::uint32_t, T, T const*, S, exec> scatter(calm::plus{}, n, bins, {}, exec{});
  calm::histogram_plan<std::uint32_t, T, S, exec> histogram(n, bins, {}, exec{});
  auto const kinds = all_key_kinds();
  for (int r = 0; r < rounds; ++r) {
    keys_kind const kind = kinds[static_cast<std::size_t>(r) % kinds.size()];
    INFO("plan " << calm::to_string(S) << ", round " << r << ": " << to_string(kind) << ", n " << n << ", bins " << bins << ", weighted " << weighted);
    auto const keys = table_keys<std::uint32_t>(static_cast<std::size_t>(n), kind, bins, g, true);
    auto vals = random_operands<calm::plus, T>(static_cast<std::size_t>(n), g);
    auto const init = random_operands<calm::plus, T>(static_cast<std::size_t>(bins), g);
    dk.upload(keys);
    dv.upload(vals);
    table.upload(init);
    calm::strategy const ran = weighted ? scatter.run(dk.data(), dv.data(), n, table.data(), bins) : histogram.run(dk.data(), n, table.data(), bins);
    if (n > 0 && bins > 0) CHECK(ran != calm::strategy::automatic);  // run reads back what the device chose
    if (S != calm::strategy::automatic && n > 0 && bins > 0) CHECK(ran == S);
    if (!weighted) std::fill(vals.begin(), vals.end(), T(1));
    verify_scatter<calm::plus, T>(init, keys, vals, table.download(), "a plan's run");
  }
}

/// A measuring plan (plan_mode::measure) over keys of each kind: its first run times the candidates and
/// runs the fastest, the next ones run that one; remeasure() measures again at the next run. The table is
/// checked after every run, with keys outside the table counted once per run (not by the measuring).
template <class T>
void check_measured_plan(index_t n, index_t bins, bool weighted) {
  auto g = rng(7501 + n + bins * 5 + weighted);
  buffer<std::uint32_t> dk(static_cast<std::size_t>(n));
  buffer<T> dv(static_cast<std::size_t>(n)), table(static_cast<std::size_t>(bins));
  buffer<std::uint64_t> skipped(std::vector<std::uint64_t>(1, 0));
  calm::scatter_options opt;
  opt.skipped = skipped.data();
  calm::scatter_plan<calm::plus, std::uint32_t, T, T const*, calm::strategy::automatic, exec> scatter(calm::plus{}, n, bins, calm::plan_mode::measure, opt, exec{});
  calm::histogram_plan<std::uint32_t, T, calm::strategy::automatic, exec> histogram(n, bins, calm::plan_mode::measure, opt, exec{});
  CHECK(scatter.mode() == calm::plan_mode::measure);
  std::uint64_t outside = 0;
  auto const kinds = all_key_kinds();
  for (std::size_t r = 0; r < kinds.size(); ++r) {
    INFO("measured plan, round " << r << ": " << to_string(kinds[r]) << ", n " << n << ", bins " << bins << ", weighted " << weighted);
    auto const keys = table_keys<std::uint32_t>(static_cast<std::size_t>(n), kinds[r], bins, g, true);
    auto vals = random_operands<calm::plus, T>(static_cast<std::size_t>(n), g);
    auto const init = random_operands<calm::plus, T>(static_cast<std::size_t>(bins), g);
    dk.upload(keys);
    dv.upload(vals);
    table.upload(init);
    if (r == 4) weighted ? scatter.remeasure() : histogram.remeasure();
    calm::measurement const& m = weighted ? scatter.measured() : histogram.measured();
    bool const measures = r == 0 || r == 4;
    if (measures) CHECK(m.chosen == calm::strategy::automatic);
    calm::strategy const before = m.chosen;
    calm::strategy const ran = weighted ? scatter.run(dk.data(), dv.data(), n, table.data(), bins) : histogram.run(dk.data(), n, table.data(), bins);
    if (!weighted) std::fill(vals.begin(), vals.end(), T(1));
    verify_scatter<calm::plus, T>(init, keys, vals, table.download(), "a measured plan's run");
    for (auto k : keys) outside += k >= static_cast<std::uint32_t>(bins);
    CHECK(skipped.download()[0] == outside);
    if (n == 0 || bins == 0) continue;
    REQUIRE(m.chosen != calm::strategy::automatic);
    CHECK(ran == m.chosen);
    if (!measures) CHECK(m.chosen == before);
    REQUIRE(m.count >= 1);
    CHECK(m.timed[0].s == m.chosen);
    for (int i = 0; i < m.count; ++i) {
      CAPTURE(i, calm::to_string(m.timed[i].s), m.timed[i].items, m.timed[i].seconds);
      if (m.count > 1) CHECK((m.timed[i].items > 0 && m.timed[i].items <= n && m.timed[i].seconds >= 0.0));
      if (i > 0 && m.timed[i].items == n && m.timed[0].items == n) CHECK(m.timed[i].seconds >= m.timed[0].seconds);
      if (i > 0) CHECK(m.timed[i].items <= m.timed[i - 1].items);
    }
    if (m.count > 1 && m.timed[1].items == n) CHECK(m.chosen_seconds == m.timed[0].seconds);
    CHECK(m.seconds >= 0.0);
  }
}

}  // namespace calm_test

TEST_CASE("plans: a measuring plan runs the fastest candidate, its table as one call leaves it", "[bulk][plan][measure]") {
  using namespace calm_test;
  index_t const n = GENERATE(0, 1001, 40003);
  index_t const bins = GENERATE(1, 7, 4099, 70001);
  CAPTURE(name, warp_size());
  check_measured_plan<float>(n, bins, true);
  check_measured_plan<std::uint32_t>(n, bins, false);
}

TEST_CASE("plans: a measuring plan's trial is a prefix of many keys", "[bulk][plan][measure]") {
  using namespace calm_test;
  CAPTURE(name, warp_size());
  check_measured_plan<float>((index_t(1) << 22) + 4099, 70001, true);
}

TEST_CASE("plans: repeated runs over new keys of the plan's shape", "[bulk][plan]") {
  using namespace calm_test;
  index_t const n = GENERATE(0, 1, 1001, 40003);
  index_t const bins = GENERATE(1, 7, 4099, 70001);
  CAPTURE(name, warp_size());
  check_plan_rounds<calm::strategy::automatic, float>(n, bins, true, 5);
  check_plan_rounds<calm::strategy::automatic, std::uint32_t>(n, bins, false, 5);
  check_plan_rounds<calm::strategy::peer_reduce, float>(n, bins, true, 3);
  check_plan_rounds<calm::strategy::hot_key, std::uint32_t>(n, bins, false, 3);
}

TEST_CASE("plans: another shape or a bad argument throws before launching and leaves the table as it was", "[bulk][plan]") {
  using namespace calm_test;
  std::vector<float> const init(16, 2.5f);
  buffer<std::uint32_t> dk(std::vector<std::uint32_t>(100, 3));
  buffer<float> vals(std::vector<float>(100, 1.0f)), table(init);
  REQUIRE_THROWS_AS((calm::scatter_plan<calm::plus, std::uint32_t, float, float const*, calm::strategy::automatic, exec>(calm::plus{}, -1, 16, {}, exec{})),
                    calm::error);
  REQUIRE_THROWS_AS((calm::histogram_plan<std::uint32_t, std::uint32_t, calm::strategy::automatic, exec>(100, -2, {}, exec{})), calm::error);
  calm::scatter_plan<calm::plus, std::uint32_t, float, float const*, calm::strategy::automatic, exec> plan(calm::plus{}, 100, 16, {}, exec{});
  CHECK(plan.items() == 100);
  CHECK(plan.bins() == 16);
  REQUIRE_THROWS_AS(plan.run_async(dk.data(), vals.data(), 99, table.data(), 16), calm::error);   // another n
  REQUIRE_THROWS_AS(plan.run_async(dk.data(), vals.data(), 100, table.data(), 17), calm::error);  // another table size
  REQUIRE_THROWS_AS(plan.run_async(nullptr, vals.data(), 100, table.data(), 16), calm::error);
  REQUIRE_THROWS_AS(plan.run(dk.data(), nullptr, 100, table.data(), 16), calm::error);
  calm::scatter_plan<calm::plus, std::uint32_t, float, float const*, calm::strategy::privatize, exec> too_big(calm::plus{}, 100, calm::privatize_capacity<float>(exec{}) + 1, {}, exec{});
  REQUIRE_THROWS_AS(too_big.run(dk.data(), vals.data(), 100, table.data(), calm::privatize_capacity<float>(exec{}) + 1), calm::error);
  synchronize();
  require_equal(table.download(), init, "table after rejected runs");
  calm::scatter_plan<calm::plus, std::uint32_t, float, float const*, calm::strategy::automatic, exec> measuring(calm::plus{}, 100, 16,
                                                                                                             calm::plan_mode::measure, {}, exec{});
  REQUIRE_THROWS_AS(measuring.run(dk.data(), vals.data(), 99, table.data(), 16), calm::error);  // nothing measured, nothing written
  REQUIRE_THROWS_AS(measuring.run(dk.data(), nullptr, 100, table.data(), 16), calm::error);
  CHECK(measuring.measured().chosen == calm::strategy::automatic);
  synchronize();
  require_equal(table.download(), init, "table after rejected runs");
  plan.run(dk.data(), vals.data(), 100, table.data(), 16);  // the plan still runs after its rejected calls
  std::vector<float> want = init;
  want[3] += 100.0f;
  require_equal(table.download(), want, "table after a run");
  measuring.run(dk.data(), vals.data(), 100, table.data(), 16);
  CHECK(measuring.measured().chosen != calm::strategy::automatic);
  want[3] += 100.0f;
  require_equal(table.download(), want, "table after a measuring run");
}

TEST_CASE("plans: a plan destroyed with its runs in flight leaves them whole", "[bulk][plan]") {
  using namespace calm_test;
  index_t const n = (index_t(1) << 21) + 7, bins = 70001;
  auto g = rng(7331);
  auto const keys = table_keys<std::uint32_t>(static_cast<std::size_t>(n), keys_kind::zipf, bins, g, true);
  buffer<std::uint32_t> dk(keys);
  buffer<std::uint32_t> hist(static_cast<std::size_t>(bins));
  hist.fill_bytes(0);
  for (int r = 0; r < 3; ++r) {  // the third run launches the recorded graph on CUDA; the plan goes right after it
    calm::histogram_plan<std::uint32_t, std::uint32_t, calm::strategy::automatic, exec> plan(n, bins, {}, exec{});
    for (int i = 0; i <= r; ++i) plan.run_async(dk.data(), n, hist.data(), bins);
  }
  synchronize();
  std::vector<std::uint32_t> want(static_cast<std::size_t>(bins), 0);
  for (auto k : keys)
    if (k < static_cast<std::uint32_t>(bins)) want[k] += 6;
  require_equal(hist.download(), want, "histograms of plans destroyed in flight");
}

namespace calm_test {
/// A workspace_resource over the backend's own memory that records what it hands out; `fail`: the next
/// allocate returns memory 16 bytes past an aligned buffer (misaligned) or throws.
struct recording_resource {
  enum class fail { none, misaligned, throws };
  exec backend{};
  fail next = fail::none;
  int taken = 0, given_back = 0;
  std::size_t outstanding = 0, largest = 0;
  std::vector<std::pair<void*, std::size_t>> live;

  static void* allocate(std::size_t bytes, void*, void* self) {
    auto& r = *static_cast<recording_resource*>(self);
    if (r.next == fail::throws) throw std::runtime_error("recording_resource: out of memory");
    auto* const p = static_cast<unsigned char*>(r.backend.allocate(bytes + 64));
    r.live.emplace_back(p, bytes);
    ++r.taken, r.outstanding += bytes, r.largest = std::max(r.largest, bytes);
    return r.next == fail::misaligned ? p + 16 : p;
  }
  static void release(void* p, std::size_t bytes, void*, void* self) {
    auto& r = *static_cast<recording_resource*>(self);
    auto* const base = static_cast<unsigned char*>(p) - (r.next == fail::misaligned ? 16 : 0);
    auto const it = std::find(r.live.begin(), r.live.end(), std::make_pair(static_cast<void*>(base), bytes));
    if (it == r.live.end()) return;  // not ours or not its size: given_back stays short and the test fails
    r.live.erase(it);
    r.backend.release(base, bytes + 64);
    ++r.given_back, r.outstanding -= bytes;
  }
  calm::workspace_resource resource() { return {&allocate, &release, this}; }
};
}  // namespace calm_test

TEST_CASE("workspaces: a user's workspace_resource gives every workspace of calls and plans, each back once with its size", "[bulk][plan]") {
  using namespace calm_test;
  index_t const n = 100003, bins = 70001;  // beyond a block: sampled and measured paths take workspaces
  auto g = rng(7507);
  auto const keys = table_keys<std::uint32_t>(static_cast<std::size_t>(n), keys_kind::zipf, bins, g, true);
  buffer<std::uint32_t> dk(keys);
  buffer<std::uint32_t> hist(static_cast<std::size_t>(bins));
  hist.fill_bytes(0);
  recording_resource r;
  exec ex{};
  ex.workspace = r.resource();
  calm::histogram(dk.data(), n, hist.data(), bins, {}, ex);
  index_t const block_bins = 4096;  // a forced block-local strategy on every backend: its table fits a block
  calm::histogram<calm::strategy::privatize>(dk.data(), n, hist.data(), block_bins, {}, ex);
  {
    calm::histogram_plan<std::uint32_t, std::uint32_t, calm::strategy::automatic, exec> plan(n, bins, {}, ex);
    for (int i = 0; i < 3; ++i) plan.run(dk.data(), n, hist.data(), bins);
    calm::histogram_plan<std::uint32_t, std::uint32_t, calm::strategy::automatic, exec> measuring(n, bins, calm::plan_mode::measure, {}, ex);
    measuring.run(dk.data(), n, hist.data(), bins);
  }
  synchronize();
  CHECK(r.taken > 0);
  CHECK(r.given_back == r.taken);
  CHECK(r.outstanding == 0u);
  std::vector<std::uint32_t> want(static_cast<std::size_t>(bins), 0);
  for (auto k : keys)  // an automatic call, three runs of a plan, one measuring run; the forced call below block_bins
    if (k < static_cast<std::uint32_t>(bins)) want[k] += k < static_cast<std::uint32_t>(block_bins) ? 6 : 5;
  require_equal(hist.download(), want, "histograms through a user's workspace_resource");
  // a resource that fails: a clear calm::error (or its own exception) before anything is launched, the table as it was
  for (auto f : {recording_resource::fail::misaligned, recording_resource::fail::throws}) {
    r.next = f;
    int const before = r.given_back;
    if (f == recording_resource::fail::misaligned) CHECK_THROWS_AS(calm::histogram(dk.data(), n, hist.data(), bins, {}, ex), calm::error);
    else CHECK_THROWS_AS(calm::histogram(dk.data(), n, hist.data(), bins, {}, ex), std::runtime_error);
    synchronize();
    if (f == recording_resource::fail::misaligned) CHECK(r.given_back == before + 1);  // handed back at once
    require_equal(hist.download(), want, "a table after a workspace_resource failed");
  }
  r.next = recording_resource::fail::none;
  CHECK(r.outstanding == 0u);
  int const taken = r.taken;  // no items: nothing taken, nothing written
  calm::histogram(dk.data(), 0, hist.data(), bins, {}, ex);
  synchronize();
  CHECK(r.taken == taken);
  require_equal(hist.download(), want, "a table after a call of no items");
}

#if defined(CALM_BACKEND_CUDA)
TEST_CASE("plans: repeated runs launch one recorded graph; free calls record none", "[bulk][plan]") {
  using namespace calm_test;
  index_t const n = 100003, bins = 70001;  // a table larger than a block: the hopper tree samples
  auto g = rng(7401);
  auto const keys = table_keys<std::uint32_t>(static_cast<std::size_t>(n), keys_kind::uniform_many, bins, g, true);
  buffer<std::uint32_t> dk(keys);
  buffer<std::uint32_t> hist(static_cast<std::size_t>(bins));
  hist.fill_bytes(0);
  std::uint64_t const before = calm::cuda::recorded_graph_launches();
  for (int i = 0; i < 4; ++i) calm::histogram(dk.data(), n, hist.data(), bins, {}, exec{});
  synchronize();
  CHECK(calm::cuda::recorded_graph_launches() == before);
  calm::histogram_plan<std::uint32_t, std::uint32_t, calm::strategy::automatic, exec> plan(n, bins, {}, exec{});
  for (int i = 0; i < 4; ++i) CHECK(plan.run_async(dk.data(), n, hist.data(), bins) == calm::strategy::automatic);
  synchronize();
  CHECK(calm::cuda::recorded_graph_launches() - before == 3u);  // recorded at the second run, launched from then on
  std::vector<std::uint32_t> want(static_cast<std::size_t>(bins), 0);
  for (auto k : keys)
    if (k < static_cast<std::uint32_t>(bins)) want[k] += 8;
  require_equal(hist.download(), want, "histograms of free calls and of a plan's recorded graph");
}
#endif
