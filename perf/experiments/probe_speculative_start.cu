// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_speculative_start.cu: a stand-alone probe (not part of the library or its build): where every
// strategy a choice made on the device can end at lives in one launch (the shared direct launch of 4-byte keys and
// values over a table larger than a block: naive, scan_reduce, peer_reduce and hot_key), need that launch wait for the
// choice at all? Each of its tiles is right under any merge, so it could scatter its first tiles with a provisional
// merge (naive) while the sampling still runs, and read the choice per tile, without waiting, until it is there.
// What that could save is what this probe measures, against calm's order today (the first tile loaded into registers,
// then griddepcontrol.wait, then the chosen merge).
//
// The chooser: perf/probe_chooser.hpp's, as in probe_prefetch_before_wait.cu (64 blocks of 256 keys, a warp match, the blocks' meeting in
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
//   naive/wait     wait, then naive throughout (what the provisional merge costs where it is the wrong one);
//   speculate/warp, merge first   as speculate/warp, with the merge (peers) as the provisional one;
//   merge/wait     wait, then the merge throughout (what that provisional merge costs on uniform keys).
// Each a CUDA graph timed host launch to wait, round-robin, medians in microseconds; histogram totals checked.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 perf/probe_speculative_start.cu -o probe && ./probe [ROUNDS] [LOG2N]
//
// Run on an H200 on 2026-11-28: perf/results/cuda-h200-2026-11-28-speculative-start.txt; the library change it led
// to, measured in calm and not adopted: perf/results/cuda-h200-2026-11-28-early-start-ab.md.
#include "probe_chooser.hpp"  // CK, meet_t, choose_k, the keys, launch_resident, graph_round_robin

constexpr int threads = 512, in_flight = 4;  // calm's direct_threads and loads_in_flight
constexpr int undecided = -1;

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
// 4 wait then naive, 5 speculate (warp reads) with the merge while undecided, 6 wait then the merge throughout. The key count is a multiple of a tile (threads x in_flight x 4 keys). `id`: the choice that means merge;
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
  if (Mode == 1 || Mode == 4 || Mode == 6) {
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
    if ((Mode == 2 || Mode == 5) && choice == undecided) {
      int d = 0;
      if ((threadIdx.x & 31) == 0) d = read_choice(decided);
      choice = __shfl_sync(0xffffffffu, d, 0);
    } else if (Mode == 3 && choice == undecided) {
      __syncthreads();  // block_choice read by every thread of the last tile
      if (threadIdx.x == 0) block_choice = read_choice(decided);
      __syncthreads();
      choice = block_choice;
    }
    bool const merge = Mode == 6 || (Mode != 4 && choice == id) || (Mode == 5 && choice == undecided);
#pragma unroll
    for (int u = 0; u < in_flight; ++u) {
      add(hist, c[u].x, merge);
      add(hist, c[u].y, merge);
      add(hist, c[u].z, merge);
      add(hist, c[u].w, merge);
    }
  }
  if (Mode == 2 || Mode == 3 || Mode == 5) asm volatile("griddepcontrol.wait;" ::: "memory");
}

template <int Mode>
void launch_hist(cudaStream_t s, bool overlap, uint4 const* chunks, long long tiles, unsigned* hist, int const* decided, int id, int alone = 0) {
  launch_resident(s, overlap, hist_k<Mode>, threads, tiles, chunks, tiles, hist, decided, id, alone);
}

int main(int argc, char** argv) {
  chooser_probe p(argc, argv, threads * in_flight * 4);
  cudaStream_t const s = p.s;
  long long const tiles = p.tiles;
  int const merge_id = 1, naive_id = 0;
  for (int d = 0; d < 3; ++d) {
    unsigned const* keys = p.keys[d];
    uint4 const* chunks = reinterpret_cast<uint4 const*>(keys);
    int const chosen = d == 2 ? naive_id : merge_id;  // uniform keys: the choice is naive; runs: the merge
    graph_round_robin vs(s);
    auto const choose_then = [&](auto launch) {  // undecided (-1) first, then the chooser, then the histogram
      return [&, launch] {
        CK(cudaMemsetAsync(p.decided, 0xff, 4, s));
        choose_k<true, true><<<p.groups, 256, 0, s>>>(keys, p.n, p.stride, p.m, p.decided, chosen);
        launch(s, true, chunks, tiles, p.hist, p.decided, merge_id, 0);
      };
    };
    vs.record("alone", [&] { launch_hist<0>(s, false, chunks, tiles, p.hist, p.decided, merge_id, chosen); });
    vs.record("wait", choose_then(launch_hist<1>));
    vs.record("speculate/warp", choose_then(launch_hist<2>));
    vs.record("speculate/block", choose_then(launch_hist<3>));
    vs.record("naive/wait", choose_then(launch_hist<4>));
    vs.record("speculate/warp, merge first", choose_then(launch_hist<5>));
    vs.record("merge/wait", choose_then(launch_hist<6>));
    p.report(vs, std::string(chooser_probe_dist(d)) + (chosen == merge_id ? " (choice: merge)" : " (choice: naive)"));
  }
}
