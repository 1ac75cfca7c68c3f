// SPDX-License-Identifier: Apache-2.0
// Host tests built with ThreadSanitizer (CALM_TSAN: clang and LLVM's libomp, whose Archer tool tells TSan
// about OpenMP's own synchronization): the bulk strategies on several OpenMP threads (thread_private's
// tables and their merge, the block programs' atomics), the CPU forms of the workloads and of scatter_rows
// (slices with plain and atomic writes side by side), host threads calling calm at once, and the host's
// kept workspace.
#include <calm/calm.hpp>

#include <catch2/catch.hpp>

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

namespace {

std::vector<std::uint32_t> random_keys(std::size_t n, std::uint32_t range, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<std::uint32_t> k(n);
  for (auto& x : k) x = (g() & 1) ? 0u : static_cast<std::uint32_t>(g() % range);  // half the keys on key 0
  return k;
}

std::vector<std::uint32_t> sequential_histogram(std::vector<std::uint32_t> const& keys, std::uint32_t bins) {
  std::vector<std::uint32_t> h(bins, 0);
  for (auto k : keys)
    if (k < bins) ++h[k];
  return h;
}

/// A histogram by strategy s (every strategy the host compiles), checked against the sequential count.
void check_histogram(calm::strategy s, std::vector<std::uint32_t> const& keys, std::uint32_t bins) {
  std::vector<std::uint32_t> h(bins, 0);
  auto const n = static_cast<calm::index_t>(keys.size());
  calm::for_strategy(s, [&](auto c) { calm::histogram<c()>(keys.data(), n, h.data(), bins); });
  CHECK(h == sequential_histogram(keys, bins));
}

/// thread_private's float sums (each thread's table, then the merge over the entries): halves onto 1.0,
/// below 2^24, so exact in any order.
void check_float_sums(std::vector<std::uint32_t> const& keys, std::uint32_t bins) {
  std::vector<float> w(keys.size(), 0.5f), t(bins, 1.0f), want(bins, 1.0f);
  calm::scatter<calm::strategy::thread_private>(calm::plus{}, keys.data(), w.data(), static_cast<calm::index_t>(keys.size()), t.data(), bins);
  for (auto k : keys)
    if (k < bins) want[k] += 0.5f;
  CHECK(t == want);
}

}  // namespace

TEST_CASE("threads: every strategy on four OpenMP threads", "[threads]") {
  int const before = omp_get_max_threads();
  omp_set_num_threads(4);
  std::uint32_t const bins = GENERATE(1u, 300u, 70001u, 1048579u);  // 1,048,579: thread_private's narrow counters
  auto const keys = random_keys(200003, bins + bins / 8, 17 + bins);  // an eighth of the draws outside the table
  for (int i = 0; i < calm::strategy_count; ++i) {
    auto const s = static_cast<calm::strategy>(i);
    if (calm::is_block_local(s) && bins > calm::privatize_capacity<std::uint32_t>(calm::default_exec{})) continue;
    CAPTURE(calm::to_string(s), bins);
    check_histogram(s, keys, bins);
  }
  check_float_sums(keys, bins);
  omp_set_num_threads(before);
}

TEST_CASE("threads: thread_private's slices, each filled as its sample says", "[threads]") {
  int const before = omp_get_max_threads();
  omp_set_num_threads(4);
  // the first third on one key (a slice that samples only it folds it in registers, the other keys of
  // its slice into its table), the second half on it (four sub-tables within 16 KiB, else the key dealt
  // over the hot slots after the table), the last uniform (one table); some keys outside. Then runs.
  std::uint32_t const bins = GENERATE(300u, 4099u, 20000u, 70001u);
  std::vector<std::uint32_t> keys(200003);
  std::mt19937_64 g(31 + bins);
  std::size_t const third = keys.size() / 3;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    bool const hot = i < third || (i < 2 * third && (g() & 1));
    keys[i] = hot ? 5u : static_cast<std::uint32_t>(g() % (bins + 3));
  }
  CAPTURE(bins);
  check_histogram(calm::strategy::thread_private, keys, bins);
  check_float_sums(keys, bins);
  // runs of 13 equal keys (groups of 8 of one key folded as one), one run in 7 outside the table
  std::vector<std::uint32_t> runs(keys.size());
  for (std::size_t i = 0; i < runs.size(); ++i) runs[i] = static_cast<std::uint32_t>((i / 13) * 2654435761u % (bins + bins / 6 + 1));
  check_histogram(calm::strategy::thread_private, runs, bins);
  check_float_sums(runs, bins);
  omp_set_num_threads(before);
}

