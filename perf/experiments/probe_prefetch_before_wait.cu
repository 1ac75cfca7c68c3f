// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_prefetch_before_wait.cu: a stand-alone probe (not part of the library or its build): can the
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
#include "probe_chooser.hpp"  // CK, meet_t, choose_k, the keys, launch_resident, graph_round_robin

constexpr int threads = 512, in_flight = 4;  // calm's direct_threads and loads_in_flight

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
  launch_resident(s, overlap, hist_k<Pre, Wait>, threads, tiles, chunks, tiles, hist, decided, id);
}

int main(int argc, char** argv) {
  chooser_probe p(argc, argv, threads * in_flight * 4);
  cudaStream_t const s = p.s;
  long long const n = p.n, tiles = p.tiles, groups = p.groups, stride = p.stride;
  unsigned* hist = p.hist;
  meet_t* m = p.m;
  int* decided = p.decided;
  for (int d = 0; d < 3; ++d) {
    unsigned const* keys = p.keys[d];
    uint4 const* chunks = reinterpret_cast<uint4 const*>(keys);
    graph_round_robin vs(s);
    vs.record("best (histogram alone)", [&] { launch_hist<0, false>(s, false, chunks, tiles, hist, decided, -1); });
    vs.record("choose, then wait", [&] {
      choose_k<false><<<groups, 256, 0, s>>>(keys, n, stride, m, decided, 0);
      launch_hist<0, true>(s, true, chunks, tiles, hist, decided, 0);
    });
    vs.record("choose, then L2 prefetch", [&] {
      choose_k<false><<<groups, 256, 0, s>>>(keys, n, stride, m, decided, 0);
      launch_hist<1, true>(s, true, chunks, tiles, hist, decided, 0);
    });
    vs.record("trigger: wait", [&] {
      choose_k<true><<<groups, 256, 0, s>>>(keys, n, stride, m, decided, 0);
      launch_hist<0, true>(s, true, chunks, tiles, hist, decided, 0);
    });
    vs.record("trigger: L2 prefetch", [&] {
      choose_k<true><<<groups, 256, 0, s>>>(keys, n, stride, m, decided, 0);
      launch_hist<1, true>(s, true, chunks, tiles, hist, decided, 0);
    });
    vs.record("trigger: bulk prefetch", [&] {
      choose_k<true><<<groups, 256, 0, s>>>(keys, n, stride, m, decided, 0);
      launch_hist<3, true>(s, true, chunks, tiles, hist, decided, 0);
    });
    vs.record("trigger: tile in regs", [&] {
      choose_k<true><<<groups, 256, 0, s>>>(keys, n, stride, m, decided, 0);
      launch_hist<2, true>(s, true, chunks, tiles, hist, decided, 0);
    });
    p.report(vs, chooser_probe_dist(d));
  }
}
