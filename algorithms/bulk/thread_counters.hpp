// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/thread_counters.hpp: privatize_scatter's counting form for small tables: each thread of a
// block counts in 8-bit counters of its own in block-local memory (no block-local atomics, no bank conflicts),
// a counter that passes 255 spilling 256 into a block table; the threads' counters are summed once at the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../../core/exec.hpp"
#include "../../core/ops.hpp"
#include "../../core/warp.hpp"
#include "../block/block_stream.hpp"
#include "../warp/group_reduce.hpp"

namespace calm {

/// privatize_scatter's strategy for counts into at most 256 entries (an integer table, values calm::constant(c)):
/// each thread counts in 8-bit counters of its own, without atomics, summed once per block.
///
///   calm::privatize_scatter<calm::thread_counters>(calm::plus{}, keys, calm::constant(1u), n, hist, 256);
struct thread_counters {};

namespace detail {

/// The largest table thread counters take (8-bit keys' tables).
constexpr index_t thread_counters_max_bins = 256;
/// Block-local bytes a block of thread counters aims to stay within (a quarter of a Hopper SM's shared memory,
/// so that four blocks share one).
constexpr std::size_t thread_counters_block_bytes = std::size_t(48) << 10;

/// Block-local memory of thread counters: four 8-bit counters a 32-bit word, word w of thread t at w * threads
/// + t (a thread's words one bank apart from its neighbours'), the last counter of the table's bins + 1 the one
/// of keys outside it; then a 64-bit spill entry per counter.
struct thread_counters_layout {
  index_t bins = 0;
  int threads = 0;  ///< a power of two
  CALM_HD constexpr index_t words_per_thread() const { return (bins + 1 + 3) / 4; }
  CALM_HD constexpr index_t counter_words() const { return words_per_thread() * threads; }
  /// Where the spill entries begin, in 64-bit entries.
  CALM_HD constexpr index_t spill_at() const { return (counter_words() + 1) / 2; }
  constexpr std::size_t bytes() const { return static_cast<std::size_t>(spill_at() + bins + 1) * 8; }
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

/// The counting program: counters and spills cleared, the block's items counted (keys outside the table in the
/// last counter), the counters of every thread summed per entry with its spills, times the constant, and added
/// to out with one device atomic per entry that counted any.
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
    std::uint32_t* const words = blk.template scratch<std::uint32_t>();
    std::uint64_t* const spill = blk.template scratch<std::uint64_t>() + layout.spill_at();
    clear(blk, words, spill);
    index_t const bins = layout.bins, threads = layout.threads;
    KeyMap const m = key_map;
    stream_items_with_state<Vec, true>(
        blk, keys, values, n, [](auto const&, auto const&) { return 0; },
        [&](auto const& w, auto const& t, int, int, auto const& k, auto const&) {
          auto const s = map([m, bins](auto kk) { index_t const x = m(kk); return x >= 0 && x < bins ? x : bins; }, k);
          auto const word = map([threads](index_t x, int tt) { return (x >> 2) * threads + tt; }, s, t);
          auto const shift = map([](index_t x) { return static_cast<unsigned>(x & 3) * 8u; }, s);
          // the add carries into the next counter only where this one passes 255: then that carry is taken back
          auto const now = map([](std::uint32_t x, unsigned sh) { return x + (1u << sh); }, load(w, words, word), shift);
          store(w, words, word, now);
          when(w, map([](std::uint32_t x, unsigned sh) { return ((x >> sh) & 0xFFu) == 0; }, now, shift), [&](auto const& l) {
            store(l, words, word, map([](std::uint32_t x, unsigned sh) { return x - (0x100u << sh); }, now, shift));
            atomic_update(l, plus{}, scope::block_local{}, map([spill](index_t x) { return spill + x; }, s), std::uint64_t(256));
          });
        });
    merge_into(blk, words, spill);
  }

  template <class Block>
  CALM_HD void clear(Block const& blk, std::uint32_t* words, std::uint64_t* spill) const {
    index_t const count = layout.counter_words(), spills = layout.bins + 1;
    for (index_t base = 0; base < count + spills; base += blk.threads())
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const e = map([base](int tt) { return base + tt; }, t);
        when(w, map([count](index_t x) { return x < count; }, e), [&](auto const& l) { store(l, words, e, 0u); });
        when(w, map([count, spills](index_t x) { return x >= count && x < count + spills; }, e),
             [&](auto const& l) { store(l, spill, map([count](index_t x) { return x - count; }, e), std::uint64_t(0)); });
      });
    blk.sync();
  }

  /// A barrier, then entry b's counters over the threads (thread tt starting at its own, so that the lanes of a
  /// warp read different banks) and its spill; count x constant added to out[b] where it is not 0.
  template <class Block>
  CALM_HD void merge_into(Block const& blk, std::uint32_t const* words, std::uint64_t const* spill) const {
    blk.sync();
    index_t const bins = layout.bins, threads = layout.threads;
    using U = std::make_unsigned_t<T>;
    U const each = static_cast<U>(values.value);
    for (index_t base = 0; base < bins; base += blk.threads())
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const b = map([base](int tt) { return base + tt; }, t);
        when(w, map([bins](index_t x) { return x < bins; }, b), [&](auto const& l) {
          auto total = load(l, spill, b);
          auto const shift = map([](index_t x) { return static_cast<unsigned>(x & 3) * 8u; }, b);
          for (index_t j = 0; j < threads; ++j) {
            auto const at = map([j, threads](index_t x, int tt) { return (x >> 2) * threads + ((j + tt) & (threads - 1)); }, b, t);
            total = map([](std::uint64_t s, std::uint32_t x, unsigned sh) { return s + ((x >> sh) & 0xFFu); }, total, load(l, words, at), shift);
          }
          when(l, map([](std::uint64_t s) { return s != 0; }, total), [&](auto const& u) {
            atomic_update(u, plus{}, scope::device{}, map([o = out](index_t x) { return o + x; }, b),
                          map([each](std::uint64_t s) { return static_cast<T>(static_cast<U>(s) * each); }, total));
          });
        });
      });
  }
};

}  // namespace detail
}  // namespace calm
