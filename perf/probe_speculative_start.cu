// calm/perf/probe_speculative_start.cu: a stand-alone probe (not part of the library or its build): where every
// strategy a choice made on the device can end at lives in one launch (the shared direct launch of 4-byte keys and
// values over a table larger than a block: naive, scan_reduce, peer_reduce and hot_key), need that launch wait for the
// choice at all? Each of its tiles is right under any merge, so it could scatter its first tiles with a provisional
// merge (naive) while the sampling still runs, and read the choice per tile, without waiting, until it is there.
// What that could save is what this probe measures, against calm's order today (the first tile loaded into registers,
// then griddepcontrol.wait, then the chosen merge).
//
// The chooser: as perf/probe_prefetch_before_wait.cu's (64 blocks of 256 keys, a warp match, the blocks' meeting in
// device memory, the last block decides), writing its choice with a release. The histogram: a resident grid of
// 512-thread blocks over 300,000 entries (16-byte loads, 4 in flight a thread: calm's direct scatter), launched to
// overlap the chooser (programmatic dependent launch; the chooser lets it begin at its start, as calm's sampling).
// Merges: `peers` (a warp's equal keys by match_any, one add each: the merge the choice picks here) and `naive`.
// Variants:
//   alone          the histogram with the chosen merge, no chooser (the floor);
//   wait           calm's order: first tile into registers, wait for the chooser, then the chosen merge;
//   speculate/warp no wait: lane 0 of each warp reads the choice (ld.acquire.gpu) before each tile, broadcasts it by
//                  shuffle, and the warp scatters that tile naive while there is none yet, with the chosen merge after;
//                  griddepcontrol.wait once, after the last tile (what the launch after it relies on);
//   speculate/block the same read by thread 0 and a barrier each tile (what a switch to hot_key's program, which
//                  needs the whole block, would take);
//   naive/wait     wait, then naive throughout (what the provisional merge costs where it is the wrong one).
// Each a CUDA graph timed host launch to wait, round-robin, medians in microseconds; histogram totals checked.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 perf/probe_speculative_start.cu -o probe && ./probe [ROUNDS] [LOG2N]
//
// Not yet run (written in the sixteenth session, 2026-11-28, after the device time was spent).
#include <functional>
#include <string>

#include "probe_graph_timing.hpp"  // CK

struct meet_t {
  unsigned long long sum[10];
  unsigned long long ticket;
};

constexpr int threads = 512, in_flight = 4;  // calm's direct_threads and loads_in_flight
constexpr int undecided = -1;

// the chooser: each block loads 256 keys, counts a warp's largest group and a block's, then the blocks meet; the last
// block writes `choice` with a release and resets the meeting
__global__ void choose_k(unsigned const* keys, long long n, long long stride, meet_t* m, int* decided, int choice) {
  __shared__ unsigned sk[256];
  __shared__ unsigned c[2];
  __shared__ int last;
  asm volatile("griddepcontrol.launch_dependents;");
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
    asm volatile("st.release.gpu.global.s32 [%0], %1;" ::"l"(decided), "r"(d) : "memory");
    for (int f = 0; f < 10; ++f) m->sum[f] = 0;
    m->ticket = 0;
  }
}

// the choice as it stands now (undecided while the chooser runs)
__device__ __forceinline__ int read_choice(int const* decided) {
  int d;
  asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(d) : "l"(decided) : "memory");
  return d;
}

