// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/block/adaptive_merge.hpp: privatize_scatter's lane merging chosen by each block from a probe of its first
// tile (calm's own, beside 002's peer_reduce): the probe finds hot keys and runs of equal keys with match_any and votes.
#pragma once

#include <algorithm>
#include <cstdint>

#include "../../core/exec.hpp"
#include "../../core/ops.hpp"
#include "../../core/scope.hpp"
#include "block_stream.hpp"
#include "../bulk/key_map.hpp"
#include "../warp/known_keys.hpp"
#include "../warp/update.hpp"

namespace calm {

/// What adaptive_merge's probe finds in a block's first tile: of `items` keys (one per thread), the
/// most that one offered key takes (`most`: a hot key, wherever it falls), and, of the `run_items` keys
/// (all of them), how many lie in the largest group of equal keys of their warp (`run`: equal keys side
/// by side, as in sorted keys, or one hot key) and how many share their warp's first key (`first_run`:
/// mostly equal keys side by side), each summed over the warps.
/// Of values, also the offered keys of the two largest counts (`hot`, -1 where none) and the second
/// and third counts (`next`, `third`; the first is `most`).
struct hot_key_probe {
  /// The counts and keys described above.
  ///@{
  index_t most = 0, items = 0, run = 0, run_items = 0, first_run = 0;
  index_t hot[2] = {-1, -1};
  index_t next = 0, third = 0;
  ///@}
};

/// privatize_scatter's lane merging chosen by each block (calm's own): the block probes its first tile
/// (detail::probe_block) and, before each block-local atomic, merges the lanes of its one or two hot
/// keys (by a ballot each), or a warp's equal keys (peer_reduce), only where its probe finds keys
/// that collide enough per copy of the table (merge_for); elsewhere each lane updates on its own
/// (naive). On an H100 merging every lane cost 3-11x more than not where keys rarely repeat
/// (match_any on every item), and saved up to 8x where one key took a quarter or more of a one-copy
/// table's float updates or runs of equal keys filled the warps
/// (perf/results/cuda-h100-2026-11-24-privatize-merge.md, cuda-h100-2026-11-24-bulk-adaptive.md).
struct adaptive_merge {
  /// Values read from an array: a block merges where one key takes at least this share of its probed
  /// updates per copy of the table (and two of them at least), wherever those updates fall (on a GPU a
  /// float's or double's block-local atomic is a compare-and-swap loop: a hot key costs much even
  /// spread over the warps).
  /// Negative: the exec's default (gpu_weighted_share on a GPU; never on the host).
  float weighted_share = -1.0f;
  /// calm::constant values (a histogram's +1s, whose block-local atomics contend much less): a block
  /// merges where the lanes that share their warp's first key make this share of its probed keys per
  /// copy (runs of equal keys side by side, as in sorted keys; a hot key spread over the warps costs
  /// less than match_any on every item: on an H100, half the keys on one of 24,576 bins took 3.1x
  /// longer merged). Negative: the exec's default (gpu_counting_share; never on the host).
  float counting_share = -1.0f;
  /// Device memory (or nullptr): each block that merges adds 1 here.
  std::uint32_t* merged_blocks = nullptr;
  /// Values read from an array: a block also merges where the largest groups of equal keys of its
  /// warps make this share of its probed keys per copy (runs of equal keys: every lane of a warp on one
  /// entry, a compare-and-swap each). Negative: the exec's default (gpu_weighted_run_share; never on the host).
  float weighted_run_share = -1.0f;

  /// Values read from an array: the lanes of each of the probe's two hottest keys merge by a ballot
  /// per key (known_keys_merge; the other lanes update on their own) where that key takes at least this
  /// share of the block's probed updates per copy; this comes before merging every lane, unless the
  /// keys sit side by side or a third key is hot too (merge_for).
  /// On an H100 the float and double training inputs of one hot key (halfhot, hot10, hot25, zipf,
  /// zipf8) on tables of 8 copies or fewer ran 1.4-2.3x faster by geometric mean per distribution, up
  /// to 4.3x (perf/results/cuda-h100-2026-11-27-known-keys.md). Negative: the exec's default
  /// (gpu_known_key_share on a GPU; never on the host).
  float known_key_share = -1.0f;

  /// The defaults on a GPU, from the training inputs of the bulk sweep (H100; the results files above).
  ///@{
  static constexpr float gpu_weighted_share = 0.075f, gpu_counting_share = 0.5f, gpu_weighted_run_share = 0.25f, gpu_known_key_share = 0.04f;
  ///@}
  /// On the host a block runs on one core: a hot key contends with nothing there, and peer_reduce's
  /// lane-by-lane match cost up to 37x (floats, half the keys on one of 100,000 bins), so by default
  /// the host never merges.
  static constexpr float never = 2.0f;

