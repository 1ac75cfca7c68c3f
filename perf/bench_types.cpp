// SPDX-License-Identifier: Apache-2.0
// The suite's other key and value types through the bulk front door (calm::histogram, calm::scatter
// with strategy::automatic, sampling included): histograms of uint8 and uint16 keys (what
// cub::DeviceHistogram is mostly used for: 8- and 16-bit samples) and a double scatter-add, beside
// naive atomics (calm's strategy::naive: one device atomic per key), cub::DeviceHistogram::HistogramEven
// (CUDA) and an OpenMP array reduction (host). Names: histogram_u8 / histogram_u16 / scatter_f64
// / <calm | naive | a forced strategy | thread_counters | lane_counters | cub | omp_reduction> / <dist> / <bins>, as the
// other tables of perf/report.py (thread_counters, lane_counters: privatize_scatter<calm::thread_counters> and
// <calm::lane_counters>, tables of at most 256 entries).
#include "bench_common.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

#if defined(CALM_BACKEND_CUDA)
#include <cub/device/device_histogram.cuh>
#endif

namespace calm_bench {
namespace {

/// The suite's keys (device_keys) narrowed to K, generated once per (K, bins, dist); also on the host.
template <class K>
struct narrow_keys {
  std::vector<K> host;
  backend::device_buffer<K> device;
};

template <class K>
narrow_keys<K> const& keys_of(std::uint32_t bins, dist d) {
  static std::map<std::pair<std::uint32_t, int>, std::unique_ptr<narrow_keys<K>>> cache;
  auto& p = cache[std::make_pair(bins, static_cast<int>(d))];
  if (!p) {
    p = std::make_unique<narrow_keys<K>>();
    for (std::uint32_t k : device_keys(bins, d).download()) p->host.push_back(static_cast<K>(k));
    p->device = backend::device_buffer<K>(p->host);
  }
  return *p;
}

template <class V>
backend::device_buffer<V> const& values_of() {
  static backend::device_buffer<V> v = [] {
    std::vector<V> h(keys_n());
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = V(1) + static_cast<V>(i % 7) * V(0.25);
    return backend::device_buffer<V>(h);
  }();
  return v;
}

/// The table every case must produce, in double (exact for the counts).
template <class K, class V>
std::vector<double> expected_table(std::vector<K> const& keys, std::uint32_t bins, bool counting) {
  std::vector<double> t(bins, 0.0);
  for (std::size_t i = 0; i < keys.size(); ++i) t[keys[i]] += counting ? 1.0 : 1.0 + static_cast<double>(i % 7) * 0.25;
  return t;
}

/// Checks the table once (counts exact, sums to a bound that scales with the terms), then times run;
/// T: the table's type, V: the values' type (void: a histogram).
template <class K, class T, class Run>
void time_case(benchmark::State& state, std::uint32_t bins, dist d, bool counting, Run run) {
  auto const& keys = keys_of<K>(bins, d);
  std::size_t const n = keys.host.size();
  backend::device_buffer<T> table(bins);
  table.fill_bytes(0);
  run(keys.device.data(), static_cast<index_t>(n), table.data());
  backend::synchronize();
  auto const got = table.download();
  auto const want = expected_table<K, T>(keys.host, bins, counting);
  for (std::size_t b = 0; b < bins; ++b) {
    double const bound = counting ? 0.0 : 4.0 * static_cast<double>(std::numeric_limits<T>::epsilon()) * want[b] * std::log2(2.0 + n);
    if (!(std::fabs(static_cast<double>(got[b]) - want[b]) <= bound)) return state.SkipWithError(("wrong table entry " + std::to_string(b)).c_str());
  }
  for (auto _ : state) {
    table.fill_bytes(0);
    state.SetIterationTime(time_device([&] { run(keys.device.data(), static_cast<index_t>(n), table.data()); }));
  }
  report_bytes(state, static_cast<double>(n) * (sizeof(K) + (counting ? 0 : sizeof(T))), static_cast<double>(n));
}

template <class K>
void histogram_calm(benchmark::State& state, std::uint32_t bins, dist d, calm::strategy s) {
  time_case<K, std::uint32_t>(state, bins, d, true, [&](K const* k, index_t n, std::uint32_t* t) {
    calm::for_strategy(s, [&](auto c) { calm::histogram<c()>(k, n, t, bins); });
  });
}

/// privatize_scatter<Counters>: thread_counters (each thread's own 8-bit counters) or lane_counters (a column of
/// 32-bit counters per warp lane), tables of at most 256 entries.
template <class K, class Counters>
void histogram_counters(benchmark::State& state, std::uint32_t bins, dist d) {
  time_case<K, std::uint32_t>(state, bins, d, true, [&](K const* k, index_t n, std::uint32_t* t) {
    calm::privatize_scatter<Counters>(calm::plus{}, k, calm::constant(1u), n, t, bins);
  });
}

template <class V>
void scatter_calm(benchmark::State& state, std::uint32_t bins, dist d, calm::strategy s) {
  V const* w = values_of<V>().data();
  time_case<std::uint32_t, V>(state, bins, d, false, [&](std::uint32_t const* k, index_t n, V* t) {
    calm::for_strategy(s, [&](auto c) { calm::scatter<c()>(calm::plus{}, k, w, n, t, bins); });
  });
}

#if defined(CALM_BACKEND_CUDA)
template <class K>
void histogram_cub(benchmark::State& state, std::uint32_t bins, dist d) {
  std::size_t temp_bytes = 0;
  auto call = [&](void* temp, K const* k, index_t n, std::uint32_t* t) {
    cudaError_t const e = cub::DeviceHistogram::HistogramEven(temp, temp_bytes, k, t, static_cast<int>(bins + 1), 0, static_cast<int>(bins), static_cast<int>(n));
    if (e != cudaSuccess) throw calm::error(calm::errc::backend_failure, cudaGetErrorString(e));
  };
  auto const& keys = keys_of<K>(bins, d);
  call(nullptr, keys.device.data(), static_cast<index_t>(keys.host.size()), nullptr);
  backend::device_buffer<unsigned char> temp(std::max<std::size_t>(temp_bytes, 1));
  time_case<K, std::uint32_t>(state, bins, d, true, [&](K const* k, index_t n, std::uint32_t* t) { call(temp.data(), k, n, t); });
}
#endif

#if defined(CALM_BACKEND_OPENMP)
template <class K>
void histogram_omp(benchmark::State& state, std::uint32_t bins, dist d) {  // reduction(+: h[:bins]) into the table
  time_case<K, std::uint32_t>(state, bins, d, true, [&](K const* k, index_t n, std::uint32_t* h) {
#pragma omp parallel for reduction(+ : h[:bins]) schedule(static)
    for (index_t i = 0; i < n; ++i) h[k[i]] += 1;
  });
}

template <class V>
void scatter_omp(benchmark::State& state, std::uint32_t bins, dist d) {
  V const* w = values_of<V>().data();
  time_case<std::uint32_t, V>(state, bins, d, false, [&](std::uint32_t const* k, index_t n, V* t) {
#pragma omp parallel for reduction(+ : t[:bins]) schedule(static)
    for (index_t i = 0; i < n; ++i) t[k[i]] += w[i];
  });
}
#endif

template <class F, class... A>
void add(std::string const& name, F f, A... a) {
  benchmark::RegisterBenchmark(name.c_str(), f, a...)->UseManualTime()->Unit(benchmark::kMillisecond);
}

/// Each key type's histogram: automatic and naive, every forced strategy that can hold the table (the
/// block-local ones up to 12,288 bins, the cluster's up to 65,536 on CUDA; the warp ones always), CUB.
template <class K>
void register_histogram(std::string const& workload, std::vector<std::uint32_t> const& bins_set) {
  using S = calm::strategy;
  for (dist d : all_dists())
    for (std::uint32_t bins : bins_set) {
      auto const tail = [&](char const* impl) { return workload + "/" + impl + "/" + to_string(d) + "/" + std::to_string(bins); };
      add(tail("calm"), histogram_calm<K>, bins, d, S::automatic);
      add(tail("naive"), histogram_calm<K>, bins, d, S::naive);
      std::vector<S> forced{S::peer_reduce, S::hot_key};
      if (bins <= 12288) forced.insert(forced.end(), {S::privatize, S::privatize_peer_reduce});
#if defined(CALM_BACKEND_CUDA)
      if (bins > 12288 && bins <= 65536) forced.push_back(S::cluster_privatize);
#endif
      for (S s : forced) add(tail(calm::to_string(s)), histogram_calm<K>, bins, d, s);
      if (bins <= 256) add(tail("thread_counters"), histogram_counters<K, calm::thread_counters>, bins, d);
      if (bins <= 256) add(tail("lane_counters"), histogram_counters<K, calm::lane_counters>, bins, d);
#if defined(CALM_BACKEND_CUDA)
      add(tail("cub"), histogram_cub<K>, bins, d);
#endif
#if defined(CALM_BACKEND_OPENMP)
      add(tail("omp_reduction"), histogram_omp<K>, bins, d);
#endif
    }
}

[[maybe_unused]] bool const registered = [] {
  register_histogram<std::uint8_t>("histogram_u8", {1u, 32u, 256u});
  register_histogram<std::uint16_t>("histogram_u16", {256u, 4096u, 65536u});
  for (dist d : all_dists())
    for (std::uint32_t bins : {1u, 256u, 65536u, 1u << 20}) {
      auto const tail = [&](char const* impl) { return std::string("scatter_f64/") + impl + "/" + to_string(d) + "/" + std::to_string(bins); };
      add(tail("calm"), scatter_calm<double>, bins, d, calm::strategy::automatic);
      add(tail("naive"), scatter_calm<double>, bins, d, calm::strategy::naive);
#if defined(CALM_BACKEND_OPENMP)
      if (bins <= 65536) add(tail("omp_reduction"), scatter_omp<double>, bins, d);
#endif
    }
  return true;
}();

}  // namespace
}  // namespace calm_bench
