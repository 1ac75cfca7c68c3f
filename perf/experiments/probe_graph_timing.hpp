// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_graph_timing.hpp: what the stand-alone CUDA probes of perf/ share (not part of the library or
// its build): a checked runtime call, a CUDA graph timed from the host's launch to its wait, a call timed so
// and on the device alone, and the held-out input they look at (sorted keys).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
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

/// n keys drawn uniformly from [0, bins) and sorted: the held-out set's "sorted" distribution.
inline std::vector<std::uint32_t> sorted_keys(std::size_t n, std::uint32_t bins) {
  std::vector<std::uint32_t> k(n);
  std::mt19937_64 g(7);
  for (auto& x : k) x = static_cast<std::uint32_t>(g() % bins);
  std::sort(k.begin(), k.end());
  return k;
}

/// A kernel that spins for `cycles` clocks: queued before a timed call, it lets the host submit the whole call
/// before the device reaches it, so that events around the call time the device's part alone.
static __global__ void spin_kernel(long long cycles) {
  long long const t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

struct timing {
  double host, device;  // microseconds: host launch to stream wait; the device's part (events after a spin)
};

/// f() (one call on stream s) timed `calls` times from the host's launch to its wait, after 20 to warm up, and
/// `calls` times again on the device alone; the medians.
template <class F>
inline timing time_call(F const& f, cudaStream_t s, int calls) {
  for (int i = 0; i < 20; ++i) f();
  CK(cudaStreamSynchronize(s));
  std::vector<double> t, dt;
  for (int i = 0; i < calls; ++i) {
    auto const a = std::chrono::steady_clock::now();
    f();
    CK(cudaStreamSynchronize(s));
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
  }
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < calls; ++i) {
    spin_kernel<<<1, 32, 0, s>>>(200000);  // about 110 us
    CK(cudaEventRecord(e0, s));
    f();
    CK(cudaEventRecord(e1, s));
    CK(cudaStreamSynchronize(s));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    dt.push_back(ms * 1e3);
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  std::sort(t.begin(), t.end());
  std::sort(dt.begin(), dt.end());
  return {t[t.size() / 2], dt[dt.size() / 2]};
}

/// A non-blocking stream for a probe's calls.
inline cudaStream_t probe_stream() {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return s;
}

/// The values of the probes' float and double sums, 1 + (i % 7) / 4 (bench_bulk's weights).
struct probe_weights {
  std::vector<double> d;
  std::vector<float> f;
  explicit probe_weights(std::size_t n) : d(n), f(n) {
    for (std::size_t i = 0; i < n; ++i) f[i] = static_cast<float>(d[i] = 1.0 + static_cast<double>(i % 7) * 0.25);
  }
};
