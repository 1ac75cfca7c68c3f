// SPDX-License-Identifier: Apache-2.0
// calm/backends/cuda/runtime.hpp: the CUDA runtime calls behind the shared GPU launch helpers and
// device memory (backends/gpu/), each checked, and the backend's launch and memory API built on them.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#include "../gpu/launch.hpp"
#include "../gpu/memory.hpp"
#include "check.hpp"
#include "warp.hpp"

namespace calm {
namespace cuda {

struct runtime {
  using stream_t = cudaStream_t;
  static constexpr device_family family = device_family::nvidia_gpu;
  static void check_launch(char const* what) {
    cudaError_t const e = cudaGetLastError();
    if (e != cudaSuccess) detail::check(e, what, __FILE__, __LINE__);
  }
  static int current_device() {
    int dev = 0;
    CALM_CUDA_CHECK(cudaGetDevice(&dev));
    return dev;
  }
  /// Attribute `Attr` of the current device, asked of the runtime once per device (a device's attributes
  /// do not change; host threads may ask at once). A repeated bulk call asks for the block-local limit
  /// before it launches (the table's fit, and each cluster_privatize leaf of the walk it carries), so
  /// each runtime call there would be the call's time.
  template <cudaDeviceAttr Attr>
  static int device_attribute() {
    static std::atomic<int> known[64] = {};  // the attribute + 1; 0: not asked
    int const dev = current_device();
    auto const ask = [dev] {
      int v = 0;
      CALM_CUDA_CHECK(cudaDeviceGetAttribute(&v, Attr, dev));
      return v;
    };
    if (dev < 0 || dev >= 64) return ask();
    int k = known[dev].load(std::memory_order_relaxed);
    if (k == 0) {
      k = ask() + 1;
      known[dev].store(k, std::memory_order_relaxed);
    }
    return k - 1;
  }
  /// The opt-in limit (227 KB on sm_90), not the 48 KB default: allow_shared_bytes raises a kernel's.
  static std::size_t max_block_shared_bytes() {
    return static_cast<std::size_t>(device_attribute<cudaDevAttrMaxSharedMemoryPerBlockOptin>());
  }
  template <class Kernel>
  static void allow_shared_bytes(Kernel kernel, std::size_t bytes) {
    if (bytes > 48 * 1024)
      CALM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  }
  static int multiprocessors() { return device_attribute<cudaDevAttrMultiProcessorCount>(); }
  template <class Kernel>
  static int occupancy(Kernel kernel, int threads, std::size_t shared_bytes) {
    int blocks = 0;
    CALM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, shared_bytes));
    return blocks;
  }
  /// Whether the current device launches kernels that overlap the launch before them (programmatic
  /// dependent launch: compute capability 9.0 and newer), asked once per device.
  static bool overlapping_launches() {
    return device_attribute<cudaDevAttrComputeCapabilityMajor>() >= 9;
  }
  /// kernel<<<grid, threads, bytes, s>>>(args...); with overlap (on a device that has it) the launch
  /// may begin while the one before it on s ends: the kernel must call await_prior_launch() before it
  /// reads anything that launch wrote (the launch helpers' kernels do so first thing).
  template <class... Params, class... Args>
  static void launch(void (*kernel)(Params...), unsigned grid, unsigned threads, std::size_t bytes, cudaStream_t s, bool overlap,
                     Args const&... args) {
    if (!overlap || !overlapping_launches()) {
      kernel<<<grid, threads, bytes, s>>>(args...);
      return;
    }
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid, 1, 1);
    cfg.blockDim = dim3(threads, 1, 1);
    cfg.dynamicSmemBytes = bytes;
    cfg.stream = s;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    CALM_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, args...));
  }
  /// In a kernel launched to overlap the launch before it: waits until that launch has finished and
  /// its memory operations are seen. A no-op in a kernel launched otherwise (and before sm_90).
  __device__ static void await_prior_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaGridDependencySynchronize();
#endif
  }
  /// Lets the launch after this one on its stream begin now, where it was launched to overlap this one
  /// (its blocks still wait, in await_prior_launch, for this launch to end). A no-op before sm_90.
  __device__ static void allow_next_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaTriggerProgrammaticLaunchCompletion();
#endif
  }
  static void synchronize(cudaStream_t s) { CALM_CUDA_CHECK(cudaStreamSynchronize(s)); }
  /// f(i) for i < count (at most 16), each launching on s; then one wait, and seconds[i] receives the
  /// device's time from the end of f(i - 1)'s work to the end of f(i)'s (events recorded between them).
  template <class F>
  static void seconds_of_each(int count, cudaStream_t s, F&& f, double* seconds) {
    require(count >= 0 && count <= 16, errc::invalid_argument, "seconds_of_each: at most 16 timings");
    struct events {
      cudaEvent_t at[17] = {};
      int made = 0;
      explicit events(int n) {
        for (; made < n; ++made) CALM_CUDA_CHECK(cudaEventCreate(&at[made]));
      }
      ~events() {
        for (int i = 0; i < made; ++i) (void)cudaEventDestroy(at[i]);
      }
    } const e(count + 1);
    CALM_CUDA_CHECK(cudaEventRecord(e.at[0], s));
    for (int i = 0; i < count; ++i) {
      f(i);
      CALM_CUDA_CHECK(cudaEventRecord(e.at[i + 1], s));
    }
    CALM_CUDA_CHECK(cudaEventSynchronize(e.at[count]));
    for (int i = 0; i < count; ++i) {
      float ms = 0.0f;
      CALM_CUDA_CHECK(cudaEventElapsedTime(&ms, e.at[i], e.at[i + 1]));
      seconds[i] = ms * 1e-3;
    }
  }
  /// The most threads per block this kernel launches with (its registers may allow fewer than 1,024).
  template <class Kernel>
  static int max_threads(Kernel kernel) {
    cudaFuncAttributes a{};
    CALM_CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
    return a.maxThreadsPerBlock;
  }
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    CALM_CUDA_CHECK(cudaMalloc(&p, bytes));  // never managed memory
    return p;
  }
  static void release(void* p) noexcept {
    if (p) (void)cudaFree(p);
  }
  static void to_device(void* d, void const* h, std::size_t bytes) { CALM_CUDA_CHECK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice)); }
  static void to_host(void* h, void const* d, std::size_t bytes) { CALM_CUDA_CHECK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost)); }
  static void fill(void* d, int byte, std::size_t bytes) { CALM_CUDA_CHECK(cudaMemset(d, byte, bytes)); }
  // the workspace of a bulk call: stream-ordered, from calm's own pool of the current device, which
  // keeps its memory between calls (release threshold: never), so allocation costs no mapping
  static cudaMemPool_t workspace_pool() {
    static cudaMemPool_t pools[64] = {};
    static std::mutex lock;
    std::lock_guard<std::mutex> hold(lock);
    int dev = 0;
    CALM_CUDA_CHECK(cudaGetDevice(&dev));
    require(dev >= 0 && dev < 64, errc::unsupported, "calm: device ordinals above 63 have no workspace pool");
    if (!pools[dev]) {
      cudaMemPoolProps props{};
      props.allocType = cudaMemAllocationTypePinned;
      props.location.type = cudaMemLocationTypeDevice;
      props.location.id = dev;
      cudaMemPool_t pool{};
      CALM_CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
      std::uint64_t keep = ~std::uint64_t(0);
      CALM_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
      pools[dev] = pool;
    }
    return pools[dev];
  }
  static void* allocate_async(std::size_t bytes, cudaStream_t s) {
    void* p = nullptr;
    CALM_CUDA_CHECK(cudaMallocFromPoolAsync(&p, bytes, workspace_pool(), s));
    return p;
  }
  static void release_async(void* p, cudaStream_t s) noexcept {
    if (p) (void)cudaFreeAsync(p, s);
  }
  static void fill_async(void* d, int byte, std::size_t bytes, cudaStream_t s) { CALM_CUDA_CHECK(cudaMemsetAsync(d, byte, bytes, s)); }
  /// Device bytes to the host, waiting for them: through a pinned buffer of this thread (a copy to
  /// pageable memory would be staged by the driver, several microseconds more).
  static void to_host_wait(void* h, void const* d, std::size_t bytes, cudaStream_t s) {
    thread_local std::size_t size = 0;
    thread_local void* pinned = nullptr;
    if (bytes > size) {
      if (pinned) (void)cudaFreeHost(pinned);
      pinned = nullptr;
      size = 0;
      CALM_CUDA_CHECK(cudaMallocHost(&pinned, bytes));
      size = bytes;
    }
    CALM_CUDA_CHECK(cudaMemcpyAsync(pinned, d, bytes, cudaMemcpyDeviceToHost, s));
    CALM_CUDA_CHECK(cudaStreamSynchronize(s));
    std::memcpy(h, pinned, bytes);
  }
};

using block = gpu::block<warp, runtime>;
template <class T>
using device_buffer = gpu::device_buffer<T, runtime>;

/// body(warp, i) for i in [0, n): a plain 1-D grid or Kokkos's RangePolicy shape (see calm::gpu).
template <class Body>
void for_each_index(index_t n, Body body, launch_shape shape = launch_shape::linear, cudaStream_t stream = 0) {
  gpu::for_each_index<warp, runtime>(n, body, shape, stream);
}
/// body(block) for each block, with scratch_bytes of shared memory (up to the opt-in limit).
template <class Body>
void for_each_block(index_t blocks, int threads, std::size_t scratch_bytes, Body body, cudaStream_t stream = 0) {
  gpu::for_each_block<warp, runtime>(blocks, threads, scratch_bytes, body, stream);
}

/// Wait for the device and surface any error of the kernels launched before.
inline void synchronize() { CALM_CUDA_CHECK(cudaDeviceSynchronize()); }

inline std::string device_name() {
  int dev = 0;
  cudaDeviceProp p{};
  CALM_CUDA_CHECK(cudaGetDevice(&dev));
  CALM_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  return std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " +
         std::to_string(p.multiProcessorCount) + " SMs)";
}

}  // namespace cuda
}  // namespace calm
