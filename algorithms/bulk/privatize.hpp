// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/privatize.hpp: scatter whole arrays through a table privatized in each block's block-local memory
// (001 §3 replication and padding, §4.2 histogram), lanes merged first by a strategy, or where a block finds a hot key.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../../core/error.hpp"
#include "../../core/exec.hpp"
#include "../block/adaptive_merge.hpp"
#include "arguments.hpp"
#include "../block/block_stream.hpp"
#include "key_map.hpp"
#include "../block/private_table.hpp"
#include "lane_counters.hpp"
#include "thread_counters.hpp"

namespace calm {

/// What privatize_scatter may be told; 0 / -1 leave the choice to plan_privatize.
struct privatize_options {
  int copies = 0;   ///< R, the copies of the table per block (0: by the rule below)
  int pad = -1;     ///< entries between copies (-1: one when R > 1)
  copy_mapping mapping = copy_mapping::cyclic;  ///< which copy a thread updates
  int threads = 0;  ///< threads per block (0: 512)
};

/// The chosen shape of a privatized scatter: the table layout, threads per block, block-local bytes.
struct privatize_plan {
  private_layout layout;  ///< the copies
  int threads = 512;      ///< threads per block
  std::size_t bytes = 0;  ///< block-local bytes
};

/// The replication rule: the largest R = 2^k <= max_copies whose R copies (one pad entry each) fit in
/// copy_budget bytes, at least 1. On Fermi the budget was the lock-aliasing size, 1,024 words (001 §3).
/// On Hopper no such size shows: more copies keep paying until they cost occupancy, so the budget is
/// the exec's replication_budget_bytes() (H100: 58% of a block's shared memory, 132 KiB), with R up
/// to 32 for weighted updates and 8 for counting (calm::constant) ones, where the hardware already
/// merges a warp's +1s. Measurements: perf/results/cuda-h100-2026-11-22-privatize.md.
constexpr int replication_for(index_t bins, std::size_t elem, std::size_t copy_budget, int max_copies) {
  int r = 1;
  while (r * 2 <= max_copies && static_cast<std::size_t>(r * 2) * static_cast<std::size_t>(bins + 1) * elem <= copy_budget) r *= 2;
  return r;
}

/// The plan for `bins` entries of T on exec: R by replication_for unless forced (counting: the update
/// is a calm::constant), one pad entry between copies when R > 1, cyclic mapping; throws errc::out_of_range (before anything runs) if the copies do not fit in one block's
/// block-local memory.
template <class T, class Exec>
privatize_plan plan_privatize(index_t bins, privatize_options const& opt, Exec const& ex, bool counting = false) {
  require(bins >= 0, errc::invalid_argument, [&] { return "privatize: negative table size " + std::to_string(bins); });
  require(opt.copies >= 0 && opt.copies <= 1024, errc::invalid_argument, "privatize: copies must be in [0, 1024]");
  require(opt.threads >= 0 && opt.threads <= 1024, errc::invalid_argument, "privatize: threads must be in [0, 1024]");
  privatize_plan p;
  p.threads = opt.threads > 0 ? opt.threads : 512;
  p.layout.bins = bins;
  p.layout.mapping = opt.mapping;
  p.layout.copies = opt.copies > 0 ? opt.copies : replication_for(bins, sizeof(T), ex.replication_budget_bytes(), counting ? 8 : 32);
  p.layout.pad = opt.pad >= 0 ? opt.pad : (p.layout.copies > 1 ? 1 : 0);
  p.bytes = p.layout.template bytes<T>();
  std::size_t const limit = ex.block_local_bytes();
  // a table over a quarter of the limit leaves room for one or two blocks per multiprocessor: give
  // them 1,024 threads, so that enough loads are in flight
  if (opt.threads == 0 && p.bytes > limit / 4) p.threads = 1024;
  require(p.bytes <= limit, errc::out_of_range,
          [&] { return "privatize: " + std::to_string(p.layout.copies) + " copies of " + std::to_string(bins) + " entries need " +
              std::to_string(p.bytes) + " bytes of block-local memory; one block has " + std::to_string(limit); });
  return p;
}

/// The most entries of T that one block's block-local memory holds on exec (one copy, no padding;
/// the layout's discard entry taken off).
template <class T, class Exec>
index_t privatize_capacity(Exec const& ex) {
  return static_cast<index_t>(ex.block_local_bytes() / sizeof(T)) - 1;
}

namespace detail {

/// The block program of privatize_scatter: clear the private table, stream the block's items into
/// it, merge the copies into the device table.
template <int Vec, class Strategy, class Op, class K, class Values, class T, class KeyMap = identity_key>
struct privatized_scatter_program {
  Op op;
  K const* keys;
  Values values;  // T const* or same_value<T>
  index_t n;
  T* out;
  private_layout layout;
  Strategy strategy;
  KeyMap key_map = {};
  /// adaptive_merge: where its probe's area starts in block-local memory, in bytes (probe_offset)
  std::size_t probe_at = 0;