__device__ __forceinline__ void add(unsigned* hist, unsigned key, bool merge) {
  if (!merge) {
    atomicAdd(&hist[key], 1u);
    return;
  }
  unsigned const peers = __match_any_sync(0xffffffffu, key);
  if ((threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(&hist[key], __popc(peers));
}

// Mode: 0 alone (no chooser, merge throughout), 1 wait then merge, 2 speculate (warp reads), 3 speculate (block reads),
// 4 wait then naive. The key count is a multiple of a tile (threads x in_flight x 4 keys). `id`: the choice that means merge;
// `alone`: the choice of mode 0.
template <int Mode>
__global__ void __launch_bounds__(threads) hist_k(uint4 const* chunks, long long tiles, unsigned* hist, int const* decided, int id, int alone) {
  __shared__ int block_choice;
  long long const tile_chunks = threads * in_flight;
  uint4 c[in_flight];
  long long tile = blockIdx.x;
  bool loaded = false;
  if (tile < tiles) {  // the first tile into registers before anything else, as calm's shared launch
    uint4 const* first = chunks + tile * tile_chunks;
#pragma unroll
    for (int u = 0; u < in_flight; ++u) c[u] = first[u * threads + threadIdx.x];
    loaded = true;
  }
  int choice = Mode == 0 ? alone : undecided;
  if (Mode == 1 || Mode == 4) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    choice = *decided;
  }
  for (; tile < tiles; tile += gridDim.x) {
    if (!loaded) {
      uint4 const* t = chunks + tile * tile_chunks;
#pragma unroll
      for (int u = 0; u < in_flight; ++u) c[u] = t[u * threads + threadIdx.x];
    }
    loaded = false;
    if (Mode == 2 && choice == undecided) {
      int d = 0;
      if ((threadIdx.x & 31) == 0) d = read_choice(decided);
      choice = __shfl_sync(0xffffffffu, d, 0);
    } else if (Mode == 3 && choice == undecided) {
      __syncthreads();  // block_choice read by every thread of the last tile
      if (threadIdx.x == 0) block_choice = read_choice(decided);
      __syncthreads();
      choice = block_choice;
    }
    bool const merge = Mode != 4 && choice == id;
#pragma unroll
    for (int u = 0; u < in_flight; ++u) {
      add(hist, c[u].x, merge);
      add(hist, c[u].y, merge);
      add(hist, c[u].z, merge);
      add(hist, c[u].w, merge);
    }
  }
  if (Mode == 2 || Mode == 3) asm volatile("griddepcontrol.wait;" ::: "memory");
}

template <int Mode>
void launch_hist(cudaStream_t s, bool overlap, uint4 const* chunks, long long tiles, unsigned* hist, int const* decided, int id, int alone = 0) {
  static int grid = 0;
  if (grid == 0) {
    int per_sm = 0, sms = 0, dev = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, hist_k<Mode>, threads, 0));
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
  CK(cudaLaunchKernelEx(&cfg, hist_k<Mode>, chunks, tiles, hist, decided, id, alone));
}

int main(int argc, char** argv) {
  int const rounds = argc > 1 ? atoi(argv[1]) : 400;
  long long const n = 1ll << (argc > 2 ? atoi(argv[2]) : 24);
  long long const tile_keys = threads * in_flight * 4, tiles = n / tile_keys;
  unsigned const bins = 300000;
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
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
  int const merge_id = 1, naive_id = 0;
  for (int d = 0; d < 3; ++d) {
    unsigned const* keys = keys_d[d];
    uint4 const* chunks = reinterpret_cast<uint4 const*>(keys);
    int const chosen = d == 2 ? naive_id : merge_id;  // uniform keys: the choice is naive; runs: the merge
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
    int* const und = decided;  // reset to undecided before each chooser, in the graph
    auto reset = [&] { CK(cudaMemsetAsync(und, 0xff, 4, s)); };
    record("alone", [&] { launch_hist<0>(s, false, chunks, tiles, hist, decided, merge_id, chosen); });
    record("wait", [&] {
      reset();
      choose_k<<<groups, 256, 0, s>>>(keys, n, stride, m, decided, chosen);
      launch_hist<1>(s, true, chunks, tiles, hist, decided, merge_id);
    });
    record("speculate/warp", [&] {
      reset();
      choose_k<<<groups, 256, 0, s>>>(keys, n, stride, m, decided, chosen);
      launch_hist<2>(s, true, chunks, tiles, hist, decided, merge_id);
    });
    record("speculate/block", [&] {
      reset();
      choose_k<<<groups, 256, 0, s>>>(keys, n, stride, m, decided, chosen);
      launch_hist<3>(s, true, chunks, tiles, hist, decided, merge_id);
    });
    record("naive/wait", [&] {
      reset();
      choose_k<<<groups, 256, 0, s>>>(keys, n, stride, m, decided, chosen);
      launch_hist<4>(s, true, chunks, tiles, hist, decided, merge_id);
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
    std::printf("\n%s (choice: %s): histogram total %llu, %s %lld launches of n\n", names[d], chosen == merge_id ? "merge" : "naive", tot,
                tot == (unsigned long long)(n * launches) ? "=" : "!=", launches);
    CK(cudaMemset(hist, 0, bins * 4));
    for (auto& tv : t) std::sort(tv.begin(), tv.end());
    double const base = t[1][t[1].size() / 2];
    for (size_t v = 0; v < vs.size(); ++v) {
      double med = t[v][t[v].size() / 2];
      std::printf("%-16s median %8.2f us  p10 %8.2f  p90 %8.2f  (less 'wait' %6.2f)\n", vs[v].name.c_str(), med, t[v][t[v].size() / 10],
                  t[v][t[v].size() * 9 / 10], med - base);
    }
    for (auto& v : vs) CK(cudaGraphExecDestroy(v.exec));
  }
}
