// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_chooser.hpp: what the stand-alone probes of a launch behind a choice made on the device share (not
// part of the library or its build): a sampling-like chooser, the held-out keys they run (sorted, runs of 32, uniform
// over 300,000 entries), a resident launch that may overlap the one before it, and CUDA graphs timed round-robin.
// Used by perf/probe_prefetch_before_wait.cu and perf/probe_speculative_start.cu.
#pragma once

#include <functional>
#include <string>

#include "probe_graph_timing.hpp"  // CK

/// Where the chooser's blocks meet: ten sums and a ticket (zero between calls: the last block resets them).
struct meet_t {
  unsigned long long sum[10];
  unsigned long long ticket;
};

/// The chooser: each block loads 256 keys, counts a warp's largest group and a block's, then the blocks meet in device
/// memory and the last block writes `choice` to *decided (with a release where Release). Trigger: it lets the launch
/// after it begin at its start (griddepcontrol.launch_dependents), as calm's sampling does.
template <bool Trigger, bool Release = false>
__global__ void choose_k(unsigned const* keys, long long n, long long stride, meet_t* m, int* decided, int choice) {
  __shared__ unsigned sk[256];
  __shared__ unsigned c[2];
  __shared__ int last;
  if (Trigger) asm volatile("griddepcontrol.launch_dependents;");
  if (threadIdx.x < 2) c[threadIdx.x] = 0;
  long long i = blockIdx.x * stride + threadIdx.x;
  unsigned k = i < n ? keys[i] : 0u;
  sk[threadIdx.x] = k;
  __syncthreads();
  unsigned peers = __match_any_sync(0xffffffffu, k);
  int top = __reduce_max_sync(0xffffffffu, __popc(peers));
  if ((threadIdx.x & 31) == 0) atomicAdd(&c[0], top);
  unsigned cnt = 0;
  for (int j = 0; j < 256; ++j) cnt += sk[j] == k;
  atomicMax(&c[1], cnt);
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int f = 0; f < 10; ++f) atomicAdd(&m->sum[f], (unsigned long long)(c[f & 1] + 1));
    __threadfence();
    unsigned long long t = atomicAdd(&m->ticket, 1ull);
    last = (t + 1 == gridDim.x);
  }
  __syncthreads();
  if (!last) return;
  if (threadIdx.x == 0) {
    __threadfence();
    unsigned long long s = 0;
    for (int f = 0; f < 10; ++f) s += m->sum[f];
    int const d = s == 0 ? 3 : choice;  // always `choice`
    if (Release)
      asm volatile("st.release.gpu.global.s32 [%0], %1;" ::"l"(decided), "r"(d) : "memory");
    else
      *decided = d;
    for (int f = 0; f < 10; ++f) m->sum[f] = 0;
    m->ticket = 0;
  }
}

/// The probes' keys over `bins` entries, drawn from g in this order: 0 sorted, 1 runs of 32 equal keys in random
/// order, 2 uniform.
inline std::vector<unsigned> chooser_probe_keys(int dist, long long n, unsigned bins, std::mt19937_64& g) {
  std::vector<unsigned> k(n);
  for (auto& x : k) x = unsigned(g() % bins);
  if (dist == 0) std::sort(k.begin(), k.end());
  if (dist == 1)
    for (long long i = 0; i < n; ++i) k[i] = k[i / 32 * 32];
  return k;
}
inline char const* chooser_probe_dist(int dist) { return dist == 0 ? "sorted" : dist == 1 ? "runs32" : "uniform"; }

/// kernel(args...) on s as a resident grid of `threads`-thread blocks (multiprocessors times its occupancy, at most
/// max_blocks), allowed to begin before the launch before it ends where `overlap` (programmatic dependent launch).
template <class... P, class... A>
void launch_resident(cudaStream_t s, bool overlap, void (*kernel)(P...), int threads, long long max_blocks, A... args) {
  int per_sm = 0, sms = 0, dev = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(unsigned(std::min<long long>(static_cast<long long>(per_sm) * sms, max_blocks)));
  cfg.blockDim = dim3(threads);
  cfg.stream = s;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at;
  cfg.numAttrs = overlap ? 1 : 0;
  CK(cudaLaunchKernelEx(&cfg, kernel, static_cast<P>(args)...));
}