  /// These options with the defaults of an exec of `family` filled in.
  adaptive_merge resolved(device_family family) const {
    adaptive_merge r = *this;
    bool const host = family == device_family::host;
    if (r.weighted_share < 0) r.weighted_share = host ? never : gpu_weighted_share;
    if (r.counting_share < 0) r.counting_share = host ? never : gpu_counting_share;
    if (r.weighted_run_share < 0) r.weighted_run_share = host ? never : gpu_weighted_run_share;
    if (r.known_key_share < 0) r.known_key_share = host ? never : gpu_known_key_share;
    return r;
  }
  /// Whether a block whose probe found `p` merges every lane into a table of `copies` copies, the
  /// hot keys aside (shares resolved).
  CALM_HD bool merges(hot_key_probe const& p, int copies, bool counting) const {
    if (counting) return reaches(p.first_run, p.run_items, counting_share, copies);
    // a key seen once collides with nothing (a block's last tile may hold a few keys, each a large share)
    return (p.most >= 2 && reaches(p.most, p.items, weighted_share, copies)) || reaches(p.run, p.run_items, weighted_run_share, copies);
  }
  /// Of values: how many of the probe's hot keys reach known_key_share (0, 1 or 2: the first, then
  /// both), each seen twice at least.
  CALM_HD int known_keys(hot_key_probe const& p, int copies) const {
    auto const known = [&](index_t part) { return part >= 2 && reaches(part, p.items, known_key_share, copies); };
    return !known(p.most) ? 0 : known(p.next) ? 2 : 1;
  }
  /// How a block whose probe found `p` merges: its hot keys (`known` of them by ballot) where one or
  /// two reach known_key_share, unless a third does too, half the lanes share their warp's first key
  /// or the warps' largest groups are more than twice the hot keys' updates (keys side by side, whose
  /// hot keys change from tile to tile); else every lane (peer_reduce) where merges(), or not at all.
  struct choice {
    bool every_lane = false;  ///< merge every lane (peer_reduce)
    int known = 0;            ///< else merge the lanes on this many known hot keys (0, 1 or 2)
  };
  /// The merge for a block whose probe found p, with `copies` copies of the table.
  CALM_HD choice merge_for(hot_key_probe const& p, int copies, bool counting) const {
    if (p.items == 0) return {};
    int const known = counting ? 0 : known_keys(p, copies);
    // a third key that reaches the share too: more hot keys than two (a few runs in the tile)
    bool const more = known == 2 && p.third >= 2 && reaches(p.third, p.items, known_key_share, copies);
    // most lanes share their warp's first key: keys side by side (sorted), whose hot keys in the first
    // tile are not those of the next tiles (sorted float keys on 6,000 and 20,000 bins ran 1.9-4.2x
    // slower by known keys)
    bool const sorted = 2 * p.first_run >= p.run_items;
    if (known == 0 || more || sorted) return {merges(p, copies, counting), 0};
    index_t const hot = known == 2 ? p.most + p.next : p.most;
    bool const runs = reaches(p.run, p.run_items, weighted_run_share, copies) && p.run > 2 * hot;
    return runs ? choice{true, 0} : choice{false, known};
  }
  /// Whether any block could merge into a table of `copies` copies: one key everywhere merges every
  /// lane, or one key of half the updates reaches known_key_share. On an H100 the probe cost floats
  /// 6-16% on 1,536 bins (16 copies), where no training input's hot key reached 0.04 per copy.
  bool could_merge(int copies, bool counting) const {
    hot_key_probe const one{2, 2, 2, 2, 2}, half{2, 4, 2, 4, 2};
    return merges(one, copies, counting) || (!counting && known_keys(half, copies) > 0);
  }

