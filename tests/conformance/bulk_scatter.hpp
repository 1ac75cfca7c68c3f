// SPDX-License-Identifier: Apache-2.0
// Conformance: the bulk front door (calm::scatter, calm::histogram, calm::histogram_even) against the
// sequential reference, for every strategy (automatic included), key kind, table size and op, with a
// set_scatter order, the count of skipped keys, and the errors it gives before launching.
// strategy::automatic's own parts (the choice on the device, the launches behind it): bulk_automatic.hpp.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <random>
#include <tuple>

#include "../support/bulk_check.hpp"

TEST_CASE("scatter and histogram: every strategy, key kind and table size", "[bulk]") {
  using namespace calm_test;
  calm::strategy const s = GENERATE(from_range(all_strategies()));
  // every n with every small table; the table of 2^20 entries (beyond block-local memory) with the
  // sizes that reach it, as checking its entries costs the same whatever n is
  static std::pair<index_t, index_t> const shapes[] = {{0, 1},       {0, 7},       {0, 4099},       {1, 1},        {1, 7},
                                                        {1, 4099},    {1001, 1},    {1001, 7},       {1001, 4099},  {40003, 1},
                                                        {40003, 7},   {40003, 4099}, {1001, 1 << 20}, {40003, 1 << 20}};
  std::size_t const shape = GENERATE(range(std::size_t(0), std::size(shapes)));
  index_t const n = shapes[shape].first, bins = shapes[shape].second;
  keys_kind const kind = GENERATE(from_range(all_key_kinds()));
  CAPTURE(name, warp_size());
  if (!runs_in_this_build(static_cast<std::size_t>(s) + shape + static_cast<std::size_t>(kind), 3)) return;
  check_bulk<calm::plus, std::uint32_t>(s, kind, n, bins, false, true);
  check_bulk<calm::plus, float>(s, kind, n, bins, true, false);
  check_bulk<calm::max, std::int32_t, std::int32_t>(s, kind, n, bins, true, true);
  check_bulk<calm::max, std::int64_t, std::int64_t>(s, kind, n, bins, true, true);
  check_bulk<calm::min, double, std::int32_t>(s, kind, n, std::min<index_t>(bins, 65536), true, true);
  check_bulk<calm::plus, double, std::uint16_t>(s, kind, n, std::min<index_t>(bins, 65536), true, false);
  check_bulk<calm::plus, std::uint64_t, std::uint8_t>(s, kind, n, std::min<index_t>(bins, 256), false, false);
}

TEST_CASE("scatter and histogram: keys and values at any offset from a chunk boundary, every strategy", "[bulk]") {
  using namespace calm_test;
  calm::strategy const s = GENERATE(from_range(all_strategies()));
  int const key_offset = GENERATE(0, 1, 2, 3);
  int const value_offset = GENERATE(0, 1, 3);
  index_t const n = GENERATE(2, 5, 1001, 40003);  // shorter than, or much longer than, the items before a chunk
  CAPTURE(name, warp_size());
  if (!runs_in_this_build(static_cast<std::size_t>(s) + static_cast<std::size_t>(key_offset + value_offset) + static_cast<std::size_t>(n % 7), 2)) return;
  if (value_offset == 0) check_bulk<calm::plus, std::uint32_t>(s, keys_kind::hot, n, 7, false, true, false, key_offset);
  check_bulk<calm::plus, float>(s, keys_kind::runs, n, 4099, true, false, false, key_offset, value_offset);
  check_bulk<calm::min, double, std::int32_t>(s, keys_kind::uniform_many, n, 4099, true, true, false, key_offset, value_offset);
}

TEST_CASE("scatter: a set_scatter order, followed by the warp strategies", "[bulk]") {
  using namespace calm_test;
  calm::strategy const s = GENERATE(from_range(all_strategies()));
  keys_kind const kind = GENERATE(keys_kind::runs, keys_kind::hot, keys_kind::uniform_many);
  index_t const n = GENERATE(0, 33, 30011);
  CAPTURE(name, warp_size());
  check_bulk<calm::plus, float>(s, kind, n, 4099, true, false, true);
  check_bulk<calm::plus, std::uint32_t>(s, kind, n, 7, false, true, true);
}

