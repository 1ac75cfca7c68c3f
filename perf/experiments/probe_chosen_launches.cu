// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_chosen_launches.cu: a stand-alone probe (not part of the library or its build) of what the launches
// behind a choice already made cost, on hist_u32 sorted, 300,000 entries, 2^24 keys, the choice peer_reduce: calm's
// own launch_chosen with the reach of automatic's walk there (hot_key's launch, not chosen, then naive and
// peer_reduce sharing one launch: chosen_merge_program), and with smaller reaches: the shared launch alone, peer_reduce
// alone (the program forced peer_reduce runs), naive's and peer_reduce's own launches one after the other (two calls
// of launch_chosen, each of one strategy), and hot_key's launch before peer_reduce's own. Each a CUDA graph with the
// launches overlapping as automatic's (detail::overlapping), host launch to wait, medians of 2,000 in rounds.
// Results: perf/results/cuda-h100-2026-11-26-sampling-parts.md.
//
//   nvcc -std=c++17 -O3 -DNDEBUG --extended-lambda --expt-relaxed-constexpr -arch=sm_90 -DCALM_BACKEND_CUDA=1 \
//        -I <a folder holding calm/, a link to this repository> perf/probe_chosen_launches.cu -o probe && ./probe
#include <calm/calm.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "probe_graph_timing.hpp"
namespace d = calm::detail;
using calm::index_t;
using calm::strategy;
int main() {
  std::uint32_t const bins = 300000;
  index_t const n = index_t(1) << 24;
  calm::backend::device_buffer<std::uint32_t> keys(sorted_keys(static_cast<std::size_t>(n), bins));
  calm::backend::device_buffer<std::uint32_t> table(bins);
  table.fill_bytes(0);
  calm::backend::device_buffer<strategy> decided(std::vector<strategy>{strategy::peer_reduce});
  using T = std::uint32_t;
  auto const vals = d::as_value_source<T>(calm::constant(T(1)));
  auto const bit = [](strategy s) { return 1u << static_cast<int>(s); };
  unsigned const hot = bit(strategy::hot_key), naive = bit(strategy::naive), peer = bit(strategy::peer_reduce);
  struct part { char const* name; std::vector<unsigned> reaches; };
  std::vector<part> const parts = {{"empty", {}},
                                   {"hot_key+shared (automatic's)", {hot | naive | peer}},
                                   {"shared alone", {naive | peer}},
                                   {"peer_reduce alone", {peer}},
                                   {"naive then peer_reduce", {naive, peer}},
                                   {"hot_key then peer_reduce", {hot, peer}}};
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  std::vector<cudaGraphExec_t> graphs;
  for (auto const& p : parts) {
    cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
    calm::default_exec const e = d::overlapping(calm::on_stream(s));
    if (p.reaches.empty()) e.for_each_block(1, 32, 0, d::no_finish{});
    for (unsigned reach : p.reaches)
      d::launch_chosen(decided.data(), reach, calm::plus{}, keys.data(), vals, nullptr, n, table.data(), bins, d::identity_key{}, true, e);
    cudaGraph_t gr;
    cudaStreamEndCapture(s, &gr);
    cudaGraphExec_t x;
    if (cudaGraphInstantiate(&x, gr, 0) != cudaSuccess) { std::printf("instantiate failed\n"); return 1; }
    graphs.push_back(x);
  }
  std::vector<std::vector<double>> t(parts.size());
  for (int round = 0; round < 11; ++round)
    for (std::size_t p = 0; p < parts.size(); ++p)
      for (int i = 0; i < 200; ++i) {
        auto const a = std::chrono::steady_clock::now();
        cudaGraphLaunch(graphs[p], s);
        cudaStreamSynchronize(s);
        if (round > 0) t[p].push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
      }
  if (cudaGetLastError() != cudaSuccess) { std::printf("cuda error\n"); return 1; }
  for (std::size_t p = 0; p < parts.size(); ++p) {
    std::sort(t[p].begin(), t[p].end());
    std::printf("%-30s median %.2f us  p10 %.2f  p90 %.2f\n", parts[p].name, t[p][t[p].size() / 2], t[p][t[p].size() / 10], t[p][t[p].size() * 9 / 10]);
  }
  return 0;
}
