// calm/algorithms/count_duplicates.hpp: the distinct keys of an array with their occurrence counts, counted
// by atomics (000 §4: the counting step ahead of merge sort and page view count): into a table of key_bound
// counts compacted in key order, or, for keys of any value, into a hash table compacted in slot order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "../core/error.hpp"
#include "../core/exec.hpp"
#include "scatter.hpp"
#include "workspace.hpp"

namespace calm {

/// The options of count_duplicates; how the counts are accumulated is its template argument S
/// (calm::histogram's strategy; automatic by default).
struct count_options {
  /// Check before anything is written that every key is in [0, key_bound) (one pass and a wait);
  /// false: keys outside are not counted.
  bool check_indices = true;
  /// Keys of any value (the hashed form): how many distinct keys to size the hash table for (0: n, a
  /// table of 2n slots). A small table stays in cache and is much faster to clear, fill and compact;
  /// one that turns out too small is noticed after its pass (one wait) and replaced by one 16 times
  /// larger, up to 2n slots: the result is the same, only slower.
  index_t max_unique = 0;
};

namespace detail {

/// Table entries each compaction warp owns (W x this many).
constexpr index_t compact_steps_per_warp = 32;

/// Inclusive sum over the warp's lanes (every lane active).
template <class Warp, class V>
CALM_HD V warp_inclusive_sum(Warp const& w, V x) {
  auto const lane = lane_id(w);
  for (int d = 1; d < Warp::size; d <<= 1) {
    V const y = shuffle_up(w, x, d);
    x = select(lane >= d, x + y, x);
  }
  return x;
}

/// The key of table entry j when the table is indexed by the key itself.
template <class K>
struct index_as_key {
  CALM_HD K operator()(index_t j) const { return static_cast<K>(j); }
};

/// Compaction pass 1 (Count) and 3 (!Count) over a table of `bins` counts: warp g owns entries
/// [g S, (g + 1) S); pass 1 stores its number of nonzero entries in offsets[g], pass 3 (offsets then
/// exclusive sums) writes its entries' keys (key_of(entry)) and counts from offsets[g] on, in entry order.
template <bool Count, class K, class C, class KeyOf = index_as_key<K>>
struct compact_counts_program {
  C const* table;
  index_t bins;
  index_t* offsets;
  K* unique;
  C* counts;
  KeyOf key_of = {};
  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    blk.for_each_warp([&](auto const& w, auto) {
      constexpr int WS = std::decay_t<decltype(w)>::size;
      index_t const g = group_index(w), per = WS * compact_steps_per_warp;
      index_t const begin = g * per, end = std::min(bins, begin + per);
      auto const lane = lane_id(w);
      index_t at = Count ? 0 : offsets[g];
      for (index_t base = begin; base < end; base += WS) {
        auto const j = map([base](int l) { return base + l; }, lane);
        auto const in = j < end;
        auto const c = select(in, load(w, table, select(in, j, index_t(0))), C(0));
        auto const nz = c != C(0);
        auto const mask = ballot(w, nz);
        if constexpr (!Count) {
          auto const pos = map([at](int before) { return at + before; }, popc(w, mask & lanes_lt(w)));
          when(w, nz, [&](auto const& u) {
            // key_of only on entries of the table (on the host map runs over every lane)
            store(u, unique, pos, map([ko = key_of](index_t x) { return ko(x); }, select(in, j, index_t(0))));
            store(u, counts, pos, c);
          });
        }
        at += popc(w, mask);
      }
      if constexpr (Count) when(w, lane == 0, [&](auto const& l) { store(l, offsets, g, at); });
    });
  }
};

/// Compaction pass 2: offsets[0, g) to exclusive sums in place, the total to *total; one block.
struct exclusive_scan_program {
  index_t* offsets;
  index_t g;
  index_t* total;
  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    index_t* const o = offsets;
    index_t const count = g;
    int const threads = blk.threads();
    index_t const chunk = (count + threads - 1) / threads;
    index_t* const warp_sums = blk.template scratch<index_t>();  // [warps] inclusive sums, then exclusive
    auto const own_sum = [&](auto const& w, auto const& t) {  // each thread's chunk, summed
      auto s = map([](int) { return index_t(0); }, t);
      for (index_t c = 0; c < chunk; ++c) {
        auto const e = map([chunk, c](int tt) { return tt * chunk + c; }, t);
        auto const in = e < count;
        s = s + select(in, load(w, o, select(in, e, index_t(0))), index_t(0));
      }
      return s;
    };
    blk.for_each_warp([&](auto const& w, auto t) {
      constexpr int WS = std::decay_t<decltype(w)>::size;
      auto const incl = warp_inclusive_sum(w, own_sum(w, t));
      when(w, lane_id(w) == WS - 1, [&](auto const& l) { store(l, warp_sums, map([](int tt) { return tt / WS; }, t), incl); });
    });
    blk.sync();
    blk.for_each_warp([&](auto const& w, auto t) {
      constexpr int WS = std::decay_t<decltype(w)>::size;
      int const warps = (threads + WS - 1) / WS;
      if (uniform_value(shuffle(w, t, 0)) != 0) return;  // the first warp scans the warps' sums (at most W of them)
      auto const in = t < warps;
      auto const v = select(in, load(w, warp_sums, select(in, t, 0)), index_t(0));
      auto const incl = warp_inclusive_sum(w, v);
      when(w, in, [&](auto const& l) { store(l, warp_sums, t + warps, incl - v); });
      when(w, t == warps - 1, [&](auto const& l) { store(l, total, index_t(0), incl); });
    });
    blk.sync();
    blk.for_each_warp([&](auto const& w, auto t) {
      constexpr int WS = std::decay_t<decltype(w)>::size;
      int const warps = (threads + WS - 1) / WS;
      auto const mine = own_sum(w, t);
      auto run = warp_inclusive_sum(w, mine) - mine + load(w, warp_sums, map([warps](int tt) { return warps + tt / WS; }, t));
      for (index_t c = 0; c < chunk; ++c) {
        auto const e = map([chunk, c](int tt) { return tt * chunk + c; }, t);
        auto const in = e < count;
        when(w, in, [&](auto const& u) {
          auto const x = load(u, o, e);
          store(u, o, e, run);
          run = select(in, run + x, run);
        });
      }
    });
  }
};