TEST_CASE("histogram_even: CUB's even bins over [lower, upper)", "[bulk]") {
  using namespace calm_test;
  calm::strategy const s = GENERATE(from_range(all_strategies()));
  index_t const n = GENERATE(0, 1, 1001, 40003);
  index_t const bins = GENERATE(1, 10, 256, 5000);
  CAPTURE(name, warp_size(), calm::to_string(s), n, bins);
  auto g = rng(4242 + n + bins + static_cast<int>(s));
  std::uniform_real_distribution<float> u(-0.25f, 1.25f);  // a sixth below lower, a sixth at or above upper
  std::vector<float> samples(static_cast<std::size_t>(n));
  for (auto& x : samples) x = u(g);
  if (n > 3) samples[0] = 0.0f, samples[1] = 1.0f, samples[2] = std::nanf("");
  std::vector<std::int32_t> want(static_cast<std::size_t>(bins), 0);
  for (float x : samples)
    if (x >= 0.0f && x < 1.0f) ++want[std::min<std::size_t>(static_cast<std::size_t>(static_cast<double>(x) * bins), bins - 1)];
  buffer<float> d(samples);
  buffer<std::int32_t> hist(static_cast<std::size_t>(bins));
  hist.fill_bytes(0);
  if (forced_too_big<std::int32_t>(s, bins)) return;
  calm::for_strategy(s, [&](auto c) { calm::histogram_even<c()>(d.data(), n, hist.data(), bins, 0.0, 1.0, {}, exec{}); });
  synchronize();
  require_equal(hist.download(), want, "histogram_even");
}

namespace calm_test {

/// overwrite: the table starts at Op's identity, whatever it held (random garbage here), for strategy s.
template <class Op, class T, class K>
void check_overwrite(calm::strategy s, index_t n, index_t bins) {
  auto g = rng(6007 + static_cast<int>(s) * 11 + n + bins);
  auto const keys = table_keys<K>(static_cast<std::size_t>(n), keys_kind::hot, bins, g, true);
  auto const vals = random_operands<Op, T>(static_cast<std::size_t>(n), g);
  auto const garbage = random_operands<Op, T>(static_cast<std::size_t>(bins), g);
  buffer<K> dk(keys);
  buffer<T> dv(vals), table(garbage);
  calm::scatter_options opt;
  opt.overwrite = true;
  INFO("overwrite, " << calm::to_string(s) << ", n " << n << ", bins " << bins);
  if (forced_too_big<T, Op>(s, bins)) return;
  calm::for_strategy(s, [&](auto c) { calm::scatter<c()>(Op{}, static_cast<K const*>(dk.data()), static_cast<T const*>(dv.data()), n, table.data(), bins, opt, exec{}); });
  synchronize();
  verify_scatter<Op, T>(std::vector<T>(static_cast<std::size_t>(bins), Op::template identity<T>()), keys, vals, table.download(), "overwrite");
}

}  // namespace calm_test

TEST_CASE("bulk calls that overwrite: the table holds the call's result alone, as CUB's histograms write theirs", "[bulk]") {
  using namespace calm_test;
  calm::strategy const s = GENERATE(from_range(all_strategies()));
  index_t const n = GENERATE(0, 1001, 40003);
  index_t const bins = GENERATE(1, 4099);
  CAPTURE(name, warp_size());
  // the op and type pairs of the first test above: no call compiled for this test alone
  check_overwrite<calm::plus, float, std::uint32_t>(s, n, bins);
  check_overwrite<calm::max, std::int32_t, std::int32_t>(s, n, bins);
  check_overwrite<calm::min, double, std::int32_t>(s, n, bins);
  // a histogram that overwrites: the counts alone
  buffer<std::uint32_t> dk(std::vector<std::uint32_t>{3, 3, 5, 9});
  buffer<std::uint32_t> hist(std::vector<std::uint32_t>(8, 77));
  calm::scatter_options opt;
  opt.overwrite = true;
  calm::for_strategy(s, [&](auto c) { calm::histogram<c()>(static_cast<std::uint32_t const*>(dk.data()), 4, hist.data(), 8, opt, exec{}); });
  synchronize();
  require_equal(hist.download(), std::vector<std::uint32_t>{0, 0, 0, 2, 0, 1, 0, 0}, "a histogram that overwrites");
}

