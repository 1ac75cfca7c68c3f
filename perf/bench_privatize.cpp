// SPDX-License-Identifier: Apache-2.0
// Privatized tables (calm::privatize_scatter) beside the peers in the same process: naive device atomics,
// cub::DeviceHistogram::HistogramEven (CUDA), rocprim::histogram_even (HIP, if installed), an OpenMP array reduction and std::atomic (host). Also the
// replication sweep (copies R, padding, mapping) behind calm's rule for R, and each merging of lanes
// (naive, peer_reduce, scan_reduce, vote_reduce, and adaptive_merge, which each block picks from a probe), and
// the routines for tables beyond a block: hot_key_scatter, cluster_privatize_scatter, partitioned_scatter (GPUs).
#include "bench_common.hpp"

#include <atomic>
#include <cmath>


namespace calm_bench {
namespace {

bool counts_ok(std::vector<std::uint32_t> const& h, std::size_t n) {
  std::uint64_t total = 0;
  for (auto c : h) total += c;
  return total == n;
}

template <class Strategy>
void privatized_histogram(benchmark::State& state, Strategy strategy, dist d, std::uint32_t bins, calm::privatize_options opt) {
  std::size_t const n = keys_n();
  std::uint32_t const* pk = device_keys(bins, d).data();
  backend::device_buffer<std::uint32_t> hist(bins);
  auto run = [&] { calm::privatize_scatter(calm::plus{}, pk, calm::constant(1u), static_cast<index_t>(n), hist.data(), bins, opt, strategy); };
  hist.fill_bytes(0);
  try {
    run();
  } catch (calm::error const& e) {
    state.SkipWithError(e.what());
    return;
  }
  if (!counts_ok(hist.download(), n)) state.SkipWithError("histogram lost counts");
  for (auto _ : state) {
    hist.fill_bytes(0);
    state.SetIterationTime(time_device(run));
  }
  report_bytes(state, static_cast<double>(n) * sizeof(std::uint32_t), static_cast<double>(n));
}

double expected_weight_total(std::size_t n) {
  double e = 0;
  for (std::size_t k = 0; k < 7; ++k) e += (1.0 + 0.25 * k) * static_cast<double>((n + 6 - k) / 7);
  return e;
}

template <class Strategy>
void privatized_scatter(benchmark::State& state, Strategy strategy, dist d, std::uint32_t bins, calm::privatize_options opt) {
  std::size_t const n = keys_n();
  std::uint32_t const* pk = device_keys(bins, d).data();
  float const* pw = weights().data();
  backend::device_buffer<float> table(bins);
  auto run = [&] { calm::privatize_scatter(calm::plus{}, pk, pw, static_cast<index_t>(n), table.data(), bins, opt, strategy); };
  table.fill_bytes(0);
  try {
    run();
  } catch (calm::error const& e) {
    state.SkipWithError(e.what());
    return;
  }
  double total = 0;
  for (auto c : table.download()) total += c;
  state.counters["rel_error"] = std::fabs(total - expected_weight_total(n)) / expected_weight_total(n);
  for (auto _ : state) {
    table.fill_bytes(0);
    state.SetIterationTime(time_device(run));
  }
  report_bytes(state, static_cast<double>(n) * (sizeof(std::uint32_t) + sizeof(float)), static_cast<double>(n));
}

/// The routines for tables above one block's memory, as benchmark cases.
enum class large_table { hot_key, cluster, partitioned };

template <bool Weighted>
void large_table_case(benchmark::State& state, large_table routine, dist d, std::uint32_t bins) {
  std::size_t const n = keys_n();
  std::uint32_t const* pk = device_keys(bins, d).data();
  backend::device_buffer<std::conditional_t<Weighted, float, std::uint32_t>> table(bins);
  auto call = [&](auto values) {
    if (routine == large_table::hot_key) calm::hot_key_scatter(calm::plus{}, pk, values, static_cast<index_t>(n), table.data(), bins);
    else if (routine == large_table::partitioned) calm::partitioned_scatter(calm::plus{}, pk, values, static_cast<index_t>(n), table.data(), bins);
    else calm::cluster_privatize_scatter(calm::plus{}, pk, values, static_cast<index_t>(n), table.data(), bins);
  };
  auto run = [&] {
    if constexpr (Weighted) call(weights().data());
    else call(calm::constant(1u));
  };
  table.fill_bytes(0);
  try {
    run();
  } catch (calm::error const& e) {
    state.SkipWithError(e.what());
    return;
  }
  if constexpr (!Weighted) {
    if (!counts_ok(table.download(), n)) state.SkipWithError("histogram lost counts");
  }
  for (auto _ : state) {
    table.fill_bytes(0);
    state.SetIterationTime(time_device(run));
  }
  report_bytes(state, static_cast<double>(n) * (sizeof(std::uint32_t) + (Weighted ? sizeof(float) : 0)), static_cast<double>(n));
}

/// One device atomic per key (what Kokkos ScatterView and a plain atomicAdd loop do), for the sizes above one block.
template <bool Weighted>
void naive_case(benchmark::State& state, dist d, std::uint32_t bins) {
  std::size_t const n = keys_n();
  std::uint32_t const* pk = device_keys(bins, d).data();
  float const* pw = weights().data();
  backend::device_buffer<std::conditional_t<Weighted, float, std::uint32_t>> table(bins);
  auto* pt = table.data();
  auto run = [&] {
    backend::for_each_index(static_cast<index_t>(n), CALM_LAMBDA(auto const& w, auto i) {
      (void)pw, (void)pt, (void)pk;  // nvcc: capture outside the if constexpr
      if constexpr (Weighted) calm::atomic_update(w, calm::plus{}, calm::scope::device{}, pt + calm::load(w, pk, i), calm::load(w, pw, i));
      else calm::atomic_update(w, calm::plus{}, calm::scope::device{}, pt + calm::load(w, pk, i), 1u);
    });
  };
  for (auto _ : state) {
    table.fill_bytes(0);
    state.SetIterationTime(time_device(run));
  }
  report_bytes(state, static_cast<double>(n) * (sizeof(std::uint32_t) + (Weighted ? sizeof(float) : 0)), static_cast<double>(n));
}

#if defined(CALM_BENCH_VENDOR)
void vendor_histogram(benchmark::State& state, dist d, std::uint32_t bins) {
  std::size_t const n = keys_n();
  std::uint32_t const* pk = device_keys(bins, d).data();
  backend::device_buffer<std::uint32_t> hist(bins);
  std::size_t temp_bytes = 0;
  auto call = [&](void* temp) { vendor_histogram_even(temp, temp_bytes, pk, hist.data(), bins, n); };
  call(nullptr);
  backend::device_buffer<unsigned char> temp(temp_bytes);
  call(temp.data());
  if (!counts_ok(hist.download(), n)) state.SkipWithError(CALM_BENCH_VENDOR " histogram lost counts");
  for (auto _ : state) state.SetIterationTime(time_device([&] { call(temp.data()); }));
  report_bytes(state, static_cast<double>(n) * sizeof(std::uint32_t), static_cast<double>(n));
}
#endif

#if defined(CALM_BACKEND_OPENMP)
// The host peers: `reduction(+: h[:bins])` (per-thread copies the runtime makes and merges) and one
// relaxed std::atomic add per key into a shared table.
void omp_reduction_histogram(benchmark::State& state, dist d, std::uint32_t bins) {
  std::size_t const n = keys_n();
  std::uint32_t const* pk = device_keys(bins, d).data();
  std::vector<std::uint32_t> hist(bins);
  std::uint32_t* h = hist.data();
  auto run = [&] {
    std::fill(hist.begin(), hist.end(), 0u);
#pragma omp parallel for reduction(+ : h[:bins]) schedule(static)
    for (std::size_t i = 0; i < n; ++i) h[pk[i]] += 1;
  };
  run();
  if (!counts_ok(hist, n)) state.SkipWithError("reduction lost counts");
  for (auto _ : state) state.SetIterationTime(time_device(run));
  report_bytes(state, static_cast<double>(n) * sizeof(std::uint32_t), static_cast<double>(n));
}

void omp_reduction_scatter(benchmark::State& state, dist d, std::uint32_t bins) {
  std::size_t const n = keys_n();
  std::uint32_t const* pk = device_keys(bins, d).data();
  float const* pw = weights().data();
  std::vector<float> table(bins);
  float* t = table.data();
  auto run = [&] {
    std::fill(table.begin(), table.end(), 0.0f);
#pragma omp parallel for reduction(+ : t[:bins]) schedule(static)
    for (std::size_t i = 0; i < n; ++i) t[pk[i]] += pw[i];
  };
  for (auto _ : state) state.SetIterationTime(time_device(run));
  report_bytes(state, static_cast<double>(n) * (sizeof(std::uint32_t) + sizeof(float)), static_cast<double>(n));
}

void std_atomic_histogram(benchmark::State& state, dist d, std::uint32_t bins) {
  std::size_t const n = keys_n();
  std::uint32_t const* pk = device_keys(bins, d).data();
  std::vector<std::atomic<std::uint32_t>> hist(bins);
  auto run = [&] {
    for (auto& c : hist) c.store(0, std::memory_order_relaxed);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) hist[pk[i]].fetch_add(1, std::memory_order_relaxed);
  };
  for (auto _ : state) state.SetIterationTime(time_device(run));
  report_bytes(state, static_cast<double>(n) * sizeof(std::uint32_t), static_cast<double>(n));
}
#endif

template <class F, class... A>
void add(std::string const& name, F f, A... a) {
  benchmark::RegisterBenchmark(name.c_str(), f, a...)->UseManualTime()->Unit(benchmark::kMillisecond);
}

std::string tail(char const* strategy, dist d, std::uint32_t bins) {
  return std::string("/") + strategy + "/" + to_string(d) + "/" + std::to_string(bins);
}

[[maybe_unused]] bool const registered = [] {
  calm::privatize_options const automatic{};
  std::vector<std::uint32_t> const hist_bins = {1, 32, 256, 1024, 4096, 12288, 49152};
  for (dist d : all_dists()) {
    for (std::uint32_t bins : hist_bins) {
      add("histogram" + tail("privatize", d, bins), privatized_histogram<calm::naive>, calm::naive{}, d, bins, automatic);
      add("histogram" + tail("privatize_peer", d, bins), privatized_histogram<calm::peer_reduce>, calm::peer_reduce{}, d, bins, automatic);
      add("histogram" + tail("privatize_adaptive", d, bins), privatized_histogram<calm::adaptive_merge>, calm::adaptive_merge{}, d, bins, automatic);
#if defined(CALM_BENCH_VENDOR)
      add("histogram" + tail(CALM_BENCH_VENDOR, d, bins), vendor_histogram, d, bins);
#endif
#if defined(CALM_BACKEND_OPENMP)
      add("histogram" + tail("omp_reduction", d, bins), omp_reduction_histogram, d, bins);
      add("histogram" + tail("std_atomic", d, bins), std_atomic_histogram, d, bins);
#endif
    }
    for (std::uint32_t bins : {1u, 32u, 256u, 1024u, 4096u, 12288u}) {
      add("scatter_f32" + tail("privatize", d, bins), privatized_scatter<calm::naive>, calm::naive{}, d, bins, automatic);
      add("scatter_f32" + tail("privatize_peer", d, bins), privatized_scatter<calm::peer_reduce>, calm::peer_reduce{}, d, bins, automatic);
      add("scatter_f32" + tail("privatize_adaptive", d, bins), privatized_scatter<calm::adaptive_merge>, calm::adaptive_merge{}, d, bins, automatic);
      add("scatter_f32" + tail("privatize_scan", d, bins), privatized_scatter<calm::scan_reduce>, calm::scan_reduce{}, d, bins, automatic);
      // vote_reduce with a low threshold: merge a sampled key's lanes whenever four share it
      add("scatter_f32" + tail("privatize_vote", d, bins), privatized_scatter<calm::vote_reduce<1>>, calm::vote_reduce<1>{1u, 4}, d, bins, automatic);
#if defined(CALM_BACKEND_OPENMP)
      add("scatter_f32" + tail("omp_reduction", d, bins), omp_reduction_scatter, d, bins);
#endif
    }
  }
  // tables too large to privatize: the hot-key cache (naive atomics for these sizes: bench_strategies)
  for (dist d : all_dists())
    for (std::uint32_t bins : {1u << 20}) {
      add("histogram" + tail("hot_key", d, bins), large_table_case<false>, large_table::hot_key, d, bins);
      add("scatter_f32" + tail("hot_key", d, bins), large_table_case<true>, large_table::hot_key, d, bins);
      add("histogram" + tail("naive", d, bins), naive_case<false>, d, bins);
      add("scatter_f32" + tail("naive", d, bins), naive_case<true>, d, bins);
    }
#if !defined(CALM_BACKEND_OPENMP)
  // bucketed by range, then each range privatized (the host's large tables are thread_private's)
  for (dist d : all_dists())
    for (std::uint32_t bins : {65536u, 262144u, 1u << 20, 1u << 22}) {
      add("histogram" + tail("partitioned", d, bins), large_table_case<false>, large_table::partitioned, d, bins);
      add("scatter_f32" + tail("partitioned", d, bins), large_table_case<true>, large_table::partitioned, d, bins);
      if (bins > (1u << 20)) {  // its peer where the loops below have none
        add("histogram" + tail("naive", d, bins), naive_case<false>, d, bins);
        add("scatter_f32" + tail("naive", d, bins), naive_case<true>, d, bins);
      }
    }
#endif
  // tables between one block's shared memory and a cluster's (8K to 256K bins on sm_90)
  for (dist d : all_dists())
    for (std::uint32_t bins : {8192u, 16384u, 32768u, 65536u, 131072u, 262144u, 458752u}) {
      add("histogram" + tail("cluster", d, bins), large_table_case<false>, large_table::cluster, d, bins);
      add("scatter_f32" + tail("cluster", d, bins), large_table_case<true>, large_table::cluster, d, bins);
      add("histogram" + tail("hot_key", d, bins), large_table_case<false>, large_table::hot_key, d, bins);
      add("scatter_f32" + tail("hot_key", d, bins), large_table_case<true>, large_table::hot_key, d, bins);
      add("histogram" + tail("naive", d, bins), naive_case<false>, d, bins);
      add("scatter_f32" + tail("naive", d, bins), naive_case<true>, d, bins);
    }
  // the replication sweep: R copies, padding 0 or 1, cyclic or blocked mapping
  for (dist d : {dist::uniform, dist::runs32, dist::halfhot, dist::image})
    for (std::uint32_t bins : {32u, 256u, 1024u, 4096u, 12288u})
      for (int r : {1, 2, 4, 8, 16, 32})
        for (int pad : {0, 1})
          for (auto m : {calm::copy_mapping::cyclic, calm::copy_mapping::blocked}) {
            if (m == calm::copy_mapping::blocked && (r == 1 || pad == 0)) continue;
            if (static_cast<std::size_t>(r) * (bins + pad) * 4 > 227 * 1024) continue;  // over an H100/H200 block's shared memory
            calm::privatize_options const o{r, pad, m, 0};
            std::string const label = "R" + std::to_string(r) + "p" + std::to_string(pad) + (m == calm::copy_mapping::cyclic ? "c" : "b");
            add("rsweep_hist" + tail(label.c_str(), d, bins), privatized_histogram<calm::naive>, calm::naive{}, d, bins, o);
            add("rsweep_f32" + tail(label.c_str(), d, bins), privatized_scatter<calm::naive>, calm::naive{}, d, bins, o);
          }
  return true;
}();

}  // namespace
}  // namespace calm_bench
