// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_peer_match_width.cu: a stand-alone probe (not part of the library or its build): what does
// peer_reduce's match cost in a direct scatter, by the width of what it matches? calm's direct scatter merges a warp's
// lanes by match_any on the address each updates (8 bytes on a GPU); the probe of the early start
// (probe_speculative_start.cu) matched the 4-byte key and cost 5 us over naive on uniform keys where calm's forced
// peer_reduce cost 112 us over naive (perf/results/cuda-h200-2026-11-28-early-start-ab.md). Where every address
// lies in one table of fewer than 2^32 entries, the key (or the address's low 32 bits) decides equality as well.
//
// A histogram (+1 per key) over 300,000 entries at 2^24 keys (2^LOG2N), as calm's direct scatter runs it: a resident
// grid of 512-thread blocks, 16-byte loads, 4 in flight a thread. Variants:
//   naive           one atomicAdd per key;
//   peers64/merged  calm's peer_reduce: match_any on the 8-byte address; where no lane of the warp shares one (a ballot),
//                   one atomic per lane, else the group's first lane adds the group's count (popc);
//   peers32/merged  the same matching the 4-byte key;
//   peers64         match on the address, the group's first lane adds its count, no ballot;
//   peers32         the same on the key (the probe_speculative_start merge).
// Keys sorted, runs of 32 equal keys, uniform. Each a CUDA graph, timed host launch to wait, round-robin, medians
// in microseconds ('less' is against peers64/merged); histogram totals checked.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 perf/probe_peer_match_width.cu -o probe && ./probe [ROUNDS] [LOG2N]
//
// Written on 2026-11-28 (seventeenth session) as the lead of that A/B.
#include "probe_chooser.hpp"  // CK, the keys, launch_resident, graph_round_robin, chooser_probe

constexpr int threads = 512, in_flight = 4;

// Mode: 0 naive, 1 peers64/merged, 2 peers32/merged, 3 peers64, 4 peers32
template <int Mode>
__device__ __forceinline__ void add(unsigned* hist, unsigned key) {
  if (Mode == 0) {
    atomicAdd(&hist[key], 1u);
    return;
  }
  unsigned* const at = hist + key;
  unsigned const peers = Mode == 1 || Mode == 3 ? __match_any_sync(0xffffffffu, reinterpret_cast<unsigned long long>(at))
                                                : __match_any_sync(0xffffffffu, key);
  if (Mode == 1 || Mode == 2) {
    if (__ballot_sync(0xffffffffu, peers != (1u << (threadIdx.x & 31))) == 0u) {  // no group merges: each lane alone
      atomicAdd(at, 1u);
      return;
    }
  }
  if ((threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(at, __popc(peers));
}

template <int Mode>
__global__ void __launch_bounds__(threads) hist_k(uint4 const* chunks, long long tiles, unsigned* hist) {
  long long const tile_chunks = threads * in_flight;
  for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    uint4 c[in_flight];
    uint4 const* t = chunks + tile * tile_chunks;
#pragma unroll
    for (int u = 0; u < in_flight; ++u) c[u] = t[u * threads + threadIdx.x];
#pragma unroll
    for (int u = 0; u < in_flight; ++u) {
      add<Mode>(hist, c[u].x);
      add<Mode>(hist, c[u].y);
      add<Mode>(hist, c[u].z);
      add<Mode>(hist, c[u].w);
    }
  }
}

template <int Mode>
void launch_hist(cudaStream_t s, uint4 const* chunks, long long tiles, unsigned* hist) {
  launch_resident(s, false, hist_k<Mode>, threads, tiles, chunks, tiles, hist);
}

int main(int argc, char** argv) {
  chooser_probe p(argc, argv, threads * in_flight * 4);
  for (int d = 0; d < 3; ++d) {
    uint4 const* chunks = reinterpret_cast<uint4 const*>(p.keys[d]);
    graph_round_robin vs(p.s);
    vs.record("naive", [&] { launch_hist<0>(p.s, chunks, p.tiles, p.hist); });
    vs.record("peers64/merged", [&] { launch_hist<1>(p.s, chunks, p.tiles, p.hist); });
    vs.record("peers32/merged", [&] { launch_hist<2>(p.s, chunks, p.tiles, p.hist); });
    vs.record("peers64", [&] { launch_hist<3>(p.s, chunks, p.tiles, p.hist); });
    vs.record("peers32", [&] { launch_hist<4>(p.s, chunks, p.tiles, p.hist); });
    p.report(vs, chooser_probe_dist(d));
  }
}
