// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_shared_direct.cu: a stand-alone probe (not part of the library or its build) of the direct scatters
// behind a choice (300,000 entries, 2^24 keys): with 8-byte values (scatter_f64) one launch per strategy; with
// 4-byte values one launch shared by naive, scan_reduce and peer_reduce (switch_merge), hot_key in it where reached.
// Per input and strategy decided: the forced call; calm's launches behind the choice (hot_key reached); the decided
// strategy's own launch behind the choice; one launch for the three direct scatters (switch_merge) with and without
// hot_key's program, with 64 registers or uncapped; one for naive, peer_reduce and hot_key (peer_reduce_if). The
// device part of each (CUDA events, the call queued behind a spin), medians of 100 in 3 rounds. Results:
// perf/results/cuda-h100-2026-11-27-merge-per-tile.md.
// It builds against calm up to 4525702: chosen_merge_program then took hot_key's program as a second
// parameter, which it lost when hot_key got its own launch again (perf/results/cuda-h200-2026-11-28-shared-launch-occupancy.md).
//
//   nvcc -std=c++17 -O3 -DNDEBUG --extended-lambda --expt-relaxed-constexpr -arch=sm_90 -DCALM_BACKEND_CUDA=1 \
//        -I <a folder holding calm/, a link to this repository> perf/probe_shared_direct.cu -o probe
//   ./probe [workload/distribution ...]     # e.g. hist_u32/sorted scatter_f64/zipf; none: all
#include <calm/calm.hpp>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <type_traits>

#include "probe_graph_timing.hpp"
namespace d = calm::detail;
using calm::index_t;
using calm::strategy;

/// A program with its register request replaced: Resident blocks of 1,024 threads an SM (0: uncapped).
template <class P, int Resident>
struct with_cap : P {
  static constexpr int resident_1024_blocks = Resident;
};

std::vector<std::uint32_t> draw(std::string const& dist, std::size_t n, std::uint32_t bins) {
  if (dist == "sorted") return sorted_keys(n, bins);
  std::vector<std::uint32_t> k(n);
  std::mt19937_64 g(11);
  auto unit = [&] { return static_cast<double>(g() >> 11) * 0x1.0p-53; };
  std::uint32_t run = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t const any = static_cast<std::uint32_t>(g() % bins);
    if (dist == "zipf") k[i] = static_cast<std::uint32_t>(bins * std::pow(unit(), 4.0)) % bins;
    else if (dist == "twohot") {  // a quarter on each of two keys
      std::uint64_t const q = g() >> 62;
      k[i] = q == 0 ? 0u : q == 1 ? bins / 2 : any;
    }
    else if (dist == "zipf2") k[i] = static_cast<std::uint32_t>(bins * unit() * unit()) % bins;
    else if (dist == "runs32") k[i] = i % 32 == 0 ? (run = any) : run;
    else if (dist == "gauss") {
      double const r = std::sqrt(-2.0 * std::log(1.0 - unit())) * std::cos(6.283185307179586 * unit());
      k[i] = static_cast<std::uint32_t>(std::clamp<double>(bins / 2.0 + r * (bins / 64.0 + 1.0), 0.0, bins - 1.0));
    } else k[i] = any;
  }
  return k;
}

