// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/workloads/hash_slots.hpp: the hash table of count_duplicates over keys of any value (ordered linear
// probing by atomic min) and the key maps that count into it and compact it (000 §4's counting step).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "../../core/error.hpp"
#include "../../core/exec.hpp"
#include "../bulk/scatter.hpp"
#include "../bulk/workspace.hpp"

namespace calm {
namespace detail {
/// What an insert into a table that may be too small watches (bounded false: the table has room for
/// every key and nothing is watched).
struct hash_guard {
  bool bounded;
  index_t probe_limit;
  std::uint32_t* overflow;
};

/// The hash table of count_duplicates over keys of any value: 2^bits slots holding the keys' bit
/// patterns as unsigned words (all ones: an empty slot), filled by ordered linear probing with atomic
/// min (a key takes the first slot from its home on that is empty or holds a larger key, and the
/// larger key moves on): every slot a key passes holds a smaller key for good, so each key is stored
/// once and is found by walking from its home. The key whose word is all ones has the extra slot 2^bits.
template <class K>
struct hash_slots {
  using word = std::conditional_t<sizeof(K) <= 4, std::uint32_t, std::uint64_t>;
  static constexpr word empty = static_cast<word>(~word(0));
  word* slots;
  int bits;  // 1 <= bits <= 62

  CALM_HD index_t capacity() const { return index_t(1) << bits; }
  CALM_HD static word to_word(K k) { return static_cast<word>(static_cast<std::make_unsigned_t<K>>(k)); }
  CALM_HD static K to_key(word x) { return static_cast<K>(static_cast<std::make_unsigned_t<K>>(x)); }
  /// Fibonacci hashing: the top bits of the word times 2^64 / golden ratio.
  CALM_HD index_t home(word x) const { return static_cast<index_t>((static_cast<std::uint64_t>(x) * 0x9E3779B97F4A7C15ull) >> (64 - bits)); }

  /// Stores x (not empty) unless it is there; l is a warp of one lane or a GPU lane on its own. Each
  /// slot is read first (atomic_load): one holding x ends the walk and one holding a smaller key is
  /// passed for good (slots only ever decrease), so hot keys and long walks cost reads, and only a slot
  /// that is empty or larger takes the atomic min. In a table that may be too small (g.bounded) a walk
  /// stops once *g.overflow is set (read every 16 slots) and sets it itself when it passes
  /// g.probe_limit slots: the table is then incomplete.
  template <class Lane>
  CALM_HD void insert(Lane const& l, word x, hash_guard const& g) const {
    index_t const mask = capacity() - 1;
    index_t p = home(x);
    for (index_t walked = 0; !g.bounded || walked < g.probe_limit; ++walked, p = (p + 1) & mask) {
      if (g.bounded && (walked & 15) == 15 && atomic_load(l, scope::device{}, static_cast<std::uint32_t const*>(g.overflow)) != 0u) return;
      word const seen = atomic_load(l, scope::device{}, static_cast<word const*>(slots + p));
      if (seen == x) return;
      if (seen < x) continue;  // stays smaller: the atomic min would leave it
      word const old = atomic_fetch_update(l, min{}, scope::device{}, slots + p, x);
      if (old == x || old == empty) return;
      x = old > x ? old : x;  // the slot keeps the smaller key; the larger one walks on
    }
    atomic_update(l, bit_or{}, scope::device{}, g.overflow, 1u);
  }
};

/// The key map of the counting pass: a key's slot in the filled table, -1 for a key not in it (the
/// walk from its home stops at the first slot holding a larger word; there is always an empty one).
/// Every key counted is there, but a key map must be total: inactive lanes may map garbage.
template <class K>
struct hash_slot_of {
  hash_slots<K> table;
  CALM_HD index_t operator()(K k) const {
    auto const x = hash_slots<K>::to_word(k);
    if (x == hash_slots<K>::empty) return table.capacity();
    index_t const mask = table.capacity() - 1;
    for (index_t p = table.home(x);; p = (p + 1) & mask) {
      auto const held = table.slots[p];
      if (held == x) return p;
      if (held > x) return -1;
    }
  }
};

/// The key of slot j, for the compaction.
template <class K>
struct hash_key_of {
  hash_slots<K> table;
  CALM_HD K operator()(index_t j) const {
    return hash_slots<K>::to_key(j == table.capacity() ? hash_slots<K>::empty : table.slots[j]);
  }
};

/// Inserts keys[0, n) into the table: one lane per distinct key of each warp's step (match_any). In a
/// table that may be too small (guard.bounded) a lane first reads *guard.overflow and gives up once it
/// is set: the rest of the pass only streams the keys.
template <class K>
struct hash_insert_program {
  K const* keys;
  index_t n;
  hash_slots<K> table;
  hash_guard guard;
  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    using word = typename hash_slots<K>::word;
    hash_slots<K> const tab = table;
    hash_guard const g = guard;
    stream_items<1>(blk, keys, same_value<int>{0}, n, [&](auto const& w, auto const&, auto const& k, auto const&) {
      auto const x = map([](K key) { return hash_slots<K>::to_word(key); }, k);
      auto const peers = match_any(w, x);
      auto const inserts = map([](auto below, word v) { return below == decltype(below)(0) && v != hash_slots<K>::empty; }, peers & lanes_lt(w), x);
      when(w, inserts, [&](auto const& u) {
        each_lane(
            u,
            [&](auto const& l, word xl) {
              if (!g.bounded || atomic_load(l, scope::device{}, static_cast<std::uint32_t const*>(g.overflow)) == 0u) tab.insert(l, xl, g);
            },
            x);
      });
    });
  }
};

/// log2 of the hash table's capacity for `room` distinct keys of type K: at least `spread` x room
/// slots (load at most 1 / spread), at least 64, at most twice the number of values K has.
template <class K>
int hash_bits(index_t room, index_t spread) {
  int bits = 6;
  while ((index_t(1) << bits) < spread * room && bits < 62) ++bits;
  int const most = static_cast<int>(8 * sizeof(K)) + 1;
  return bits < most ? bits : most;
}

/// The longest walk a table that may be too small allows before it reports an overflow: at a load
/// of at most a quarter, linear probing's walks stay far below it.
constexpr index_t hash_probe_limit = 128;

}  // namespace detail
}  // namespace calm
