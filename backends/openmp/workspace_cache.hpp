// SPDX-License-Identifier: Apache-2.0
// calm/backends/openmp/workspace_cache.hpp: the host's bulk-call workspaces, with the largest one released kept
// for the next call (as cudaMallocAsync's pool keeps device memory): a table per thread of 2^20 entries on 16
// threads is 64 MiB, which malloc maps afresh at every call, and the kernel's zeroing of its pages then costs
// as much as the fill.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <string>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "../../core/error.hpp"

namespace calm {
namespace openmp {
namespace detail {

/// Workspaces above this are freed when released, not kept.
constexpr std::size_t kept_workspace_max_bytes = std::size_t(1) << 30;
/// Workspaces of at least this are aligned to huge_page_bytes and, on Linux, asked to be backed by transparent
/// huge pages (madvise): private tables per thread beyond the TLB's reach (2 threads, float sums into 2^23
/// entries: 73-75 -> 67 ms; 2^22: 56-59 -> 53-57).
constexpr std::size_t huge_workspace_bytes = std::size_t(8) << 20;
constexpr std::size_t huge_page_bytes = std::size_t(2) << 20;

/// Hands out 64-byte aligned buffers of at least the bytes asked for; keeps one released buffer (the
/// largest up to kept_workspace_max_bytes) and hands it out again for a request of half its size up to
/// all of it (a plan's few bytes never hold a large one). Thread-safe.
class workspace_cache {
 public:
  workspace_cache() = default;
  workspace_cache(workspace_cache const&) = delete;
  workspace_cache& operator=(workspace_cache const&) = delete;
  ~workspace_cache() { release_memory(kept_); }

  void* take(std::size_t bytes) {
    if (bytes == 0) return nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (kept_ != nullptr && size_of(kept_) >= bytes && size_of(kept_) / 2 <= bytes) {
        void* const p = kept_;
        kept_ = nullptr;
        return p;
      }
    }
    std::size_t const body = (bytes + 63) / 64 * 64;
    bool const huge = body >= huge_workspace_bytes;
    std::size_t const align = huge ? huge_page_bytes : 64, total = (header + body + align - 1) / align * align;
    void* const base = bytes <= (std::size_t(1) << 62) ? std::aligned_alloc(align, total) : nullptr;
    if (base == nullptr)
      raise_error(error(errc::backend_failure, "out of host memory for a bulk call's workspace of " + std::to_string(bytes) + " bytes"));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (huge) (void)madvise(base, total, MADV_HUGEPAGE);  // a hint: where the kernel has none to give, 4 KiB pages
#endif
    *static_cast<std::size_t*>(base) = body;
    return static_cast<unsigned char*>(base) + header;
  }

  void give_back(void* p) noexcept {
    if (p == nullptr) return;
    void* drop = p;
    if (size_of(p) <= kept_workspace_max_bytes) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (kept_ == nullptr || size_of(kept_) < size_of(p)) drop = kept_, kept_ = p;
    }
    release_memory(drop);
  }

 private:
  static constexpr std::size_t header = 64;  ///< the buffer's size, before it (keeps the 64-byte alignment)
  static void release_memory(void* p) noexcept {
    if (p != nullptr) std::free(static_cast<unsigned char*>(p) - header);
  }
  static std::size_t size_of(void* p) { return *reinterpret_cast<std::size_t*>(static_cast<unsigned char*>(p) - header); }
  std::mutex mutex_;
  void* kept_ = nullptr;
};

/// The process's one cache, never destroyed: a plan or workspace that outlives it (a static object made before
/// the cache's first use is destroyed after it) still gives its memory back to it at exit.
inline workspace_cache& host_workspaces() {
  static workspace_cache* const cache = new workspace_cache;
  return *cache;
}

}  // namespace detail
}  // namespace openmp
}  // namespace calm