  /// adaptive_merge's kernel holds both paths; its registers capped at 64 per thread, so that a block
  /// of 1,024 threads always launches and, on an H100, the blocks that do not merge run as many threads
  /// at once as privatize with naive (whose values take up to 62 registers); a cap of 32 for the +1s
  /// of a histogram spilled and ran up to 1.3x longer.
  static constexpr int resident_1024_blocks = std::is_same<Strategy, adaptive_merge>::value ? 1 : 0;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    private_table<T> const tab{blk.template scratch<T>(), layout, blk.threads()};
    if constexpr (std::is_same<Strategy, adaptive_merge>::value) {
      constexpr bool counting = is_same_value<Values>::value;
      // the probe's sums beside the table (both cleared before one barrier) or over it (the table
      // cleared once every thread has read them)
      unsigned char* const area = blk.template scratch<unsigned char>() + probe_at;
      bool const apart = probe_at > 0;
      clear_probe<!counting>(blk, area);
      if (apart) tab.clear(blk, op);
      else blk.sync();
      hot_key_probe const probe = probe_block<Vec, !counting>(blk, keys, n, key_map, area);
      if (!apart) blk.sync();
      adaptive_merge::choice const merge = strategy.merge_for(probe, layout.copies, counting);
      std::uint32_t* const merged = strategy.merged_blocks;
      if ((merge.every_lane || merge.known > 0) && merged != nullptr)
        blk.for_each_warp([&](auto const& w, auto t) { when(w, t == 0, [&](auto const& l) { atomic_update(l, plus{}, scope::device{}, merged, 1u); }); });
      if (!apart) tab.clear(blk, op);
      if (merge.every_lane) stream_into(blk, tab, peer_reduce{});
      else if (merge.known > 0) stream_into(blk, tab, known_keys_merge{probe.hot[0], merge.known == 2 ? probe.hot[1] : probe.hot[0]});
      else stream_into(blk, tab, naive{});
    } else {
      tab.clear(blk, op);
      stream_into(blk, tab, strategy);
    }
    tab.merge_into(blk, op, scope::device{}, out);
  }

