// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_hot_key_slots.cu: a stand-alone probe (not part of the library or its build) of how many lines hot_key
// should cache. Where keys crowd a few hundred table lines without meeting in a warp (gauss over 300,000 entries: sigma
// 4,688; window16 over 262,144: 16,384 entries alike), naive is bound by the device atomics on those lines, and a
// cache of at most 64 of them (slots = 128, the default) moves only the hottest: on an H100 hot_key runs 10-12% faster
// than naive on gauss at 2^26 keys and 0.91-1.02 of it on the windows at 2^25. With 256 to 1,024 slots (128 to 512
// lines) a block keeps most of such a band. Here hot_key_scatter runs with its default (slots = 0, "hot_key (N
// slots)") and each other slot count (where the cache fits a block), beside naive and automatic, on the bench's own keys
// (perf/bulk_keys.hpp, seed 7; runs of equal keys too, where every warp proposes a line) for hist_u32, scatter_f32 and
// scatter_f64 at 2^22, 2^24 and 2^26 keys. Each call is timed from the host's launch to its wait and on the device
// alone, medians of 30 (us). Results: perf/results/cuda-h200-2026-11-28-hot-key-slots.md.
//
//   nvcc -std=c++17 -O3 -DNDEBUG --extended-lambda --expt-relaxed-constexpr -arch=sm_90 -DCALM_BACKEND_CUDA=1 \
//        -I <a folder holding calm/, a link to this repository> perf/probe_hot_key_slots.cu -o probe && ./probe [log2 keys]
#include <calm/calm.hpp>
#include <cstdio>
#include <functional>
#include <string>
#include <type_traits>

#include "../bulk_keys.hpp"
#include "probe_graph_timing.hpp"
using calm::index_t;
using calm::strategy;

/// One input's rows: naive, automatic, hot_key with each slot count (votes 2, 32-entry lines, 512 threads).
template <class T, class Values>
void probe(char const* workload, std::string const& dist, std::uint32_t bins, std::uint32_t const* keys, Values vals, int lg, cudaStream_t s) {
  index_t const n = index_t(1) << lg;
  calm::backend::device_buffer<T> table(bins);
  table.fill_bytes(0);
  calm::default_exec const ex = calm::on_stream(s);
  auto const call = [&](strategy st) {
    calm::scatter_options opt;
    opt.strategy = st;
    if constexpr (std::is_same<Values, T const*>::value) calm::scatter(calm::plus{}, keys, vals, n, table.data(), index_t(bins), opt, ex);
    else calm::histogram(keys, n, table.data(), index_t(bins), opt, ex);  // as the bench's hist_u32
  };
  struct variant { std::string name; std::function<void()> run; };
  std::vector<variant> rows = {{"naive", [&] { call(strategy::naive); }}, {"automatic", [&] { call(strategy::automatic); }}};
  int const usual = calm::detail::hot_key_slots_for<T>(calm::hot_key_options{}, ex.block_local_bytes());  // slots = 0's
  for (int slots : {0, 128, 256, 512, 1024}) {
    calm::hot_key_options o;
    o.slots = slots == 0 ? usual : slots;
    if (slots == usual || calm::detail::hot_key_layout<T>{o.slots, o.line_entries}.bytes() > ex.block_local_bytes()) continue;
    rows.push_back({slots == 0 ? "hot_key (" + std::to_string(o.slots) + " slots)" : "hot_key, " + std::to_string(slots) + " slots", [&, o] { calm::hot_key_scatter(calm::plus{}, keys, vals, n, table.data(), index_t(bins), o, ex); }});
  }
  for (auto const& v : rows) {
    timing const x = time_call(v.run, s, 30);
    std::printf("%-12s %-9s %8u 2^%-3d %-22s %9.2f | %9.2f\n", workload, dist.c_str(), bins, lg,
                v.name.c_str(), x.host, x.device);
  }
  std::fflush(stdout);
  CK(cudaGetLastError());
}

int main(int argc, char** argv) {
  cudaStream_t const s = probe_stream();
  std::vector<int> sizes = {22, 24, 26};
  if (argc > 1) sizes = {std::atoi(argv[1])};
  std::size_t const most = std::size_t(1) << sizes.back();
  probe_weights const w(most);
  calm::backend::device_buffer<float> fv(w.f);
  calm::backend::device_buffer<double> dv(w.d);
  std::printf("workload     dist          bins keys  variant                host launch to wait | device part (us)\n");
  struct input { char const* dist; std::uint32_t bins; };
  for (input const in : {input{"gauss", 300000}, input{"window16", 262144}, input{"window64", 1048576}, input{"window16", 393216},
                         input{"zipf", 300000}, input{"runs32", 300000}, input{"runs8", 300000}, input{"zipf2", 300000},
                         input{"gauss", 5000000}, input{"uniform", 300000}}) {
    calm::backend::device_buffer<std::uint32_t> keys(calm_bench::bulk_keys(most, in.bins, in.dist, 7));
    for (int lg : sizes) {  // a shorter input is a prefix of the longer one, as the bench draws it
      probe<std::uint32_t>("hist_u32", in.dist, in.bins, keys.data(), calm::constant(std::uint32_t(1)), lg, s);
      probe<float>("scatter_f32", in.dist, in.bins, keys.data(), static_cast<float const*>(fv.data()), lg, s);
      probe<double>("scatter_f64", in.dist, in.bins, keys.data(), static_cast<double const*>(dv.data()), lg, s);
    }
  }
  return 0;
}