template <class T, class Values>
void probe(char const* workload, std::string const& dist, std::uint32_t bins, Values vals, cudaStream_t s) {
  index_t const n = index_t(1) << 24;
  constexpr bool counting = !std::is_pointer<Values>::value;
  calm::backend::device_buffer<std::uint32_t> keys(draw(dist, static_cast<std::size_t>(n), bins));
  calm::backend::device_buffer<T> table(bins);
  table.fill_bytes(0);
  calm::default_exec const ex = calm::on_stream(s);
  calm::default_exec const over = d::overlapping(ex);
  auto const bit = [](strategy x) { return 1u << static_cast<int>(x); };
  unsigned const direct = bit(strategy::naive) | bit(strategy::peer_reduce) | bit(strategy::scan_reduce);
  unsigned const with_hot = direct | bit(strategy::hot_key);
  constexpr d::load_form F = d::load_form::chunks;
  auto const vs = d::as_value_source<T>(vals);
  index_t const blocks = d::blocks_with_work(n, d::direct_threads, F);
  auto const program = [&](auto merge) { return d::direct_program<F>(calm::plus{}, keys.data(), vs, n, table.data(), index_t(bins), d::identity_key{}, merge); };
  auto const switched = program(calm::switch_merge{});
  auto const either = program(calm::peer_reduce_if{});
  calm::hot_key_options const h{};
  auto const hot = d::hot_key_program_for<F>(calm::plus{}, keys.data(), vs, n, table.data(), index_t(bins), h);
  std::size_t const hot_bytes = d::hot_key_layout<T>{h.slots, h.line_entries}.bytes();
  using S = std::decay_t<decltype(switched)>;
  using E = std::decay_t<decltype(either)>;
  using H = std::decay_t<decltype(hot)>;
  std::printf("%s %s, %u entries, 2^24 keys: device part in us, median round (min-max)\n", workload, dist.c_str(), bins);
  for (strategy const decided_as : {strategy::naive, strategy::peer_reduce, strategy::scan_reduce, strategy::hot_key}) {
    calm::backend::device_buffer<strategy> decided(std::vector<strategy>{decided_as});
    strategy const* dec = decided.data();
    auto const own = [&](auto const& p) { over.for_each_resident_block(blocks, d::direct_threads, 0, d::run_if_chosen(dec, decided_as, p)); };
    struct variant { char const* name; std::function<void()> run; };
    std::vector<variant> variants = {
        {"forced", [&] {
           calm::scatter_options opt;
           opt.strategy = decided_as;
           if constexpr (counting) calm::histogram(keys.data(), n, table.data(), index_t(bins), opt, ex);
           else calm::scatter(calm::plus{}, keys.data(), vals, n, table.data(), index_t(bins), opt, ex);
         }},
        {"calm's launches (hot_key reached)", [&] {
           d::launch_chosen(dec, with_hot, calm::plus{}, keys.data(), vs, nullptr, n, table.data(), index_t(bins), d::identity_key{}, counting, over);
         }},
        {"its own launch behind the choice", [&] {
           if (decided_as == strategy::naive) own(program(calm::naive{}));
           else if (decided_as == strategy::peer_reduce) own(program(calm::peer_reduce{}));
           else if (decided_as == strategy::scan_reduce) own(program(calm::scan_reduce{}));
           else over.for_each_resident_block(d::blocks_with_work(n, h.threads, F), h.threads, hot_bytes, d::run_if_chosen(dec, decided_as, hot));
         }},
        {"switch_merge + hot_key, 64 registers", [&] { over.for_each_resident_block(blocks, d::direct_threads, hot_bytes, with_cap<d::chosen_merge_program<S, H>, 1>{{dec, switched, hot}}); }},
        {"switch_merge, 64 registers", [&] { over.for_each_resident_block(blocks, d::direct_threads, 0, with_cap<d::chosen_merge_program<S>, 1>{{dec, switched}}); }},
        {"switch_merge + hot_key, uncapped", [&] { over.for_each_resident_block(blocks, d::direct_threads, hot_bytes, with_cap<d::chosen_merge_program<S, H>, 0>{{dec, switched, hot}}); }},
    };
    if (decided_as != strategy::scan_reduce) {
      variants.push_back({"peer_reduce_if + hot_key, uncapped", [&] {
                            over.for_each_resident_block(blocks, d::direct_threads, hot_bytes, with_cap<d::chosen_merge_program<E, H>, 0>{{dec, either, hot}});
                          }});
      variants.push_back({"peer_reduce_if + hot_key, 64 registers", [&] {
                            over.for_each_resident_block(blocks, d::direct_threads, hot_bytes, with_cap<d::chosen_merge_program<E, H>, 1>{{dec, either, hot}});
                          }});
    }
    std::vector<std::vector<double>> t(variants.size());
    for (int round = 0; round < 3; ++round)
      for (std::size_t v = 0; v < variants.size(); ++v) t[v].push_back(time_call(variants[v].run, s, 100).device);
    for (std::size_t v = 0; v < variants.size(); ++v) {
      std::sort(t[v].begin(), t[v].end());
      std::printf("  decided %-12s %-42s %8.2f (%.2f-%.2f)\n", calm::to_string(decided_as), variants[v].name, t[v][1], t[v][0], t[v][2]);
    }
    std::fflush(stdout);
  }
  CK(cudaGetLastError());
}

int main(int argc, char** argv) {
  cudaStream_t const s = probe_stream();
  probe_weights const w(std::size_t(1) << 24);
  calm::backend::device_buffer<double> dv(w.d);
  calm::backend::device_buffer<float> fv(w.f);
  // arguments: the inputs to run, as workload/distribution (none: all of them)
  auto const wanted = [&](std::string const& input) { return argc < 2 || std::find(argv + 1, argv + argc, input) != argv + argc; };
  for (char const* dist : {"sorted", "runs32", "uniform", "twohot", "zipf"}) {
    if (wanted(std::string("hist_u32/") + dist)) probe<std::uint32_t>("hist_u32", dist, 300000, calm::constant(1u), s);
    if (wanted(std::string("scatter_f32/") + dist)) probe<float>("scatter_f32", dist, 300000, fv.data(), s);
    if (wanted(std::string("scatter_f64/") + dist)) probe<double>("scatter_f64", dist, 300000, dv.data(), s);
  }
  return 0;
}