  /// The block's items into its private table, lanes merged by `merge` before each atomic.
  template <class Block, class Merge>
  CALM_HD void stream_into(Block const& blk, private_table<T> const& tab, Merge const& merge) const {
    // naive needs no other lane: each lane streams on its own (a scalar loop on the host), with its
    // copy's first entry, the discard entry and the table size as local values (tab.lane_view)
    stream_items_with_state<Vec, std::is_same<Merge, naive>::value>(
        blk, keys, values, n,
        [&](auto const& w, auto const& t) {
          // a lane that runs alone (the host) takes each chunk of its tile to the next copy: the updates
          // of a hot key then go to the R copies in turn instead of waiting on each other in one entry
          return tab.template lane_views<loads_in_flight>(t, std::decay_t<decltype(w)>::size == 1);
        },
        [&](auto const& w, auto const&, auto const& lanes, int u, auto const& k, auto const& v) {
          if constexpr (std::is_same<Merge, known_keys_merge>::value) {
            auto const key = map_keys(w, key_map, k);
            update_known_keys(w, op, scope::block_local{}, lanes.slot(u, key), key, v, merge);
          } else if constexpr (std::is_same<KeyMap, identity_key>::value) {
            update(w, op, scope::block_local{}, lanes.slot(u, k), v, merge);
          } else {
            update(w, op, scope::block_local{}, lanes.slot(u, map_keys(w, key_map, k)), v, merge);
          }
        });
  }
};

/// values as the program reads them: a pointer to T, or a same_value of T.
template <class T, class V>
auto as_value_source(V const& v) {
  if constexpr (is_same_value<V>::value) {
    return same_value<T>{static_cast<T>(v.value)};
  } else {
    static_assert(std::is_pointer<V>::value && std::is_same<std::remove_cv_t<std::remove_pointer_t<V>>, T>::value,
                  "privatize_scatter: values must be a pointer to the table's type, or calm::constant(v)");
    return static_cast<T const*>(v);
  }
}


/// privatize_scatter's block program reading its items in chunks of Vec (chunk_items).
template <int Vec, class Strategy, class Op, class K, class VS, class T, class KeyMap>
privatized_scatter_program<Vec, Strategy, Op, K, VS, T, KeyMap> privatized_program(Op op, K const* keys, VS const& vals, index_t n, T* table,
                                                                                          privatize_plan const& plan, KeyMap const& key_map,
                                                                                          Strategy strategy) {
  return {op, keys, vals, n, table, plan.layout, strategy, key_map};
}

/// Where adaptive_merge's probe (probe_block) keeps its area (probe_area_bytes) in block-local memory,
/// in bytes: after the table (rounded up to 16 bytes) where both fit in `limit` (the block's), so
/// that the program clears them together before one barrier; else 0, over the table, which is cleared
/// after the probe (one barrier more).
inline std::size_t probe_offset(privatize_plan const& plan, std::size_t limit, bool counting) {
  std::size_t const after = (plan.bytes + 15) / 16 * 16;
  return after + probe_area_bytes(counting) <= limit ? after : 0;
}

/// Block-local bytes of privatize_scatter's block program: the plan's table, and for adaptive_merge
/// its probe's area at probe_at (probe_offset; 0: over the table).
template <class Strategy>
std::size_t program_bytes(privatize_plan const& plan, Strategy const&, bool counting, std::size_t probe_at) {
  if (!std::is_same<Strategy, adaptive_merge>::value) return plan.bytes;
  return probe_at > 0 ? probe_at + probe_area_bytes(counting) : std::max(plan.bytes, probe_area_bytes(counting));
}

/// launch(program, bytes) with privatize_scatter's block program reading its items in chunks of Vec and
/// its block-local bytes. adaptive_merge has its shares resolved for Exec's family; a table of so many
/// copies that no share reaches its threshold (or the host's default) gets naive's program instead:
/// no block would merge, and the program without the probe and the merging keeps a plain kernel's
/// registers (on an H100 the adaptive kernel ran 1.4x longer than naive on tables of 32 copies that
/// never merged).
template <int Vec, class Strategy, class Op, class K, class VS, class T, class KeyMap, class Exec, class Launch>
void with_privatized_program(Op op, K const* keys, VS const& vals, index_t n, T* table, privatize_plan const& plan, KeyMap const& key_map,
                             Strategy strategy, Exec const& ex, Launch&& launch) {
  std::size_t probe_at = 0;
  if constexpr (std::is_same<Strategy, peer_reduce>::value) {
    // copies cyclic in a multiple of the warp's lanes: each lane of a warp updates a copy of its own, so
    // no two lanes share an entry and a match would find no peer (on an H200, scatter_f32 into 100 entries
    // with 32 copies: 306 us merged, 60 not; perf/results/cuda-h200-2026-11-28-privatize-peer-own-copies.md)
    constexpr int lanes = Exec::warp_type::size;
    if (plan.layout.mapping == copy_mapping::cyclic && plan.layout.copies % lanes == 0) {
      launch(privatized_program<Vec>(op, keys, vals, n, table, plan, key_map, naive{}), plan.bytes);
      return;
    }
  }
  if constexpr (std::is_same<Strategy, adaptive_merge>::value) {
    strategy = strategy.resolved(Exec::family);
    if (!strategy.could_merge(plan.layout.copies, is_same_value<VS>::value)) {
      launch(privatized_program<Vec>(op, keys, vals, n, table, plan, key_map, naive{}), plan.bytes);
      return;
    }
    probe_at = probe_offset(plan, ex.block_local_bytes(), is_same_value<VS>::value);
  }
  auto program = privatized_program<Vec>(op, keys, vals, n, table, plan, key_map, strategy);
  program.probe_at = probe_at;
  launch(program, program_bytes(plan, strategy, is_same_value<VS>::value, probe_at));
}

/// Launch privatize_scatter's block program (arguments checked, the plan made, n > 0, bins > 0).
template <class Strategy, class Op, class K, class VS, class T, class KeyMap, class Exec>
void launch_privatized_scatter(Op op, K const* keys, VS const& vals, index_t n, T* table, privatize_plan const& plan, KeyMap const& key_map,
                               Strategy strategy, Exec const& ex) {
  constexpr int vec = chunk_items<Exec, K, VS>();
  with_privatized_program<vec>(op, keys, vals, n, table, plan, key_map, strategy, ex, [&](auto const& program, std::size_t bytes) {
    ex.for_each_resident_block(blocks_with_work(n, plan.threads, vec), plan.threads, bytes, program);
  });
}

/// thread_counters' layout for `bins` entries on exec (opt.threads, where given, a power of two of 32 to 1,024);
/// throws before anything runs where the table is beyond thread_counters_max_bins or the block-local memory.
template <class Exec>
thread_counters_layout plan_thread_counters(index_t bins, privatize_options const& opt, Exec const& ex) {
  require(bins >= 0 && bins <= thread_counters_max_bins, errc::out_of_range,
          [&] { return "privatize_scatter<thread_counters>: " + std::to_string(bins) + " entries; it counts into at most 256"; });
  require(opt.threads == 0 || (opt.threads >= 32 && opt.threads <= 1024 && (opt.threads & (opt.threads - 1)) == 0), errc::invalid_argument,
          [&] { return "privatize_scatter<thread_counters>: threads must be a power of two in [32, 1024], got " + std::to_string(opt.threads); });
  thread_counters_layout const l = plan_thread_counters(bins, opt.threads);
  require(l.bytes() <= ex.block_local_bytes(), errc::out_of_range,
          [&] { return "privatize_scatter<thread_counters>: " + std::to_string(l.bytes()) + " bytes of block-local memory; one block has " + std::to_string(ex.block_local_bytes()); });
  return l;
}

/// Launch thread_counters_program (the layout planned, n > 0, bins > 0).
template <class K, class VS, class T, class KeyMap, class Exec>
void launch_thread_counters(K const* keys, VS const& vals, index_t n, T* table, thread_counters_layout const& l, KeyMap const& key_map, Exec const& ex) {
  constexpr int vec = thread_counters_chunk<Exec, K>();
  ex.for_each_block(l.blocks_for(n, vec), l.threads, l.bytes(), thread_counters_program<vec, K, VS, T, KeyMap>{keys, vals, n, table, l, key_map});
}

}  // namespace detail

