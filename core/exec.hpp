// SPDX-License-Identifier: Apache-2.0
// calm/core/exec.hpp: the execution policy through which algorithms launch block programs. Each
// backend defines one (calm::openmp::exec<W>, calm::cuda::exec, calm::hip::exec); backends/backend.hpp
// makes the build's backend calm::default_exec, so host-callable algorithms need no backend #if.
#pragma once

#include <cstddef>

#include "config.hpp"

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
//   e.allocate(bytes), e.release(p) device memory for a bulk call's workspace (stream-ordered on a GPU)
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

/// Kinds of device with a tree of their own for the automatic choice (algorithms/choice/choose.hpp).
enum class device_family { host, nvidia_gpu, amd_gpu };

/// The execution policy of the backend this build selected (defined by backends/backend.hpp).
struct default_exec;

}  // namespace calm
