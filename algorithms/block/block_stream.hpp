// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/block/block_stream.hpp: the streaming loop of the block programs: each block's tiles of keys and values,
// loaded a tile at a time in chunks of Vec items (CUB's items per thread), handed item by item to an update.
#pragma once

#include <cstdint>
#include <type_traits>

#include "../../core/config.hpp"
#include "../warp/group_reduce.hpp"

namespace calm {
namespace detail {

/// Vec consecutive items, loaded at once (16 bytes for Vec = 4 and 4-byte keys).
template <class K, int Vec>
struct alignas(sizeof(K) * Vec) chunk {
  K v[Vec];
};

template <int Vec, class Warp, class T, class I>
CALM_HD auto load_chunk(Warp const& w, T const* p, I const& c) {
  return load(w, reinterpret_cast<chunk<T, Vec> const*>(p), c);
}
template <int Vec, class Warp, class T, class I>
CALM_HD auto load_chunk(Warp const&, same_value<T> const& v, I const&) {
  return v;
}

/// Items a block program loads at once from keys of K and values VS (a T const* or a same_value) on
/// Exec: 4 (16 bytes of 4-byte keys) where the exec wants chunk loads and a chunk of keys is at most 16
/// bytes and one of values at most 32; else 1. Each bulk program is compiled for this one form.
template <class Exec, class K, class VS>
constexpr int chunk_items() {
  bool ok = Exec::vector_loads && sizeof(K) * 4 <= 16;
  if constexpr (std::is_pointer<VS>::value) ok = ok && sizeof(std::remove_pointer_t<VS>) * 4 <= 32;
  return ok ? 4 : 1;
}

/// Items of p before the first that starts a chunk of Vec (a whole chunk's alignment), at most n.
template <int Vec, class K>
CALM_HD index_t items_before_chunk(K const* p, index_t n) {
  if (Vec == 1) return 0;
  auto const bytes = static_cast<index_t>(reinterpret_cast<std::uintptr_t>(p) % (sizeof(K) * Vec));
  index_t const head = bytes == 0 ? 0 : (static_cast<index_t>(sizeof(K)) * Vec - bytes) / static_cast<index_t>(sizeof(K));
  return head < n ? head : n;
}
template <class T>
CALM_HD T const* advanced(T const* p, index_t items) {
  return p + items;
}
template <class T>
CALM_HD same_value<T> advanced(same_value<T> const& v, index_t) {
  return v;
}
/// Whether values from p load in whole chunks of Vec (a same_value always does).
template <int Vec, class T>
CALM_HD bool whole_chunks(T const* p) {
  return reinterpret_cast<std::uintptr_t>(p) % (sizeof(T) * Vec) == 0;
}
template <int Vec, class T>
CALM_HD bool whole_chunks(same_value<T> const&) {
  return true;
}
/// Values a pass streams beside its keys without reading them: their alignment alone decides, as for the pass
/// that reads them, which items load in chunks, so that both passes give each block the same items.
template <class T>
struct values_unread {
  T const* p;
};
template <class T>
CALM_HD values_unread<T> advanced(values_unread<T> const& v, index_t items) {
  return {v.p + items};
}
template <int Vec, class T>
CALM_HD bool whole_chunks(values_unread<T> const& v) {
  return whole_chunks<Vec>(v.p);
}
template <int Vec, class Warp, class T, class I>
CALM_HD same_value<T> load_chunk(Warp const&, values_unread<T> const&, I const&) {
  return {T()};
}
/// values as a pass streams them for their alignment alone (nothing read): a same_value as it is, a pointer unread.
template <class T>
CALM_HD same_value<T> unread(same_value<T> const& v) {
  return v;
}
template <class T>
CALM_HD values_unread<T> unread(T const* p) {
  return {p};
}

template <class T>
CALM_HD same_value<T> component(same_value<T> const& v, int) {
  return v;
}
template <class C>
CALM_HD auto component(C const& c, int j) {
  return map([j](auto const& x) { return x.v[j]; }, c);
}

/// Chunks each thread loads before it updates (CUB's items per thread): enough loads in flight to
/// keep the memory system busy.
constexpr int loads_in_flight = 4;

/// The blocks that have work when `threads` threads each take loads_in_flight chunks of `vec` items a tile.
inline index_t blocks_with_work(index_t n, int threads, int vec) {
  index_t const tile = static_cast<index_t>(threads) * loads_in_flight * vec;
  return (n + tile - 1) / tile;
}

/// Items a block program's tile covers: threads x loads_in_flight chunks of Vec items.
template <int Vec>
CALM_HD index_t tile_items(index_t threads) {
  return threads * loads_in_flight * Vec;
}

/// The gate of a stream (stream_items_with_state): what each thread calls once, after its first tile's
/// loads and before its first update (at the end where it has no items); false ends its stream. A
/// program that waits itself for the launch before it (awaits_prior_launch_of) waits there, so that
/// its first loads overlap that launch. no_gate: none, nothing called.
struct no_gate {
  static constexpr bool active = false;
  CALM_HD bool operator()() const { return true; }
};
/// A gate that asks f().
template <class F>
struct stream_gate {
  static constexpr bool active = true;
  F f;
  CALM_HD bool operator()() const { return f(); }
};
template <class F>
CALM_HD stream_gate<F> gate_with(F const& f) {
  return {f};
}

/// An update may pick its merge at run time and say so (`switches_per_tile`, as direct_scatter_program's
/// does for switch_merge and peer_reduce_if): then f.for_tile(body) calls body(g), g the update with the
/// merge picked fixed at compile time, and the stream calls it once per full tile instead of branching on
/// the merge at every item (on an H100 the branch per item ran a histogram of sorted keys by scan_reduce
/// 2.3 us, 5%, slower: perf/results/cuda-h100-2026-11-27-merge-per-tile.md). Other updates are used as they are.
template <class F, class = void>
struct switches_per_tile : std::false_type {};
template <class F>
struct switches_per_tile<F, std::enable_if_t<F::switches_per_tile>> : std::true_type {};

/// The streaming loop of the block programs: f(w, t, state, u, key, value) for each of this block's
/// items of keys[0, n) and values (a T const* or a same_value), where state = init(w, t) is what a
/// thread computes once per tile (its copy of the table, say) and u < loads_in_flight is the chunk of
/// the tile the item is in.
/// Tiles of threads x loads_in_flight chunks of Vec items (the backend's block says which tiles are
/// this block's), all loads of a full tile issued before its updates. The chunks start at the first key
/// aligned to a chunk; the items before it and those after the last whole chunk go one by one (block 0
/// takes them). Values that are not aligned to their chunks there (they start off the keys' alignment)
/// make every item go one by one, spread over the blocks: slower, without a program of its own.
/// `only_first_tile` stops after the block's first tile (a sample); `gate` (see no_gate) may end the
/// stream after the first tile's loads. Every thread of the block calls it. PerLane: init and f need no other lane, so each lane runs on its own (each_lane:
/// the same code on a GPU; on the host a scalar loop with the state in registers, each chunk updated
/// as it is loaded, since a lane that runs alone has no other loads to overlap).
/// Unroll: a GPU compiler must unroll the tile's loops (CALM_UNROLL), keeping its chunks in registers;
/// else it may keep them in local memory (nvcc did in the launch that holds hot_key's program beside the
/// direct scatter's, in hot_key's, scan_reduce's and vote_reduce's; only scan_reduce with 4-byte values
/// from memory ran faster so: perf/results/cuda-h100-2026-11-26-hot-key-shared.md).
template <int Vec, bool PerLane, bool Unroll = true, class Block, class K, class Values, class Init, class F, class Gate = no_gate>
CALM_HD void stream_items_with_state(Block const& blk, K const* keys, Values const& values, index_t n, Init const& init, F&& f,
                                     bool only_first_tile = false, Gate const& gate = {}) {
  constexpr int U = loads_in_flight;
  index_t const head = items_before_chunk<Vec>(keys, n);
  K const* const chunk_keys = keys + head;
  auto const chunk_values = advanced(values, head);
  index_t const chunks = whole_chunks<Vec>(chunk_values) ? (n - head) / Vec : 0;
  index_t const threads = blk.threads(), tile_chunks = threads * U;
  bool first = true;
  // the gate's answer: per thread on a GPU, per block on the host (where it is uniform)
  bool passed = !Gate::active, open = true;
  auto const pass = [&] {
    if constexpr (Gate::active)
      if (!passed) {
        passed = true;
        open = gate();
      }
    return open;
  };
  blk.for_each_tile((chunks + tile_chunks - 1) / tile_chunks, [&](index_t tile) {
    if ((only_first_tile && !first) || !open) return;
    first = false;
    index_t const base = tile * tile_chunks;
    bool const full = base + tile_chunks <= chunks;
    blk.for_each_warp([&](auto const& w, auto t) {
      auto const lanes = [&](auto const& w1, auto const& t1) {
        auto const c0 = map([base](int tt) { return base + tt; }, t1);
        auto const state = init(w1, t1);
        auto const apply_with = [&](auto const& g, auto const& v, int u, auto const& kc, auto const& vc) {
          if constexpr (Unroll) {
            CALM_UNROLL for (int j = 0; j < Vec; ++j) g(v, t1, state, u, component(kc, j), component(vc, j));
          } else {
            for (int j = 0; j < Vec; ++j) g(v, t1, state, u, component(kc, j), component(vc, j));
          }
        };
        auto const apply = [&](auto const& v, int u, auto const& kc, auto const& vc) { apply_with(f, v, u, kc, vc); };
        if (full && std::decay_t<decltype(w1)>::size == 1) {  // a lane alone: update each chunk as it comes
          if (!pass()) return;
          for (int u = 0; u < U; ++u)
            apply(w1, u, load_chunk<Vec>(w1, chunk_keys, c0 + u * threads), load_chunk<Vec>(w1, chunk_values, c0 + u * threads));
        } else if (full) {  // every load first, then every update
          decltype(load_chunk<Vec>(w1, chunk_keys, c0)) kc[U];
          decltype(load_chunk<Vec>(w1, chunk_values, c0)) vc[U];
          if constexpr (Unroll) {
            CALM_UNROLL for (int u = 0; u < U; ++u) kc[u] = load_chunk<Vec>(w1, chunk_keys, c0 + u * threads);
            CALM_UNROLL for (int u = 0; u < U; ++u) vc[u] = load_chunk<Vec>(w1, chunk_values, c0 + u * threads);
            if (!pass()) return;
            if constexpr (switches_per_tile<std::decay_t<F>>::value)
              f.for_tile([&](auto const& g) { CALM_UNROLL for (int u = 0; u < U; ++u) apply_with(g, w1, u, kc[u], vc[u]); });
            else
              CALM_UNROLL for (int u = 0; u < U; ++u) apply(w1, u, kc[u], vc[u]);
          } else {
            for (int u = 0; u < U; ++u) kc[u] = load_chunk<Vec>(w1, chunk_keys, c0 + u * threads);
            for (int u = 0; u < U; ++u) vc[u] = load_chunk<Vec>(w1, chunk_values, c0 + u * threads);
            if (!pass()) return;
            for (int u = 0; u < U; ++u) apply(w1, u, kc[u], vc[u]);
          }
        } else {
          if (!pass()) return;
          for (int u = 0; u < U; ++u) {
            auto const c = c0 + u * threads;
            when(w1, c < chunks, [&](auto const& v) {
              apply(v, u, load_chunk<Vec>(v, chunk_keys, c), load_chunk<Vec>(v, chunk_values, c));
            });
          }
        }
      };
      if constexpr (PerLane) each_lane(w, lanes, t);
      else lanes(w, t);
    });
  });
  index_t const loose = n - chunks * Vec;  // items not in a whole chunk: x < head is item x, the others follow the chunks
  if (Vec > 1 && !only_first_tile && loose > 0 && pass())
    for (index_t base = blk.index() * threads; base < loose; base += blk.count() * threads)
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const x = map([base](int tt) { return base + tt; }, t);
        auto const i = map([head, tail = head + chunks * Vec](index_t xx) { return xx < head ? xx : tail + (xx - head); }, x);
        when(w, map([loose](index_t xx) { return xx < loose; }, x),
             [&](auto const& v) { f(v, t, init(v, t), 0, load(v, keys, i), component(load_chunk<1>(v, values, i), 0)); });
      });
  if constexpr (Gate::active) pass();  // a thread without items passes it too
}

