// calm/backends/cuda/launch.hpp: launch helpers on NVIDIA GPUs: a per-index body as a plain 1-D grid
// or in Kokkos's RangePolicy shape, and block programs with dynamic shared memory as block-local memory.
#pragma once

#include <algorithm>
#include <climits>
#include <string>

#include "../../core/error.hpp"
#include "../../core/launch.hpp"
#include "check.hpp"
#include "warp.hpp"

namespace calm {
namespace cuda {

constexpr int default_block_threads = 256;
constexpr int max_block_threads = 1024;
/// Grid cap of the Kokkos-shaped launch: enough blocks to fill an H200, and a grid-stride loop beyond.
constexpr int kokkos_range_max_blocks = 1024;

/// One block of a block program (see calm::openmp::block for the contract): code outside
/// for_each_warp runs on every thread and must be uniform; sync() is __syncthreads().
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

// Kokkos's RangePolicy on CUDA: block (1, N, 1), so threadIdx.x == 0 and the lane is threadIdx.y % 32.
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
    __syncthreads();  // the next logical block reuses the scratch
  }
}

inline void check_launch(char const* what) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) check(e, what, __FILE__, __LINE__);
}

}  // namespace detail

/// body(warp, i) for i in [0, n) on the GPU; warps are 32 consecutive indices, the last one ragged.
/// Asynchronous on `stream`; launch errors throw at once, execution errors at synchronize().
template <class Body>
void for_each_index(index_t n, Body body, launch_shape shape = launch_shape::linear, cudaStream_t stream = 0) {
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

/// body(block) for each of `blocks` blocks of `threads` threads with scratch_bytes of shared memory.
template <class Body>
void for_each_block(index_t blocks, int threads, std::size_t scratch_bytes, Body body, cudaStream_t stream = 0) {
  require(blocks >= 0, errc::invalid_argument, "for_each_block: negative block count");
  require(threads >= 1 && threads <= max_block_threads, errc::invalid_argument,
          "for_each_block: threads per block must be in [1, 1024], got " + std::to_string(threads));
  int dev = 0, optin = 0;
  CALM_CUDA_CHECK(cudaGetDevice(&dev));
  CALM_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  require(scratch_bytes <= static_cast<std::size_t>(optin), errc::out_of_range,
          "for_each_block: " + std::to_string(scratch_bytes) + " bytes of shared memory exceed this device's " +
              std::to_string(optin));
  if (blocks == 0) return;
  auto kernel = detail::block_kernel<Body>;
  if (scratch_bytes > 48 * 1024)
    CALM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(scratch_bytes)));
  unsigned const grid = static_cast<unsigned>(std::min<index_t>(blocks, INT_MAX));
  kernel<<<grid, threads, scratch_bytes, stream>>>(blocks, body);
  detail::check_launch("for_each_block launch");
}

}  // namespace cuda
}  // namespace calm
