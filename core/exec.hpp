// SPDX-License-Identifier: Apache-2.0
// calm/core/exec.hpp: the execution policy through which algorithms launch block programs. Each
// backend defines one (calm::openmp::exec<W>, calm::cuda::exec, calm::hip::exec); backends/backend.hpp
// makes the build's backend calm::default_exec, so host-callable algorithms need no backend #if.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "config.hpp"
#include "error.hpp"

namespace calm {

// An execution policy E (a small value: on CUDA/HIP it holds the stream) provides:
//   E::family                       the device_family whose fitted tree picks strategy::automatic
//   E::warp_type                    the warp its block programs see (W lanes)
//   E::has_clusters                 whether blocks can form clusters sharing block-local memory (sm_90)
//   E::vector_loads                 whether block programs should load 16-byte chunks per thread
//   E::thread_tables                whether a block runs as one CPU thread that may keep a table of its own
//                                   (strategy::thread_private; elsewhere it runs as privatize)
//   e.block_local_bytes()           the most block-local memory one block may use (the opt-in limit on sm_80+)
//   e.replication_budget_bytes()    what privatize's replication rule may spend on one block's copies
//   e.for_each_block(blocks, threads, scratch_bytes, body)
//                                   body(block) for each block (see backends/*/launch.hpp)
//   e.for_each_resident_block(max_blocks, threads, scratch_bytes, body)
//                                   as for_each_block with as many blocks as run at once on the device
//                                   (never more than max_blocks, at least 1), and at most `threads`
//                                   threads (fewer where the program's registers demand it): block
//                                   programs that loop over tiles (blk.for_each_tile) and read
//                                   blk.threads() and blk.count()
//   e.resident_blocks(max_blocks, threads, scratch_bytes, body)
//                                   the blocks for_each_resident_block launches for body at this shape,
//                                   lowering `threads` (an int lvalue) as it would: so that two programs
//                                   can be launched on one grid with for_each_block
//   e.resident_blocks_hint()        an estimate of that number before any launch (for planning)
//   e.synchronize()                 wait for the work launched before (host: nothing to wait for)
//   e.seconds_of_each(count, f, seconds)
//                                   f(i) for i < count (at most 16), each launching through e, then one
//                                   wait: seconds[i] receives the device's time for f(i)'s work (a plan's
//                                   measuring)
//   e.allocate(bytes), e.release(p, bytes)
//                                   device memory for a bulk call's workspace (stream-ordered on a GPU),
//                                   from e.workspace (a workspace_resource) where it names one
//   e.workspace                     the user's workspace_resource (below; empty: the backend's own memory)
//   e.fill(p, byte, bytes)          memset, in order with the launches
//   e.to_host(h, d, bytes)          copy device bytes to the host and wait for them
//   E::has_launch_graphs            whether E records a plan's repeated calls as graphs (optional; CUDA): then
//   E::recorder                     what a plan holds for it, with
//                                   r.launch(e, make_key, bytes, launches): runs launches(e', ws) (ws:
//                                   `bytes` of workspace, zero when first allocated, then as the graph
//                                   leaves it) from the graph recorded for the key make_key() returns
//                                   (core/launch_key.hpp, built only where it is looked up), recording it
//                                   if due, and returns false where it launched nothing (the caller launches)
//   e.ends_as_one                   whether the launches made through e end as one (optional; CUDA,
//                                   true in the e' a recorder gives launches): the stream's next
//                                   work waits for all of them, not only for the last

/// A user's memory for calm's workspaces (as CUB's temporary storage or a cuCollections allocator): a call or a
/// plan takes each workspace with allocate(bytes, stream, context) and gives it back with release(p, bytes,
/// stream, context), both in the order of `stream` (the exec's stream on a GPU, null on the host). allocate
/// returns memory of at least `bytes` that the exec's device can use, aligned to workspace_alignment, or
/// throws; release must not throw. Empty (allocate null): the backend's own memory, a stream-ordered pool on a
/// GPU and the last workspace kept on the host. Set it on the exec: `ex.workspace = {my_alloc, my_free, &pool};`.
struct workspace_resource {
  /// Memory of at least `bytes` for work queued on `stream`; null: the backend's own memory.
  void* (*allocate)(std::size_t bytes, void* stream, void* context) = nullptr;
  /// p (from allocate, with its size) given back once the work queued on `stream` before now is done with it.
  void (*release)(void* p, std::size_t bytes, void* stream, void* context) = nullptr;
  /// Passed to both as they are (the user's pool, say).
  void* context = nullptr;
  /// Whether this names no memory of the user's (allocate null).
  bool empty() const { return allocate == nullptr; }
};

/// The alignment a workspace_resource's memory must have (a cache line; GPU allocators give 256).
constexpr std::size_t workspace_alignment = 64;

namespace detail {
[[noreturn]] inline void raise_workspace_error(char const* what, std::size_t bytes) {
  raise_error(error(errc::backend_failure, std::string(what) + " (a workspace of " + std::to_string(bytes) + " bytes)"));
}

/// bytes (> 0) from r, checked: a null or misaligned pointer is given back and reported.
inline void* allocate_from(workspace_resource const& r, std::size_t bytes, void* stream) {
  if (r.release == nullptr) raise_workspace_error("a workspace_resource with allocate needs release as well", bytes);
  void* const p = r.allocate(bytes, stream, r.context);
  if (p == nullptr) raise_workspace_error("the workspace_resource returned no memory", bytes);
  if (reinterpret_cast<std::uintptr_t>(p) % workspace_alignment != 0) {
    r.release(p, bytes, stream, r.context);
    raise_workspace_error("the workspace_resource returned memory not aligned to 64 bytes", bytes);
  }
  return p;
}
}  // namespace detail

/// Kinds of device with a tree of their own for the automatic choice (algorithms/choice/choose.hpp).
enum class device_family { host, nvidia_gpu, amd_gpu };

/// The execution policy of the backend this build selected (defined by backends/backend.hpp).
struct default_exec;

}  // namespace calm
