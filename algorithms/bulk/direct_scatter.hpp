// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/direct_scatter.hpp: scatter whole arrays straight into the device table, each warp's
// lanes merged first by a warp strategy (000 §3.1 Alg. 1-2, 002), optionally in a set_scatter order (000 §3.2).
#pragma once

#include <type_traits>

#include "../../core/error.hpp"
#include "../../core/exec.hpp"
#include "privatize.hpp"

namespace calm {
namespace detail {

/// Warp strategies whose direct scatter over chunks asks for 64 registers (one resident block of 1,024,
/// two of 512): scan_reduce and vote_reduce with their tile in registers (CALM_UNROLL) took 66-79 for
/// float and double values on sm_90, one block of 512 an SM.
template <class Strategy>
struct caps_tile_registers : std::false_type {};
template <>
struct caps_tile_registers<scan_reduce> : std::true_type {};
template <int M>
struct caps_tile_registers<vote_reduce<M>> : std::true_type {};

/// Whether a direct scatter leaves its tile's loops to the compiler (stream_items' Unroll off):
/// scan_reduce with values of 4 bytes from memory, which with the tile in registers ran sorted keys up
/// to 1.18x longer on an H100 (float sums; with doubles 0.84-1.00x, with a value for every key 0.70-0.86x:
/// perf/results/cuda-h100-2026-11-26-hot-key-shared.md).
template <class Strategy, class Values, class T>
struct leaves_tile_to_compiler
    : std::integral_constant<bool, std::is_same<Strategy, scan_reduce>::value && !is_same_value<Values>::value && sizeof(T) <= 4> {};

/// Whether a strategy groups a warp's lanes by matching them (peer_reduce, peer_reduce_if), where a key of
/// 4 bytes is cheaper to match than an address of 8 (update_keyed).
template <class S>
struct matches_lanes : std::integral_constant<bool, std::is_same<S, peer_reduce>::value || std::is_same<S, peer_reduce_if>::value> {};

/// table[key] updated by the lanes of w (keys in [0, bins)), merged by s. peer_reduce matches the keys as 4
/// bytes where the table has at most 2^32 entries (update_keyed), else the addresses. scan_reduce keeps
/// the addresses: with the keys its histograms of runs and sorted keys ran 1.8-2.8 us slower on an H200
/// (perf/results/cuda-h200-2026-11-28-peer-keyed-ab.md).
template <class S, class W, class Op, class T, class Key, class V>
CALM_HD void update_entry(W const& w, Op op, T* table, index_t bins, Key const& key, V const& v, S const& s) {
  if constexpr (matches_lanes<S>::value) {
    if (bins <= (index_t(1) << 32)) {
      update_keyed(w, op, scope::device{}, table + key, map([](index_t x) { return static_cast<std::uint32_t>(x); }, key), v, s);
      return;
    }
  }
  update(w, op, scope::device{}, table + key, v, s);
}

/// The block program of a direct scatter: every item updates the device table, lanes merged by Strategy.
template <int Vec, class Strategy, class Op, class K, class Values, class T, class KeyMap>
struct direct_scatter_program {
  Op op;
  K const* keys;
  Values values;  // T const* or same_value<T>
  index_t n;
  T* out;
  index_t bins;
  KeyMap key_map;
  Strategy strategy;
  static constexpr bool unrolls_tile = !leaves_tile_to_compiler<Strategy, Values, T>::value;
  static constexpr int resident_1024_blocks = Vec > 1 && unrolls_tile && caps_tile_registers<Strategy>::value ? 1 : 0;

  /// gate (block_stream.hpp, no_gate): called by each thread after its first loads, before its first
  /// update; it may set `strategy` (a merge picked at run time) or end the scatter.
  template <class Block, class Gate = no_gate>
  CALM_HD void operator()(Block const& blk, Gate const& gate = {}) const {
    if constexpr (picks_at_run_time<Strategy>::value) stream_items<Vec, unrolls_tile>(blk, keys, values, n, switched_update{this}, false, gate);
    else stream_items<Vec, unrolls_tile>(blk, keys, values, n, [&](auto const& w, auto const&, auto const& k, auto const& v) { update_item(strategy, w, k, v); }, false, gate);
  }

