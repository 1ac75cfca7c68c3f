// SPDX-License-Identifier: Apache-2.0
// The hand-written OpenMP peers of calm's CPU histograms and scatters (the perf suite's bench_cpu.cpp and
// perf/experiments/large_tables.cpp): t[k[i]] += w[i] (w null: += 1) for keys inside the table.
#pragma once

#if defined(_OPENMP)
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace calm_bench {

/// t[k[i]] += w[i] (w null: += 1) by the OpenMP array reduction.
template <class T>
void omp_reduction(std::uint32_t const* k, float const* w, std::size_t n, T* t, std::uint32_t bins) {
  if (w == nullptr) {
#pragma omp parallel for reduction(+ : t[:bins]) schedule(static)
    for (std::size_t i = 0; i < n; ++i) t[k[i]] += 1;
  } else {
#pragma omp parallel for reduction(+ : t[:bins]) schedule(static)
    for (std::size_t i = 0; i < n; ++i) t[k[i]] += w[i];
  }
}

/// The same by a table per thread, then every entry summed over the threads' tables, in parallel. Each table
/// starts on its own 64-byte line (no two threads write one line: unpadded, the tables' end lines were shared).
template <class T>
void thread_tables(std::uint32_t const* k, float const* w, std::size_t n, T* t, std::uint32_t bins, std::vector<T>& copies) {
  int const threads = omp_get_max_threads();
  std::size_t const line = 64 / sizeof(T), stride = (bins + line - 1) / line * line;
  copies.resize(static_cast<std::size_t>(threads) * stride + line);
  auto const skip = (line - reinterpret_cast<std::uintptr_t>(copies.data()) / sizeof(T) % line) % line;  // to the first line
  T* const c = copies.data() + skip;
#pragma omp parallel
  {
    T* const mine = c + static_cast<std::size_t>(omp_get_thread_num()) * stride;
    std::fill(mine, mine + bins, T(0));
#pragma omp for schedule(static)
    for (std::size_t i = 0; i < n; ++i) mine[k[i]] += w ? static_cast<T>(w[i]) : T(1);
#pragma omp for schedule(static)
    for (std::size_t b = 0; b < bins; ++b) {
      T s = t[b];
      for (int j = 0; j < threads; ++j) s += c[static_cast<std::size_t>(j) * stride + b];
      t[b] = s;
    }
  }
}

}  // namespace calm_bench
#endif