TEST_CASE("threads: thread_private's spread tables where keys a power of two apart crowd the cache's sets", "[threads]") {
  int const before = omp_get_max_threads();
  omp_set_num_threads(4);
  // a column of a row-major matrix of 512 columns, one key in 16 uniform: spread (k + k / 64) beyond
  // 65,536 entries; uniform keys into the same table: not spread. The second quarter on key 5 (the second
  // thread's slice folds it in registers), half the last quarter (the last slice deals it over the hot
  // slots); the keys read for the crowding, at the start and the middle, are the column's.
  std::uint32_t const bins = GENERATE(131075u, 300007u);
  std::uint32_t const cols = 512, rows = bins / cols;
  std::vector<std::uint32_t> strided(200003), uniform(strided.size());
  std::size_t const quarter = strided.size() / 4;
  std::mt19937_64 g(7 + bins);
  for (std::size_t i = 0; i < strided.size(); ++i) {
    std::uint64_t const r = g();
    bool const hot = (i >= quarter && i < 2 * quarter) || (i >= 3 * quarter && (r & 32));
    strided[i] = hot ? 5u : r % 16 == 0 ? static_cast<std::uint32_t>(r % (bins + 5)) : static_cast<std::uint32_t>((i % rows) * cols + (i / rows) % cols);
    uniform[i] = static_cast<std::uint32_t>(g() % (bins + 5));
  }
  auto const n = static_cast<calm::index_t>(strided.size());
  CHECK(calm::detail::keys_crowd_sets<std::uint32_t>(strided.data(), n, bins, calm::detail::identity_key{}));
  CHECK_FALSE(calm::detail::keys_crowd_sets<std::uint32_t>(uniform.data(), n, bins, calm::detail::identity_key{}));
  CAPTURE(bins);
  check_histogram(calm::strategy::thread_private, strided, bins);
  check_float_sums(strided, bins);
  omp_set_num_threads(before);
}

TEST_CASE("threads: two host threads calling calm at once", "[threads]") {
  auto const keys = random_keys(100003, 5000, 23);
  auto const want = sequential_histogram(keys, 4099);
  std::vector<std::uint32_t> a(4099, 0), b(4099, 0), c(4099, 0);
  auto const n = static_cast<calm::index_t>(keys.size());
  {
    std::thread first([&] { calm::histogram(keys.data(), n, a.data(), 4099); });
    std::thread second([&] { calm::histogram<calm::strategy::privatize>(keys.data(), n, b.data(), 4099); });
    calm::histogram<calm::strategy::thread_private>(keys.data(), n, c.data(), 4099);
    first.join();
    second.join();
  }
  CHECK(a == want);
  CHECK(b == want);
  CHECK(c == want);
}

TEST_CASE("threads: the host's kept workspace goes to one caller at a time, and only for a request of half its size or more", "[threads]") {
  calm::openmp::detail::workspace_cache cache;
  void* const big = cache.take(std::size_t(1) << 20);
  REQUIRE(reinterpret_cast<std::uintptr_t>(big) % 64 == 0);
  cache.give_back(big);
  void* const small = cache.take(100);  // far below half: a buffer of its own
  CHECK(small != big);
  void* const larger = cache.take((std::size_t(1) << 20) + 1);  // larger than the kept one
  CHECK(larger != big);
  cache.give_back(larger);  // kept in place of big, which is freed
  void* const again = cache.take(std::size_t(1) << 20);
  CHECK(again == larger);
  cache.give_back(again);
  void* const big2 = cache.take(std::size_t(1) << 20);
  cache.give_back(big2);
  void* const half = cache.take(600000);  // above half of the kept 2^20 + 64 bytes
  CHECK(half == larger);
  cache.give_back(half);
  cache.give_back(small);  // the smaller one is freed, the larger stays
  void* const most = cache.take(std::size_t(3) << 18);
  CHECK(most == larger);
  cache.give_back(most);
  // host threads taking and giving back at once: each buffer is its caller's alone while it holds it
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&cache, &failures, t] {
      for (int round = 0; round < 200; ++round) {
        std::size_t const bytes = (std::size_t(1) << 16) + static_cast<std::size_t>(round % 7) * 4096;
        auto* const p = static_cast<unsigned char*>(cache.take(bytes));
        std::fill(p, p + bytes, static_cast<unsigned char>(t + 1));
        failures[static_cast<std::size_t>(t)] += std::count_if(p, p + bytes, [t](unsigned char x) { return x != t + 1; }) != 0 ? 1 : 0;
        cache.give_back(p);
      }
    });
  for (auto& th : threads) th.join();
  CHECK(failures == std::vector<int>(4, 0));
}

