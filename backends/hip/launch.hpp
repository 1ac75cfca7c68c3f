// calm/backends/hip/launch.hpp: launch helpers on AMD GPUs: a per-index body as a plain 1-D grid or
// in Kokkos's RangePolicy shape, and block programs with dynamic LDS as block-local memory.
#pragma once

#include <algorithm>
#include <climits>
#include <string>

#include "../../core/error.hpp"
#include "../../core/launch.hpp"
#include "check.hpp"
#include "warp.hpp"

namespace calm {
namespace hip {

constexpr int default_block_threads = 256;
constexpr int max_block_threads = 1024;
constexpr int kokkos_range_max_blocks = 1024;

/// One block of a block program (see calm::openmp::block for the contract).
class block {
 public:
  __device__ block(index_t index, index_t count, void* scratch) : index_(index), count_(count), scratch_(scratch) {}
  __device__ index_t index() const { return index_; }
  __device__ index_t count() const { return count_; }
  __device__ int threads() const { return static_cast<int>(blockDim.x); }
  template <class T>
  __device__ T* scratch() const { return static_cast<T*>(scratch_); }
  __device__ void sync() const { __syncthreads(); }
  template <class F>
  __device__ void for_each_warp(F&& f) const { f(warp::current(), static_cast<int>(threadIdx.x)); }

 private:
  index_t index_, count_;
  void* scratch_;
};

namespace detail {

template <class Body>
__global__ void linear_kernel(index_t n, Body body) {
  index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) body(warp::current(), i);
}

template <class Body>
__global__ void kokkos_range_kernel(index_t n, Body body) {
  index_t const stride = static_cast<index_t>(gridDim.x) * blockDim.y;
  for (index_t i = static_cast<index_t>(blockIdx.x) * blockDim.y + threadIdx.y; i < n; i += stride)
    body(warp::current(), i);
}

template <class Body>
__global__ void block_kernel(index_t count, Body body) {
  extern __shared__ uint4 calm_block_scratch[];
  for (index_t b = blockIdx.x; b < count; b += gridDim.x) {
    body(block(b, count, calm_block_scratch));
    __syncthreads();
  }
}

inline void check_launch(char const* what) {
  hipError_t e = hipGetLastError();
  if (e != hipSuccess) check(e, what, __FILE__, __LINE__);
}

}  // namespace detail

template <class Body>
void for_each_index(index_t n, Body body, launch_shape shape = launch_shape::linear, hipStream_t stream = nullptr) {
  require(n >= 0, errc::invalid_argument, "for_each_index: n = " + std::to_string(n) + " is negative");
  if (n == 0) return;
  index_t const want = (n + default_block_threads - 1) / default_block_threads;
  if (shape == launch_shape::linear) {
    require(want <= INT_MAX, errc::out_of_range, "for_each_index: n too large for a linear launch");
    detail::linear_kernel<<<static_cast<unsigned>(want), default_block_threads, 0, stream>>>(n, body);
    detail::check_launch("for_each_index (linear) launch");
  } else {
    int const blocks = static_cast<int>(std::min<index_t>(want, kokkos_range_max_blocks));
    detail::kokkos_range_kernel<<<blocks, dim3(1, default_block_threads, 1), 0, stream>>>(n, body);
    detail::check_launch("for_each_index (kokkos_range) launch");
  }
}

template <class Body>
void for_each_block(index_t blocks, int threads, std::size_t scratch_bytes, Body body, hipStream_t stream = nullptr) {
  require(blocks >= 0, errc::invalid_argument, "for_each_block: negative block count");
  require(threads >= 1 && threads <= max_block_threads, errc::invalid_argument,
          "for_each_block: threads per block must be in [1, 1024], got " + std::to_string(threads));
  int dev = 0, lds = 0;
  CALM_HIP_CHECK(hipGetDevice(&dev));
  CALM_HIP_CHECK(hipDeviceGetAttribute(&lds, hipDeviceAttributeMaxSharedMemoryPerBlock, dev));
  require(scratch_bytes <= static_cast<std::size_t>(lds), errc::out_of_range,
          "for_each_block: " + std::to_string(scratch_bytes) + " bytes of LDS exceed this device's " + std::to_string(lds));
  if (blocks == 0) return;
  unsigned const grid = static_cast<unsigned>(std::min<index_t>(blocks, INT_MAX));
  detail::block_kernel<<<grid, threads, scratch_bytes, stream>>>(blocks, body);
  detail::check_launch("for_each_block launch");
}

}  // namespace hip
}  // namespace calm