/// Named CUDA graphs recorded from stream s, then timed round-robin: `rounds` rounds (after 20 to warm up) of two
/// launches of each, the second timed from the host's launch to its wait. Returns each graph's times, sorted.
struct graph_round_robin {
  struct variant {
    std::string name;
    cudaGraphExec_t exec;
  };
  cudaStream_t s;
  std::vector<variant> vs;
  explicit graph_round_robin(cudaStream_t stream) : s(stream) {}
  ~graph_round_robin() {
    for (auto& v : vs) cudaGraphExecDestroy(v.exec);
  }
  void record(std::string name, std::function<void()> const& body) {
    cudaGraph_t gr;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    body();
    CK(cudaStreamEndCapture(s, &gr));
    cudaGraphExec_t e;
    CK(cudaGraphInstantiate(&e, gr, 0));
    CK(cudaGraphDestroy(gr));
    vs.push_back({std::move(name), e});
  }
  /// The launches of each graph run() makes.
  long long launches(int rounds) const { return (20 + rounds) * 2ll; }
  std::vector<std::vector<double>> run(int rounds) const {
    std::vector<std::vector<double>> t(vs.size());
    for (int r = -20; r < rounds; ++r)
      for (size_t v = 0; v < vs.size(); ++v)
        for (int rep = 0; rep < 2; ++rep) {
          auto a = std::chrono::steady_clock::now();
          CK(cudaGraphLaunch(vs[v].exec, s));
          CK(cudaStreamSynchronize(s));
          auto b = std::chrono::steady_clock::now();
          if (r >= 0 && rep == 1) t[v].push_back(std::chrono::duration<double, std::micro>(b - a).count());
        }
    for (auto& tv : t) std::sort(tv.begin(), tv.end());
    return t;
  }
  /// Each graph's median, p10 and p90, and its median less graph `base`'s.
  void print(std::vector<std::vector<double>> const& t, std::size_t base) const {
    double const b = t[base][t[base].size() / 2];
    for (size_t v = 0; v < vs.size(); ++v) {
      double med = t[v][t[v].size() / 2];
      std::printf("%-26s median %8.2f us  p10 %8.2f  p90 %8.2f  (less '%s' %6.2f)\n", vs[v].name.c_str(), med, t[v][t[v].size() / 10],
                  t[v][t[v].size() * 9 / 10], vs[base].name.c_str(), med - b);
    }
  }
};

/// What a chooser probe sets up from its arguments ([ROUNDS] [LOG2N]): the three key sets over 300,000 entries on the
/// device, a histogram, the meeting, the choice, the chooser's 64 groups of 256 keys and a stream.
struct chooser_probe {
  int rounds;
  long long n, tiles;
  unsigned bins = 300000;
  unsigned* keys[3];
  unsigned* hist;
  meet_t* m;
  int* decided;
  long long groups = 64, stride;
  cudaStream_t s;
  /// tile_keys: the keys the histogram reads a tile (n is taken a multiple of it).
  chooser_probe(int argc, char** argv, long long tile_keys) {
    rounds = argc > 1 ? atoi(argv[1]) : 400;
    n = 1ll << (argc > 2 ? atoi(argv[2]) : 24);
    tiles = n / tile_keys;
    cudaDeviceProp prop{};
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s, %d SMs; n = %lld keys, %u bins, %d rounds\n", prop.name, prop.multiProcessorCount, n, bins, rounds);
    std::mt19937_64 g(7);
    for (int d = 0; d < 3; ++d) {
      std::vector<unsigned> const k = chooser_probe_keys(d, n, bins, g);
      CK(cudaMalloc(&keys[d], n * 4));
      CK(cudaMemcpy(keys[d], k.data(), n * 4, cudaMemcpyHostToDevice));
    }
    CK(cudaMalloc(&hist, bins * 4));
    CK(cudaMalloc(&m, sizeof(meet_t)));
    CK(cudaMalloc(&decided, 4));
    CK(cudaMemset(m, 0, sizeof(meet_t)));
    CK(cudaMemset(hist, 0, bins * 4));
    stride = (n / 256 / groups) * 256;
    s = probe_stream();
  }
  /// Times the graphs of vs, checks the histogram's total against n a launch (and clears it), prints the medians.
  void report(graph_round_robin const& vs, std::string const& title) const {
    auto const t = vs.run(rounds);
    std::vector<unsigned> hh(bins);
    CK(cudaMemcpy(hh.data(), hist, bins * 4, cudaMemcpyDeviceToHost));
    unsigned long long tot = 0;
    for (auto v : hh) tot += v;
    long long const launches = vs.launches(rounds) * static_cast<long long>(vs.vs.size());
    std::printf("\n%s: histogram total %llu, %s %lld launches of n\n", title.c_str(), tot, tot == (unsigned long long)(n * launches) ? "=" : "!=",
                launches);
    CK(cudaMemset(hist, 0, bins * 4));
    vs.print(t, 1);
  }
};
