// SPDX-License-Identifier: Apache-2.0
// calm/backends/hip/runtime.hpp: the HIP runtime calls behind the shared GPU launch helpers and device
// memory (backends/gpu/), each checked, and the backend's launch and memory API built on them.
#pragma once

#include <hip/hip_runtime.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#include "../gpu/launch.hpp"
#include "../gpu/memory.hpp"
#include "check.hpp"
#include "warp.hpp"

namespace calm {
namespace hip {

struct runtime {
  using stream_t = hipStream_t;
  static constexpr device_family family = device_family::amd_gpu;
  static void check_launch(char const* what) {
    hipError_t const e = hipGetLastError();
    if (e != hipSuccess) detail::check(e, what, __FILE__, __LINE__);
  }
  static int current_device() {
    int dev = 0;
    CALM_HIP_CHECK(hipGetDevice(&dev));
    return dev;
  }
  static std::size_t max_block_shared_bytes() {
    int dev = 0, lds = 0;
    CALM_HIP_CHECK(hipGetDevice(&dev));
    CALM_HIP_CHECK(hipDeviceGetAttribute(&lds, hipDeviceAttributeMaxSharedMemoryPerBlock, dev));
    return static_cast<std::size_t>(lds);
  }
  template <class Kernel>
  static void allow_shared_bytes(Kernel, std::size_t) {}  // LDS needs no opt-in
  static int multiprocessors() {
    int dev = 0, cus = 0;
    CALM_HIP_CHECK(hipGetDevice(&dev));
    CALM_HIP_CHECK(hipDeviceGetAttribute(&cus, hipDeviceAttributeMultiprocessorCount, dev));
    return cus;
  }
  template <class Kernel>
  static int occupancy(Kernel kernel, int threads, std::size_t shared_bytes) {
    int blocks = 0;
    CALM_HIP_CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, shared_bytes));
    return blocks;
  }
  /// kernel<<<grid, threads, bytes, s>>>(args...). HIP has no launch that overlaps the one before it:
  /// overlap is ignored (each launch starts after the last one ends, as it would anyway).
  template <class... Params, class... Args>
  static void launch(void (*kernel)(Params...), unsigned grid, unsigned threads, std::size_t bytes, hipStream_t s, bool /*overlap*/,
                     Args const&... args) {
    kernel<<<grid, threads, bytes, s>>>(args...);
  }
  /// Nothing to wait for: no HIP launch overlaps the one before it.
  __device__ static void await_prior_launch() {}
  __device__ static void allow_next_launch() {}
  static void synchronize(hipStream_t s) { CALM_HIP_CHECK(hipStreamSynchronize(s)); }
  /// f(i) for i < count (at most 16), each launching on s; then one wait, and seconds[i] receives the
  /// device's time from the end of f(i - 1)'s work to the end of f(i)'s (events recorded between them).
  template <class F>
  static void seconds_of_each(int count, hipStream_t s, F&& f, double* seconds) {
    require(count >= 0 && count <= 16, errc::invalid_argument, "seconds_of_each: at most 16 timings");
    struct events {
      hipEvent_t at[17] = {};
      int made = 0;
      explicit events(int n) {
        for (; made < n; ++made) CALM_HIP_CHECK(hipEventCreate(&at[made]));
      }
      ~events() {
        for (int i = 0; i < made; ++i) (void)hipEventDestroy(at[i]);
      }
    } const e(count + 1);
    CALM_HIP_CHECK(hipEventRecord(e.at[0], s));
    for (int i = 0; i < count; ++i) {
      f(i);
      CALM_HIP_CHECK(hipEventRecord(e.at[i + 1], s));
    }
    CALM_HIP_CHECK(hipEventSynchronize(e.at[count]));
    for (int i = 0; i < count; ++i) {
      float ms = 0.0f;
      CALM_HIP_CHECK(hipEventElapsedTime(&ms, e.at[i], e.at[i + 1]));
      seconds[i] = ms * 1e-3;
    }
  }
  /// The most threads per block this kernel launches with (its registers may allow fewer than 1,024).
  template <class Kernel>
  static int max_threads(Kernel kernel) {
    hipFuncAttributes a{};
    CALM_HIP_CHECK(hipFuncGetAttributes(&a, reinterpret_cast<void const*>(kernel)));
    return a.maxThreadsPerBlock;
  }
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    CALM_HIP_CHECK(hipMalloc(&p, bytes));
    return p;
  }
  static void release(void* p) noexcept {
    if (p) (void)hipFree(p);
  }
  static void to_device(void* d, void const* h, std::size_t bytes) { CALM_HIP_CHECK(hipMemcpy(d, h, bytes, hipMemcpyHostToDevice)); }
  static void to_host(void* h, void const* d, std::size_t bytes) { CALM_HIP_CHECK(hipMemcpy(h, d, bytes, hipMemcpyDeviceToHost)); }
  static void fill(void* d, int byte, std::size_t bytes) { CALM_HIP_CHECK(hipMemset(d, byte, bytes)); }
  // the workspace of a bulk call: stream-ordered, from calm's own pool of the current device, which
  // keeps its memory between calls (release threshold: never), so allocation costs no mapping
  static hipMemPool_t workspace_pool() {
    static hipMemPool_t pools[64] = {};
    static std::mutex lock;
    std::lock_guard<std::mutex> hold(lock);
    int dev = 0;
    CALM_HIP_CHECK(hipGetDevice(&dev));
    require(dev >= 0 && dev < 64, errc::unsupported, "calm: device ordinals above 63 have no workspace pool");
    if (!pools[dev]) {
      hipMemPoolProps props{};
      props.allocType = hipMemAllocationTypePinned;
      props.location.type = hipMemLocationTypeDevice;
      props.location.id = dev;
      hipMemPool_t pool{};
      CALM_HIP_CHECK(hipMemPoolCreate(&pool, &props));
      std::uint64_t keep = ~std::uint64_t(0);
      CALM_HIP_CHECK(hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &keep));
      pools[dev] = pool;
    }
    return pools[dev];
  }
  static void* allocate_async(std::size_t bytes, hipStream_t s) {
    void* p = nullptr;
    CALM_HIP_CHECK(hipMallocFromPoolAsync(&p, bytes, workspace_pool(), s));
    return p;
  }
  static void release_async(void* p, hipStream_t s) noexcept {
    if (p) (void)hipFreeAsync(p, s);
  }
  static void fill_async(void* d, int byte, std::size_t bytes, hipStream_t s) { CALM_HIP_CHECK(hipMemsetAsync(d, byte, bytes, s)); }
  /// Device bytes to the host, waiting for them: through a pinned buffer of this thread (a copy to
  /// pageable memory would be staged by the driver, several microseconds more).
  static void to_host_wait(void* h, void const* d, std::size_t bytes, hipStream_t s) {
    thread_local std::size_t size = 0;
    thread_local void* pinned = nullptr;
    if (bytes > size) {
      if (pinned) (void)hipHostFree(pinned);
      pinned = nullptr;
      size = 0;
      CALM_HIP_CHECK(hipHostMalloc(&pinned, bytes, 0));
      size = bytes;
    }
    CALM_HIP_CHECK(hipMemcpyAsync(pinned, d, bytes, hipMemcpyDeviceToHost, s));
    CALM_HIP_CHECK(hipStreamSynchronize(s));
    std::memcpy(h, pinned, bytes);
  }
};

using block = gpu::block<warp, runtime>;
using exec = gpu::exec<warp, runtime>;
template <class T>
using device_buffer = gpu::device_buffer<T, runtime>;

template <class Body>
void for_each_index(index_t n, Body body, launch_shape shape = launch_shape::linear, hipStream_t stream = nullptr) {
  gpu::for_each_index<warp, runtime>(n, body, shape, stream);
}
template <class Body>
void for_each_block(index_t blocks, int threads, std::size_t scratch_bytes, Body body, hipStream_t stream = nullptr) {
  gpu::for_each_block<warp, runtime>(blocks, threads, scratch_bytes, body, stream);
}

inline void synchronize() { CALM_HIP_CHECK(hipDeviceSynchronize()); }

inline std::string device_name() {
  int dev = 0;
  hipDeviceProp_t p{};
  CALM_HIP_CHECK(hipGetDevice(&dev));
  CALM_HIP_CHECK(hipGetDeviceProperties(&p, dev));
  return std::string(p.name) + " (" + std::string(p.gcnArchName) + ", " + std::to_string(p.multiProcessorCount) + " CUs)";
}

}  // namespace hip
}  // namespace calm
