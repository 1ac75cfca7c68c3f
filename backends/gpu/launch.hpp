// SPDX-License-Identifier: Apache-2.0
// calm/backends/gpu/launch.hpp: the launch helpers of the CUDA and HIP backends, written once (both
// compile the same kernel language) against the backend's Warp and Runtime (its API calls, runtime.hpp).
// Include through backends/cuda or backends/hip, which include their runtime headers first.
#pragma once

#include <algorithm>
#include <climits>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>

#include "../../core/error.hpp"
#include "../../core/exec.hpp"
#include "../../core/launch.hpp"

namespace calm {
namespace gpu {

constexpr int default_block_threads = 256;
constexpr int max_block_threads = 1024;
/// Grid cap of the Kokkos-shaped launch: enough blocks to fill an H200, and a grid-stride loop beyond.
constexpr int kokkos_range_max_blocks = 1024;

/// One block of a block program (see calm::openmp::block for the contract): code outside
/// for_each_warp runs on every thread and must be uniform; sync() is __syncthreads().
template <class Warp, class Runtime>
class block {
 public:
  __device__ block(index_t index, index_t count, void* scratch) : index_(index), count_(count), scratch_(scratch) {}
  __device__ index_t index() const { return index_; }
  __device__ index_t count() const { return count_; }
  __device__ int threads() const { return static_cast<int>(blockDim.x); }
  template <class T>
  __device__ T* scratch() const { return static_cast<T*>(scratch_); }
  __device__ void sync() const { __syncthreads(); }
  /// In a program that waits for the launch before it itself (awaits_prior_launch_of): waits until that
  /// launch has ended and its writes are seen (every thread, before it reads anything that launch wrote).
  __device__ void await_prior_launch() const { Runtime::await_prior_launch(); }
  /// Lets the next launch on the stream begin now where it overlaps this one (its blocks wait for this one to end).
  __device__ void allow_next_launch() const { Runtime::allow_next_launch(); }
  /// f(tile) for tiles index(), index() + count(), ...: neighbouring blocks read neighbouring tiles.
  template <class F>
  __device__ void for_each_tile(index_t tiles, F&& f) const {
    for (index_t t = index_; t < tiles; t += count_) f(t);
  }
  template <class F>
  __device__ void for_each_warp(F&& f) const { f(Warp::current(), static_cast<int>(threadIdx.x)); }

 private:
  index_t index_, count_;
  void* scratch_;
};

namespace detail {

template <class Warp, class Body>
__global__ void linear_kernel(index_t n, Body body) {
  index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) body(Warp::current(), i);
}

// Kokkos's RangePolicy: block (1, N, 1), so threadIdx.x == 0 and only the hardware lane id is the lane.
template <class Warp, class Body>
__global__ void kokkos_range_kernel(index_t n, Body body) {
  index_t const stride = static_cast<index_t>(gridDim.x) * blockDim.y;
  for (index_t i = static_cast<index_t>(blockIdx.x) * blockDim.y + threadIdx.y; i < n; i += stride)
    body(Warp::current(), i);
}

template <class Warp, class Runtime, class Body>
__device__ void run_blocks(index_t count, Body const& body) {
  extern __shared__ uint4 calm_block_scratch[];
  // launched to overlap the launch before it: wait for it (else a no-op), unless the program waits itself;
  // a block with no logical block waits here too, so that this launch never ends before the one before it
  // (the launch after it, waiting for this one, counts on that)
  if constexpr (!awaits_prior_launch_of<Body>::value) Runtime::await_prior_launch();
  else if (static_cast<index_t>(blockIdx.x) >= count) Runtime::await_prior_launch();
  for (index_t b = blockIdx.x; b < count; b += gridDim.x) {
    body(block<Warp, Runtime>(b, count, calm_block_scratch));
    __syncthreads();  // the next logical block reuses the scratch
  }
}

template <class Warp, class Runtime, class Body>
__global__ void block_kernel(index_t count, Body body) {
  run_blocks<Warp, Runtime>(count, body);
}

/// block_kernel for a program that asks for Resident blocks of Threads threads per multiprocessor
/// (resident_1024_blocks_of, resident_512_blocks_of): its registers capped to fit them.
template <class Warp, class Runtime, class Body, int Threads, int Resident>
__global__ void __launch_bounds__(Threads, Resident) bounded_block_kernel(index_t count, Body body) {
  run_blocks<Warp, Runtime>(count, body);
}

/// The kernel of a block program: bounded where it asks to be.
template <class Warp, class Runtime, class Body>
constexpr auto block_kernel_of() {
  constexpr int resident_1024 = resident_1024_blocks_of<Body>::value;
  constexpr int resident_512 = resident_512_blocks_of<Body>::value;
  static_assert(resident_1024 == 0 || resident_512 == 0, "a block program asks for resident blocks of 1,024 threads or of 512, not both");
  if constexpr (resident_1024 > 0) return &bounded_block_kernel<Warp, Runtime, Body, 1024, resident_1024>;
  else if constexpr (resident_512 > 0) return &bounded_block_kernel<Warp, Runtime, Body, 512, resident_512>;
  else return &block_kernel<Warp, Runtime, Body>;
}


/// What the launch helpers ask the runtime about one kernel, asked once per kernel and device (each
/// query costs a microsecond or more, a bulk call makes several): its thread limit, the block-local
/// memory it has been allowed, and its occupancy at the last shape it was launched with. Kept per
/// kernel address, not per kernel type: nvcc 13 gives each translation unit its own host stub for a
/// kernel template (internal linkage, --static-global-template-stub), so one kernel type can name
/// several kernels, each with its own block-local limit to raise. One registry for every kernel of a
/// runtime (addresses, not types), so that a call site compiles it once, not once per kernel.
template <class Runtime>
struct kernel_facts {
  void const* kernel = nullptr;
  int device = -1, most_threads = 0, occ_threads = 0, occ_per_sm = 0;
  std::size_t allowed = 48 * 1024, occ_bytes = 0;

