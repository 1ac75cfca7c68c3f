// calm/perf/probe_prefetch_before_wait.cu: a stand-alone probe (not part of the library or its build): can the
// launch behind a choice made on the device start reading its keys while the sampling still runs? A sampling-like
// chooser (64 blocks of 256 keys, a warp match, the blocks' meeting in device memory, the last block decides), then a
// resident grid of 512-thread blocks that merges each warp's equal keys by match_any and adds them to a 300,000-entry
// histogram (16-byte loads, 4 loads in flight a thread: calm's direct scatter), launched to overlap the chooser
// (programmatic dependent launch). Variants: the chooser lets its dependents launch at its start or not; before the
// histogram waits for the chooser it does nothing, prefetches its first tile to L2 (prefetch.global.L2, one line a
// thread), asks for the whole tile at once (cp.async.bulk.prefetch.L2, one thread), or loads its first tile into
// registers. Each a CUDA graph timed host launch to wait, round-robin, medians in microseconds. Results:
// perf/results/cuda-h100-2026-11-27-first-tile.md.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 perf/probe_prefetch_before_wait.cu -o probe && ./probe [ROUNDS] [LOG2N]
#include <functional>
#include <string>

#include "probe_graph_timing.hpp"  // CK

struct meet_t {
  unsigned long long sum[10];
  unsigned long long ticket;
};

constexpr int threads = 512, in_flight = 4;  // calm's direct_threads and loads_in_flight

// the chooser: each block loads 256 keys, counts a warp's largest group and a block's, then the blocks meet
template <bool Trigger>
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
    *decided = s == 0 ? 3 : choice;  // always `choice`
    for (int f = 0; f < 10; ++f) m->sum[f] = 0;
    m->ticket = 0;
  }
}

__device__ __forceinline__ void add_merged(unsigned* hist, unsigned key) {
  unsigned const peers = __match_any_sync(0xffffffffu, key);
  if ((threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(&hist[key], __popc(peers));
}

// Pre: 0 nothing before the wait, 1 prefetch.global.L2 of the first tile (a line a thread), 2 the first tile into
// registers, 3 cp.async.bulk.prefetch.L2 of the first tile by thread 0. Wait: launched to overlap (griddepcontrol.wait).
// The key count is a multiple of a tile (threads x in_flight x 4 keys).
template <int Pre, bool Wait>
__global__ void __launch_bounds__(threads) hist_k(uint4 const* chunks, long long tiles, unsigned* hist, int const* decided, int id) {
  long long const tile_chunks = threads * in_flight;
  uint4 c[in_flight];
  long long tile = blockIdx.x;
  if (tile < tiles) {
    uint4 const* first = chunks + tile * tile_chunks;
    if (Pre == 1) {
      if (threadIdx.x < tile_chunks * 16 / 128) asm volatile("prefetch.global.L2 [%0];" ::"l"(reinterpret_cast<char const*>(first) + threadIdx.x * 128));
    } else if (Pre == 2) {
#pragma unroll
      for (int u = 0; u < in_flight; ++u) c[u] = first[u * threads + threadIdx.x];
    } else if (Pre == 3) {
      if (threadIdx.x == 0)
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(first), "r"(unsigned(tile_chunks * 16)) : "memory");
    }
  }
  if (Wait) asm volatile("griddepcontrol.wait;" ::: "memory");
  if (id >= 0 && *decided != id) return;
  bool loaded = Pre == 2;
  for (; tile < tiles; tile += gridDim.x) {
    if (!loaded) {
      uint4 const* t = chunks + tile * tile_chunks;
#pragma unroll
      for (int u = 0; u < in_flight; ++u) c[u] = t[u * threads + threadIdx.x];
    }
    loaded = false;
#pragma unroll
    for (int u = 0; u < in_flight; ++u) {
      add_merged(hist, c[u].x);
      add_merged(hist, c[u].y);
      add_merged(hist, c[u].z);
      add_merged(hist, c[u].w);
    }
  }
}

template <int Pre, bool Wait>
void launch_hist(cudaStream_t s, bool overlap, uint4 const* chunks, long long tiles, unsigned* hist, int const* decided, int id) {
  static int grid = 0;
  if (grid == 0) {
    int per_sm = 0, sms = 0, dev = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, hist_k<Pre, Wait>, threads, 0));
    grid = per_sm * sms;
  }
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(unsigned(std::min<long long>(grid, tiles)));
  cfg.blockDim = dim3(threads);
  cfg.stream = s;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at;
  cfg.numAttrs = overlap ? 1 : 0;
  CK(cudaLaunchKernelEx(&cfg, hist_k<Pre, Wait>, chunks, tiles, hist, decided, id));
}

