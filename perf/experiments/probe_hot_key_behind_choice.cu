// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_hot_key_behind_choice.cu: a stand-alone probe (not part of the library or its build) of why
// automatic takes longer than forced hot_key where it runs hot_key (300,000 entries, 2^24 keys; scatter_f64 zipf:
// 310 us against 277 us on an H100). Each input is timed as calls, host launch to stream wait, medians of 100
// in 3 rounds, and their device part alone (CUDA events, the call queued behind a spin): forced hot_key; automatic
// (with and without its recorded graph); the launches behind a choice made already (hot_key chosen, with and
// without the direct launches after it, overlapping as automatic launches them or not); hot_key's own launch after a
// stand-in for the sampling that lets the next launch begin at once (as the sampling does) or does not. Results:
// perf/results/cuda-h100-2026-11-27-merge-per-tile.md (section 1).
//
//   nvcc -std=c++17 -O3 -DNDEBUG --extended-lambda --expt-relaxed-constexpr -arch=sm_90 -DCALM_BACKEND_CUDA=1 \
//        -I <a folder holding calm/, a link to this repository> perf/probe_hot_key_behind_choice.cu -o probe && ./probe
#include <calm/calm.hpp>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

#include "probe_graph_timing.hpp"
namespace d = calm::detail;
using calm::index_t;
using calm::strategy;

/// A stand-in for the sampling: each block spins for `cycles` clocks; with `early`, it lets the next launch
/// begin first (as collision_sample_program does when the choice follows).
struct spin_program {
  long long cycles;
  bool early;
  template <class Block>
  __device__ void operator()(Block const& blk) const {
    if (early) blk.allow_next_launch();
    long long const t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
  }
};

std::vector<std::uint32_t> draw(std::string const& dist, std::size_t n, std::uint32_t bins) {
  std::vector<std::uint32_t> k(n);
  std::mt19937_64 g(11);
  auto unit = [&] { return static_cast<double>(g() >> 11) * 0x1.0p-53; };
  for (auto& x : k) {
    std::uint64_t const r = g();
    std::uint32_t const any = static_cast<std::uint32_t>((r & 0xffffffffu) % bins);
    if (dist == "zipf") x = static_cast<std::uint32_t>(bins * std::pow(unit(), 4.0)) % bins;
    else if (dist == "twohot") x = (r >> 62) == 0 ? 0u : (r >> 62) == 1 ? bins / 2 : any;
    else if (dist == "halfhot") x = (r >> 63) ? 0u : any;
    else x = any;
  }
  return k;
}

template <class T>
void probe(char const* workload, std::string const& dist, T const* vals, cudaStream_t s) {
  std::uint32_t const bins = 300000;
  index_t const n = index_t(1) << 24;
  bool const counting = vals == nullptr;
  calm::backend::device_buffer<std::uint32_t> keys(draw(dist, static_cast<std::size_t>(n), bins));
  calm::backend::device_buffer<T> table(bins);
  table.fill_bytes(0);
  calm::backend::device_buffer<strategy> decided(std::vector<strategy>{strategy::hot_key});
  auto const bit = [](strategy x) { return 1u << static_cast<int>(x); };
  unsigned const hot = bit(strategy::hot_key);
  unsigned const all = hot | bit(strategy::naive) | bit(strategy::peer_reduce) | bit(strategy::scan_reduce);
  calm::default_exec const ex = calm::on_stream(s);
  calm::default_exec const over = d::overlapping(ex);
  auto const call = [&](strategy st) {
    calm::scatter_options opt;
    opt.strategy = st;
    if (counting) return calm::histogram(keys.data(), n, table.data(), index_t(bins), opt, ex);
    return calm::scatter(calm::plus{}, keys.data(), vals, n, table.data(), index_t(bins), opt, ex);
  };
  auto const call_ungraphed = [&] {
    calm::default_exec e = ex;
    e.launch_graphs = false;
    calm::scatter_options opt;
    if (counting) return calm::histogram(keys.data(), n, table.data(), index_t(bins), opt, e);
    return calm::scatter(calm::plus{}, keys.data(), vals, n, table.data(), index_t(bins), opt, e);
  };
  auto const chosen = [&](unsigned reach, calm::default_exec const& e) {
    if (counting)
      d::launch_chosen(decided.data(), reach, calm::plus{}, keys.data(), d::as_value_source<T>(calm::constant(T(1))), nullptr, n, table.data(),
                       index_t(bins), d::identity_key{}, true, e);
    else
      d::launch_chosen(decided.data(), reach, calm::plus{}, keys.data(), d::as_value_source<T>(vals), nullptr, n, table.data(), index_t(bins),
                       d::identity_key{}, false, e);
  };
  long long const spin = 12000;  // about 7 us at 1.7 GHz
  auto const stand_in = [&](bool early) { over.for_each_block(2 * 132, 256, 0, spin_program{spin, early}); };
  struct variant { char const* name; std::function<void()> run; };
  std::vector<variant> const variants = {
      {"forced hot_key", [&] { call(strategy::hot_key); }},
      {"automatic", [&] { call(strategy::automatic); }},
      {"automatic, no recorded graph", [&] { call_ungraphed(); }},
      {"behind a choice: hot_key + 3 direct, overlapping", [&] { chosen(all, over); }},
      {"behind a choice: hot_key + 3 direct, not overlapping", [&] { chosen(all, ex); }},
      {"behind a choice: hot_key alone, overlapping", [&] { chosen(hot, over); }},
      {"stand-in (early), hot_key alone, overlapping", [&] { stand_in(true); chosen(hot, over); }},
      {"stand-in (late), hot_key alone, overlapping", [&] { stand_in(false); chosen(hot, over); }},
      {"stand-in (late), hot_key alone, not overlapping", [&] { stand_in(false); chosen(hot, ex); }},
      {"stand-in alone", [&] { stand_in(false); }},
  };
  std::vector<std::vector<double>> t(variants.size()), dt(variants.size());
  for (int round = 0; round < 3; ++round)
    for (std::size_t v = 0; v < variants.size(); ++v) {
      timing const x = time_call(variants[v].run, s, 100);
      t[v].push_back(x.host);
      dt[v].push_back(x.device);
    }
  std::printf("%s %s: host launch to wait | device part (events after a spin), medians of 100, median round (min-max)\n", workload, dist.c_str());
  for (std::size_t v = 0; v < variants.size(); ++v) {
    std::sort(t[v].begin(), t[v].end());
    std::sort(dt[v].begin(), dt[v].end());
    std::printf("  %-52s %8.2f (%.2f-%.2f) | %8.2f (%.2f-%.2f) us\n", variants[v].name, t[v][1], t[v][0], t[v][2], dt[v][1], dt[v][0], dt[v][2]);
  }
  std::fflush(stdout);
  CK(cudaGetLastError());
}

int main(int argc, char** argv) {
  cudaStream_t const s = probe_stream();
  probe_weights const w(std::size_t(1) << 24);
  calm::backend::device_buffer<double> dv(w.d);
  calm::backend::device_buffer<float> fv(w.f);
  std::string const only = argc > 1 ? argv[1] : "";
  for (char const* dist : {"zipf", "twohot", "halfhot"}) {
    if (!only.empty() && only != dist) continue;
    probe<double>("scatter_f64", dist, dv.data(), s);
    probe<float>("scatter_f32", dist, fv.data(), s);
    probe<std::uint32_t>("hist_u32", dist, nullptr, s);
  }
  return 0;
}
