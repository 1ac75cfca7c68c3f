// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_table_placement.cu: a stand-alone probe (not part of the library or its build) of whether the table's
// allocation sets a call's speed where the table fits the L2 (hist_u32 hotset over 5,000,000 entries and zipf2 over
// 300,000, 2^24 keys, as in the held-out set): six tables allocated one after another (each its own cudaMalloc, all
// kept), and on each the forced scan_reduce and peer_reduce and automatic, in rounds, host launch to wait, medians.
// Results: perf/results/cuda-h200-2026-11-28-shared-launch-occupancy.md.
//
//   nvcc -std=c++17 -O3 -DNDEBUG --extended-lambda --expt-relaxed-constexpr -arch=sm_90 -DCALM_BACKEND_CUDA=1 \
//        -I <a folder holding calm/, a link to this repository> perf/probe_table_placement.cu -o probe && ./probe
#include <calm/calm.hpp>
#include <cstdio>
#include <memory>
#include <vector>

#include "../bulk_keys.hpp"
#include "probe_graph_timing.hpp"
using calm::index_t;
using calm::strategy;

int main() {
  cudaStream_t s = probe_stream();
  calm::default_exec const ex = calm::on_stream(s);
  struct input { char const* dist; std::uint32_t bins; };
  index_t const n = index_t(1) << 24;
  for (input const in : {input{"hotset", 5000000}, input{"zipf2", 300000}}) {
    calm::backend::device_buffer<std::uint32_t> keys(calm_bench::bulk_keys(static_cast<std::size_t>(n), in.bins, in.dist, 7));
    std::vector<std::unique_ptr<calm::backend::device_buffer<std::uint32_t>>> tables;
    for (int i = 0; i < 6; ++i) {
      tables.push_back(std::make_unique<calm::backend::device_buffer<std::uint32_t>>(in.bins));
      tables.back()->fill_bytes(0);
    }
    std::printf("hist_u32 %s %u 2^24:\n", in.dist, in.bins);
    for (int round = 0; round < 2; ++round)
      for (std::size_t i = 0; i < tables.size(); ++i) {
        std::uint32_t* t = tables[i]->data();
        std::printf("  round %d table %zu (%p):", round, i, static_cast<void*>(t));
        for (strategy x : {strategy::scan_reduce, strategy::peer_reduce, strategy::automatic}) {
          calm::scatter_options o;
          o.strategy = x;
          timing const r = time_call([&] { calm::histogram(keys.data(), n, t, index_t(in.bins), o, ex); }, s, 100);
          std::printf("  %s %.1f", calm::to_string(x), r.host);
        }
        std::printf("\n");
      }
  }
  CK(cudaGetLastError());
  return 0;
}
