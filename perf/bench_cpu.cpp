// SPDX-License-Identifier: Apache-2.0
// The host's bulk calls beside the loops an OpenMP user writes instead (host build only): histograms of
// uint32 keys and float scatter-adds, by calm's automatic choice and by strategy::thread_private, against
// `reduction(+: t[:bins])` (the OpenMP runtime's per-thread copies, merged by it) and a hand-written
// per-thread table merged once in parallel over the bins (what a user writes for large tables).
//
//   cpu/<histogram|scatter_f32>/<calm|calm_thread_private|omp_reduction|thread_tables>/<dist>/<bins>
#include "bench_common.hpp"
#include "cpu_peers.hpp"

#if defined(CALM_BACKEND_OPENMP)
#include <omp.h>

#include <algorithm>
#include <vector>

namespace calm_bench {
namespace {

enum class peer { calm, calm_thread_private, omp_reduction, thread_tables };
char const* to_string(peer p) {
  static char const* names[] = {"calm", "calm_thread_private", "omp_reduction", "thread_tables"};
  return names[static_cast<int>(p)];
}

template <class T>
void cpu_case(benchmark::State& state, peer p, dist d, std::uint32_t bins) {
  constexpr bool weighted = std::is_floating_point<T>::value;
  std::size_t const n = keys_n();
  std::uint32_t const* k = device_keys(bins, d).data();
  float const* w = weighted ? weights().data() : nullptr;
  std::vector<T> table(bins), copies;
  T* const t = table.data();
  auto const run = [&] {
    std::fill(table.begin(), table.end(), T(0));
    auto const ni = static_cast<calm::index_t>(n);
    switch (p) {
      case peer::calm:
        if constexpr (weighted) calm::scatter(calm::plus{}, k, w, ni, t, bins);
        else calm::histogram(k, ni, t, bins);
        break;
      case peer::calm_thread_private:
        if constexpr (weighted) calm::scatter<calm::strategy::thread_private>(calm::plus{}, k, w, ni, t, bins);
        else calm::histogram<calm::strategy::thread_private>(k, ni, t, bins);
        break;
      case peer::omp_reduction: omp_reduction(k, w, n, t, bins); break;
      case peer::thread_tables: thread_tables(k, w, n, t, bins, copies); break;
    }
  };
  run();
  if constexpr (!weighted) {
    std::size_t total = 0;
    for (T c : table) total += c;
    if (total != n) state.SkipWithError("lost counts");
  }
  for (auto _ : state) state.SetIterationTime(time_device(run));
  report_bytes(state, static_cast<double>(n) * (sizeof(std::uint32_t) + (weighted ? sizeof(float) : 0)), static_cast<double>(n));
}

[[maybe_unused]] bool const registered = [] {
  for (dist d : {dist::uniform, dist::halfhot, dist::zipf, dist::runs32})
    for (std::uint32_t bins : {1u, 16u, 256u, 4096u, 65536u, 1u << 18, 1u << 20})
      for (peer p : {peer::calm, peer::calm_thread_private, peer::omp_reduction, peer::thread_tables}) {
        std::string const tail = std::string("/") + to_string(p) + "/" + to_string(d) + "/" + std::to_string(bins);
        benchmark::RegisterBenchmark(("cpu/histogram" + tail).c_str(), cpu_case<std::uint32_t>, p, d, bins)->UseManualTime()->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("cpu/scatter_f32" + tail).c_str(), cpu_case<float>, p, d, bins)->UseManualTime()->Unit(benchmark::kMillisecond);
      }
  return true;
}();

}  // namespace
}  // namespace calm_bench
#endif