/// Writes the nonzero entries of table[0, bins) (bins > 0) as unique[u] = key_of(entry), counts[u],
/// in entry order, and their number to *num_unique: count per warp, scan, write (three launches).
template <class K, class C, class KeyOf, class Exec>
void launch_compact_counts(C const* table, index_t bins, KeyOf const& key_of, K* unique, C* counts, index_t* num_unique, Exec const& ex) {
  using W = typename Exec::warp_type;
  constexpr int threads = 256;
  index_t const per_warp = W::size * compact_steps_per_warp, warps_per_block = threads / W::size;
  index_t const warps = (bins + per_warp - 1) / per_warp, blocks = (warps + warps_per_block - 1) / warps_per_block;
  index_t const g = blocks * warps_per_block;
  workspace<Exec> ws(ex, static_cast<std::size_t>(g) * sizeof(index_t));
  index_t* const offsets = ws.template at<index_t>(0);
  ex.for_each_block(blocks, threads, 0, compact_counts_program<true, K, C, KeyOf>{table, bins, offsets, unique, counts, key_of});
  int const scan_threads = 1024;
  ex.for_each_block(1, scan_threads, 2 * (scan_threads / W::size + 1) * sizeof(index_t), exclusive_scan_program{offsets, g, num_unique});
  ex.for_each_block(blocks, threads, 0, compact_counts_program<false, K, C, KeyOf>{table, bins, offsets, unique, counts, key_of});
}

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

