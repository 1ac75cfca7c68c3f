// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_path_timeline.cu: a stand-alone probe (not part of the library or its build) of where automatic's
// sampled path spends its time on the device: every block of every launch stamps %globaltimer at its start and end
// (min and max over blocks, per program: the sampling, the shared direct launch behind the choice, a guarded launch
// not chosen, a direct scatter of its own), and the sampling's blocks also after each of its phases (counters cleared,
// first pass, line repeats and block level, meeting) and its last block after the finish; the shared direct launch
// stamps when its blocks are released by the sampling's end. Medians of 41 calls of calm::histogram (automatic, then
// forced peer_reduce, then collision_stats alone), each timed from its first block's start (for a phase, "first start"
// and "last start" are the first and last block to reach it).
// It needs the library patched with perf/probe_path_timeline.diff (the stamps; `git apply` in a copy of the tree):
//
//   nvcc -std=c++17 -O3 -DNDEBUG --extended-lambda --expt-relaxed-constexpr -arch=sm_90 -DCALM_BACKEND_CUDA=1 \
//        -I <a folder holding calm/, a link to the patched copy> perf/probe_path_timeline.cu -o probe
//   ./probe sorted 300000 [mode]   # mode: bit 0 the direct launch loads nothing before the sampling ends,
//                                  # bit 1 the sampling lets the launches behind it begin after its first pass
// Results: perf/results/cuda-h200-2026-11-29-sampled-path-timeline.md.
#include <calm/calm.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>
#include "../bulk_keys.hpp"
#include "probe_graph_timing.hpp"

static void reset() {
  unsigned long long h[16][4];
  for (auto& r : h) r[0] = ~0ull, r[1] = 0, r[2] = 0, r[3] = ~0ull;
  CK(cudaMemcpyToSymbol(calm_probe_stamps, h, sizeof(h)));
}
static void read(unsigned long long (&h)[16][4]) { CK(cudaMemcpyFromSymbol(h, calm_probe_stamps, sizeof(h))); }

int main(int argc, char** argv) {
  std::string dist = argc > 1 ? argv[1] : "sorted";
  std::uint32_t bins = argc > 2 ? std::atoi(argv[2]) : 300000;
  int pmode = argc > 3 ? std::atoi(argv[3]) : 0;
  CK(cudaMemcpyToSymbol(calm_probe_mode, &pmode, sizeof(int)));
  std::size_t n = std::size_t(1) << 24;
  auto keys = calm_bench::bulk_keys(n, bins, dist, 1);
  std::uint32_t *dk, *dt;
  CK(cudaMalloc(&dk, n * 4)); CK(cudaMalloc(&dt, bins * 4));
  CK(cudaMemcpy(dk, keys.data(), n * 4, cudaMemcpyHostToDevice));
  char const* names[16] = {"sample", "direct(shared)", "guarded", "direct(own)", "", "released", "", "other", "s:init", "s:pass1", "s:lines+block", "s:meet", "s:finish", "", "", ""};
  for (int kind = 0; kind < 3; ++kind) {  // automatic, forced peer_reduce, collision_stats alone
    calm::scatter_options opt;
    if (kind == 1) opt.strategy = calm::strategy::peer_reduce;
    auto call = [&] { if (kind == 2) (void)calm::collision_stats(dk, (calm::index_t)n, (calm::index_t)bins); else calm::histogram(dk, (calm::index_t)n, dt, bins, opt); };
    for (int i = 0; i < 10; ++i) call();
    CK(cudaDeviceSynchronize());
    std::vector<std::vector<double>> rel(16 * 4);
    std::vector<double> total, host;
    for (int trial = 0; trial < 41; ++trial) {
      reset();
      auto const h0 = std::chrono::steady_clock::now();
      call();
      CK(cudaDeviceSynchronize());
      host.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count());
      unsigned long long h[16][4];
      read(h);
      unsigned long long t0 = ~0ull, t1 = 0;
      for (int s_ = 0; s_ < 8; ++s_) { auto& r = h[s_]; if (r[0] != ~0ull) t0 = std::min(t0, r[0]), t1 = std::max(t1, r[2]); }
      for (int s = 0; s < 16; ++s) for (int k = 0; k < 4; ++k)
        if (h[s][k] != ~0ull && h[s][k] != 0) rel[s * 4 + k].push_back((double)(h[s][k] - t0) / 1000.0);
      total.push_back((t1 - t0) / 1000.0);
    }
    auto med = [](std::vector<double> v) { if (v.empty()) return -1.0; std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
    std::printf("mode %d: %s %s bins %u: first start to last end %.2f us, host call to sync %.2f us (medians of 41)\n", pmode, dist.c_str(), kind == 2 ? "collision_stats alone" : kind ? "forced peer_reduce" : "automatic", bins, med(total), med(host));
    for (int s = 0; s < 16; ++s)
      if (!rel[s * 4].empty())
        std::printf("  %-15s first start %7.2f  last start %7.2f  first end %7.2f  last end %7.2f\n", names[s], med(rel[s * 4]), med(rel[s * 4 + 1]), med(rel[s * 4 + 3]), med(rel[s * 4 + 2]));
  }
  return 0;
}
