// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/thread_counters.hpp: privatize_scatter's counting form for small tables: each thread of a
// block counts in 8-bit counters of its own in block-local memory (no atomics, no bank conflicts), a block taking
// at most 255 items a thread so that no counter wraps; the threads' counters are summed once at the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../../core/exec.hpp"
#include "../../core/ops.hpp"
#include "../../core/warp.hpp"
#include "../block/block_stream.hpp"
#include "key_map.hpp"

namespace calm {

/// privatize_scatter's strategy for counts into at most 256 entries (an integer table, values calm::constant(c)):
/// each thread counts in 8-bit counters of its own, without atomics, summed once per block.
///
///   calm::privatize_scatter<calm::thread_counters>(calm::plus{}, keys, calm::constant(1u), n, hist, 256);
struct thread_counters {};

namespace detail {

/// The largest table thread counters take (8-bit keys' tables).
constexpr index_t thread_counters_max_bins = 256;
/// Items a thread counts at most in one block (what its 8-bit counters hold): the launch spreads the items
/// over enough blocks, so that no counter can wrap and the count needs no test per item.
constexpr index_t thread_counters_max_items = 255;
/// Block-local bytes a block of thread counters aims to stay within (a third of a Hopper SM's shared memory,
/// so that three blocks share one).
constexpr std::size_t thread_counters_block_bytes = std::size_t(72) << 10;

/// Items thread counters load at once per thread: 16 bytes of keys where the exec loads chunks (16 one-byte
/// keys: four times the bytes in flight of the other programs' chunks, which hold their values too), else 1.
template <class Exec, class K>
constexpr int thread_counters_chunk() {
  return Exec::vector_loads && sizeof(K) <= 16 ? static_cast<int>(16 / sizeof(K)) : 1;
}

/// Block-local memory of thread counters: one 8-bit counter per entry and thread, four to a 32-bit word, word w
/// of thread t at w * threads + t (a warp's words in 32 banks), the counter of entry bins (the table's size) the
/// one of keys outside the table; then the block's 32-bit total of each entry.
struct thread_counters_layout {
  index_t bins = 0;
  int threads = 0;  ///< a power of two
  CALM_HD constexpr index_t words_per_thread() const { return (bins + 1 + 3) / 4; }
  CALM_HD constexpr index_t counter_words() const { return words_per_thread() * threads; }
  /// The counters, then a 32-bit total per entry (the merge's).
  constexpr std::size_t bytes() const { return static_cast<std::size_t>(counter_words() + bins) * 4; }
  /// Blocks for n items loaded in chunks of vec: each takes at most as many of stream_items_with_state's tiles
  /// as keep a thread within thread_counters_max_items (one item outside the whole chunks besides).
  constexpr index_t blocks_for(index_t n, int vec) const {
    index_t const tile_items = static_cast<index_t>(threads) * loads_in_flight * vec;
    index_t const tiles = (n + tile_items - 1) / tile_items, per_block = (thread_counters_max_items - 1) / (loads_in_flight * vec);
    return tiles > 0 ? (tiles + per_block - 1) / per_block : 1;
  }
};

/// The layout for `bins` entries: `threads` if given (a power of two), else the most of 512, 256, 128 within
/// thread_counters_block_bytes (128 at least).
inline thread_counters_layout plan_thread_counters(index_t bins, int threads) {
  thread_counters_layout l{bins, threads > 0 ? threads : 512};
  while (threads == 0 && l.threads > 128 && l.bytes() > thread_counters_block_bytes) l.threads /= 2;
  return l;
}

/// Whether thread counters can count into T: an integer table (the op plus, the values one constant).
template <class Op, class VS, class T>
constexpr bool thread_countable = std::is_same<Op, plus>::value && is_same_value<VS>::value && std::is_integral<T>::value;

/// Key k's counter for a table of `bins` entries, bins where k is outside it (the counting forms' last counter);
/// keys of at most 4 bytes as they are in 32-bit arithmetic (a negative key wraps beyond any table).
template <class KeyMap, class Key>
CALM_HD unsigned counter_entry(KeyMap const& m, Key k, index_t bins) {
  if constexpr (std::is_same<KeyMap, identity_key>::value && sizeof(Key) <= 4) {
    auto const u = static_cast<std::uint32_t>(k);
    return u < static_cast<std::uint32_t>(bins) ? u : static_cast<unsigned>(bins);
  } else {
    index_t const x = m(k);
    return static_cast<unsigned>(x >= 0 && x < bins ? x : bins);
  }
}

/// The counting program: counters cleared, the block's items counted (at most thread_counters_max_items a
/// thread, keys outside the table in the last counter), every thread's counters summed per entry, times the
/// constant, and added to out with one device atomic per entry that counted any.
template <int Vec, class K, class VS, class T, class KeyMap>
struct thread_counters_program {
  K const* keys;
  VS values;  ///< a same_value
  index_t n;
  T* out;
  thread_counters_layout layout;
  KeyMap key_map;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    clear(blk, blk.template scratch<std::uint32_t>());
    unsigned char* const counters = blk.template scratch<unsigned char>();
    index_t const bins = layout.bins;
    unsigned const row_bytes = 4u * static_cast<unsigned>(layout.threads);
    KeyMap const m = key_map;
    stream_items_with_state<Vec, true>(
        blk, keys, values, n, [](auto const&, auto const&) { return 0; },
        [&](auto const& w, auto const& t, int, int, auto const& k, auto const&) {
          // entry s's counter of thread tt: byte s % 4 of word (s / 4) * threads + tt
          auto const at = map(
              [m, bins, row_bytes](auto kk, int tt) {
                unsigned const s = counter_entry(m, kk, bins);
                return static_cast<int>((s >> 2) * row_bytes + 4u * static_cast<unsigned>(tt) + (s & 3u));
              },
              k, t);
          store(w, counters, at, map([](unsigned c) { return c + 1u; }, load(w, counters, at)));
        });
    merge_into(blk, blk.template scratch<std::uint32_t>());
  }