TEST_CASE("threads: the workloads' and scatter_rows' CPU forms on four OpenMP threads", "[threads]") {
  int const before = omp_get_max_threads();
  omp_set_num_threads(4);
  calm::index_t const rows = 5003, nnz = 120011;
  std::mt19937_64 g(31);
  std::vector<int> row(static_cast<std::size_t>(nnz)), col(row.size());
  for (auto& r : row) r = static_cast<int>(g() % rows);
  for (auto& c : col) c = static_cast<int>(g() % 7);
  std::vector<float> vals(row.size(), 0.5f), x(7, 1.0f), want(static_cast<std::size_t>(rows), 0.0f);
  for (auto r : row) want[static_cast<std::size_t>(r)] += 0.5f;  // halves below 2^24: exact in any order
  for (bool sorted : {false, true}) {  // atomics only, then plain writes inside the slices beside atomics at their ends
    if (sorted) std::sort(row.begin(), row.end());
    std::vector<float> y(static_cast<std::size_t>(rows), 0.0f);
    calm::spmv_coo(row.data(), col.data(), vals.data(), nnz, x.data(), y.data(), rows, calm::index_t(7));  // tables per thread
    CHECK(y == want);
    std::vector<int> spread(row.size());  // rows 97 apart: more rows than entries, so slices of a run merge
    std::transform(row.begin(), row.end(), spread.begin(), [](int r) { return r * 97; });
    std::vector<float> y_spread(static_cast<std::size_t>(rows) * 97, 0.0f), want_spread(y_spread.size(), 0.0f);
    for (std::size_t r = 0; r < want.size(); ++r) want_spread[r * 97] = want[r];
    calm::spmv_coo(spread.data(), col.data(), vals.data(), nnz, x.data(), y_spread.data(), rows * 97, calm::index_t(7));
    CHECK(y_spread == want_spread);
  }
  std::vector<std::int64_t> v(static_cast<std::size_t>(nnz), 3), out(97, 0), out_want(97, 0);
  calm::index_t const per = (nnz + 96) / 97;
  for (calm::index_t i = 0; i < nnz; ++i) out_want[static_cast<std::size_t>(i / per)] += 3;
  calm::sum_compacted(v.data(), nnz, out.data(), 97);
  CHECK(out == out_want);
  std::vector<float> points(row.size() * 3, 0.5f), sums(static_cast<std::size_t>(rows) * 3, 0.0f), sums_want(sums.size(), 0.0f);
  std::vector<std::uint32_t> counts(static_cast<std::size_t>(rows), 0), counts_want(counts.size(), 0);
  for (auto r : row) counts_want[static_cast<std::size_t>(r)] += 1, sums_want[static_cast<std::size_t>(r) * 3] += 0.5f;
  for (std::size_t e = 0; e < sums_want.size(); ++e) sums_want[e] = sums_want[e / 3 * 3];
  calm::kmeans_update(points.data(), row.data(), nnz, 3, rows, sums.data(), counts.data());
  CHECK(counts == counts_want);
  CHECK(sums == sums_want);
  for (int m = 0; m <= static_cast<int>(calm::rows_method::columns); ++m) {
    calm::rows_options opt;
    opt.method = static_cast<calm::rows_method>(m);
    std::vector<float> table(sums.size(), 0.0f);
    calm::scatter_rows(calm::plus{}, row.data(), points.data(), nnz, 3, table.data(), rows, opt);
    CAPTURE(calm::to_string(opt.method));
    CHECK(table == sums_want);
  }
  omp_set_num_threads(before);
}