 private:
  CALM_HD static bool reaches(index_t part, index_t of, float share, int copies) {
    return static_cast<double>(part) >= static_cast<double>(share) * copies * static_cast<double>(of);
  }
};

namespace detail {

/// adaptive_merge's probes keep their sums in block-local memory, zeroed by clear_probe before the
/// barrier that precedes the probe: the sums over the warps of their largest groups and of their
/// first keys' groups (and a pad word); for values (Most) also probe_slots owners (each warp's offered
/// key with its group size, by atomic max) and a count per owner.
constexpr int probe_slots = 128;
constexpr std::size_t run_probe_bytes = 4 * sizeof(std::uint32_t);
constexpr std::size_t hot_key_probe_bytes = run_probe_bytes + probe_slots * (sizeof(std::uint64_t) + sizeof(std::uint32_t));
CALM_HD constexpr std::size_t probe_area_bytes(bool counting) { return counting ? run_probe_bytes : hot_key_probe_bytes; }

/// The first chunk (of Vec items) of this block's first tile, which adaptive_merge's probes read, or -1
/// where the block has no full chunk.
template <int Vec, class Block>
CALM_HD index_t first_probed_chunk(Block const& blk, index_t n) {
  index_t const chunks = n / Vec, tile_chunks = blk.threads() * loads_in_flight;
  index_t first = -1;
  blk.for_each_tile((chunks + tile_chunks - 1) / tile_chunks, [&](index_t tile) {
    if (first < 0) first = tile;
  });
  return first < 0 ? -1 : first * tile_chunks;
}

/// probe_area_bytes(!Most) at `area` (16-byte aligned) to zero, without a barrier (the caller's next
/// barrier orders the stores before the probe).
template <bool Most, class Block>
CALM_HD void clear_probe(Block const& blk, unsigned char* area) {
  constexpr int words = static_cast<int>(probe_area_bytes(!Most) / sizeof(std::uint32_t));
  std::uint32_t* const w32 = reinterpret_cast<std::uint32_t*>(area);
  for (int base = 0; base < words; base += blk.threads())
    blk.for_each_warp([&](auto const& w, auto t) {
      auto const e = map([base](int tt) { return base + tt; }, t);
      when(w, e < words, [&](auto const& l) { store(l, w32, e, 0u); });
    });
}

/// An offered key's slot among the probe_slots owners: the top bits of a multiplicative hash of its low 32 bits.
CALM_HD inline int probe_slot(index_t key) { return static_cast<int>(static_cast<std::uint32_t>(key) * 2654435761u >> 25); }
/// Keys an owner holds: [0, 2^40); the group size sits above them.
constexpr index_t probe_key_limit = index_t(1) << 40;

/// adaptive_merge's probe of this block's first tile (the tile stream_items_with_state starts with):
/// the first item of each thread's first chunk, one key per thread spread over the tile. Each warp
/// finds its largest group of equal keys (match_any) and the lanes that share its first lane's key,
/// and adds both to the sums in `area` (probe_area_bytes(!Most) of block-local memory, zeroed by
/// clear_probe before the last barrier) by a block-local atomic each. A count (not Most) stops there:
/// one barrier, `most` 0 (adaptive_merge reads first_run only). Values (Most): each warp also offers
/// its largest group's key to the owner slot of its hash, which keeps the offer of the largest group
/// (ties: the larger key); after a barrier every probed key that owns its slot counts itself there,
/// and after another `most` is the largest count: the exact count of an offered key, never more (a
/// hot key's groups outgrow a stray key's, so it keeps a slot they share). Every thread gets the same
/// answer; the area is read, not cleared. On an H100, against an exact count of each warp's offered
/// key by a ballot per key and warp with three barriers, a histogram's call took 0.5-3.6 us less
/// (perf/results/cuda-h100-2026-11-26-adaptive-probe.md) and a float or double sum's 1.7-2.4 us less
/// in the median, up to 30 us (perf/results/cuda-h100-2026-11-27-owner-probe.md).
template <int Vec, bool Most, class Block, class K, class KeyMap>
CALM_HD hot_key_probe probe_block(Block const& blk, K const* keys, index_t n, KeyMap const& key_map, unsigned char* area) {
  index_t const chunks = n / Vec, threads = blk.threads(), base = first_probed_chunk<Vec>(blk, n);
  hot_key_probe r;
  if (base < 0) return r;  // no full chunk: nothing to probe (block 0's last n % Vec items go naive)
  r.items = r.run_items = threads < chunks - base ? threads : chunks - base;
  std::uint32_t* const sums = reinterpret_cast<std::uint32_t*>(area);  // runs, first runs
  std::uint64_t* const owners = reinterpret_cast<std::uint64_t*>(area + run_probe_bytes);
  std::uint32_t* const counts = reinterpret_cast<std::uint32_t*>(area + run_probe_bytes + probe_slots * sizeof(std::uint64_t));
  // thread t's probed key, where its chunk lies before the last
  auto const probed = [&](auto const& w, auto const& t, auto&& body) {
    auto const c = map([base](int tt) { return base + tt; }, t);
    when(w, map([chunks](index_t cc) { return cc < chunks; }, c), [&](auto const& v) {
      body(v, map_keys(v, key_map, load(v, keys, map([](index_t cc) { return cc * Vec; }, c))));
    });
  };
  blk.for_each_warp([&](auto const& w, auto t) {
    probed(w, t, [&](auto const& v, auto const& key) {
      // the warp's largest group of equal keys, its size found bit by bit (a warp has at most 64 lanes)
      auto const group = map([](auto m) { return static_cast<int>(m); }, popc(v, match_any(v, key)));
      int largest = 0;
      for (int b = 6; b >= 0; --b)
        if (any(v, group >= (largest | (1 << b)))) largest |= 1 << b;
      auto const same = static_cast<std::uint32_t>(popc(v, ballot(v, key == shuffle(v, key, leader_lane(v)))));
      when(v, elect_leader(v), [&](auto const& l) {
        atomic_update(l, plus{}, scope::block_local{}, sums, static_cast<std::uint32_t>(largest));
        atomic_update(l, plus{}, scope::block_local{}, sums + 1, same);
      });
      if constexpr (Most) {
        // the largest group's key (of its lowest lane), offered with the group's size above it (0: no offer)
        auto const top = shuffle(v, key, ffs(v, ballot(v, group == largest)) - 1);
        auto const offer = map([largest](index_t k) {
          return k >= 0 && k < probe_key_limit ? static_cast<std::uint64_t>(largest) << 40 | static_cast<std::uint64_t>(k) : std::uint64_t(0);
        }, top);
        when(v, elect_leader(v), [&](auto const& l) {
          atomic_update(l, max{}, scope::block_local{}, owners + map([](index_t k) { return probe_slot(k); }, top), offer);
        });
      }
    });
  });
  blk.sync();
  r.run = sums[0];
  r.first_run = sums[1];
  if constexpr (Most) {
    blk.for_each_warp([&](auto const& w, auto t) {
      probed(w, t, [&](auto const& v, auto const& key) {
        auto const slot = map([](index_t k) { return probe_slot(k); }, key);
        auto const owner = load(v, owners, slot);
        auto const owns = map([](index_t k, std::uint64_t o) {
          return o != 0u && k >= 0 && static_cast<std::uint64_t>(k) == (o & static_cast<std::uint64_t>(probe_key_limit - 1));
        }, key, owner);
        when(v, owns, [&](auto const& u) { atomic_update(u, plus{}, scope::block_local{}, counts + slot, 1u); });
      });
    });
    blk.sync();
    // the three largest counts and the slots of the first two, each warp reading them all, as
    // (count << 7 | slot) found bit by bit (a count is at most 1,024: 11 bits above the slot's 7)
    auto const largest = [&](int skip, int skip2) {
      std::uint32_t best = 0;
      blk.for_each_warp([&](auto const& w, auto) {
        constexpr int W = std::decay_t<decltype(w)>::size;
        auto const lane = lane_id(w);
        int const slots = probe_slots;  // a value: the device cannot bind a reference to the namespace constant
        auto m = map([](int) { return 0u; }, lane);
        for (int i = 0; i < slots; i += W) {
          auto const s = map([i, slots](int l) { return l + i < slots ? l + i : 0; }, lane);
          m = map([skip, skip2](std::uint32_t a, std::uint32_t c, int ss) {
            std::uint32_t const packed = ss == skip || ss == skip2 || c == 0u ? 0u : c << 7 | static_cast<std::uint32_t>(ss);
            return a > packed ? a : packed;
          }, m, load(w, counts, s), s);
        }
        std::uint32_t top = 0;
        for (int b = 17; b >= 0; --b)
          if (any(w, m >= (top | (1u << b)))) top |= 1u << b;
        best = top;
      });
      return best;
    };
    auto const key_of = [&](std::uint32_t top) {
      return static_cast<index_t>(owners[top & 127u] & static_cast<std::uint64_t>(probe_key_limit - 1));
    };
    std::uint32_t const first = largest(-1, -1);
    if (first != 0u) {
      r.most = static_cast<index_t>(first >> 7);
      r.hot[0] = key_of(first);
      int const s0 = static_cast<int>(first & 127u);
      std::uint32_t const second = largest(s0, -1);
      if (second != 0u) {
        r.next = static_cast<index_t>(second >> 7);
        r.hot[1] = key_of(second);
        r.third = static_cast<index_t>(largest(s0, static_cast<int>(second & 127u)) >> 7);
      }
    }
  }
  return r;
}

}  // namespace detail
}  // namespace calm
