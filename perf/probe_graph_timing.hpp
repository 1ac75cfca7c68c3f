// calm/perf/probe_graph_timing.hpp: what the stand-alone CUDA probes of perf/ share (not part of the library or
// its build): a checked runtime call, and a CUDA graph timed from the host's launch to its wait.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                          \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));          \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

/// The median over `launches` launches of graph `ex` on `s`, each timed from the host's launch to its
/// wait, in microseconds, after 50 launches to warm up.
inline double time_graph(cudaGraphExec_t ex, cudaStream_t s, int launches) {
  for (int i = 0; i < 50; ++i) CK(cudaGraphLaunch(ex, s));
  CK(cudaStreamSynchronize(s));
  std::vector<double> t;
  for (int i = 0; i < launches; ++i) {
    auto const a = std::chrono::steady_clock::now();
    CK(cudaGraphLaunch(ex, s));
    CK(cudaStreamSynchronize(s));
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
