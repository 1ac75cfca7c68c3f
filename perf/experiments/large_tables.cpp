// SPDX-License-Identifier: Apache-2.0
// Tables beyond the perf suite's 2^20 entries on the host: calm::histogram and a float calm::scatter (automatic:
// thread_private) against a hand-written table per thread and merge loop, uniform keys, 2^24 of them, tables of
// 2^20 to 2^24 entries; best of seven calls each. Build against the tree under test and run on 2 threads:
//   g++ -std=c++17 -O3 -DNDEBUG -fopenmp -DCALM_BACKEND_OPENMP=1 -I<dir holding calm/> large_tables.cpp -o large_tables
// (the hand-written peer: ../cpu_peers.hpp, as the perf suite's bench_cpu.cpp times it)
//   OMP_NUM_THREADS=2 ./large_tables LABEL
// Results: perf/results/openmp-host-2026-12-05-narrow-counts.md ("Beyond the suite's tables").
#include <calm/calm.hpp>
#include <omp.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "../cpu_peers.hpp"
int main(int argc, char** argv) {
  std::size_t const n = 1u << 24;
  std::mt19937 g(1);
  std::vector<std::uint32_t> raw(n); for (auto& x : raw) x = g();
  std::vector<float> w(n, 1.0f);
  for (int lb : {20, 21, 22, 23, 24}) {
    std::uint32_t const bins = 1u << lb;
    std::vector<std::uint32_t> keys(n); for (std::size_t i = 0; i < n; ++i) keys[i] = raw[i] & (bins - 1);
    std::vector<std::uint32_t> h(bins); std::vector<float> f(bins); std::vector<std::uint32_t> hc; std::vector<float> fc;
    auto best = [&](auto fn) { double b = 1e9; for (int r = 0; r < 7; ++r) { auto s = std::chrono::steady_clock::now(); fn(); b = std::min(b, std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count()); } return b * 1e3; };
    double a = best([&] { std::fill(h.begin(), h.end(), 0u); calm::histogram(keys.data(), (calm::index_t)n, h.data(), bins); });
    double b = best([&] { std::fill(f.begin(), f.end(), 0.f); calm::scatter(calm::plus{}, keys.data(), w.data(), (calm::index_t)n, f.data(), bins); });
    double c = best([&] { std::fill(h.begin(), h.end(), 0u); calm_bench::thread_tables<std::uint32_t>(keys.data(), nullptr, n, h.data(), bins, hc); });
    double d = best([&] { std::fill(f.begin(), f.end(), 0.f); calm_bench::thread_tables<float>(keys.data(), w.data(), n, f.data(), bins, fc); });
    std::printf("%s 2^%d hist calm %.1f hand %.1f | float calm %.1f hand %.1f\n", argv[1], lb, a, c, b, d);
  }
}
