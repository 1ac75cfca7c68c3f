// SPDX-License-Identifier: Apache-2.0
// The warp-scope strategies beside naive atomics (one device atomic per key, what Kokkos ScatterView
// and a plain atomicAdd loop do): a +1 histogram and a float scatter-add into a device-memory table,
// bins 1 to 1M, the five key distributions; and the bulk call's automatic choice on the same inputs.
#include "bench_common.hpp"

#include <cmath>

namespace calm_bench {
namespace {

template <class Strategy>
void histogram_case(benchmark::State& state, Strategy strategy, dist d, std::uint32_t bins) {
  std::size_t const n = keys_n();
  std::uint32_t const* pk = device_keys(bins, d).data();
  backend::device_buffer<std::uint32_t> hist(bins);
  std::uint32_t* ph = hist.data();
  auto run = [&] {
    backend::for_each_index(static_cast<index_t>(n), CALM_LAMBDA(auto const& w, auto i) {
      calm::update(w, calm::plus{}, calm::scope::device{}, ph + calm::load(w, pk, i), calm::constant(1u), strategy);
    });
  };
  hist.fill_bytes(0);
  run();  // warm up, and check once that every key was counted
  std::uint64_t total = 0;
  for (auto c : hist.download()) total += c;
  if (total != n) state.SkipWithError("histogram lost counts");
  for (auto _ : state) {
    hist.fill_bytes(0);
    state.SetIterationTime(time_device(run));
  }
  report_bytes(state, static_cast<double>(n) * sizeof(std::uint32_t), static_cast<double>(n));
}

template <class Strategy>
void scatter_case(benchmark::State& state, Strategy strategy, dist d, std::uint32_t bins) {
  std::size_t const n = keys_n();
  std::uint32_t const* pk = device_keys(bins, d).data();
  float const* pw = weights().data();
  backend::device_buffer<float> table(bins);
  float* pt = table.data();
  auto run = [&] {
    backend::for_each_index(static_cast<index_t>(n), CALM_LAMBDA(auto const& w, auto i) {
      calm::update(w, calm::plus{}, calm::scope::device{}, pt + calm::load(w, pk, i), calm::load(w, pw, i), strategy);
    });
  };
  table.fill_bytes(0);
  run();
  // float sums of ~2^26 terms are inexact in any order (a bin that passes 2^25 stops growing by 1.75):
  // report the relative error of the total beside the speed rather than judge it here (the tests check
  // correctness to a bound that scales with the terms)
  double total = 0, expect = 0;
  for (auto c : table.download()) total += c;
  for (std::size_t k = 0; k < 7; ++k) expect += (1.0 + 0.25 * k) * static_cast<double>((n + 6 - k) / 7);
  state.counters["rel_error"] = std::fabs(total - expect) / expect;
  for (auto _ : state) {
    table.fill_bytes(0);
    state.SetIterationTime(time_device(run));
  }
  report_bytes(state, static_cast<double>(n) * (sizeof(std::uint32_t) + sizeof(float)), static_cast<double>(n));
}

/// The same inputs through the bulk front door, strategy::automatic (the column the sweeps compare to).
/// keys_from, values_from: the arrays start that many items into the inputs (1: not aligned to a
/// 16-byte chunk, as a slice of a larger array may start), n - keys_from items.
void automatic_case(benchmark::State& state, bool weighted, dist d, std::uint32_t bins, int keys_from, int values_from) {
  std::size_t const n = keys_n() - static_cast<std::size_t>(keys_from);
  std::uint32_t const* pk = device_keys(bins, d).data() + keys_from;
  float const* pw = weights().data() + values_from;
  backend::device_buffer<std::uint32_t> hist(bins);
  backend::device_buffer<float> table(bins);
  auto const ni = static_cast<calm::index_t>(n);
  auto run = [&] {
    if (weighted) calm::scatter(calm::plus{}, pk, pw, ni, table.data(), bins);
    else calm::histogram(pk, ni, hist.data(), bins);
  };
  for (auto _ : state) {
    hist.fill_bytes(0);
    table.fill_bytes(0);
    state.SetIterationTime(time_device(run));
  }
  report_bytes(state, static_cast<double>(n) * (sizeof(std::uint32_t) + (weighted ? sizeof(float) : 0)), static_cast<double>(n));
}

template <class Strategy>
void register_strategy(char const* name, Strategy strategy) {
  for (dist d : all_dists())
    for (std::uint32_t bins : {1u, 32u, 256u, 4096u, 65536u, 1u << 20}) {
      std::string const tail = std::string("/") + name + "/" + to_string(d) + "/" + std::to_string(bins);
      benchmark::RegisterBenchmark(("histogram" + tail).c_str(), histogram_case<Strategy>, strategy, d, bins)
          ->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("scatter_f32" + tail).c_str(), scatter_case<Strategy>, strategy, d, bins)
          ->UseManualTime()->Unit(benchmark::kMillisecond);
    }
}

[[maybe_unused]] bool const registered = [] {
  for (dist d : all_dists())
    for (std::uint32_t bins : {1u, 32u, 256u, 4096u, 65536u, 1u << 20}) {
      std::string const tail = std::string("/automatic/") + to_string(d) + "/" + std::to_string(bins);
      benchmark::RegisterBenchmark(("histogram" + tail).c_str(), automatic_case, false, d, bins, 0, 0)->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("scatter_f32" + tail).c_str(), automatic_case, true, d, bins, 0, 0)->UseManualTime()->Unit(benchmark::kMillisecond);
      // arrays that do not start on a chunk: both one item in, or the values alone
      std::string const both = std::string("/automatic_from1/") + to_string(d) + "/" + std::to_string(bins);
      std::string const values = std::string("/automatic_values_from1/") + to_string(d) + "/" + std::to_string(bins);
      benchmark::RegisterBenchmark(("histogram" + both).c_str(), automatic_case, false, d, bins, 1, 1)->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("scatter_f32" + both).c_str(), automatic_case, true, d, bins, 1, 1)->UseManualTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("scatter_f32" + values).c_str(), automatic_case, true, d, bins, 0, 1)->UseManualTime()->Unit(benchmark::kMillisecond);
    }
  register_strategy("naive", calm::naive{});
  register_strategy("scan_reduce", calm::scan_reduce{});
  register_strategy("vote_reduce1", calm::vote_reduce<1>{});
  register_strategy("vote_reduce4", calm::vote_reduce<4>{});
  register_strategy("peer_reduce", calm::peer_reduce{});
  return true;
}();

}  // namespace
}  // namespace calm_bench
