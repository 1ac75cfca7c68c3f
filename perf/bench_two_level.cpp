// SPDX-License-Identifier: Apache-2.0
// The global maximum by the four schemes of 003 (calm::reduce_idempotent) beside cub::DeviceReduce::Max
// (CUDA), rocprim::reduce (HIP, if installed) and an OpenMP max reduction (host), on random and on increasing values (the worst case for
// culling: nearly every value raises the maximum seen so far).
#include "bench_common.hpp"

#include <algorithm>
#include <limits>


namespace calm_bench {
namespace {

std::size_t values_n() { return std::size_t(1) << log2_keys(); }

backend::device_buffer<float> const& values(bool increasing) {
  static backend::device_buffer<float> random_v, increasing_v;
  auto& b = increasing ? increasing_v : random_v;
  if (b.size() == 0) {
    std::vector<std::uint32_t> k = make_keys(values_n(), 1u << 30, dist::uniform, 77);
    std::vector<float> h(k.size());
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = increasing ? static_cast<float>(i) : static_cast<float>(k[i]) * 0.5f;
    b = backend::device_buffer<float>(h);
  }
  return b;
}

float expected_max(bool increasing) {
  std::vector<float> h = values(increasing).download();
  return *std::max_element(h.begin(), h.end());
}

/// One scheme of 003, or (choice) calm::global_max, the routine users call.
void calm_max(benchmark::State& state, calm::two_level scheme, bool increasing, bool choice) {
  std::size_t const n = values_n();
  float const* pv = values(increasing).data();
  backend::device_buffer<float> out(1);
  std::vector<float> const lowest{-std::numeric_limits<float>::infinity()};
  auto run = [&] {
    if (choice) calm::global_max(pv, static_cast<index_t>(n), out.data());
    else calm::reduce_idempotent(calm::max{}, pv, static_cast<index_t>(n), out.data(), scheme);
  };
  out.upload(lowest);
  run();
  if (out.download()[0] != expected_max(increasing)) state.SkipWithError("wrong maximum");
  for (auto _ : state) {
    out.upload(lowest);
    state.SetIterationTime(time_device(run));
  }
  report_bytes(state, static_cast<double>(n) * sizeof(float), static_cast<double>(n));
}

#if defined(CALM_BENCH_VENDOR)
void vendor_max_case(benchmark::State& state, bool increasing) {
  std::size_t const n = values_n();
  float const* pv = values(increasing).data();
  backend::device_buffer<float> out(1);
  std::size_t temp_bytes = 0;
  auto call = [&](void* temp) { vendor_max(temp, temp_bytes, pv, out.data(), n); };
  call(nullptr);
  backend::device_buffer<unsigned char> temp(temp_bytes);
  call(temp.data());
  if (out.download()[0] != expected_max(increasing)) state.SkipWithError(CALM_BENCH_VENDOR ": wrong maximum");
  for (auto _ : state) state.SetIterationTime(time_device([&] { call(temp.data()); }));
  report_bytes(state, static_cast<double>(n) * sizeof(float), static_cast<double>(n));
}
#endif

#if defined(CALM_BACKEND_OPENMP)
void omp_max(benchmark::State& state, bool increasing) {
  std::size_t const n = values_n();
  float const* pv = values(increasing).data();
  float m = 0;
  auto run = [&] {
    float r = -std::numeric_limits<float>::infinity();
#pragma omp parallel for reduction(max : r) schedule(static)
    for (std::size_t i = 0; i < n; ++i) r = std::max(r, pv[i]);
    m = r;
  };
  run();
  if (m != expected_max(increasing)) state.SkipWithError("omp: wrong maximum");
  for (auto _ : state) state.SetIterationTime(time_device(run));
  report_bytes(state, static_cast<double>(n) * sizeof(float), static_cast<double>(n));
}
#endif

template <class F, class... A>
void add(std::string const& name, F f, A... a) {
  benchmark::RegisterBenchmark(name.c_str(), f, a...)->UseManualTime()->Unit(benchmark::kMillisecond);
}

[[maybe_unused]] bool const registered = [] {
  for (bool inc : {false, true}) {
    std::string const d = inc ? "/increasing/1" : "/random/1";
    for (auto s : {calm::two_level::naive, calm::two_level::cull, calm::two_level::block_reduce, calm::two_level::block_atomic})
      add(std::string("global_max/") + calm::to_string(s) + d, calm_max, s, inc, false);
    add("global_max/calm" + d, calm_max, calm::global_extremum_scheme, inc, true);
#if defined(CALM_BENCH_VENDOR)
    add("global_max/" CALM_BENCH_VENDOR + d, vendor_max_case, inc);
#endif
#if defined(CALM_BACKEND_OPENMP)
    add("global_max/omp_reduction" + d, omp_max, inc);
#endif
  }
  return true;
}();

}  // namespace
}  // namespace calm_bench
