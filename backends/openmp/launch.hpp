// SPDX-License-Identifier: Apache-2.0
// calm/backends/openmp/launch.hpp: launch helpers on the host. Warps of W consecutive indices run on
// OpenMP threads; a block program runs each block on one thread with its own block-local buffer.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "../../core/error.hpp"
#include "../../core/exec.hpp"
#include "../../core/launch.hpp"
#include "warp.hpp"
#include "workspace_cache.hpp"

namespace calm {
namespace openmp {

/// Largest block program the host runs (threads per block), matching the GPUs' 1024.
constexpr int max_block_threads = 1024;
/// Largest block-local buffer per block on the host (the per-thread copy stays cache-sized in use).
constexpr std::size_t max_block_scratch_bytes = std::size_t(64) << 20;

/// One block of a block program. Code outside for_each_warp runs once per block and must be uniform;
/// phases separated by sync() see each other's block-local writes (on a GPU sync() is a barrier).
template <int W>
class block {
 public:
  block(index_t index, index_t count, int threads, void* scratch)
      : index_(index), count_(count), threads_(threads), scratch_(scratch) {}

  index_t index() const { return index_; }
  index_t count() const { return count_; }
  int threads() const { return threads_; }
  /// The block-local buffer (as many bytes as the launch asked for, 64-byte aligned, uninitialised).
  template <class T>
  T* scratch() const { return static_cast<T*>(scratch_); }
  /// f(tile) for this block's share of tiles 0 .. tiles-1: one contiguous range per block, so that
  /// each thread streams through memory in order (the prefetchers follow it).
  template <class F>
  void for_each_tile(index_t tiles, F&& f) const {
    index_t const per = tiles / count_, extra = tiles % count_;
    index_t const begin = index_ * per + std::min(index_, extra), end = begin + per + (index_ < extra ? 1 : 0);
    for (index_t t = begin; t < end; ++t) f(t);
  }
  /// A barrier between phases. The host runs the phases of a block in order, so there is nothing to wait for.
  void sync() const {}
  /// The host runs launches one after the other: nothing to wait for, nothing to let begin early.
  void await_prior_launch() const {}
  void allow_next_launch() const {}
  /// f(warp, thread) for each warp of the block; thread is the lane's index in the block. The last
  /// warp is ragged when threads() is not a multiple of W.
  template <class F>
  void for_each_warp(F&& f) const {
    using mask_t = typename warp<W>::lane_mask;
    for (int base = 0; base < threads_; base += W) {
      lane_array<int, W> tid;
      CALM_SIMD for (int i = 0; i < W; ++i) tid.v[i] = base + i;
      f(warp<W>{first_lanes<mask_t>(std::min(W, threads_ - base)), index_ * ((threads_ + W - 1) / W) + base / W}, tid);
    }
  }