  static std::mutex& lock() {
    static std::mutex m;
    return m;
  }
  /// The facts of `kernel` on the current device (call with lock() held).
  static kernel_facts& current(void const* kernel) {
    static std::deque<kernel_facts> known;  // a deque: references stay valid as it grows
    int const dev = Runtime::current_device();
    for (kernel_facts& f : known)
      if (f.kernel == kernel && f.device == dev) return f;
    kernel_facts f;
    f.kernel = kernel;
    f.device = dev;
    f.most_threads = Runtime::max_threads(kernel);
    known.push_back(f);
    return known.back();
  }
  /// The thread limit; raises the kernel's block-local limit to `bytes` if it is below.
  static int prepare(void const* kernel, std::size_t bytes) {
    std::lock_guard<std::mutex> hold(lock());
    kernel_facts& f = current(kernel);
    if (bytes > f.allowed) {
      Runtime::allow_shared_bytes(kernel, bytes);
      f.allowed = bytes;
    }
    return f.most_threads;
  }
  static int occupancy(void const* kernel, int threads, std::size_t bytes) {
    std::lock_guard<std::mutex> hold(lock());
    kernel_facts& f = current(kernel);
    if (f.occ_threads != threads || f.occ_bytes != bytes) {
      f.occ_per_sm = Runtime::occupancy(kernel, threads, bytes);
      f.occ_threads = threads;
      f.occ_bytes = bytes;
    }
    return f.occ_per_sm;
  }
};

/// A kernel's address as the runtime's queries take it.
template <class Kernel>
void const* address_of(Kernel kernel) {
  return reinterpret_cast<void const*>(kernel);
}

/// The checks every block launch makes before it asks about its kernel: threads in [1, 1024] and
/// scratch_bytes within the device's block-local memory; `who` names the caller in the error.
template <class Runtime>
void check_block_shape(char const* who, int threads, std::size_t scratch_bytes) {
  require(threads >= 1 && threads <= max_block_threads, errc::invalid_argument,
          [&] { return std::string(who) + ": threads per block must be in [1, 1024], got " + std::to_string(threads); });
  std::size_t const limit = Runtime::max_block_shared_bytes();
  require(scratch_bytes <= limit, errc::out_of_range,
          [&] { return std::string(who) + ": " + std::to_string(scratch_bytes) + " bytes of block-local memory exceed this device's " +
              std::to_string(limit); });
}

/// resident_blocks for `kernel`: raises its block-local limit, lowers `threads` to what its registers
/// allow, and returns multiprocessors times its occupancy, at most max_blocks and at least 1.
template <class Runtime>
index_t resident_grid(void const* kernel, index_t max_blocks, int& threads, std::size_t scratch_bytes) {
  check_block_shape<Runtime>("resident_blocks (for_each_resident_block)", threads, scratch_bytes);
  using facts = kernel_facts<Runtime>;
  threads = std::min(threads, facts::prepare(kernel, scratch_bytes));  // fewer threads if its registers demand it
  int const per_sm = std::max(1, facts::occupancy(kernel, threads, scratch_bytes));
  return std::max<index_t>(1, std::min<index_t>(max_blocks, static_cast<index_t>(per_sm) * Runtime::multiprocessors()));
}

}  // namespace detail

/// body(warp, i) for i in [0, n); warps are consecutive indices, the last one ragged. Asynchronous on
/// `stream`; launch errors throw at once, execution errors at synchronize().
template <class Warp, class Runtime, class Body>
void for_each_index(index_t n, Body body, launch_shape shape, typename Runtime::stream_t stream) {
  require(n >= 0, errc::invalid_argument, [&] { return "for_each_index: n = " + std::to_string(n) + " is negative"; });
  if (n == 0) return;
  index_t const want = (n + default_block_threads - 1) / default_block_threads;
  if (shape == launch_shape::linear) {
    require(want <= INT_MAX, errc::out_of_range, "for_each_index: n too large for a linear launch");
    detail::linear_kernel<Warp><<<static_cast<unsigned>(want), default_block_threads, 0, stream>>>(n, body);
    Runtime::check_launch("for_each_index (linear) launch");
  } else {
    int const blocks = static_cast<int>(std::min<index_t>(want, kokkos_range_max_blocks));
    detail::kokkos_range_kernel<Warp><<<blocks, dim3(1, default_block_threads, 1), 0, stream>>>(n, body);
    Runtime::check_launch("for_each_index (kokkos_range) launch");
  }
}

/// body(block) for each of `blocks` blocks of `threads` threads with scratch_bytes of block-local memory;
/// overlap: the launch may start while the one before it on the stream ends (Runtime::launch).
template <class Warp, class Runtime, class Body>
void for_each_block(index_t blocks, int threads, std::size_t scratch_bytes, Body body, typename Runtime::stream_t stream, bool overlap = false) {
  require(blocks >= 0, errc::invalid_argument, "for_each_block: negative block count");
  detail::check_block_shape<Runtime>("for_each_block", threads, scratch_bytes);
  if (blocks == 0) return;
  auto kernel = detail::block_kernel_of<Warp, Runtime, Body>();
  int const most = detail::kernel_facts<Runtime>::prepare(detail::address_of(kernel), scratch_bytes);
  require(threads <= most, errc::out_of_range,
          [&] { return "for_each_block: this block program's registers allow at most " + std::to_string(most) + " threads per block, not " +
              std::to_string(threads); });
  unsigned const grid = static_cast<unsigned>(std::min<index_t>(blocks, INT_MAX));
  Runtime::launch(kernel, grid, static_cast<unsigned>(threads), scratch_bytes, stream, overlap, blocks, body);
  Runtime::check_launch("for_each_block launch");
}

/// The blocks for_each_resident_block launches for Body at this shape: multiprocessors times the
/// occupancy of its kernel, at most max_blocks and at least 1. Lowers `threads` where the program's
/// registers allow fewer per block.
template <class Warp, class Runtime, class Body>
index_t resident_blocks(index_t max_blocks, int& threads, std::size_t scratch_bytes) {
  return detail::resident_grid<Runtime>(detail::address_of(detail::block_kernel_of<Warp, Runtime, Body>()), max_blocks, threads, scratch_bytes);
}

/// As for_each_block with as many blocks as run at once (multiprocessors times the occupancy of this
/// kernel at this shape), at most max_blocks and at least 1: for block programs that loop over tiles.
/// threads is an upper bound: a program whose registers allow fewer per block gets fewer (it reads
/// blk.threads()).
template <class Warp, class Runtime, class Body>
void for_each_resident_block(index_t max_blocks, int threads, std::size_t scratch_bytes, Body body, typename Runtime::stream_t stream,
                             bool overlap = false) {
  auto kernel = detail::block_kernel_of<Warp, Runtime, Body>();  // one address for the limits raised and the launch
  index_t const blocks = detail::resident_grid<Runtime>(detail::address_of(kernel), max_blocks, threads, scratch_bytes);  // may lower threads
  Runtime::launch(kernel, static_cast<unsigned>(blocks), static_cast<unsigned>(threads), scratch_bytes, stream, overlap, blocks, body);
  Runtime::check_launch("for_each_resident_block launch");
}

/// The execution policy of a GPU backend (core/exec.hpp): launches go to `stream`, asynchronously.
template <class Warp, class Runtime>
struct exec {
  using warp_type = Warp;
  static constexpr device_family family = Runtime::family;
  static constexpr bool has_clusters = false;
  /// Whether block programs should load 16-byte chunks (four 4-byte items) per thread.
  static constexpr bool vector_loads = true;
  /// Blocks are not CPU threads: strategy::thread_private runs as privatize (algorithms/bulk/scatter.hpp).
  static constexpr bool thread_tables = false;
  typename Runtime::stream_t stream{};
  /// Whether each block launch may start while the launch before it on the stream ends, its blocks
  /// waiting for that one to finish (and its writes to be seen) before they begin: the same order, the
  /// next launch's set-up hidden behind the end of the last (CUDA's programmatic dependent launch on
  /// sm_90 and newer; elsewhere an ordinary launch). Off by default; calm turns it on for the launches
  /// behind a choice made on the device (algorithms/choice/device_choice.hpp, overlapping).
  bool overlap_launches = false;
  std::size_t block_local_bytes() const { return Runtime::max_block_shared_bytes(); }
  /// What privatize's replication rule may spend on copies of one table: 58% of a block's shared
  /// memory (132 KiB on H100/H200), from the replication sweep (algorithms/bulk/privatize.hpp).
  std::size_t replication_budget_bytes() const { return block_local_bytes() / 100 * 58; }
  /// Two blocks per multiprocessor: what a block program with a large table gets (the launch computes the true number).
  int resident_blocks_hint() const { return 2 * Runtime::multiprocessors(); }
  template <class Body>
  void for_each_block(index_t blocks, int threads, std::size_t scratch_bytes, Body body) const {
    gpu::for_each_block<Warp, Runtime>(blocks, threads, scratch_bytes, body, stream, overlap_launches);
  }
  template <class Body>
  void for_each_resident_block(index_t max_blocks, int threads, std::size_t scratch_bytes, Body body) const {
    gpu::for_each_resident_block<Warp, Runtime>(max_blocks, threads, scratch_bytes, body, stream, overlap_launches);
  }
  template <class Body>
  index_t resident_blocks(index_t max_blocks, int& threads, std::size_t scratch_bytes, Body const&) const {
    return gpu::resident_blocks<Warp, Runtime, Body>(max_blocks, threads, scratch_bytes);
  }
  void synchronize() const { Runtime::synchronize(stream); }
  /// f(i) for i < count (at most 16), each launching through this exec, then one wait: seconds[i]
  /// receives the device's time for f(i)'s work.
  template <class F>
  void seconds_of_each(int count, F&& f, double* seconds) const {
    Runtime::seconds_of_each(count, stream, f, seconds);
  }
  /// Device memory for a bulk call's workspace, ordered on the stream.
  /// The user's memory for workspaces (core/exec.hpp); empty: the runtime's stream-ordered pool.
  workspace_resource workspace{};
  void* allocate(std::size_t bytes) const {
    if (bytes == 0) return nullptr;
    return workspace.empty() ? Runtime::allocate_async(bytes, stream) : calm::detail::allocate_from(workspace, bytes, static_cast<void*>(stream));
  }
  void release(void* p, std::size_t bytes) const noexcept {
    if (p == nullptr) return;
    if (workspace.empty()) Runtime::release_async(p, stream);
    else workspace.release(p, bytes, static_cast<void*>(stream), workspace.context);
  }
  void fill(void* p, int byte, std::size_t bytes) const {
    if (bytes) Runtime::fill_async(p, byte, bytes, stream);
  }
  /// Copies device bytes to the host and waits for them.
  void to_host(void* h, void const* d, std::size_t bytes) const {
    if (bytes) Runtime::to_host_wait(h, d, bytes, stream);
    else synchronize();
  }
};

}  // namespace gpu
}  // namespace calm
