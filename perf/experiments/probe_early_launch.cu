// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_early_launch.cu: a stand-alone probe (not part of the library or its build) of ways to start the
// launches behind a choice made on the device sooner: a chooser of 64 blocks (a load, a match, a meeting in device
// memory: atomics by 12 lanes or one, padded sums, per-group slots, none) then two or three guarded launches of a
// resident grid (2 blocks of 1,024 threads an SM, 20,000 multiply-adds a thread where chosen), each a CUDA graph
// timed host launch to wait (medians of 3,000): plain launches; programmatic launches (PDL); the chooser letting
// them launch at its start (cudaTriggerProgrammaticLaunchCompletion); the first launch polling the choice instead of
// waiting; the choice made again by every block of the first launch from the groups' slots; "early release" (the
// first launch lets the next begin once it has read the choice, later launches read it before they wait and end at
// once where not chosen); a trigger in a launch not chosen. Results: perf/results/cuda-h100-2026-11-26-sampling-parts.md.
//
//   nvcc -O2 -arch=sm_90 perf/probe_early_launch.cu -o probe && ./probe
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <chrono>
#include "probe_graph_timing.hpp"
struct meet { unsigned long long sum[12 * 16]; unsigned long long ticket; };
// mode bit 1: trigger at start; bit 2: sentinel write by block 0 before trigger
__global__ void chooser(unsigned const* keys, meet* m, unsigned long long* slots, int* decided, int k, int mode, int spin) {
  __shared__ unsigned s[256];
  __shared__ int last;
  if ((mode & 2) && blockIdx.x == 0 && threadIdx.x == 0) { *(volatile int*)decided = -1; __threadfence(); }
  if (mode & 1) cudaTriggerProgrammaticLaunchCompletion();
  unsigned v = keys[(size_t)blockIdx.x * 262144 + threadIdx.x];
  for (int i = 0; i < spin; ++i) v = v * 1664525u + 1013904223u;
  s[threadIdx.x] = v; __syncthreads();
  unsigned peers = __match_any_sync(~0u, s[threadIdx.x ^ 1] & 7);
  if (mode & 64) { if (threadIdx.x < 12) slots[blockIdx.x * 16 + threadIdx.x] = __popc(peers) + k; return; }
  if (mode & 16) { if (threadIdx.x < 12) slots[blockIdx.x * 16 + threadIdx.x] = __popc(peers); if (threadIdx.x == 0 && blockIdx.x == 0) *decided = k; return; }
  if (mode & 8) { if (threadIdx.x < 12) slots[blockIdx.x * 16 + threadIdx.x] = __popc(peers); }
  else if (mode & 32) { if (threadIdx.x == 0) for (int i = 0; i < 12; ++i) atomicAdd(&m->sum[i], (unsigned long long)__popc(peers) + i); }
  else if (mode & 128) { if (threadIdx.x < 12) atomicAdd(&m->sum[threadIdx.x * 16], (unsigned long long)__popc(peers)); }
  else if (threadIdx.x < 12) atomicAdd(&m->sum[threadIdx.x], (unsigned long long)__popc(peers));
  __syncthreads();
  if (threadIdx.x == 0) { __threadfence(); last = atomicAdd(&m->ticket, 1ull) == gridDim.x - 1; }
  __syncthreads();
  if (!last) return;
  if (mode & 8) {
    __threadfence();
    __shared__ unsigned long long part[256];
    unsigned long long a = 0;
    for (int g = threadIdx.x / 16; g < gridDim.x; g += 16) if (threadIdx.x % 16 < 12) a += ((volatile unsigned long long*)slots)[g * 16 + threadIdx.x % 16];
    part[threadIdx.x] = a; __syncthreads();
    if (threadIdx.x < 16) { unsigned long long t = 0; for (int j = threadIdx.x; j < 256; j += 16) t += part[j]; part[threadIdx.x] = t; }
    __syncthreads();
    if (threadIdx.x == 0) { unsigned long long t = 0; for (int i = 0; i < 12; ++i) t += part[i]; *decided = t == 0xffffffffull ? 0 : k; m->ticket = 0; }
    return;
  }
  if (threadIdx.x == 0) {
    __threadfence();
    unsigned long long t = 0; int const st = (mode & 128) ? 16 : 1; for (int i = 0; i < 12; ++i) t += ((volatile unsigned long long*)m->sum)[i * st];
    int d = t == 0xffffffffull ? 0 : k;
    if (mode & 2) { __threadfence(); atomicExch(decided, d); } else *decided = d;
    for (int i = 0; i < 12; ++i) m->sum[i * ((mode & 128) ? 16 : 1)] = 0; m->ticket = 0;
  }
}
// mode bit 4: poll decided (acquire) instead of waiting first; wait at end
__global__ void work(int const* decided, int id, unsigned* sink, int iters, int mode, unsigned long long const* slots, int groups) {
  int d;
  if (mode & 8) {
    __shared__ unsigned long long f[12];
    __shared__ int sd;
    cudaGridDependencySynchronize();
    int w = threadIdx.x / 32, l = threadIdx.x % 32;
    if (w < 12) {
      unsigned long long a = 0;
      for (int g = l; g < groups; g += 32) a += slots[g * 16 + w];
      for (int o = 16; o > 0; o /= 2) a += __shfl_xor_sync(~0u, a, o);
      if (l == 0) f[w] = a;
    }
    __syncthreads();
    if (threadIdx.x == 0) { unsigned long long t = 0; for (int i = 0; i < 12; ++i) t += f[i]; sd = t == 0xffffffffull ? 1 : 0; if (blockIdx.x == 0) *(int*)decided = sd; }
    __syncthreads(); d = sd;
  } else if (mode & 64) {  // trigger at start, then wait and read
    cudaTriggerProgrammaticLaunchCompletion();
    cudaGridDependencySynchronize();
    d = *(volatile int const*)decided;
    if (d != id) return;
  } else if (mode & 16) {  // first behind the chooser: wait, let the next launch, then read
    cudaGridDependencySynchronize();
    cudaTriggerProgrammaticLaunchCompletion();
    d = *(volatile int const*)decided;
    if (d != id) return;
  } else if (mode & 32) {  // later: read first, leave at once where not chosen; wait only where chosen
    d = *(volatile int const*)decided;
    if (d != id) return;
    cudaGridDependencySynchronize();
  } else if (mode & 4) {
    __shared__ int sd;
    if (threadIdx.x == 0) { int v; while ((v = atomicAdd((int*)decided, 0)) == -1) __nanosleep(64); sd = v; }
    __syncthreads(); d = sd;
  } else { cudaGridDependencySynchronize(); d = decided ? *decided : id; }
  if (d == id) {
    unsigned a = threadIdx.x;
    for (int i = 0; i < iters; ++i) a = a * 1664525u + 1013904223u;
    if (a == 0x12345) sink[0] = a;
  }
  if (mode & 4) cudaGridDependencySynchronize();
}
static unsigned long long* g_slots;
static void launch_work(cudaStream_t s, int const* decided, int id, unsigned* sink, int iters, bool pdl, int mode, int grid) {
  cudaLaunchConfig_t c = {}; c.gridDim = dim3(grid); c.blockDim = dim3(1024); c.stream = s;
  cudaLaunchAttribute at[1]; at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization; at[0].val.programmaticStreamSerializationAllowed = 1;
  c.attrs = at; c.numAttrs = pdl ? 1 : 0;
  CK(cudaLaunchKernelEx(&c, work, decided, id, sink, iters, mode, (unsigned long long const*)g_slots, 64));
}
int main() {
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int* decided; unsigned* sink; meet* m; unsigned* keys;
  CK(cudaMalloc(&decided, 4)); CK(cudaMalloc(&sink, 4)); CK(cudaMalloc(&m, sizeof(meet))); CK(cudaMemset(m, 0, sizeof(meet)));
  CK(cudaMalloc(&keys, (size_t)64 * 262144 * 4)); CK(cudaMemset(keys, 1, (size_t)64 * 262144 * 4));
  unsigned long long* slots; CK(cudaMalloc(&slots, 64 * 16 * 8)); CK(cudaMemset(slots, 0, 64 * 16 * 8)); g_slots = slots;
  int sms = 0; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  int grid = 2 * sms;
  for (int iters : {20000}) for (int spin : {0}) {
    cudaGraph_t g; cudaGraphExec_t ex;
    auto build = [&](auto f) { CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed)); f(); CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&ex, g, 0)); double t = time_graph(ex, s, 3000); CK(cudaGraphExecDestroy(ex)); CK(cudaGraphDestroy(g)); return t; };
    double best = build([&] { launch_work(s, nullptr, 0, sink, iters, false, 0, grid); });
    double alone = build([&] { chooser<<<64, 256, 0, s>>>(keys, m, slots, decided, 0, 0, spin); });
    double a_one = build([&] { chooser<<<64, 256, 0, s>>>(keys, m, slots, decided, 0, 32, spin); });
    double a_pad = build([&] { chooser<<<64, 256, 0, s>>>(keys, m, slots, decided, 0, 128, spin); });
    double a_pad1 = build([&] { chooser<<<64, 256, 0, s>>>(keys, m, slots, decided, 0, 128, spin); });
    printf("padded sums: %.2f %.2f\n", a_pad, a_pad1);
    double a_slots = build([&] { chooser<<<64, 256, 0, s>>>(keys, m, slots, decided, 0, 8, spin); });
    double a_none = build([&] { chooser<<<64, 256, 0, s>>>(keys, m, slots, decided, 0, 16, spin); });
    double e1 = build([&] { launch_work(s, nullptr, 0, sink, 0, false, 0, 1); });
    printf("empty 1-block kernel %.2f; chooser alone: atomics by 12 lanes %.2f, by one lane %.2f, slots %.2f, no meeting %.2f\n", e1, alone, a_one, a_slots, a_none);
    double r[11];
    int const cm[11] = {0, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1};
    for (int v = 0; v < 11; ++v)
      r[v] = build([&] {
        int const ch = v >= 4 ? 1 : 0;  // 4-7: the second launch chosen
        chooser<<<64, 256, 0, s>>>(keys, m, slots, decided, ch, cm[v], spin);
        bool const early = v == 3 || v == 5;
        if (v >= 8) {  // 8: second chosen, no triggers; 9: chooser trigger + first trigger at start; 10: all trigger at start
          launch_work(s, decided, 0, sink, iters, true, v >= 9 ? 64 : 0, grid);
          launch_work(s, decided, 1, sink, iters, true, v == 10 ? 64 : 0, grid);
          return;
        }
        launch_work(s, decided, 0, sink, iters, v > 0, early || v == 6 ? 16 : 0, grid);
        launch_work(s, decided, 1, sink, iters, v > 0, early || v == 7 ? 32 : 0, grid);
        if (v == 2) launch_work(s, decided, 2, sink, iters, true, 0, grid);
        if (v == 3) launch_work(s, decided, 2, sink, iters, true, 32, grid);
      });
    printf("iters %5d spin %4d: work alone %.2f, chooser alone %.2f | chooser+2 launches: plain %.2f, | first chosen: trigger+pdl 2 launches %.2f, 3 launches %.2f, early release 3 launches %.2f | second chosen: pdl %.2f, early release %.2f, first 16 second 0 %.2f, first 0 second 32 %.2f | no trigger %.2f, chooser+first trigger at start %.2f, all at start %.2f\n",
           iters, spin, best, alone, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10]);
  }
  int h; CK(cudaMemcpy(&h, decided, 4, cudaMemcpyDeviceToHost)); printf("decided %d\n", h);
  return 0;
}