/// table[keys[i]] = op(table[keys[i]], values[i]) for i < n, through a copy of the table in each block's
/// block-local memory: R copies with padding (plan_privatize), lanes merged by Strategy before each
/// block-local atomic, then one device atomic per bin and block (Strategy thread_counters: each thread's own
/// 8-bit counters, for counts into at most 256 entries; lane_counters: a column of counters per warp lane, as well). values: a T const* of n values, or
/// calm::constant(v) for every item (a histogram's +1). Keys outside [0, bins) are skipped. Throws
/// calm::error before launching if an argument is wrong or the table does not fit. Asynchronous on
/// a GPU (ex's stream).
///
///   calm::privatize_scatter(calm::plus{}, keys, calm::constant(1u), n, hist, 256);  // a histogram
template <class Strategy = naive, class Op, class K, class Values, class T, class Exec = default_exec>
void privatize_scatter(Op op, K const* keys, Values values, index_t n, T* table, index_t bins,
                       privatize_options const& opt = {}, Strategy strategy = {}, Exec const& ex = Exec{}) {
  check_atomic_op<Op, T>();
  static_assert(std::is_integral<K>::value, "privatize_scatter: keys must be integers");
  detail::check_scatter_arguments("privatize_scatter", n, keys, values, table, bins);
  if constexpr (std::is_same<Strategy, thread_counters>::value) {
    static_assert(detail::thread_countable<Op, Values, T>, "privatize_scatter<thread_counters> counts: op plus, values calm::constant(c), an integer table");
    detail::thread_counters_layout const l = detail::plan_thread_counters(bins, opt, ex);
    if (n > 0 && bins > 0) detail::launch_thread_counters(keys, detail::as_value_source<T>(values), n, table, l, detail::identity_key{}, ex);
  } else if constexpr (std::is_same<Strategy, lane_counters>::value) {
    static_assert(detail::thread_countable<Op, Values, T>, "privatize_scatter<lane_counters> counts: op plus, values calm::constant(c), an integer table");
    std::size_t const bytes = detail::plan_lane_counters(n, bins, opt.threads, ex);
    if (n > 0 && bins > 0) detail::launch_lane_counters(keys, detail::as_value_source<T>(values), n, table, bins, opt.threads, bytes, detail::identity_key{}, ex);
  } else {
    privatize_plan const plan = plan_privatize<T>(bins, opt, ex, is_same_value<Values>::value);
    if (n == 0 || bins == 0) return;
    detail::launch_privatized_scatter(op, keys, detail::as_value_source<T>(values), n, table, plan, detail::identity_key{}, strategy, ex);
  }
}

}  // namespace calm