  /// The update of an item merged by strategy s.
  template <class S, class W, class Key, class Value>
  CALM_HD void update_item(S const& s, W const& w, Key const& k, Value const& v) const {
    auto const key = map_keys(w, key_map, k);
    auto const in = map([b = bins](index_t x) { return x >= 0 && x < b; }, key);
    when(w, in, [&](auto const& u) { update_entry(u, op, out, bins, select(in, key, index_t(0)), v, s); });
  }

  /// The update of a merge picked at run time (read when used: a gate may set it), branched on once per
  /// full tile (block_stream.hpp, switches_per_tile) and per item elsewhere.
  struct switched_update {
    direct_scatter_program const* p;
    static constexpr bool switches_per_tile = true;
    template <class W, class Thread, class Key, class Value>
    CALM_HD void operator()(W const& w, Thread const&, Key const& k, Value const& v) const {
      with_fixed_strategy(p->strategy, [&](auto s) { p->update_item(s, w, k, v); });
    }
    template <class Body>
    CALM_HD void for_tile(Body&& body) const {
      auto const* q = p;
      with_fixed_strategy(q->strategy, [&](auto s) { body([q, s](auto const& w, auto const&, auto const& k, auto const& v) { q->update_item(s, w, k, v); }); });
    }
  };
};

/// The same in a given order: the i-th item processed is item order[i] (positions outside [0, n) are skipped).
template <class Strategy, class Op, class K, class Values, class T, class KeyMap>
struct ordered_scatter_program {
  Op op;
  K const* keys;
  Values values;
  index_t const* order;
  index_t n;
  T* out;
  index_t bins;
  KeyMap key_map;
  Strategy strategy;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    K const* const ks = keys;
    Values const vs = values;
    index_t const nn = n;
    stream_items<1>(blk, order, same_value<int>{0}, n, [&](auto const& w, auto const&, auto const& pos, auto const&) {
      auto const ok = map([nn](index_t p) { return p >= 0 && p < nn; }, pos);
      auto const p = select(ok, pos, index_t(0));
      auto const key = select(ok, map_keys(w, key_map, load(w, ks, p)), index_t(-1));
      auto const in = map([b = bins](index_t x) { return x >= 0 && x < b; }, key);
      when(w, in, [&](auto const& u) {
        auto const entry = select(in, key, index_t(0));
        if constexpr (is_same_value<Values>::value) update_entry(u, op, out, bins, entry, vs, strategy);
        else update_entry(u, op, out, bins, entry, load(u, vs, p), strategy);
      });
    });
  }
};

/// Threads per block of a direct scatter.
constexpr int direct_threads = 512;

/// The block program of a direct scatter reading its items in chunks of Vec (chunk_items).
template <int Vec, class Strategy, class Op, class K, class VS, class T, class KeyMap>
direct_scatter_program<Vec, Strategy, Op, K, VS, T, KeyMap> direct_program(Op op, K const* keys, VS const& vals, index_t n, T* table,
                                                                                  index_t bins, KeyMap const& key_map, Strategy strategy) {
  return {op, keys, vals, n, table, bins, key_map, strategy};
}

/// Launch a direct scatter of n items on ex (arguments already checked, n > 0 and bins > 0), in the
/// given order if `order` is not null.
template <class Strategy, class Op, class K, class VS, class T, class KeyMap, class Exec>
void launch_direct_scatter(Op op, K const* keys, VS const& vals, index_t const* order, index_t n, T* table, index_t bins,
                           KeyMap const& key_map, Strategy strategy, Exec const& ex) {
  if (order != nullptr) {
    ex.for_each_resident_block(blocks_with_work(n, direct_threads, 1), direct_threads, 0,
                               ordered_scatter_program<Strategy, Op, K, VS, T, KeyMap>{op, keys, vals, order, n, table, bins, key_map, strategy});
    return;
  }
  constexpr int vec = chunk_items<Exec, K, VS>();
  ex.for_each_resident_block(blocks_with_work(n, direct_threads, vec), direct_threads, 0,
                             direct_program<vec>(op, keys, vals, n, table, bins, key_map, strategy));
}

}  // namespace detail
}  // namespace calm
