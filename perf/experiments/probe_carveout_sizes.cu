// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_carveout_sizes.cu: a stand-alone probe (not part of the library or its build): behind a choice made
// on the device, what does a launch's block-local memory cost the scatter that runs, where it asks for none, 17 KB
// (hot_key's 128-slot cache) or 74 KB (its 512-slot cache), in the scatter's own launch (unused there, as in the
// shared direct launch) or in a launch not chosen before it (as hot_key's own); with the default carveout and with
// 100% on every kernel. The scatter: one device atomicAdd per key of 2^24 keys into 300,000 entries (uniform and
// sorted keys), 2 blocks of 512 an SM, as the shared direct launch. CUDA graphs timed host launch to wait (medians
// of 1,000), every launch after the chooser with programmatic dependent launch, as calm's. Results:
// perf/results/cuda-h100-2026-11-28-carveout-sizes.txt, read in cuda-h100-2026-11-28-hot-key-own-launch-ab.md.
//
//   nvcc -O2 -arch=sm_90 perf/probe_carveout_sizes.cu -o probe && ./probe
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "probe_graph_timing.hpp"

__global__ void chooser(int* decided, unsigned const* keys) {
  extern __shared__ unsigned s[];
  s[threadIdx.x] = keys[blockIdx.x * 4096 + threadIdx.x];
  __syncthreads();
  if (blockIdx.x == 0 && threadIdx.x == 0) *decided = s[5] == 0xffffffffu ? 1 : 0;
}
__global__ void guard(int const* decided, int id, unsigned* sink) {
  extern __shared__ unsigned s[];
  cudaGridDependencySynchronize();
  if (*decided != id) return;
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (s[threadIdx.x ^ 1] == 77777) sink[0] = 1;
}
__global__ void __launch_bounds__(512, 2) scatter(int const* decided, int id, uint4 const* keys, unsigned n4, unsigned* table) {
  extern __shared__ unsigned s[];
  cudaGridDependencySynchronize();
  if (*decided != id) return;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
    uint4 const k = keys[i];
    atomicAdd(table + k.x, 1u);
    atomicAdd(table + k.y, 1u);
    atomicAdd(table + k.z, 1u);
    atomicAdd(table + k.w, 1u);
  }
  if (threadIdx.x == 0 && table[0] == 0xfffffff0u) s[0] = 1;  // keeps the dynamic array
}
template <class K, class... A>
static void launch(cudaStream_t s, K k, int grid, int threads, size_t smem, A... a) {
  cudaLaunchConfig_t c = {};
  c.gridDim = dim3(grid);
  c.blockDim = dim3(threads);
  c.stream = s;
  c.dynamicSmemBytes = smem;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  c.attrs = at;
  c.numAttrs = 1;
  CK(cudaLaunchKernelEx(&c, k, a...));
}
int main() {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("device: %s, %d SMs\n", p.name, p.multiProcessorCount);
  unsigned const n = 1u << 24, bins = 300000;
  int* decided;
  unsigned *sink, *table, *small;
  uint4* keys;
  CK(cudaMalloc(&decided, 4));
  CK(cudaMalloc(&sink, 4));
  CK(cudaMalloc(&table, bins * 4));
  CK(cudaMalloc(&small, 64 * 4096 * 4));
  CK(cudaMemset(small, 0, 64 * 4096 * 4));
  CK(cudaMalloc(&keys, n * 4));
  size_t const kb74 = 74 * 1024, kb17 = 17 * 1024;
  for (auto k : {(void const*)guard, (void const*)scatter})
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kb74)));
  int const sms = p.multiProcessorCount;
  auto build = [&](auto f) {
    cudaGraph_t g;
    cudaGraphExec_t ex;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    f();
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ex, g, 0));
    return ex;
  };
  auto const head = [&] { chooser<<<64, 256, 2048 + 64, s>>>(decided, small); };
  auto const run = [&](size_t bytes) { launch(s, scatter, 2 * sms, 512, bytes, (int const*)decided, 0, (uint4 const*)keys, n / 4, table); };
  auto const not_chosen = [&](size_t bytes) { launch(s, guard, 2 * sms, 512, bytes, (int const*)decided, 1, sink); };
  struct variant {
    char const* name;
    cudaGraphExec_t g;
  };
  for (int dist = 0; dist < 2; ++dist) {
    std::vector<std::uint32_t> h = dist ? sorted_keys(n, bins) : std::vector<std::uint32_t>(n);
    if (!dist) {
      std::mt19937_64 g(5);
      for (auto& x : h) x = static_cast<std::uint32_t>(g() % bins);
    }
    CK(cudaMemcpy(keys, h.data(), n * 4, cudaMemcpyHostToDevice));
    for (int carve = 0; carve < 2; ++carve) {
      if (carve)
        for (auto k : {(void const*)chooser, (void const*)guard, (void const*)scatter})
          CK(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
      variant v[] = {{"scatter 0 KB", build([&] { head(); run(0); })},
                     {"scatter 17 KB", build([&] { head(); run(kb17); })},
                     {"scatter 74 KB", build([&] { head(); run(kb74); })},
                     {"guard 0 KB + scatter 0", build([&] { head(); not_chosen(0); run(0); })},
                     {"guard 17 KB + scatter 0", build([&] { head(); not_chosen(kb17); run(0); })},
                     {"guard 74 KB + scatter 0", build([&] { head(); not_chosen(kb74); run(0); })},
                     {"guard 74 KB + scatter 74", build([&] { head(); not_chosen(kb74); run(kb74); })}};
      for (int r = 0; r < 3; ++r) {
        std::printf("%s keys, carveout %s, round %d:", dist ? "sorted" : "uniform", carve ? "100" : "default", r);
        for (auto& x : v) std::printf(" | %s %.2f", x.name, time_graph(x.g, s, 1000));
        std::printf("\n");
      }
      if (carve)
        for (auto k : {(void const*)chooser, (void const*)guard, (void const*)scatter})
          CK(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout, -1));
    }
  }
}
