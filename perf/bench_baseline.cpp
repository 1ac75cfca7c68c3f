// Baseline cases every later technique must beat: the device copy, and a histogram with one naive
// device-memory atomic per key (what Kokkos ScatterView and a plain atomicAdd loop do), bins 1 to 1M.
#include "bench_common.hpp"

namespace calm_bench {
namespace {

void copy_case(benchmark::State& state) {
  // reported for the table: the same copy the fractions are taken against
  for (auto _ : state) state.SetIterationTime(2.0 * (std::size_t(1) << (log2_keys() + 2)) * 4 / copy_rate());
  report_bytes(state, 2.0 * (std::size_t(1) << (log2_keys() + 2)) * 4);
}

void histogram_naive(benchmark::State& state, dist d, std::uint32_t bins) {
  std::size_t const n = std::size_t(1) << log2_keys();
  backend::device_buffer<std::uint32_t> keys(make_keys(n, bins, d, 42)), hist(bins);
  std::uint32_t const* pk = keys.data();
  std::uint32_t* ph = hist.data();
  auto run = [&] {
    backend::for_each_index(static_cast<index_t>(n), CALM_LAMBDA(auto const& w, auto i) {
      calm::atomic_update(w, calm::plus{}, calm::scope::device{}, ph + calm::load(w, pk, i), 1u);
    });
  };
  hist.fill_bytes(0);
  run();  // warm up, and check the result once: every key counted
  std::vector<std::uint32_t> h = hist.download();
  std::uint64_t total = 0;
  for (auto c : h) total += c;
  if (total != n) state.SkipWithError("naive histogram lost counts");
  for (auto _ : state) {
    hist.fill_bytes(0);
    state.SetIterationTime(time_device(run));
  }
  report_bytes(state, static_cast<double>(n) * sizeof(std::uint32_t));
}

[[maybe_unused]] bool const registered = [] {
  benchmark::RegisterBenchmark("copy", copy_case)->UseManualTime()->Iterations(1);
  for (dist d : {dist::uniform, dist::runs32, dist::halfhot})
    for (std::uint32_t bins : {1u, 32u, 256u, 4096u, 65536u, 1u << 20}) {
      if (d != dist::uniform && (bins == 1 || bins == 32)) continue;
      std::string name = std::string("histogram/naive/") + to_string(d) + "/" + std::to_string(bins);
      benchmark::RegisterBenchmark(name.c_str(), histogram_naive, d, bins)->UseManualTime()->Unit(benchmark::kMillisecond);
    }
  return true;
}();

}  // namespace
}  // namespace calm_bench
