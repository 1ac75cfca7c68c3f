// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_automatic_gap.cu: a stand-alone probe (not part of the library or its build) of where automatic's
// time goes beyond the forced strategy it runs, on held-out inputs where that gap grew with the keys (hist_u32 sorted
// over 300,000 entries, peer_reduce; hotset over 5,000,000, scan_reduce; 2^24 and 2^26 keys), and on inputs that run
// hot_key (twohot, zipf over 300,000) or scan_reduce (uniform over 300,000) beside them. Per input, in one
// process: the forced call and automatic through calm::histogram, then calm's own launch_chosen with the choice
// already on the device (no sampling) and four reaches: the chosen strategy's own launch, naive and peer_reduce shared,
// the three direct scatters shared, and automatic's (the three and hot_key). Each timed from host launch to wait and
// on the device alone (time_call), medians. Results: perf/results/cuda-h200-2026-11-28-shared-launch-occupancy.md
// (output: cuda-h200-2026-11-28-automatic-gap-probe.txt; its first run had the first four inputs only).
//
//   nvcc -std=c++17 -O3 -DNDEBUG --extended-lambda --expt-relaxed-constexpr -arch=sm_90 -DCALM_BACKEND_CUDA=1 \
//        -I <a folder holding calm/, a link to this repository> perf/probe_automatic_gap.cu -o probe && ./probe
#include <calm/calm.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "../bulk_keys.hpp"
#include "probe_graph_timing.hpp"
namespace d = calm::detail;
using calm::index_t;
using calm::strategy;

int main() {
  cudaStream_t s = probe_stream();
  calm::default_exec const ex = calm::on_stream(s);
  struct input { char const* dist; std::uint32_t bins; int log2_n; strategy ran; };
  std::vector<input> const inputs = {{"sorted", 300000, 24, strategy::peer_reduce}, {"sorted", 300000, 26, strategy::peer_reduce},
                                     {"hotset", 5000000, 24, strategy::scan_reduce}, {"hotset", 5000000, 26, strategy::scan_reduce},
                                     {"twohot", 300000, 24, strategy::hot_key},      {"twohot", 300000, 26, strategy::hot_key},
                                     {"zipf", 300000, 24, strategy::hot_key},        {"uniform", 300000, 24, strategy::scan_reduce}};
  auto const bit = [](strategy x) { return 1u << static_cast<int>(x); };
  unsigned const naive = bit(strategy::naive), scan = bit(strategy::scan_reduce), peer = bit(strategy::peer_reduce), hot = bit(strategy::hot_key);
  for (auto const& in : inputs) {
    index_t const n = index_t(1) << in.log2_n;
    calm::backend::device_buffer<std::uint32_t> keys(calm_bench::bulk_keys(static_cast<std::size_t>(n), in.bins, in.dist, 7));
    calm::backend::device_buffer<std::uint32_t> table(in.bins);
    table.fill_bytes(0);
    calm::backend::device_buffer<strategy> decided(std::vector<strategy>{in.ran});
    calm::backend::device_buffer<strategy> ran(1);
    auto const vals = d::as_value_source<std::uint32_t>(calm::constant(std::uint32_t(1)));
    std::printf("hist_u32 %s %u 2^%d (%s):\n", in.dist, in.bins, in.log2_n, calm::to_string(in.ran));
    auto report = [](char const* what, timing t) { std::printf("  %-44s host %8.2f us  device %8.2f us\n", what, t.host, t.device); };
    calm::scatter_options forced;
    forced.strategy = in.ran;
    report("forced (calm::histogram)", time_call([&] { calm::histogram(keys.data(), n, table.data(), index_t(in.bins), forced, ex); }, s, 300));
    calm::scatter_options automatic;
    automatic.chosen = ran.data();
    report("automatic (calm::histogram)", time_call([&] { calm::histogram(keys.data(), n, table.data(), index_t(in.bins), automatic, ex); }, s, 300));
    std::printf("  automatic ran %s\n", calm::to_string(ran.download()[0]));
    struct part { char const* name; unsigned reach; };
    std::vector<part> const parts = {{"chosen: its own launch", bit(in.ran)},
                                     {"chosen: naive + peer_reduce shared", naive | peer},
                                     {"chosen: naive + scan + peer shared", naive | scan | peer},
                                     {"chosen: automatic's (the three + hot_key)", naive | scan | peer | hot}};
    for (auto const& p : parts) {
      if (!(p.reach & bit(in.ran))) continue;
      calm::default_exec const e = d::overlapping(ex);
      report(p.name, time_call([&] {
               d::launch_chosen(decided.data(), p.reach, calm::plus{}, keys.data(), vals, nullptr, n, table.data(), index_t(in.bins), d::identity_key{}, true, e);
             }, s, 300));
    }
  }
  CK(cudaGetLastError());
  return 0;
}
