// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_finish_cycles.cu: a stand-alone probe (not part of the library or its build) of what one
// lane's finish of the automatic choice costs in cycles (clock64): the summed totals' loads, the five
// statistics' double divisions (as statistics_of), and a walk of four tests over nodes in kernel
// parameters (as tree_walk::finish). Results: perf/results/cuda-h100-2026-11-26-merge-program-registers.md.
//
//   nvcc -O3 -arch=sm_90 perf/probe_finish_cycles.cu -o probe && ./probe
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
struct totals { std::uint64_t warp_sum, warps, block_sum, blocks, distinct, repeats, adjacent, out_of_range, sampled, lines; };
struct stats { double warp_level, block_level, all_thread, clustering, line_share; };
struct node { double threshold; int test; signed char left, right; int leaf; };
struct walk { node nodes[15]; int size; };
__device__ __noinline__ stats stats_of(totals const* p) {
  totals t = *p; stats s;
  double const one = double(1 << 20);
  s.warp_level = t.warps ? double(t.warp_sum) / one / double(t.warps) : 0.0;
  s.block_level = t.blocks ? double(t.block_sum) / one / double(t.blocks) : 0.0;
  s.all_thread = t.distinct ? double(t.sampled - t.out_of_range) / double(t.distinct) : 0.0;
  s.clustering = t.repeats ? double(t.adjacent) / double(t.repeats) : 0.0;
  std::uint64_t const wd = t.sampled - t.out_of_range - t.repeats;
  s.line_share = wd ? double(t.lines) / double(wd) : 0.0;
  return s;
}
__device__ double value(int f, stats const& s) {
  switch (f) { case 0: return s.warp_level; case 1: return s.block_level; case 2: return s.all_thread; case 3: return s.clustering; default: return s.line_share; }
}
__global__ void probe(totals const* sum, walk w, long long* cyc, int* out, int mode) {
  if (threadIdx.x != 0) return;
  long long t0 = clock64();
  int r = 0;
  if (mode == 0) { volatile std::uint64_t const* v = (volatile std::uint64_t const*)sum; std::uint64_t a = 0; for (int k = 0; k < 10; ++k) a += v[k]; r = int(a); }
  else if (mode == 1) { stats s = stats_of(sum); r = int(s.warp_level * 100 + s.clustering * 10 + s.line_share); }
  else if (mode == 2) { stats s = stats_of(sum); int i = 0; while (w.nodes[i].left >= 0) i = value(w.nodes[i].test, s) <= w.nodes[i].threshold ? w.nodes[i].left : w.nodes[i].right; r = w.nodes[i].leaf; }
  else if (mode == 3) { stats s{0.3, 0.1, 0.0, 0.5, 0.2}; s.warp_level += double(mode) * 1e-9; int i = 0; while (w.nodes[i].left >= 0) i = value(w.nodes[i].test, s) <= w.nodes[i].threshold ? w.nodes[i].left : w.nodes[i].right; r = w.nodes[i].leaf; }
  long long t1 = clock64();
  *cyc = t1 - t0; *out = r;
}
int main() {
  totals h{3u << 20, 512, 0, 0, 0, 9000, 8000, 0, 16384, 300};
  totals* d; long long* cyc; int* out;
  cudaMalloc(&d, sizeof h); cudaMemcpy(d, &h, sizeof h, cudaMemcpyHostToDevice); cudaMalloc(&cyc, 8); cudaMalloc(&out, 4);
  walk w{}; // a chain of 4 tests: warp, clustering, line_share, warp, then leaves
  w.nodes[0] = {0.5, 0, 1, 2, 0}; w.nodes[1] = {0.0, 0, -1, -1, 1};
  w.nodes[2] = {0.2, 3, 3, 4, 0}; w.nodes[3] = {0, 0, -1, -1, 2};
  w.nodes[4] = {0.1, 4, 5, 6, 0}; w.nodes[5] = {0, 0, -1, -1, 3};
  w.nodes[6] = {0.9, 0, 7, 8, 0}; w.nodes[7] = {0, 0, -1, -1, 4}; w.nodes[8] = {0, 0, -1, -1, 5}; w.size = 9;
  // h: warp_level = 3/512 ~ 0.006 -> left to node1? make it go right: warp_sum big
  h.warp_sum = (std::uint64_t)400 << 20; cudaMemcpy(d, &h, sizeof h, cudaMemcpyHostToDevice);
  for (int mode = 0; mode < 4; ++mode) {
    long long best = 1LL << 60; int r = 0;
    for (int rep = 0; rep < 20; ++rep) {
      probe<<<1, 32>>>(d, w, cyc, out, mode);
      long long c; cudaMemcpy(&c, cyc, 8, cudaMemcpyDeviceToHost); cudaMemcpy(&r, out, 4, cudaMemcpyDeviceToHost);
      if (c < best) best = c;
    }
    long long med_c; probe<<<1, 32>>>(d, w, cyc, out, mode); cudaMemcpy(&med_c, cyc, 8, cudaMemcpyDeviceToHost);
    printf("mode %d (%s): min %lld cycles, last %lld, result %d\n", mode, mode == 0 ? "loads" : mode == 1 ? "loads+stats" : mode == 2 ? "loads+stats+walk" : "walk only", best, med_c, r);
  }
  cudaError_t e = cudaDeviceSynchronize(); printf("%s\n", cudaGetErrorString(e));
  int clk; cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0); printf("clock %d kHz\n", clk);
}