/// The distinct keys of keys[0, n), all in [0, key_bound), in increasing order, with the number of
/// times each occurs: unique[u] and counts[u] for u < *num_unique (both arrays need room for
/// min(n, key_bound) entries; num_unique is a device index_t). The counts are taken by atomics into
/// a table of key_bound entries (calm::histogram, so every strategy applies), which is then compacted:
/// no sort, O(n + key_bound). Throws calm::error before anything is written on a null pointer, a
/// size out of range or (opt.check_indices) a key outside [0, key_bound). Asynchronous on a GPU but
/// for the index check and the collision sampling of strategy::automatic.
///
///   calm::count_duplicates(keys, 6, 10, unique, counts, num);  // keys {7, 2, 7, 7, 0, 2}: unique {0, 2, 7}, counts {1, 2, 3}, *num 3
template <strategy S = strategy::automatic, class K, class C, class Exec = default_exec>
void count_duplicates(K const* keys, index_t n, index_t key_bound, K* unique, C* counts, index_t* num_unique, count_options const& opt = {},
                      Exec const& ex = Exec{}) {
  static_assert(std::is_integral<K>::value, "count_duplicates: keys must be integers");
  check_atomic_op<plus, C>();
  require(n >= 0 && key_bound >= 0, errc::invalid_argument,
          [&] { return "count_duplicates: negative size (n " + std::to_string(n) + ", key_bound " + std::to_string(key_bound) + ")"; });
  require(n == 0 || keys != nullptr, errc::invalid_argument, "count_duplicates: keys is null");
  require(num_unique != nullptr, errc::invalid_argument, "count_duplicates: num_unique is null");
  require(n == 0 || key_bound == 0 || (unique != nullptr && counts != nullptr), errc::invalid_argument, "count_duplicates: unique or counts is null");
  if (opt.check_indices) detail::require_inside("count_duplicates", "keys", keys, n, key_bound, ex);
  std::size_t const table_bytes = static_cast<std::size_t>(key_bound) * sizeof(C);
  detail::workspace<Exec> ws(ex, table_bytes + 16);
  C* const table = ws.template at<C>(0);
  ex.fill(num_unique, 0, sizeof(index_t));
  if (n == 0 || key_bound == 0) return;
  ex.fill(table, 0, table_bytes);
  histogram<S>(keys, n, table, key_bound, scatter_options{}, ex);
  detail::launch_compact_counts(table, key_bound, detail::index_as_key<K>{}, unique, counts, num_unique, ex);
}