 private:
  index_t index_, count_;
  int threads_;
  void* scratch_;
};

namespace detail {
struct free_deleter {
  void operator()(void* p) const { std::free(p); }
};
inline std::unique_ptr<void, free_deleter> aligned_buffer(std::size_t bytes, char const* what = "a block-local buffer") {
  if (bytes == 0) return nullptr;
  void* p = bytes <= (std::size_t(1) << 62) ? std::aligned_alloc(64, (bytes + 63) / 64 * 64) : nullptr;
  if (!p) raise_error(error(errc::backend_failure, std::string("out of host memory for ") + what + " of " + std::to_string(bytes) + " bytes"));
  return std::unique_ptr<void, free_deleter>(p);
}
}  // namespace detail

/// body(warp, i) for i in [0, n), warps formed from W consecutive indices (the last one ragged),
/// warps spread over OpenMP threads. The shape matters only on GPUs.
template <int W = CALM_HOST_WARP_SIZE, class Body>
void for_each_index(index_t n, Body body, launch_shape = launch_shape::linear) {
  require(n >= 0, errc::invalid_argument, [&] { return "for_each_index: n = " + std::to_string(n) + " is negative"; });
  using mask_t = typename warp<W>::lane_mask;
  index_t const warps = (n + W - 1) / W;
#pragma omp parallel for schedule(static)
  for (index_t wi = 0; wi < warps; ++wi) {
    index_t const base = wi * W;
    lane_array<index_t, W> idx;
    CALM_SIMD for (int i = 0; i < W; ++i) idx.v[i] = base + i;
    body(warp<W>{first_lanes<mask_t>(static_cast<int>(std::min<index_t>(W, n - base))), wi}, idx);
  }
}

/// body(block) for each of `blocks` blocks of `threads` threads with scratch_bytes of block-local memory.
template <int W = CALM_HOST_WARP_SIZE, class Body>
void for_each_block(index_t blocks, int threads, std::size_t scratch_bytes, Body body) {
  require(blocks >= 0, errc::invalid_argument, "for_each_block: negative block count");
  require(threads >= 1 && threads <= max_block_threads, errc::invalid_argument,
          [&] { return "for_each_block: threads per block must be in [1, 1024], got " + std::to_string(threads); });
  require(scratch_bytes <= max_block_scratch_bytes, errc::out_of_range,
          [&] { return "for_each_block: " + std::to_string(scratch_bytes) + " bytes of block-local memory exceed the host limit"; });
#pragma omp parallel
  {
    auto buffer = detail::aligned_buffer(scratch_bytes);
#pragma omp for schedule(static)
    for (index_t b = 0; b < blocks; ++b) body(block<W>(b, blocks, threads, buffer.get()));
  }
}

/// OpenMP threads available to a parallel region (1 without OpenMP).
inline int host_threads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

/// The host's execution policy (core/exec.hpp): a block runs on one OpenMP thread, its block-local
/// memory is that thread's own buffer, and as many blocks run at once as there are threads.
template <int W = CALM_HOST_WARP_SIZE>
struct exec {
  using warp_type = warp<W>;
  static constexpr device_family family = device_family::host;
  static constexpr bool has_clusters = false;
  /// Chunks of four items per lane: measured faster on the host too (3.9 against 2.4 GB/s for a
  /// privatized histogram of 2^24 keys on 2 cores), as each lane value then covers 4W items.
  static constexpr bool vector_loads = true;
  /// A block is one thread with a table of its own: strategy::thread_private runs as itself.
  static constexpr bool thread_tables = true;
  std::size_t block_local_bytes() const { return max_block_scratch_bytes; }
  /// What privatize's replication rule may spend on one thread's copies: 256 KiB, half of a core's L2
  /// on the reference machine (a per-thread copy must stay in cache to beat the array reduction).
  std::size_t replication_budget_bytes() const { return std::size_t(256) << 10; }
  int resident_blocks_hint() const { return host_threads(); }
  template <class Body>
  void for_each_block(index_t blocks, int threads, std::size_t scratch_bytes, Body body) const {
    openmp::for_each_block<W>(blocks, threads, scratch_bytes, body);
  }
  template <class Body>
  void for_each_resident_block(index_t max_blocks, int threads, std::size_t scratch_bytes, Body body) const {
    openmp::for_each_block<W>(resident_blocks(max_blocks, threads, scratch_bytes, body), threads, scratch_bytes, body);
  }
  template <class Body>
  index_t resident_blocks(index_t max_blocks, int const&, std::size_t, Body const&) const {
    return std::max<index_t>(1, std::min<index_t>(max_blocks, host_threads()));
  }
  void synchronize() const {}
  /// f(i) for i < count, each timed: seconds[i] receives the seconds f(i) takes (the host runs its
  /// blocks before it returns).
  template <class F>
  void seconds_of_each(int count, F&& f, double* seconds) const {
    for (int i = 0; i < count; ++i) {
      auto const start = std::chrono::steady_clock::now();
      f(i);
      seconds[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  }
  /// The user's memory for workspaces (core/exec.hpp); empty: the host's own, below.
  workspace_resource workspace{};
  /// "Device" memory for a bulk call's workspace: from `workspace`, or 64-byte aligned host memory with the
  /// largest buffer released kept for the next call (workspace_cache.hpp). Its contents are whatever the last
  /// call left.
  void* allocate(std::size_t bytes) const {
    if (bytes == 0) return nullptr;
    return workspace.empty() ? detail::host_workspaces().take(bytes) : calm::detail::allocate_from(workspace, bytes, nullptr);
  }
  void release(void* p, std::size_t bytes) const noexcept {
    if (p == nullptr) return;
    if (workspace.empty()) detail::host_workspaces().give_back(p);
    else workspace.release(p, bytes, nullptr, workspace.context);
  }
  void fill(void* p, int byte, std::size_t bytes) const {
    if (bytes) std::memset(p, byte, bytes);
  }
  void to_host(void* h, void const* d, std::size_t bytes) const {
    if (bytes) std::memcpy(h, d, bytes);
  }
};

}  // namespace openmp
}  // namespace calm