int main(int argc, char** argv) {
  int const rounds = argc > 1 ? atoi(argv[1]) : 400;
  long long const n = 1ll << (argc > 2 ? atoi(argv[2]) : 24);
  long long const tile_keys = threads * in_flight * 4, tiles = n / tile_keys;
  unsigned const bins = 300000;
  int dev = 0;
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, dev));
  std::printf("device: %s, %d SMs; n = %lld keys, %u bins, %d rounds\n", prop.name, prop.multiProcessorCount, n, bins, rounds);
  unsigned *keys_d[3], *hist;
  meet_t* m;
  int* decided;
  char const* names[3] = {"sorted", "runs32", "uniform"};
  std::mt19937_64 g(7);
  for (int d = 0; d < 3; ++d) {
    std::vector<unsigned> k(n);
    for (auto& x : k) x = unsigned(g() % bins);
    if (d == 0) std::sort(k.begin(), k.end());
    if (d == 1)
      for (long long i = 0; i < n; ++i) k[i] = k[i / 32 * 32];  // runs of 32 equal keys, in random order
    CK(cudaMalloc(&keys_d[d], n * 4));
    CK(cudaMemcpy(keys_d[d], k.data(), n * 4, cudaMemcpyHostToDevice));
  }
  CK(cudaMalloc(&hist, bins * 4));
  CK(cudaMalloc(&m, sizeof(meet_t)));
  CK(cudaMalloc(&decided, 4));
  CK(cudaMemset(m, 0, sizeof(meet_t)));
  CK(cudaMemset(hist, 0, bins * 4));
  long long const groups = 64, stride = (n / 256 / groups) * 256;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int d = 0; d < 3; ++d) {
    unsigned const* keys = keys_d[d];
    uint4 const* chunks = reinterpret_cast<uint4 const*>(keys);
    struct variant {
      std::string name;
      cudaGraphExec_t exec;
    };
    std::vector<variant> vs;
    auto record = [&](std::string name, std::function<void()> body) {
      cudaGraph_t gr;
      CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
      body();
      CK(cudaStreamEndCapture(s, &gr));
      cudaGraphExec_t e;
      CK(cudaGraphInstantiate(&e, gr, 0));
      vs.push_back({name, e});
    };
    record("best (histogram alone)", [&] { launch_hist<0, false>(s, false, chunks, tiles, hist, decided, -1); });
    record("choose, then wait", [&] {
      choose_k<false><<<groups, 256, 0, s>>>(keys, n, stride, m, decided, 0);
      launch_hist<0, true>(s, true, chunks, tiles, hist, decided, 0);
    });
    record("choose, then L2 prefetch", [&] {
      choose_k<false><<<groups, 256, 0, s>>>(keys, n, stride, m, decided, 0);
      launch_hist<1, true>(s, true, chunks, tiles, hist, decided, 0);
    });
    record("trigger: wait", [&] {
      choose_k<true><<<groups, 256, 0, s>>>(keys, n, stride, m, decided, 0);
      launch_hist<0, true>(s, true, chunks, tiles, hist, decided, 0);
    });
    record("trigger: L2 prefetch", [&] {
      choose_k<true><<<groups, 256, 0, s>>>(keys, n, stride, m, decided, 0);
      launch_hist<1, true>(s, true, chunks, tiles, hist, decided, 0);
    });
    record("trigger: bulk prefetch", [&] {
      choose_k<true><<<groups, 256, 0, s>>>(keys, n, stride, m, decided, 0);
      launch_hist<3, true>(s, true, chunks, tiles, hist, decided, 0);
    });
    record("trigger: tile in regs", [&] {
      choose_k<true><<<groups, 256, 0, s>>>(keys, n, stride, m, decided, 0);
      launch_hist<2, true>(s, true, chunks, tiles, hist, decided, 0);
    });
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
    std::vector<unsigned> hh(bins);
    CK(cudaMemcpy(hh.data(), hist, bins * 4, cudaMemcpyDeviceToHost));
    unsigned long long tot = 0;
    for (auto v : hh) tot += v;
    long long const launches = (20 + rounds) * 2ll * vs.size();
    std::printf("\n%s: histogram total %llu, %s %lld launches of n\n", names[d], tot, tot == (unsigned long long)(n * launches) ? "=" : "!=", launches);
    CK(cudaMemset(hist, 0, bins * 4));
    for (auto& tv : t) std::sort(tv.begin(), tv.end());
    double const chosen = t[1][t[1].size() / 2];
    for (size_t v = 0; v < vs.size(); ++v) {
      double med = t[v][t[v].size() / 2];
      std::printf("%-26s median %8.2f us  p10 %8.2f  p90 %8.2f  (less 'choose, then wait' %6.2f)\n", vs[v].name.c_str(), med, t[v][t[v].size() / 10],
                  t[v][t[v].size() * 9 / 10], med - chosen);
    }
    for (auto& v : vs) CK(cudaGraphExecDestroy(v.exec));
  }
}