/// The distinct keys of keys[0, n), of any value, with the number of times each occurs: unique[u] and
/// counts[u] for u < *num_unique, in no particular order (the order of a hash table's slots; sort the
/// unique keys if order matters, as 000's counting ahead of a sort does). Both arrays need room for n
/// entries; num_unique is a device index_t. The keys go into a hash table (one pass: ordered linear
/// probing by atomic min, one lane per distinct key of a warp), the counts into a table beside it (a
/// second pass: calm::scatter of +1 with strategy S over the keys' slots), which is then compacted:
/// no sort, O(n) work. The table has the power of two of slots at or above 2n (2n to 4n slots of 4 or
/// 8 bytes, plus as many counts of C: scratch), or with opt.max_unique at or above 4 x max_unique (at
/// least 64) at first; a pass that finds that one too small (a walk beyond 128 slots) is repeated with
/// a table 16 times larger, up to the 2n size, which always suffices. A forced block-local
/// strategy (privatize, privatize_peer_reduce, privatize_adaptive) whose count table does not fit a block counts with peer_reduce. opt.check_indices does not apply (every key is
/// valid). Throws calm::error before anything is written on a null pointer or a negative n or
/// max_unique. Asynchronous on a GPU but for one wait per table that may be too small (none without
/// max_unique) and the collision sampling of strategy::automatic.
///
///   calm::count_duplicates(keys, 6, unique, counts, num);  // keys {70000, -2, 70000, 70000, 5, -2}: {-2: 2, 5: 1, 70000: 3} in some order, *num 3
template <strategy S = strategy::automatic, class K, class C, class Exec = default_exec>
void count_duplicates(K const* keys, index_t n, K* unique, C* counts, index_t* num_unique, count_options const& opt = {}, Exec const& ex = Exec{}) {
  static_assert(std::is_integral<K>::value && !std::is_same<K, bool>::value, "count_duplicates: keys must be integers");
  check_atomic_op<plus, C>();
  require(n >= 0, errc::invalid_argument, [&] { return "count_duplicates: negative size n " + std::to_string(n); });
  require(n == 0 || keys != nullptr, errc::invalid_argument, "count_duplicates: keys is null");
  require(num_unique != nullptr, errc::invalid_argument, "count_duplicates: num_unique is null");
  require(n == 0 || (unique != nullptr && counts != nullptr), errc::invalid_argument, "count_duplicates: unique or counts is null");
  require(opt.max_unique >= 0, errc::invalid_argument, [&] { return "count_duplicates: negative max_unique " + std::to_string(opt.max_unique); });
  ex.fill(num_unique, 0, sizeof(index_t));
  if (n == 0) return;
  using table_t = detail::hash_slots<K>;
  using word = typename table_t::word;
  // with a max_unique: tables of room distinct keys, 4 x room slots, growing 16-fold while the keys
  // overflow them; the last (at once without one) has 2n slots: every key fits, no limit, no wait
  index_t room = opt.max_unique > 0 ? std::min(n, opt.max_unique) : n;
  int const most_bits = detail::hash_bits<K>(n, 2);
  index_t const tiles = (n + detail::tile_items<1>(256) - 1) / detail::tile_items<1>(256);
  std::unique_ptr<detail::workspace<Exec>> ws;
  table_t tab{};
  C* table = nullptr;
  index_t cap = 0;
  std::size_t count_bytes = 0;
  for (;;) {
    bool const last = room >= n || detail::hash_bits<K>(room, 4) >= most_bits;
    int const bits = last ? most_bits : detail::hash_bits<K>(room, 4);
    cap = index_t(1) << bits;
    std::size_t const slot_bytes = (static_cast<std::size_t>(cap) * sizeof(word) + 15) / 16 * 16;
    count_bytes = static_cast<std::size_t>(cap + 1) * sizeof(C);
    ws.reset();  // the table that was too small goes first
    std::size_t const guard_bytes = 16;
    ws = std::make_unique<detail::workspace<Exec>>(ex, slot_bytes + guard_bytes + count_bytes);
    std::uint32_t* const overflow = ws->template at<std::uint32_t>(slot_bytes);
    tab = table_t{ws->template at<word>(0), bits};
    table = ws->template at<C>(slot_bytes + guard_bytes);
    ex.fill(tab.slots, 0xff, slot_bytes);
    ex.fill(overflow, 0, guard_bytes);
    detail::hash_guard const guard{!last, detail::hash_probe_limit, overflow};  // a walk past 128 slots: too small
    ex.for_each_resident_block(tiles, 256, 0, detail::hash_insert_program<K>{keys, n, tab, guard});
    if (last) break;
    std::uint32_t over = 0;
    ex.to_host(&over, overflow, sizeof over);
    if (over == 0) break;
    room = std::min(n, room * 16);
  }
  ex.fill(table, 0, count_bytes);
  auto const count = [&](auto c) {
    detail::bulk_scatter<family_model<Exec::family>, decltype(c)::value>("count_duplicates", plus{}, keys, constant(C(1)), n, table, cap + 1,
                                                                          detail::hash_slot_of<K>{tab}, scatter_options{}, ex);
  };
  // the count table's size is calm's, not the caller's: a forced block-local strategy it does not fit
  // counts with peer_reduce instead
  if constexpr (is_block_local(S)) {
    if (cap + 1 > privatize_capacity<C>(ex)) count(strategy_constant<strategy::peer_reduce>{});
    else count(strategy_constant<S>{});
  } else {
    count(strategy_constant<S>{});
  }
  detail::launch_compact_counts(table, cap + 1, detail::hash_key_of<K>{tab}, unique, counts, num_unique, ex);
}

}  // namespace calm
