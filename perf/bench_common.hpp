// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the perf suite: sizes, key distributions, timing of device work, and the copy
// bandwidth measured in the same process that every case is reported against.
#pragma once

#include <benchmark/benchmark.h>

#include <calm/calm.hpp>

#include "bulk_keys.hpp"  // splitmix64

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

// The vendor's device-wide primitives, the peers of calm in the same process: CUB on CUDA, rocPRIM on
// HIP where it is installed (Debian: librocprim-dev; hipCUB is not packaged, and wraps rocPRIM).
#if defined(CALM_BACKEND_CUDA)
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_reduce.cuh>
#define CALM_BENCH_VENDOR "cub"
#elif defined(CALM_BACKEND_HIP) && __has_include(<rocprim/device/device_histogram.hpp>)
#include <iostream>  // rocPRIM 5.3's debug output uses std::cout without including <iostream>
#include <limits>
#include <rocprim/device/device_histogram.hpp>
#include <rocprim/device/device_reduce.hpp>
#define CALM_BENCH_VENDOR "rocprim"
#endif

namespace calm_bench {

namespace backend = calm::backend;
using calm::index_t;

/// log2 of the number of keys: 2^26 on a GPU (256 MiB of uint32), 2^24 on the host; CALM_BENCH_LOG2_KEYS overrides.
inline int log2_keys() {
  if (char const* e = std::getenv("CALM_BENCH_LOG2_KEYS")) return std::atoi(e);
  return std::string(backend::backend_name) == "openmp" ? 24 : 26;
}

/// The key distributions of design.md and reference/baselines.md.
enum class dist { uniform, runs32, halfhot, zipf, image };
inline char const* to_string(dist d) {
  static char const* names[] = {"uniform", "runs32", "halfhot", "zipf", "image"};
  return names[static_cast<int>(d)];
}
inline std::vector<dist> all_dists() { return {dist::uniform, dist::runs32, dist::halfhot, dist::zipf, dist::image}; }

/// n keys in [0, bins): uniform; runs of 32 equal keys; half of the keys on bin 0, the rest uniform;
/// zipf-like (bin = bins * u^4, a few bins take most keys); image-like (neighbouring keys close:
/// a slow ramp plus noise of 16 bins). The same (n, bins, d, seed) gives the same keys.
std::vector<std::uint32_t> make_keys(std::size_t n, std::uint32_t bins, dist d, std::uint64_t seed);

/// The keys of make_keys on the device, generated once per (bins, d) and kept for later cases.
backend::device_buffer<std::uint32_t> const& device_keys(std::uint32_t bins, dist d);

/// Keys per case: 2^log2_keys().
inline std::size_t keys_n() { return std::size_t(1) << log2_keys(); }

/// Weights for the scatters, keys_n() of them: 1 + (i % 7) / 4, generated once.
inline backend::device_buffer<float> const& weights() {
  static backend::device_buffer<float> w = [] {
    std::vector<float> h(keys_n());
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = 1.0f + static_cast<float>(i % 7) * 0.25f;
    return backend::device_buffer<float>(h);
  }();
  return w;
}

/// Seconds of device work done by f (synchronized before the clock stops).
template <class F>
double time_device(F&& f) {
  backend::synchronize();
  auto t0 = std::chrono::steady_clock::now();
  f();
  backend::synchronize();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Copy bandwidth (bytes read + written per second) of this device, measured at start-up.
double copy_rate();
void measure_copy_rate();
/// Read rate (bytes read per second with 16-byte loads over a buffer far larger than the caches),
/// measured at start-up: the limit of any scatter that reads its input once.
double read_rate();
void measure_read_rate();

/// Report `bytes` per iteration as GB/s, and as fractions of the copy bandwidth and the read rate, and
/// `items` per iteration (keys, matrix entries, points, values) as items/s.
inline void report_bytes(benchmark::State& state, double bytes, double items) {
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
  state.SetItemsProcessed(static_cast<std::int64_t>(items) * state.iterations());
  state.counters["GBps"] = benchmark::Counter(bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["of_copy"] = benchmark::Counter(bytes / copy_rate(), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["of_read"] = benchmark::Counter(bytes / read_rate(), benchmark::Counter::kIsIterationInvariantRate);
}

#if defined(CALM_BENCH_VENDOR)
/// The vendor's even histogram (CUB's HistogramEven, rocPRIM's histogram_even) of keys[0, n) into
/// bins unit-wide bins over [0, bins): with temp == nullptr it sets temp_bytes (the two-call protocol
/// of both libraries). Throws calm::error on a failed call.
inline void vendor_histogram_even(void* temp, std::size_t& temp_bytes, std::uint32_t const* keys, std::uint32_t* hist, std::uint32_t bins,
                                  std::size_t n) {
#if defined(CALM_BACKEND_CUDA)
  cudaError_t const e = cub::DeviceHistogram::HistogramEven(temp, temp_bytes, keys, hist, static_cast<int>(bins + 1), 0u, bins, static_cast<int>(n));
  if (e != cudaSuccess) throw calm::error(calm::errc::backend_failure, std::string("cub HistogramEven: ") + cudaGetErrorString(e));
#else
  hipError_t const e = rocprim::histogram_even(temp, temp_bytes, keys, static_cast<unsigned int>(n), hist, bins + 1, 0u, bins);
  if (e != hipSuccess) throw calm::error(calm::errc::backend_failure, std::string("rocprim histogram_even: ") + hipGetErrorString(e));
#endif
}

/// The vendor's maximum (CUB's DeviceReduce::Max, rocPRIM's reduce with maximum) of v[0, n) into *out.
inline void vendor_max(void* temp, std::size_t& temp_bytes, float const* v, float* out, std::size_t n) {
#if defined(CALM_BACKEND_CUDA)
  cudaError_t const e = cub::DeviceReduce::Max(temp, temp_bytes, v, out, static_cast<int>(n));
  if (e != cudaSuccess) throw calm::error(calm::errc::backend_failure, std::string("cub DeviceReduce::Max: ") + cudaGetErrorString(e));
#else
  hipError_t const e = rocprim::reduce(temp, temp_bytes, v, out, std::numeric_limits<float>::lowest(), n, rocprim::maximum<float>());
  if (e != hipSuccess) throw calm::error(calm::errc::backend_failure, std::string("rocprim reduce: ") + hipGetErrorString(e));
#endif
}
#endif

}  // namespace calm_bench
