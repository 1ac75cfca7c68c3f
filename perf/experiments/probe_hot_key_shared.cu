// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_hot_key_shared.cu: a stand-alone probe (not part of the library or its build) of hot_key's program
// in the direct scatter's shared launch behind a choice already made (300,000 entries, 2^24 keys): the launches as
// they were (hot_key's own launch, then the shared naive/peer_reduce launch), the shared launch alone, and hot_key
// in the shared launch: inlined (calm's launch_chosen), capped as calm caps it and uncapped, and through calls not
// inlined (hot_key's, or both programs'). Each a CUDA graph of those launches only, host launch to wait, medians of 1,500 in
// rounds. Results: perf/results/cuda-h100-2026-11-26-hot-key-shared.md.
// It builds against calm up to 4525702: chosen_merge_program then took hot_key's program as a second
// parameter, which it lost when hot_key got its own launch again (perf/results/cuda-h200-2026-11-28-shared-launch-occupancy.md).
//
//   nvcc -std=c++17 -O3 -DNDEBUG --extended-lambda --expt-relaxed-constexpr -arch=sm_90 -DCALM_BACKEND_CUDA=1 \
//        -I <a folder holding calm/, a link to this repository> perf/probe_hot_key_shared.cu -o probe && ./probe
#include <calm/calm.hpp>
#include <cstdio>
#include <functional>
#include <string>

#include "probe_graph_timing.hpp"
namespace d = calm::detail;
using calm::index_t;
using calm::strategy;

/// A program with its register request removed (launched uncapped).
template <class P>
struct uncapped : P {
  static constexpr int resident_1024_blocks = 0;
};

/// chosen_merge_program with either program run through a call the compiler may not inline (Call: 1 hot_key
/// only, 2 both), capped as calm caps the shared launch with hot_key (Resident: 0 uncapped).
template <class Program, class HotKey, int Call, int Resident>
struct fused_calls {
  calm::strategy const* decided;
  Program program;
  HotKey hot;
  static constexpr int resident_1024_blocks = Resident;
  template <class Block>
  __device__ __noinline__ static void run_hot(HotKey const& h, Block const& blk) { h(blk); }
  template <class Block>
  __device__ __noinline__ static void run_direct(Program const& p, Block const& blk) { p(blk); }
  template <class Block>
  __device__ void operator()(Block const& blk) const {
    strategy const s = *decided;
    if (s == strategy::hot_key) {
      run_hot(hot, blk);
      return;
    }
    if (s != strategy::naive && s != strategy::peer_reduce) return;
    Program p = program;
    p.strategy.merge = s == strategy::peer_reduce;
    if constexpr (Call == 2) run_direct(p, blk);
    else p(blk);
  }
};

std::vector<std::uint32_t> draw(std::string const& dist, std::size_t n, std::uint32_t bins) {
  if (dist == "sorted") return sorted_keys(n, bins);
  std::vector<std::uint32_t> k(n);
  std::mt19937_64 g(11);
  for (auto& x : k) {
    std::uint64_t const r = g();
    std::uint32_t const any = static_cast<std::uint32_t>((r & 0xffffffffu) % bins);
    x = dist == "twohot" ? ((r >> 62) == 0 ? 0u : (r >> 62) == 1 ? bins / 2 : any) : any;
  }
  return k;
}

