// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_guard_carveout.cu: a stand-alone probe (not part of the library or its build): does a launch not
// chosen that asks for 17 KB of block-local memory a block (as hot_key's) cost more behind a device-made choice than
// one that asks for none (a change of the shared memory carveout between kernels)? Default carveout and 100%.
// CUDA graphs timed host launch to wait (medians of 3,000). Results: perf/results/cuda-h100-2026-11-26-sampling-parts.md.
//
//   nvcc -O2 -arch=sm_90 perf/probe_guard_carveout.cu -o probe && ./probe
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <chrono>
#include "probe_graph_timing.hpp"
__global__ void chooser(int* decided, unsigned const* keys) {
  extern __shared__ unsigned s[];
  s[threadIdx.x] = keys[blockIdx.x * 262144 + threadIdx.x];
  __syncthreads();
  if (blockIdx.x == 0 && threadIdx.x == 0) *decided = s[5] == 12345 ? 1 : 0;
}
__global__ void guard(int const* decided, int id, unsigned* sink) {
  extern __shared__ unsigned s[];
  cudaGridDependencySynchronize();
  if (*decided != id) return;
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (s[threadIdx.x ^ 1] == 77777) sink[0] = 1;
}
__global__ void work(int const* decided, int id, unsigned* sink, int iters) {
  cudaGridDependencySynchronize();
  if (*decided != id) return;
  unsigned a = threadIdx.x;
  for (int i = 0; i < iters; ++i) a = a * 1664525u + 1013904223u;
  if (a == 0x12345) sink[0] = a;
}
template <class K, class... A>
static void launch(cudaStream_t s, K k, int grid, int threads, size_t smem, bool pdl, A... a) {
  cudaLaunchConfig_t c = {}; c.gridDim = dim3(grid); c.blockDim = dim3(threads); c.stream = s; c.dynamicSmemBytes = smem;
  cudaLaunchAttribute at[1]; at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization; at[0].val.programmaticStreamSerializationAllowed = 1;
  c.attrs = at; c.numAttrs = pdl ? 1 : 0;
  CK(cudaLaunchKernelEx(&c, k, a...));
}
int main() {
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int* decided; unsigned* sink; unsigned* keys;
  CK(cudaMalloc(&decided, 4)); CK(cudaMalloc(&sink, 4)); CK(cudaMalloc(&keys, size_t(64) * 262144 * 4)); CK(cudaMemset(keys, 0, size_t(64) * 262144 * 4));
  int sms = 0; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  auto build = [&](auto f) { cudaGraph_t g; cudaGraphExec_t ex; CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed)); f(); CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&ex, g, 0)); return ex; };
  int const iters = 20000;
  for (int carve = 0; carve < 2; ++carve) {
    if (carve) {
      CK(cudaFuncSetAttribute(chooser, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
      CK(cudaFuncSetAttribute(guard, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
      CK(cudaFuncSetAttribute(work, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
    }
    auto g0 = build([&] { chooser<<<64, 256, 2048 + 64, s>>>(decided, keys); launch(s, work, 2 * sms, 1024, 0, true, (int const*)decided, 0, sink, iters); });
    auto g1 = build([&] { chooser<<<64, 256, 2048 + 64, s>>>(decided, keys); launch(s, guard, 4 * sms, 512, 0, true, (int const*)decided, 1, sink);
                          launch(s, work, 2 * sms, 1024, 0, true, (int const*)decided, 0, sink, iters); });
    auto g2 = build([&] { chooser<<<64, 256, 2048 + 64, s>>>(decided, keys); launch(s, guard, 4 * sms, 512, 17 * 1024, true, (int const*)decided, 1, sink);
                          launch(s, work, 2 * sms, 1024, 0, true, (int const*)decided, 0, sink, iters); });
    for (int r = 0; r < 2; ++r)
      printf("carveout %s: chooser+work %.2f, + guard without smem %.2f, + guard with 17 KB %.2f\n", carve ? "100" : "default", time_graph(g0, s, 3000), time_graph(g1, s, 3000), time_graph(g2, s, 3000));
  }
}
