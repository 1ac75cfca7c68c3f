// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/workloads/count_duplicates.hpp: the distinct keys of an array with their occurrence counts, counted
// by atomics (000 §4: the counting step ahead of merge sort and page view count): into a table of key_bound
// counts compacted in key order, or, for keys of any value, into a hash table compacted in slot order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "../../core/error.hpp"
#include "../../core/exec.hpp"
#include "../block/compact_counts.hpp"
#include "hash_slots.hpp"
#include "../bulk/scatter.hpp"
#include "../bulk/workspace.hpp"

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
  require(key_bound <= (index_t(1) << 40), errc::out_of_range,
          [&] { return "count_duplicates: key_bound = " + std::to_string(key_bound) + " is larger than a count table calm makes (2^40 entries)"; });
  if (opt.check_indices) detail::require_inside("count_duplicates", "keys", keys, n, key_bound, ex);
  if (n == 0 || key_bound == 0) {
    ex.fill(num_unique, 0, sizeof(index_t));
    return;
  }
  std::size_t const table_bytes = static_cast<std::size_t>(key_bound) * sizeof(C);
  detail::workspace<Exec> ws(ex, table_bytes + 16);
  C* const table = ws.template at<C>(0);
  ex.fill(table, 0, table_bytes);
  histogram<S>(keys, n, table, key_bound, scatter_options{}, ex);  // throws before launching where S cannot take the table
  ex.fill(num_unique, 0, sizeof(index_t));
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