template <class T, class VS>
void probe(char const* workload, std::string const& dist, strategy decided_as, VS const& vals, bool counting, cudaStream_t s) {
  std::uint32_t const bins = 300000;
  index_t const n = index_t(1) << 24;
  calm::backend::device_buffer<std::uint32_t> keys(draw(dist, static_cast<std::size_t>(n), bins));
  calm::backend::device_buffer<T> table(bins);
  table.fill_bytes(0);
  calm::backend::device_buffer<strategy> decided(std::vector<strategy>{decided_as});
  auto const bit = [](strategy x) { return 1u << static_cast<int>(x); };
  unsigned const hot = bit(strategy::hot_key), direct = bit(strategy::naive) | bit(strategy::peer_reduce);
  constexpr d::load_form F = d::load_form::chunks;
  calm::hot_key_options const h{};
  std::size_t const hot_bytes = d::hot_key_layout<T>{h.slots, h.line_entries}.bytes();
  index_t const blocks = d::blocks_with_work(n, d::direct_threads, F);
  auto const direct_program = d::direct_program<F>(calm::plus{}, keys.data(), vals, n, table.data(), index_t(bins), d::identity_key{}, calm::peer_reduce_if{});
  auto const hot_program = d::hot_key_program_for<F>(calm::plus{}, keys.data(), vals, n, table.data(), index_t(bins), h);
  using shared_t = d::chosen_merge_program<std::decay_t<decltype(direct_program)>>;
  using P = std::decay_t<decltype(direct_program)>;
  using H = std::decay_t<decltype(hot_program)>;
  using fused_t = d::chosen_merge_program<P, H>;
  constexpr int cap = calm::resident_1024_blocks_of<fused_t>::value;
  struct variant { char const* name; std::function<void(calm::default_exec const&)> launch; };
  std::vector<variant> const variants = {
      {"as before: hot_key's launch, shared launch", [&](auto const& e) {
         d::launch_chosen(decided.data(), hot, calm::plus{}, keys.data(), vals, nullptr, n, table.data(), index_t(bins), d::identity_key{}, counting, e);
         d::launch_chosen(decided.data(), direct, calm::plus{}, keys.data(), vals, nullptr, n, table.data(), index_t(bins), d::identity_key{}, counting, e);
       }},
      {"shared launch alone, no block-local memory", [&](auto const& e) { e.for_each_resident_block(blocks, d::direct_threads, 0, shared_t{decided.data(), direct_program}); }},
      {"hot_key in the shared launch (calm's)", [&](auto const& e) {
         d::launch_chosen(decided.data(), hot | direct, calm::plus{}, keys.data(), vals, nullptr, n, table.data(), index_t(bins), d::identity_key{}, counting, e);
       }},
      {"hot_key in the shared launch, uncapped", [&](auto const& e) {
         e.for_each_resident_block(blocks, d::direct_threads, hot_bytes, uncapped<fused_t>{{decided.data(), direct_program, hot_program}});
       }},
      {"hot_key called, not inlined, capped", [&](auto const& e) {
         e.for_each_resident_block(blocks, d::direct_threads, hot_bytes, fused_calls<P, H, 1, cap>{decided.data(), direct_program, hot_program});
       }},
      {"hot_key called, not inlined, uncapped", [&](auto const& e) {
         e.for_each_resident_block(blocks, d::direct_threads, hot_bytes, fused_calls<P, H, 1, 0>{decided.data(), direct_program, hot_program});
       }},
      {"both called, not inlined, capped", [&](auto const& e) {
         e.for_each_resident_block(blocks, d::direct_threads, hot_bytes, fused_calls<P, H, 2, cap>{decided.data(), direct_program, hot_program});
       }},
      {"hot_key's own launch alone", [&](auto const& e) {
         d::launch_chosen(decided.data(), hot, calm::plus{}, keys.data(), vals, nullptr, n, table.data(), index_t(bins), d::identity_key{}, counting, e);
       }},
  };
  std::vector<cudaGraphExec_t> graphs;
  for (auto const& v : variants) {
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    v.launch(d::overlapping(calm::on_stream(s)));
    cudaGraph_t gr;
    CK(cudaStreamEndCapture(s, &gr));
    cudaGraphExec_t x;
    CK(cudaGraphInstantiate(&x, gr, 0));
    graphs.push_back(x);
  }
  std::vector<std::vector<double>> t(variants.size());
  for (int round = 0; round < 3; ++round)
    for (std::size_t v = 0; v < variants.size(); ++v) t[v].push_back(time_graph(graphs[v], s, 500));
  std::printf("%s %s, decided %s:\n", workload, dist.c_str(), calm::to_string(decided_as));
  for (std::size_t v = 0; v < variants.size(); ++v) {
    std::sort(t[v].begin(), t[v].end());
    std::printf("  %-46s %8.2f us (rounds %.2f-%.2f)\n", variants[v].name, t[v][1], t[v][0], t[v][2]);
  }
  CK(cudaGetLastError());
  for (auto g : graphs) CK(cudaGraphExecDestroy(g));
}

int main() {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  index_t const n = index_t(1) << 24;
  auto const ones = d::as_value_source<std::uint32_t>(calm::constant(1u));
  std::vector<float> v(static_cast<std::size_t>(n));
  std::mt19937_64 g(5);
  for (auto& x : v) x = static_cast<float>(g() % 1000) / 100.0f;
  calm::backend::device_buffer<float> fv(v);
  float const* fvals = fv.data();
  probe<std::uint32_t>("hist_u32", "sorted", strategy::peer_reduce, ones, true, s);
  probe<std::uint32_t>("hist_u32", "uniform", strategy::naive, ones, true, s);
  probe<std::uint32_t>("hist_u32", "twohot", strategy::hot_key, ones, true, s);
  probe<float>("scatter_f32", "sorted", strategy::peer_reduce, fvals, false, s);
  probe<float>("scatter_f32", "uniform", strategy::naive, fvals, false, s);
  probe<float>("scatter_f32", "twohot", strategy::hot_key, fvals, false, s);
  return 0;
}
