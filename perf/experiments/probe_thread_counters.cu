// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_thread_counters.cu: a stand-alone probe (not part of the library or its build) of
// privatize_scatter<thread_counters> and <lane_counters> on 8-bit keys into 256 entries beside calm's automatic histogram and CUB's
// DeviceHistogram::HistogramEven, each checked against a count on the host: uniform keys, half the keys on one
// value, runs of 32 equal keys, and one value alone. Medians of 21 calls timed with events (us), 2^26 keys by default.
//
//   nvcc -std=c++17 -O3 -DNDEBUG --extended-lambda --expt-relaxed-constexpr -arch=sm_90 -DCALM_BACKEND_CUDA=1 \
//        -I <a folder holding calm/, a link to this repository> perf/experiments/probe_thread_counters.cu -o probe && ./probe [log2 keys]
#include <calm/calm.hpp>
#include <cub/device/device_histogram.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CHECK(x)                                                                      \
  do {                                                                                \
    cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

template <class F>
float median_us(F const& f) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<float> t;
  f();
  for (int r = 0; r < 21; ++r) {
    CHECK(cudaEventRecord(a));
    f();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1000.0f);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char** argv) {
  int const lg = argc > 1 ? std::atoi(argv[1]) : 26;
  std::size_t const n = std::size_t(1) << lg;
  std::mt19937_64 g(7);
  std::uint8_t *dk = nullptr;
  std::uint32_t* dh = nullptr;
  CHECK(cudaMalloc(&dk, n + 16));
  CHECK(cudaMalloc(&dh, 256 * sizeof(std::uint32_t)));
  std::size_t temp_bytes = 0;
  CHECK(cub::DeviceHistogram::HistogramEven(nullptr, temp_bytes, dk, dh, 257, 0, 256, static_cast<int>(n)));
  void* temp = nullptr;
  CHECK(cudaMalloc(&temp, temp_bytes));
  std::printf("| keys | thread_counters us | lane_counters us | automatic us | CUB us | CUB / thread_counters | CUB / lane_counters | CUB / automatic | exact |\n"
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
  for (char const* dist : {"uniform", "halfhot", "runs32", "one"}) {
    std::vector<std::uint8_t> k(n);
    std::string const d = dist;
    for (std::size_t i = 0; i < n; ++i) {
      std::uint8_t const u = static_cast<std::uint8_t>(g());
      k[i] = d == "uniform" ? u : d == "halfhot" ? ((g() & 1) ? 77 : u) : d == "runs32" ? (i % 32 ? k[i - 1] : u) : 200;
    }
    std::vector<std::uint32_t> want(256, 0);
    for (auto x : k) ++want[x];
    CHECK(cudaMemcpy(dk, k.data(), n, cudaMemcpyHostToDevice));
    bool exact = true;
    auto run_and_check = [&](auto const& f) {
      CHECK(cudaMemset(dh, 0, 256 * 4));
      f();
      std::vector<std::uint32_t> got(256);
      CHECK(cudaMemcpy(got.data(), dh, 256 * 4, cudaMemcpyDeviceToHost));
      exact = exact && got == want;
    };
    auto const counters = [&] { calm::privatize_scatter<calm::thread_counters>(calm::plus{}, dk, calm::constant(1u), static_cast<calm::index_t>(n), dh, 256); };
    auto const lanes = [&] { calm::privatize_scatter<calm::lane_counters>(calm::plus{}, dk, calm::constant(1u), static_cast<calm::index_t>(n), dh, 256); };
    auto const automatic = [&] { calm::histogram(dk, static_cast<calm::index_t>(n), dh, 256); };
    auto const cub_hist = [&] { CHECK(cub::DeviceHistogram::HistogramEven(temp, temp_bytes, dk, dh, 257, 0, 256, static_cast<int>(n))); };
    run_and_check(counters);
    run_and_check(lanes);
    run_and_check(automatic);
    run_and_check(cub_hist);
    CHECK(cudaDeviceSynchronize());
    float const tc = median_us(counters), lc = median_us(lanes), au = median_us(automatic), cb = median_us(cub_hist);
    std::printf("| %s | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %.2f | %s |\n", dist, tc, lc, au, cb, cb / tc, cb / lc, cb / au, exact ? "yes" : "NO");
  }
  CHECK(cudaGetLastError());
  return 0;
}
