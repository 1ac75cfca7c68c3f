// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/block/private_table.hpp: a table kept in block-local memory as R copies with padding between
// them, lanes mapped to copies cyclically or in blocks, merged into the device table at the end (001 §3, §4).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../warp/update.hpp"

namespace calm {

/// Which copy thread t of a block updates (001 equations (1) and (2)).
enum class copy_mapping {
  /// Consecutive threads use consecutive copies: copy t % R. Lanes of one warp with equal keys land
  /// on different copies, so their position conflicts become (cheaper) bank conflicts.
  cyclic,
  /// Runs of ceil(N / R) consecutive threads share a copy: copy t / ceil(N / R).
  blocked,
};

inline char const* to_string(copy_mapping m) { return m == copy_mapping::cyclic ? "cyclic" : "blocked"; }

namespace detail {
/// Whether key k names an entry of a table of `bins` entries (bins >= 0; negative keys do not, and
/// unsigned keys are compared as they are, 2^63 and above too).
template <class K>
CALM_HD bool key_in_table(K k, index_t bins) {
  if constexpr (std::is_signed<K>::value) return k >= 0 && static_cast<index_t>(k) < bins;
  else return static_cast<std::uint64_t>(k) < static_cast<std::uint64_t>(bins);
}
}  // namespace detail

/// The shape of a privatized table: `copies` copies of `bins` entries, each followed by `pad` unused
/// entries, so copy r starts at entry r * (bins + pad) (one pad entry shifts each copy by one bank),
/// and after the last copy one discard entry, where updates of keys outside the table go.
struct private_layout {
  index_t bins = 0;                             ///< the table's entries
  int copies = 1;                               ///< R
  int pad = 0;                                  ///< entries between copies
  copy_mapping mapping = copy_mapping::cyclic;  ///< which copy a thread updates

  /// Entries from one copy to the next.
  CALM_HD constexpr index_t stride() const { return bins + pad; }
  /// The entry keys outside the table go to, after the copies.
  CALM_HD constexpr index_t discard() const { return stride() * copies; }
  /// All entries: the copies and the discard entry.
  CALM_HD constexpr index_t entries() const { return discard() + 1; }
  /// The bytes of all entries of T.
  template <class T>
  constexpr std::size_t bytes() const { return static_cast<std::size_t>(entries()) * sizeof(T); }
  /// The copy that thread t of a block of `threads` threads updates.
  CALM_HD constexpr int copy_of(int t, int threads) const {
    if (mapping == copy_mapping::cyclic) return (copies & (copies - 1)) == 0 ? t & (copies - 1) : t % copies;  // no division for R = 2^k
    return t / ((threads + copies - 1) / copies);
  }
};

/// One thread's views of its copies of a private_table, one per chunk u of a tile (see
/// private_table::lane_views).
template <class T, class Base, int U>
struct private_lane_view {
  Base base[U];  ///< the first entry of the copy that chunk u updates (a lane value)
  T* discard;    ///< where updates of keys outside the table go
  index_t bins;  ///< the table's entries

  /// The entry of key k in chunk u's copy; keys outside [0, bins) get the discard entry, so a lane
  /// needs no branch for them.
  template <class K>
  CALM_HD auto slot(int u, K const& k) const {
    T* const d = discard;
    index_t const b = bins;
    return map([d, b](auto bb, auto kk) { return detail::key_in_table(kk, b) ? bb + kk : d; }, base[u], k);
  }
};

/// A privatized table over a block's block-local memory (at least layout.bytes<T>() of it). Every
/// thread of the block calls clear() first and merge_into() last; between them lanes update
/// lane_views<U>(t, rotate).slot(u, key) with block-local atomics, through any warp strategy:
///
///   calm::private_table<float> tab{blk.template scratch<float>(), layout, blk.threads()};
///   tab.clear(blk, calm::plus{});
///   blk.for_each_warp([&](auto const& w, auto t) {
///     auto k = calm::load(w, keys, i);  // i: this thread's item
///     calm::update(w, calm::plus{}, calm::scope::block_local{}, tab.template lane_views<1>(t, false).slot(0, k), calm::load(w, vals, i));
///   });
///   tab.merge_into(blk, calm::plus{}, calm::scope::device{}, table);
template <class T>
struct private_table {
  T* data;                ///< the entries, in block-local memory
  private_layout layout;  ///< their layout
  /// Threads in the block (the blocked mapping divides them among the copies).
  int threads;

  /// Every entry of every copy (pads included) to op's identity, then a barrier.
  template <class Block, class Op>
  CALM_HD void clear(Block const& blk, Op) const {
    index_t const total = layout.entries();
    int const threads = blk.threads();
    T* const d = data;
    for (index_t base = 0; base < total; base += threads)
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const e = map([base](int tt) { return base + tt; }, t);
        when(w, e < total, [&](auto const& l) { store(l, d, e, Op::template identity<T>()); });
      });
    blk.sync();
  }

  /// Thread t's views of its copy for U chunks of items (lane values): slot(u, k) is the entry that
  /// lane key k of chunk u updates. Take them once per thread and tile: their members are plain
  /// values, which the host keeps in registers. With rotate, chunk u goes to the copy u places on
  /// (cyclically): a lane that runs alone may change copies between its items, since only lanes
  /// running together must keep to different copies.
  template <int U, class Tid>
  CALM_HD auto lane_views(Tid const& t, bool rotate) const {
    private_layout const lay = layout;
    int const n = threads;
    auto const start = [lay, n](int tt, int r) {  // the first entry of thread tt's copy, r copies on
      int const c = lay.copy_of(tt, n) + r;
      int const wrapped = c < lay.copies ? c : (lay.copies & (lay.copies - 1)) == 0 ? c & (lay.copies - 1) : c % lay.copies;
      return static_cast<index_t>(wrapped) * lay.stride();
    };
    auto const b0 = data + map([start](int tt) { return start(tt, 0); }, t);
    private_lane_view<T, std::decay_t<decltype(b0)>, U> v{};
    for (int u = 0; u < U; ++u) v.base[u] = rotate && u > 0 ? data + map([start, u](int tt) { return start(tt, u); }, t) : b0;
    v.discard = data + lay.discard();
    v.bins = lay.bins;
    return v;
  }

  /// A barrier, then each bin's copies combined and applied to out[bin] with op at scope s: one update
  /// per bin whose combined value is not the identity (applying the identity changes nothing).
  template <class Block, class Op, class Scope>
  CALM_HD void merge_into(Block const& blk, Op op, Scope s, T* out) const {
    blk.sync();
    index_t const bins = layout.bins, stride = layout.stride();
    int const copies = layout.copies;
    int const n = blk.threads();
    T* const d = data;
    for (index_t base = 0; base < bins; base += n)
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const b = map([base](int tt) { return base + tt; }, t);
        when(w, b < bins, [&](auto const& l) {
          auto v = load(l, d, b);
          for (int r = 1; r < copies; ++r) v = map(op, v, load(l, d, b + r * stride));
          when(l, v != Op::template identity<T>(), [&](auto const& u) { atomic_update(u, op, s, out + b, v); });
        });
      });
  }
};

}  // namespace calm