  template <class Block>
  CALM_HD void clear(Block const& blk, std::uint32_t* words) const {
    index_t const count = layout.counter_words() + layout.bins;  // the counters, then the block's totals
    for (index_t base = 0; base < count; base += blk.threads())
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const e = map([base](int tt) { return base + tt; }, t);
        when(w, map([count](index_t x) { return x < count; }, e), [&](auto const& l) { store(l, words, e, 0u); });
      });
    blk.sync();
  }

  /// A barrier; each counter word's four entries summed over a part of the threads (parts: a power of two, so
  /// that every thread of the block has a word and a part; each lane starting at its own column, so that a
  /// warp's lanes read different banks) into the block's totals; a barrier; each entry's total x constant added
  /// to out where it is not 0.
  template <class Block>
  CALM_HD void merge_into(Block const& blk, std::uint32_t* words) const {
    blk.sync();
    std::uint32_t* const totals = words + layout.counter_words();
    index_t const bins = layout.bins, threads = layout.threads, row_words = layout.words_per_thread();
    index_t parts = 1;
    while (parts * 2 * row_words <= blk.threads() && parts * 2 <= threads) parts *= 2;
    index_t const columns = threads / parts, jobs = row_words * parts;
    for (index_t base = 0; base < jobs; base += blk.threads())
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const job = map([base](int tt) { return base + tt; }, t);
        when(w, map([jobs](index_t x) { return x < jobs; }, job), [&](auto const& l) {
          auto const row = map([row_words](index_t x) { return x % row_words; }, job);
          auto const first = map([row_words, columns](index_t x) { return (x / row_words) * columns; }, job);
          auto total = map([](index_t) { return count4{}; }, row);
          for (index_t j = 0; j < columns; ++j) {
            auto const at = map([j, threads, columns](index_t r, index_t f, int tt) { return r * threads + f + ((j + tt) & (columns - 1)); }, row, first, t);
            total = map([](count4 c, std::uint32_t x) { return c.add(x); }, total, load(l, words, at));
          }
          for (int q = 0; q < 4; ++q) {
            auto const b = map([q](index_t x) { return 4 * x + q; }, row);
            auto const sum = map([q](count4 c) { return c.part[q]; }, total);
            when(l, map([bins](index_t x, std::uint32_t v) { return x < bins && v != 0; }, b, sum),
                 [&](auto const& u) { atomic_update(u, plus{}, scope::block_local{}, map([totals](index_t x) { return totals + x; }, b), sum); });
          }
        });
      });
    blk.sync();
    using U = std::make_unsigned_t<T>;
    U const each = static_cast<U>(values.value);
    for (index_t base = 0; base < bins; base += blk.threads())
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const b = map([base](int tt) { return base + tt; }, t);
        when(w, map([bins](index_t x) { return x < bins; }, b), [&](auto const& l) {
          auto const sum = load(l, static_cast<std::uint32_t const*>(totals), b);
          when(l, map([](std::uint32_t v) { return v != 0; }, sum), [&](auto const& u) {
            atomic_update(u, plus{}, scope::device{}, map([o = out](index_t x) { return o + x; }, b),
                          map([each](std::uint32_t v) { return static_cast<T>(static_cast<U>(v) * each); }, sum));
          });
        });
      });
  }

  /// Four entries' sums of 8-bit counters (at most 1,024 threads x 255: 32 bits hold them).
  struct count4 {
    std::uint32_t part[4] = {0, 0, 0, 0};
    CALM_HD count4 add(std::uint32_t x) const {
      count4 c;
      for (int q = 0; q < 4; ++q) c.part[q] = part[q] + ((x >> (8 * q)) & 0xFFu);
      return c;
    }
  };
};

}  // namespace detail
}  // namespace calm
