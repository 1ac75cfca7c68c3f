// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_cluster_meeting.cu: a stand-alone probe (not part of the library or its build): a sampling's
// meeting through device memory (64 blocks of 256 threads, atomics and a ticket, the last block deciding) against
// one thread-block cluster (8 or 16 blocks of 512 or 1,024 threads) whose blocks meet in distributed shared
// memory; each a CUDA graph timed host launch to wait (medians of 4,000). Results:
// perf/results/cuda-h100-2026-11-26-sampling-parts.md.
//
//   nvcc -O3 -arch=sm_90 perf/probe_cluster_meeting.cu -o probe && ./probe
#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <chrono>
#include "probe_graph_timing.hpp"
namespace cg = cooperative_groups;
struct meet { unsigned long long sum[12]; unsigned long long ticket; };
__device__ __forceinline__ void count_warp(unsigned key, unsigned* c) {
  unsigned peers = __match_any_sync(~0u, key);
  int mult = __popc(peers);
  int top = 0;
  for (int b = 6; b >= 0; --b) if (__any_sync(~0u, mult >= (top | (1 << b)))) top |= 1 << b;
  unsigned prev = __shfl_up_sync(~0u, key, 1);
  int adj = __popc(__ballot_sync(~0u, (threadIdx.x % 32) > 0 && prev == key));
  int reps = __popc(__ballot_sync(~0u, (peers & ((1u << (threadIdx.x % 32)) - 1)) != 0));
  if (threadIdx.x % 32 == 0) { atomicAdd(c + 0, top); atomicAdd(c + 1, 1); atomicAdd(c + 2, adj); atomicAdd(c + 3, reps); atomicAdd(c + 4, 32); }
}
// groups of 256 keys, group g at g * stride
__global__ void global_meet(unsigned const* keys, size_t stride, meet* m, int* decided) {
  __shared__ unsigned c[12];
  __shared__ int last;
  if (threadIdx.x < 12) c[threadIdx.x] = 0;
  __syncthreads();
  unsigned key = keys[blockIdx.x * stride + threadIdx.x];
  count_warp(key, c);
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int i = 0; i < 12; ++i) atomicAdd(&m->sum[i], (unsigned long long)c[i]);
    __threadfence();
    last = atomicAdd(&m->ticket, 1ull) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  if (threadIdx.x == 0) {
    __threadfence();
    unsigned long long t[12];
    for (int i = 0; i < 12; ++i) t[i] = ((volatile unsigned long long*)m->sum)[i];
    *decided = double(t[2]) <= 0.5 * double(t[3]) ? 1 : 4;
  }
  __syncthreads();
  if (threadIdx.x < 13) ((unsigned long long*)m)[threadIdx.x] = 0;
}
// one cluster: each block takes groups rank, rank + blocks, ... (threads / 256 groups at a time)
__global__ void cluster_meet(unsigned const* keys, size_t stride, int groups, int* decided) {
  __shared__ unsigned c[12];
  cg::cluster_group cl = cg::this_cluster();
  int const rank = cl.block_rank(), blocks = cl.num_blocks();
  if (threadIdx.x < 12) c[threadIdx.x] = 0;
  __syncthreads();
  int const per = blockDim.x / 256;  // groups at a time
  unsigned k[4];
  int rounds = 0;
  for (int g = rank * per + threadIdx.x / 256; g < groups; g += blocks * per) k[rounds++] = keys[g * stride + threadIdx.x % 256];
  for (int r = 0; r < rounds; ++r) count_warp(k[r], c);
  cl.sync();
  if (rank == 0 && threadIdx.x < 32) {
    unsigned long long v = 0;
    int const f = threadIdx.x % 16;
    for (int b = threadIdx.x / 16; b < blocks; b += 2) v += f < 12 ? *cl.map_shared_rank(&c[f], b) : 0;
    v += __shfl_down_sync(~0u, v, 16);
    unsigned long long const adj = __shfl_sync(~0u, v, 2), reps = __shfl_sync(~0u, v, 3);
    if (threadIdx.x == 0) *decided = double(adj) <= 0.5 * double(reps) ? 1 : 4;
  }
  cl.sync();  // the others' shared memory stays until block 0 has read it
}
__global__ void empty_k() {}
int main() {
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  size_t const n = size_t(1) << 24; int const groups = 64; size_t const stride = n / groups;
  unsigned* keys; int* decided; meet* m;
  CK(cudaMalloc(&keys, n * 4)); CK(cudaMalloc(&decided, 4)); CK(cudaMalloc(&m, sizeof(meet))); CK(cudaMemset(m, 0, sizeof(meet)));
  std::vector<unsigned> hk(n); for (size_t i = 0; i < n; ++i) hk[i] = unsigned(i * 300000 / n);
  CK(cudaMemcpy(keys, hk.data(), n * 4, cudaMemcpyHostToDevice));
  CK(cudaFuncSetAttribute(cluster_meet, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  auto build = [&](auto f) { cudaGraph_t g; cudaGraphExec_t ex; CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed)); f(); CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&ex, g, 0)); return ex; };
  auto cl = [&](int blocks, int threads) {
    cudaLaunchConfig_t c = {}; c.gridDim = dim3(blocks); c.blockDim = dim3(threads); c.stream = s;
    cudaLaunchAttribute at[1]; at[0].id = cudaLaunchAttributeClusterDimension; at[0].val.clusterDim.x = blocks; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
    c.attrs = at; c.numAttrs = 1;
    CK(cudaLaunchKernelEx(&c, cluster_meet, (unsigned const*)keys, stride, groups, decided));
  };
  std::vector<std::pair<const char*, cudaGraphExec_t>> g;
  g.push_back({"empty", build([&] { empty_k<<<1, 32, 0, s>>>(); })});
  g.push_back({"global 64x256", build([&] { global_meet<<<64, 256, 0, s>>>(keys, stride, m, decided); })});
  g.push_back({"cluster 8x1024", build([&] { cl(8, 1024); })});
  g.push_back({"cluster 16x1024", build([&] { cl(16, 1024); })});
  g.push_back({"cluster 16x512", build([&] { cl(16, 512); })});
  g.push_back({"cluster 8x512", build([&] { cl(8, 512); })});
  for (int r = 0; r < 2; ++r) for (auto& x : g) printf("%-18s %.2f us\n", x.first, time_graph(x.second, s, 4000));
  int h; CK(cudaMemcpy(&h, decided, 4, cudaMemcpyDeviceToHost)); printf("decided %d\n", h);
}