/// A switched update f(w, t, key, value) as stream_items_with_state calls it (with a state and a chunk it
/// ignores), still switched per tile.
template <class F>
struct stateless_update {
  F const& f;
  static constexpr bool switches_per_tile = true;
  template <class W, class Thread, class Key, class Value>
  CALM_HD void operator()(W const& w, Thread const& t, int, int, Key const& k, Value const& v) const {
    f(w, t, k, v);
  }
  template <class Body>
  CALM_HD void for_tile(Body&& body) const {
    f.for_tile([&](auto const& g) { body(stateless_update<std::decay_t<decltype(g)>>{g}); });
  }
};

/// stream_items_with_state with no state: f(w, t, key, value).
template <int Vec, bool Unroll = true, class Block, class K, class Values, class F, class Gate = no_gate>
CALM_HD void stream_items(Block const& blk, K const* keys, Values const& values, index_t n, F&& f, bool only_first_tile = false,
                          Gate const& gate = {}) {
  auto const no_state = [](auto const&, auto const&) { return 0; };
  if constexpr (switches_per_tile<std::decay_t<F>>::value)
    stream_items_with_state<Vec, false, Unroll>(blk, keys, values, n, no_state, stateless_update<std::decay_t<F>>{f}, only_first_tile, gate);
  else
    stream_items_with_state<Vec, false, Unroll>(
        blk, keys, values, n, no_state, [&](auto const& w, auto const& t, int, int, auto const& k, auto const& v) { f(w, t, k, v); }, only_first_tile,
        gate);
}

}  // namespace detail
}  // namespace calm
