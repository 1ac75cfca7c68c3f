// SPDX-License-Identifier: Apache-2.0
// calm::kokkos::ScatterView beside Kokkos::Experimental::ScatterView in the same process, on Kokkos's
// default execution space: a histogram (int counts, ++) and a float scatter-add, every distribution,
// tables of 1 to 2^20 entries. The user's code is the same for both: only the namespace differs.
#include <calm/kokkos.hpp>

#include <cmath>
#include <map>

#include "bench_common.hpp"

namespace calm_bench {
namespace {

using kspace = Kokkos::DefaultExecutionSpace;

template <class T>
Kokkos::View<T*, kspace> to_view(std::vector<T> const& h, std::string const& label) {
  Kokkos::View<T*, kspace> d(label, h.size());
  Kokkos::deep_copy(d, Kokkos::View<T const*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(h.data(), h.size()));
  return d;
}

/// Keys of (bins, d) and the weights 1 + (i % 7) / 4 as Kokkos views, made once per (bins, d).
struct inputs {
  Kokkos::View<int*, kspace> keys;
  Kokkos::View<float*, kspace> weights;
};
inputs const& kokkos_inputs(std::uint32_t bins, dist d) {
  static std::map<std::pair<std::uint32_t, int>, inputs> cache;
  static bool const hooked = (Kokkos::push_finalize_hook([] { cache.clear(); }), true);  // views go before Kokkos does
  (void)hooked;
  auto key = std::make_pair(bins, static_cast<int>(d));
  auto it = cache.find(key);
  if (it == cache.end()) {
    auto const k = make_keys(keys_n(), bins, d, 42);
    std::vector<int> ki(k.begin(), k.end());
    std::vector<float> w(keys_n());
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = 1.0f + 0.25f * static_cast<float>(i % 7);
    it = cache.emplace(key, inputs{to_view(ki, "keys"), to_view(w, "weights")}).first;
  }
  return it->second;
}

/// The user's body: a(keys(i)) += weights(i), or ++a(keys(i)) for a histogram.
template <class SV, bool Weighted>
struct scatter_body {
  SV sv;
  Kokkos::View<int*, kspace> keys;
  Kokkos::View<float*, kspace> weights;
  KOKKOS_INLINE_FUNCTION void operator()(int i) const {
    auto a = sv.access();
    if constexpr (Weighted) a(keys(i)) += weights(i);
    else ++a(keys(i));
  }
};

/// One case: a ScatterView of type SV over a table of `bins`, filled from keys_n() items, contributed.
template <class SV, bool Weighted>
void scatter_view_case(benchmark::State& state, dist d, std::uint32_t bins) {
  using T = typename SV::original_value_type;
  auto const& in = kokkos_inputs(bins, d);
  std::size_t const n = keys_n();
  Kokkos::View<T*, kspace> table("table", bins);
  SV sv(table);
  auto run_any = [&] {
    sv.reset_except(table);
    Kokkos::parallel_for("scatter", Kokkos::RangePolicy<kspace>(0, n), scatter_body<SV, Weighted>{sv, in.keys, in.weights});
    contribute(table, sv);  // ADL: Kokkos::Experimental:: or calm::kokkos::
    Kokkos::fence();
  };
  Kokkos::deep_copy(table, T(0));
  run_any();
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), table);
  double total = 0;
  for (std::size_t b = 0; b < bins; ++b) total += static_cast<double>(h(b));
  if (!Weighted && total != static_cast<double>(n)) state.SkipWithError("histogram lost counts");
  double expect = 0;
  for (std::size_t k = 0; k < 7; ++k) expect += (1.0 + 0.25 * k) * static_cast<double>((n + 6 - k) / 7);
  // float sums of 2^26 terms into few entries lose digits in any order, Kokkos's as much as calm's
  if (Weighted) state.counters["rel_error"] = std::abs(total - expect) / expect;
  for (auto _ : state) {
    Kokkos::deep_copy(table, T(0));
    Kokkos::fence();
    auto const t0 = std::chrono::steady_clock::now();
    run_any();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  report_bytes(state, static_cast<double>(n) * (Weighted ? 8.0 : 4.0), static_cast<double>(n));
}

template <class DataType>
using kokkos_sv = Kokkos::Experimental::ScatterView<DataType, typename Kokkos::View<DataType, kspace>::array_layout, kspace>;
template <class DataType, class Merge = calm::kokkos::sampled_merge>
using calm_sv = calm::kokkos::ScatterView<DataType, typename Kokkos::View<DataType, kspace>::array_layout, kspace, calm::kokkos::ScatterSum,
                                          calm::kokkos::detail::default_duplication<kspace>,
                                          calm::kokkos::detail::default_contribution<kspace, calm::kokkos::detail::default_duplication<kspace>>, Merge>;

[[maybe_unused]] bool const registered = [] {
  for (dist d : all_dists())
    for (std::uint32_t bins : {1u, 32u, 256u, 4096u, 65536u, 1u << 20}) {
      auto add = [&](std::string const& name, auto f) {
        benchmark::RegisterBenchmark(name.c_str(), f, d, bins)->UseManualTime()->Unit(benchmark::kMillisecond);
      };
      std::string const tail = std::string("/") + to_string(d) + "/" + std::to_string(bins);
      add("kokkos_histogram/calm_scatter_view" + tail, scatter_view_case<calm_sv<int*>, false>);
      add("kokkos_histogram/kokkos_scatter_view" + tail, scatter_view_case<kokkos_sv<int*>, false>);
      add("kokkos_scatter_f32/calm_scatter_view" + tail, scatter_view_case<calm_sv<float*>, true>);
      add("kokkos_scatter_f32/kokkos_scatter_view" + tail, scatter_view_case<kokkos_sv<float*>, true>);
      // the other lane merges, where they differ (GPU): exact matching, and none (the copies alone)
      add("kokkos_histogram/calm_scatter_view_peer" + tail, scatter_view_case<calm_sv<int*, calm::peer_reduce>, false>);
      add("kokkos_scatter_f32/calm_scatter_view_peer" + tail, scatter_view_case<calm_sv<float*, calm::peer_reduce>, true>);
      add("kokkos_histogram/calm_scatter_view_naive" + tail, scatter_view_case<calm_sv<int*, calm::naive>, false>);
      add("kokkos_scatter_f32/calm_scatter_view_naive" + tail, scatter_view_case<calm_sv<float*, calm::naive>, true>);
    }
  return true;
}();

}  // namespace
}  // namespace calm_bench