TEST_CASE("histograms into a table beyond a core's cache: counts past 255 in one thread's share (a CPU's narrow counters)", "[bulk]") {
  using namespace calm_test;
  // uint32 counts into 2^18 + 3 entries, int64 into 2^17 + 3: a megabyte of table or more. Quarters of the
  // keys in order: 100 keys on 100 lines (each 1,000 times), one key, a quarter on one key and the rest
  // uniform, runs of 300 of one key; one key in 16 outside the table. Four threads sample one quarter each
  // (a table, the entry in registers, the hot slots, runs); on any number of threads some entry passes 255
  // in one thread's share. The keys do not crowd the cache's sets, so a CPU's plan is narrow.
  index_t const n = 400003;
  auto g = rng(41);
  auto const check = [&](auto zero, index_t bins) {
    using T = decltype(zero);
    std::vector<std::uint32_t> keys(static_cast<std::size_t>(n));
    for (index_t i = 0; i < n; ++i) {
      std::uint64_t const r = g();
      auto const b = static_cast<std::uint64_t>(bins);
      index_t const quarter = i / ((n + 3) / 4);
      std::uint64_t const k = quarter == 0 ? r % 100 * 16 + 1000 : quarter == 1 ? 5 : quarter == 2 ? (r % 4 == 0 ? 7 : r % b) : i / 300 * 40503 % b;
      keys[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(r % 16 == 3 ? b + r % 5 : k);
    }
    std::vector<T> want(static_cast<std::size_t>(bins), T(2));
    for (auto k : keys)
      if (k < bins) want[k] += 1;
    if constexpr (exec::thread_tables) {
      bool const crowded = calm::detail::keys_crowd_sets<T>(keys.data(), n, bins, calm::detail::identity_key{});
      CHECK(calm::detail::plan_thread_tables<T>(n, bins, crowded, 8, exec{}).narrow);
    }
    buffer<std::uint32_t> dk(keys);
    for (calm::strategy s : {calm::strategy::automatic, calm::strategy::thread_private, calm::strategy::naive}) {
      if (sizeof(T) == 8 && s != calm::strategy::thread_private) continue;  // (no other int64 histogram compiled here)
      buffer<T> hist(std::vector<T>(static_cast<std::size_t>(bins), T(2)));
      auto const* const k = static_cast<std::uint32_t const*>(dk.data());
      if constexpr (sizeof(T) == 8) calm::histogram<calm::strategy::thread_private>(k, n, hist.data(), bins, {}, exec{});
      else calm::for_strategy(s, [&](auto c) { calm::histogram<c()>(k, n, hist.data(), bins, {}, exec{}); });
      synchronize();
      CAPTURE(name, warp_size(), calm::to_string(s), sizeof(T));
      require_equal(hist.download(), want, "a histogram past 255 counts an entry");
    }
  };
  check(std::uint32_t(0), (index_t(1) << 18) + 3);
  check(std::int64_t(0), (index_t(1) << 17) + 3);
}

TEST_CASE("bulk calls: bad input throws before launching and leaves the table as it was", "[bulk]") {
  using namespace calm_test;
  std::vector<float> init(16, 2.5f);
  buffer<std::uint32_t> dk(std::vector<std::uint32_t>(100, 3));
  buffer<float> vals(std::vector<float>(100, 1.0f)), table(init);
  auto scatter = [&](index_t n, std::uint32_t const* k, float const* v, float* t, index_t bins, calm::strategy s) {
    calm::for_strategy(s, [&](auto c) { calm::scatter<c()>(calm::plus{}, k, v, n, t, bins, {}, exec{}); });
  };
  float const* v = vals.data();
  REQUIRE_THROWS_AS(scatter(-1, dk.data(), v, table.data(), 16, calm::strategy::automatic), calm::error);
  REQUIRE_THROWS_AS(scatter(100, nullptr, v, table.data(), 16, calm::strategy::automatic), calm::error);
  REQUIRE_THROWS_AS(scatter(100, dk.data(), nullptr, table.data(), 16, calm::strategy::naive), calm::error);
  REQUIRE_THROWS_AS(scatter(100, dk.data(), v, nullptr, 16, calm::strategy::privatize), calm::error);
  REQUIRE_THROWS_AS(scatter(100, dk.data(), v, table.data(), -1, calm::strategy::automatic), calm::error);
  REQUIRE_THROWS_AS(scatter(100, dk.data(), v, table.data(), 16, static_cast<calm::strategy>(99)), calm::error);
  index_t const huge = calm::privatize_capacity<float>(exec{}) + 1;
  REQUIRE_THROWS_AS(scatter(100, dk.data(), v, table.data(), huge, calm::strategy::privatize), calm::error);
  {
    calm::scatter_options o;
    o.min_line_repeats = std::nanf("");
    REQUIRE_THROWS_AS(calm::scatter(calm::plus{}, dk.data(), v, 100, table.data(), 16, o, exec{}), calm::error);
  }
  buffer<std::int32_t> hist(std::vector<std::int32_t>(16, 7));
  REQUIRE_THROWS_AS(calm::histogram_even(v, 100, hist.data(), 16, 1.0, 1.0, {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::histogram_even(v, 100, hist.data(), 0, 0.0, 1.0, {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::histogram(dk.data(), -5, hist.data(), 16, {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::strategy_from_string("fastest"), calm::error);
  CHECK(calm::strategy_from_string("hot_key") == calm::strategy::hot_key);
  synchronize();
  require_equal(table.download(), init, "table after rejected calls");
  require_equal(hist.download(), std::vector<std::int32_t>(16, 7), "histogram after rejected calls");
}

#if defined(CALM_BACKEND_CUDA) || defined(CALM_BACKEND_HIP)
TEST_CASE("bulk calls on a stream of the caller's", "[bulk]") {
  using namespace calm_test;
  backend::runtime::stream_t stream{};
#if defined(CALM_BACKEND_CUDA)
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
#else
  REQUIRE(hipStreamCreate(&stream) == hipSuccess);
#endif
  auto g = rng(31);
  auto keys = table_keys<std::uint32_t>(100003, keys_kind::hot, 4099, g, true);
  buffer<std::uint32_t> dk(keys);
  buffer<std::uint32_t> hist(4099);
  hist.fill_bytes(0);
  for (calm::strategy s : all_strategies())
    calm::for_strategy(s, [&](auto c) { calm::histogram<c()>(dk.data(), 100003, hist.data(), 4099, {}, calm::on_stream(stream)); });
  calm::on_stream(stream).synchronize();
  std::vector<std::uint32_t> want(4099, 0);
  for (auto k : keys)
    if (k < 4099) want[k] += calm::strategy_count;
  require_equal(hist.download(), want, "histograms on the caller's stream");
#if defined(CALM_BACKEND_CUDA)
  cudaStreamDestroy(stream);
#else
  (void)hipStreamDestroy(stream);
#endif
}
#endif

TEST_CASE("bulk calls: more than 2^31 items use 64-bit indexing (GPU only)", "[bulk][large]") {
  using namespace calm_test;
  if (std::string(name) == "openmp") return;  // 2 GiB of keys per strategy: the GPU run checks it
  index_t const n = (index_t(1) << 31) + 12345;
  std::vector<std::uint8_t> keys(static_cast<std::size_t>(n));
  std::uint64_t x = 0x243f6a8885a308d3ull ^ Catch::rngSeed();
  for (auto& k : keys) {  // xorshift64: a uniform byte per item, a third of them folded onto key 7
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    k = (x & 3) == 0 ? std::uint8_t(7) : static_cast<std::uint8_t>(x >> 24);
  }
  std::vector<std::uint64_t> want(256, 0);
  for (auto k : keys) ++want[k];
  buffer<std::uint8_t> d(keys);
  keys = {};
  for (calm::strategy s : {calm::strategy::automatic, calm::strategy::naive, calm::strategy::peer_reduce, calm::strategy::privatize,
                           calm::strategy::privatize_adaptive, calm::strategy::hot_key}) {
    CAPTURE(calm::to_string(s));
    buffer<std::uint64_t> hist(256);
    hist.fill_bytes(0);
    calm::for_strategy(s, [&](auto c) { calm::histogram<c()>(d.data(), n, hist.data(), 256, {}, exec{}); });
    synchronize();
    require_equal(hist.download(), want, "histogram of 2^31 + 12345 keys");
  }
}

TEST_CASE("fuzz: random shapes, key and value types, ops, strategies, offsets and options, for a fixed time", "[bulk][fuzz]") {
  using namespace calm_test;
  // CALM_FUZZ_SECONDS (default 10) bounds the loop; a failure reproduces with the --rng-seed Catch printed
  // and the draw's number (the INFO below). The op and type pairs are check_bulk's of the first test above,
  // so the fuzz compiles no call of its own.
  char const* env = std::getenv("CALM_FUZZ_SECONDS");
  double const seconds = env != nullptr ? std::atof(env) : 10.0;
  auto g = rng(777);
  auto const start = std::chrono::steady_clock::now();
  auto const log_uniform = [&](int bits) { return static_cast<index_t>(std::exp2(std::uniform_real_distribution<double>(0, bits)(g))) - 1; };
  int draws = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
    auto const s = static_cast<calm::strategy>(std::uniform_int_distribution<int>(0, calm::strategy_count - 1)(g));
    auto const kind = all_key_kinds()[std::uniform_int_distribution<std::size_t>(0, all_key_kinds().size() - 1)(g)];
    index_t const n = log_uniform(17), bins = std::max<index_t>(1, log_uniform(21));
    bool const stray = g() & 1, ordered = (g() & 7) == 0;
    int const key_offset = static_cast<int>(g() % 4), value_offset = static_cast<int>(g() % 4);
    int const pair = static_cast<int>(g() % 7);
    INFO("fuzz draw " << draws << " (seed " << Catch::rngSeed() << "): pair " << pair);
    switch (pair) {
      case 0: check_bulk<calm::plus, std::uint32_t>(s, kind, n, bins, false, stray, ordered, key_offset, 0); break;
      case 1: check_bulk<calm::plus, float>(s, kind, n, bins, true, stray, ordered, key_offset, value_offset); break;
      case 2: check_bulk<calm::max, std::int32_t, std::int32_t>(s, kind, n, bins, true, stray, ordered, key_offset, value_offset); break;
      case 3: check_bulk<calm::max, std::int64_t, std::int64_t>(s, kind, n, bins, true, stray, ordered, key_offset, value_offset); break;
      case 4: check_bulk<calm::min, double, std::int32_t>(s, kind, n, std::min<index_t>(bins, 65536), true, stray, ordered, key_offset, value_offset); break;
      case 5: check_bulk<calm::plus, double, std::uint16_t>(s, kind, n, std::min<index_t>(bins, 65536), true, stray, ordered, key_offset, value_offset); break;
      default: check_bulk<calm::plus, std::uint64_t, std::uint8_t>(s, kind, n, std::min<index_t>(bins, 256), false, stray, ordered, key_offset, 0); break;
    }
    ++draws;
  }
  WARN("fuzz: " << draws << " draws in " << seconds << " s, seed " << Catch::rngSeed());
  CHECK(draws > 0);
}
