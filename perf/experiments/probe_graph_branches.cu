// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_graph_branches.cu: a stand-alone probe (not part of the library or its build) of what
// the launches behind a device-side choice cost in a CUDA graph: the strategies launched each behind a
// guard (as strategy::automatic does), a conditional switch node instead, an early programmatic
// trigger, and two ways for the sampling blocks to meet. A naive histogram stands in for the chosen
// strategy and a sampling-like kernel (64 blocks of 256 keys) for the sampling. Results and the
// command: perf/results/cuda-h100-2026-11-24-bulk-path-mechanics.md.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 perf/probe_graph_branches.cu -o probe && ./probe BINS SORTED ROUNDS LOG2N
#include <cuda_runtime.h>
#include <cuda/atomic>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); std::exit(1);} } while (0)

struct meet_t { unsigned long long sum[10]; unsigned long long ticket; };

__global__ void empty_k() {}

// a sampling-like kernel: 64 blocks x 256 keys, warp match + quadratic block count, then meeting or not
template <int Mode>  // 0: per-block write, no meeting; 1: meeting + decide; 2: meeting + decide + set conditional
// 3: 1 with an early trigger; 4: slots + acq_rel ticket; 5: 4 with an early trigger
__global__ void sample_k(unsigned const* keys, long long n, long long stride, meet_t* m, unsigned long long* per, int* decided,
                         cudaGraphConditionalHandle h, int choice) {
  __shared__ unsigned sk[256];
  __shared__ unsigned c[4];
  __shared__ unsigned long long red[10];
  __shared__ int last;
  if (Mode == 3 || Mode == 5) asm volatile("griddepcontrol.launch_dependents;");
  if (threadIdx.x < 4) c[threadIdx.x] = 0;
  if (threadIdx.x < 10) red[threadIdx.x] = 0;
  long long i = blockIdx.x * stride + threadIdx.x;
  unsigned k = i < n ? keys[i] : 0u;
  sk[threadIdx.x] = k;
  __syncthreads();
  unsigned peers = __match_any_sync(0xffffffffu, k);
  int mult = __popc(peers);
  int top = __reduce_max_sync(0xffffffffu, mult);
  if ((threadIdx.x & 31) == 0) atomicAdd(&c[0], top);
  unsigned cnt = 0;
  for (int j = 0; j < 256; ++j) cnt += sk[j] == k;
  atomicMax(&c[1], cnt);
  __syncthreads();
  if (Mode == 0) {
    if (threadIdx.x == 0) { per[blockIdx.x * 2] = c[0]; per[blockIdx.x * 2 + 1] = c[1]; }
    return;
  }
  if (Mode >= 4) {
    if (threadIdx.x == 0) {
      for (int f = 0; f < 10; ++f) per[blockIdx.x * 10 + f] = (unsigned long long)(c[f & 1] + 1);
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> tk(m->ticket);
      unsigned long long t = tk.fetch_add(1ull, cuda::memory_order_acq_rel);
      last = (t + 1 == gridDim.x);
    }
    __syncthreads();
    if (!last) return;
    for (int i = threadIdx.x; i < 640; i += blockDim.x) {
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> v(per[i]);
      atomicAdd(&red[i % 10], v.load(cuda::memory_order_relaxed));
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      unsigned long long s = 0;
      for (int f = 0; f < 10; ++f) s += red[f];
      int d = s == 0 ? 3 : choice;
      *decided = d;
      m->ticket = 0;
    }
    return;
  }
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
    int d = s == 0 ? 3 : choice;  // always `choice`
    *decided = d;
    if (Mode == 2) cudaGraphSetConditional(h, (unsigned)d);
    for (int f = 0; f < 10; ++f) m->sum[f] = 0;
    m->ticket = 0;
  }
}

// naive histogram: grid-stride, guarded by decided (id < 0: unguarded)
template <bool Wait, bool Trigger = false>
__global__ void hist_k(unsigned const* keys, long long n, unsigned* hist, int const* decided, int id) {
  if (Trigger) asm volatile("griddepcontrol.launch_dependents;");
  if (Wait) cudaGridDependencySynchronize();
  if (id >= 0 && *decided != id) return;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) atomicAdd(&hist[keys[i]], 1u);
}

