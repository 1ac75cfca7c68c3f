// SPDX-License-Identifier: Apache-2.0
// Conformance: plans (calm::scatter_plan, calm::histogram_plan) run again and again over new keys of
// their shape against the sequential reference; runs of another shape rejected before anything is
// launched; a plan destroyed with its work in flight; on CUDA its repeated runs as one recorded graph.
#pragma once

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

}  // namespace calm_test

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
  plan.run(dk.data(), vals.data(), 100, table.data(), 16);  // the plan still runs after its rejected calls
  std::vector<float> want = init;
  want[3] += 100.0f;
  require_equal(table.download(), want, "table after a run");
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

#if defined(CALM_BACKEND_CUDA)
TEST_CASE("plans: repeated runs launch one recorded graph; free calls record none", "[bulk][plan]") {
  using namespace calm_test;
  index_t const n = 100003, bins = 70001;  // a table larger than a block: the hopper tree samples
  auto g = rng(7401);
  buffer<std::uint32_t> dk(table_keys<std::uint32_t>(static_cast<std::size_t>(n), keys_kind::uniform_many, bins, g, true));
  buffer<std::uint32_t> hist(static_cast<std::size_t>(bins));
  std::uint64_t const before = calm::cuda::recorded_graph_launches();
  for (int i = 0; i < 4; ++i) calm::histogram(dk.data(), n, hist.data(), bins, {}, exec{});
  synchronize();
  CHECK(calm::cuda::recorded_graph_launches() == before);
  calm::histogram_plan<std::uint32_t, std::uint32_t, calm::strategy::automatic, exec> plan(n, bins, {}, exec{});
  for (int i = 0; i < 4; ++i) CHECK(plan.run_async(dk.data(), n, hist.data(), bins) == calm::strategy::automatic);
  synchronize();
  CHECK(calm::cuda::recorded_graph_launches() - before == 3u);  // recorded at the second run, launched from then on
}
#endif