static bool g_trigger = false;
static void launch_hist(cudaStream_t s, bool pdl, unsigned const* keys, long long n, unsigned* hist, int const* decided, int id) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(132 * 8);
  cfg.blockDim = dim3(256);
  cfg.stream = s;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at;
  cfg.numAttrs = pdl ? 1 : 0;
  if (pdl && g_trigger) CK(cudaLaunchKernelEx(&cfg, hist_k<true, true>, keys, n, hist, decided, id));
  else if (pdl) CK(cudaLaunchKernelEx(&cfg, hist_k<true>, keys, n, hist, decided, id));
  else CK(cudaLaunchKernelEx(&cfg, hist_k<false>, keys, n, hist, decided, id));
}

int main(int argc, char** argv) {
  long long n = 1ll << (argc > 4 ? atoi(argv[4]) : 24);
  long long bins = argc > 1 ? atoll(argv[1]) : 300000;
  int sorted = argc > 2 ? atoi(argv[2]) : 1;
  std::vector<unsigned> hk(n);
  unsigned long long x = 88172645463325252ull;
  for (long long i = 0; i < n; ++i) {
    if (sorted) hk[i] = (unsigned)(i * bins / n);
    else { x ^= x << 13; x ^= x >> 7; x ^= x << 17; hk[i] = (unsigned)(x % bins); }
  }
  unsigned *keys, *hist; meet_t* m; unsigned long long* per; int* decided;
  CK(cudaMalloc(&keys, n * 4)); CK(cudaMalloc(&hist, bins * 4)); CK(cudaMalloc(&m, sizeof(meet_t))); CK(cudaMalloc(&per, 64 * 80)); CK(cudaMalloc(&decided, 4));
  CK(cudaMemcpy(keys, hk.data(), n * 4, cudaMemcpyHostToDevice)); CK(cudaMemset(m, 0, sizeof(meet_t))); CK(cudaMemset(hist, 0, bins * 4));
  long long const groups = 64, stride = (n / 256 / groups) * 256;
  cudaStream_t s, s2;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  int const chosen = 1;
  struct variant { std::string name; cudaGraphExec_t exec; };
  std::vector<variant> vs;
  auto record = [&](std::string name, std::function<void()> body) {
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    body();
    CK(cudaStreamEndCapture(s, &g));
    cudaGraphExec_t e;
    CK(cudaGraphInstantiate(&e, g, 0));
    vs.push_back({name, e});
  };
  record("empty", [&] { empty_k<<<1, 32, 0, s>>>(); });
  record("best", [&] { launch_hist(s, false, keys, n, hist, decided, -1); });
  record("sample_nomeet", [&] { sample_k<0><<<groups, 256, 0, s>>>(keys, n, stride, m, per, decided, 0, chosen); });
  record("sample_meet", [&] { sample_k<1><<<groups, 256, 0, s>>>(keys, n, stride, m, per, decided, 0, chosen); });
  record("sample_slots", [&] { sample_k<4><<<groups, 256, 0, s>>>(keys, n, stride, m, per, decided, 0, chosen); });
  for (int mode : {1, 3, 4, 5})
    for (int nb : {2, 4}) {
      record("g" + std::to_string(nb) + "_mode" + std::to_string(mode), [&] {
        if (mode == 1) sample_k<1><<<groups, 256, 0, s>>>(keys, n, stride, m, per, decided, 0, chosen);
        if (mode == 3) sample_k<3><<<groups, 256, 0, s>>>(keys, n, stride, m, per, decided, 0, chosen);
        if (mode == 4) sample_k<4><<<groups, 256, 0, s>>>(keys, n, stride, m, per, decided, 0, chosen);
        if (mode == 5) sample_k<5><<<groups, 256, 0, s>>>(keys, n, stride, m, per, decided, 0, chosen);
        for (int b = 0; b < nb; ++b) launch_hist(s, true, keys, n, hist, decided, b);
      });
    }
  for (int pos : {0, 1, 3}) {
    g_trigger = true;
    record("g4_trig_chosen" + std::to_string(pos), [&] {
      sample_k<3><<<groups, 256, 0, s>>>(keys, n, stride, m, per, decided, 0, pos);
      for (int b = 0; b < 4; ++b) launch_hist(s, true, keys, n, hist, decided, b);
    });
    g_trigger = false;
    record("g4_mode1_chosen" + std::to_string(pos), [&] {
      sample_k<1><<<groups, 256, 0, s>>>(keys, n, stride, m, per, decided, 0, pos);
      for (int b = 0; b < 4; ++b) launch_hist(s, true, keys, n, hist, decided, b);
    });
  }
  g_trigger = true;
  record("g2_trig", [&] {
    sample_k<3><<<groups, 256, 0, s>>>(keys, n, stride, m, per, decided, 0, chosen);
    for (int b = 0; b < 2; ++b) launch_hist(s, true, keys, n, hist, decided, b);
  });
  g_trigger = false;
  record("g1_mode1", [&] {
    sample_k<1><<<groups, 256, 0, s>>>(keys, n, stride, m, per, decided, 0, 0);
    launch_hist(s, true, keys, n, hist, decided, 0);
  });
  record("g1_mode1_nopdl", [&] {
    sample_k<1><<<groups, 256, 0, s>>>(keys, n, stride, m, per, decided, 0, 0);
    launch_hist(s, false, keys, n, hist, decided, 0);
  });
  for (int nb : {2}) {
    record("guarded" + std::to_string(nb), [&] {
      sample_k<1><<<groups, 256, 0, s>>>(keys, n, stride, m, per, decided, 0, chosen);
      for (int b = 0; b < nb; ++b) launch_hist(s, true, keys, n, hist, decided, b);
    });
    record("switch" + std::to_string(nb), [&] {
      cudaStreamCaptureStatus st; cudaGraph_t g; cudaGraphNode_t const* deps; cudaGraphEdgeData const* ed; size_t nd;
      CK(cudaStreamGetCaptureInfo(s, &st, nullptr, &g, &deps, &ed, &nd));
      cudaGraphConditionalHandle h;
      CK(cudaGraphConditionalHandleCreate(&h, g, 0, cudaGraphCondAssignDefault));
      sample_k<2><<<groups, 256, 0, s>>>(keys, n, stride, m, per, decided, h, chosen);
      CK(cudaStreamGetCaptureInfo(s, &st, nullptr, &g, &deps, &ed, &nd));
      cudaGraphNodeParams cp = {};
      cp.type = cudaGraphNodeTypeConditional;
      cp.conditional.handle = h;
      cp.conditional.type = cudaGraphCondTypeSwitch;
      cp.conditional.size = nb;
      cudaGraphNode_t node;
      CK(cudaGraphAddNode(&node, g, deps, ed, nd, &cp));
      CK(cudaStreamUpdateCaptureDependencies(s, &node, nullptr, 1, cudaStreamSetCaptureDependencies));
      for (int b = 0; b < nb; ++b) {
        cudaGraph_t body = cp.conditional.phGraph_out[b];
        CK(cudaStreamBeginCaptureToGraph(s2, body, nullptr, nullptr, 0, cudaStreamCaptureModeRelaxed));
        launch_hist(s2, false, keys, n, hist, decided, -1);
        cudaGraph_t out;
        CK(cudaStreamEndCapture(s2, &out));
      }
    });
  }
  // round robin: each round launches every variant twice, timing the second
  int const rounds = argc > 3 ? atoi(argv[3]) : 300;
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
  // check the histogram: each variant adds n per launch
  std::vector<unsigned> hh(bins);
  CK(cudaMemcpy(hh.data(), hist, bins * 4, cudaMemcpyDeviceToHost));
  unsigned long long tot = 0; for (auto v : hh) tot += v;
  std::printf("bins %lld sorted %d: histogram total %llu = %llu launches of n\n", bins, sorted, tot, tot / n);
  for (auto& tv : t) std::sort(tv.begin(), tv.end());
  double const best = t[1][t[1].size() / 2];
  for (size_t v = 0; v < vs.size(); ++v) {
    double med = t[v][t[v].size() / 2];
    std::printf("%-14s median %8.2f us  p10 %8.2f  p90 %8.2f  (- best %6.2f)\n", vs[v].name.c_str(), med, t[v][t[v].size() / 10], t[v][t[v].size() * 9 / 10], med - best);
  }
}
