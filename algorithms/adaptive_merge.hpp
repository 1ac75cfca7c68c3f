// calm/algorithms/adaptive_merge.hpp: privatize_scatter's lane merging chosen by each block from a probe of its first
// tile (calm's own, beside 002's peer_reduce): the probe counts keys by hash bucket and finds runs of equal keys with match_any and votes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include "../core/exec.hpp"
#include "../core/ops.hpp"
#include "../core/scope.hpp"
#include "block_stream.hpp"
#include "key_map.hpp"
#include "update.hpp"

namespace calm {

/// What adaptive_merge's probe finds in a block's first tile: of `items` keys (one per thread), the
/// most that one hash bucket of them takes (`most`: at least what the most frequent key takes, wherever
/// it falls), and, of the `run_items` keys of the warps, how many lie in the largest group of equal keys
/// of their warp (`run`: equal keys side by side, as in sorted keys, or one hot key) and how many share
/// their warp's first key (`first_run`: mostly equal keys side by side), each summed over the warps.
struct hot_key_probe {
  index_t most = 0, items = 0, run = 0, run_items = 0, first_run = 0;
};

/// privatize_scatter's lane merging chosen by each block (calm's own): the block probes its first tile
/// (detail::probe_hot_key) and merges a warp's equal keys (peer_reduce) before each block-local atomic
/// only where its probe finds keys that collide enough per copy of the table; elsewhere each lane
/// updates on its own (naive). On an H100 merging cost 3-11x more than not where keys rarely repeat
/// (match_any on every item), and saved up to 8x where one key took a quarter or more of a one-copy
/// table's float updates or runs of equal keys filled the warps
/// (perf/results/cuda-h100-2026-11-24-privatize-merge.md, cuda-h100-2026-11-24-bulk-adaptive.md).
struct adaptive_merge {
  /// Values read from an array: a block merges where one key takes at least this share of its probed
  /// updates per copy of the table, wherever those updates fall (on a GPU a float's or double's
  /// block-local atomic is a compare-and-swap loop: a hot key costs much even spread over the warps).
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

  /// The defaults on a GPU, from the training inputs of the bulk sweep (H100; the results files above).
  static constexpr float gpu_weighted_share = 0.075f, gpu_counting_share = 0.5f, gpu_weighted_run_share = 0.25f;
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
    return r;
  }
  /// Whether a block whose probe found `p` merges into a table of `copies` copies (shares resolved).
  CALM_HD bool merges(hot_key_probe const& p, int copies, bool counting) const {
    auto const reaches = [copies](index_t part, index_t of, float share) {
      return static_cast<double>(part) >= static_cast<double>(share) * copies * static_cast<double>(of);
    };
    if (counting) return reaches(p.first_run, p.run_items, counting_share);
    return reaches(p.most, p.items, weighted_share) || reaches(p.run, p.run_items, weighted_run_share);
  }
  /// Whether any block could merge into a table of `copies` copies (a probe of one key everywhere).
  bool could_merge(int copies, bool counting) const { return merges(hot_key_probe{1, 1, 1, 1, 1}, copies, counting); }
};

namespace detail {

/// Block-local memory of adaptive_merge's probe: probe_buckets counters of the probed keys, each key
/// counted in one bucket by a hash, then the sums over the warps of their largest groups and of their
/// first keys' groups.
constexpr int probe_buckets = 256;
constexpr std::size_t probe_bytes = (probe_buckets + 2) * sizeof(std::uint32_t);

/// The probe's counters to zero, without a barrier (the caller's next barrier orders them before
/// probe_hot_key).
template <class Block>
CALM_HD void clear_probe(Block const& blk, std::uint32_t* area) {
  constexpr index_t words = probe_buckets + 2;
  for (index_t base = 0; base < words; base += blk.threads())
    blk.for_each_warp([&](auto const& w, auto t) {
      auto const e = map([base](int tt) { return base + tt; }, t);
      when(w, e < words, [&](auto const& l) { store(l, area, e, 0u); });
    });
}

/// adaptive_merge's probe of this block's first tile (the tile stream_items_with_state starts with):
/// the first item of each thread's first chunk, one key per thread spread over the tile. `area`
/// (probe_bytes of block-local memory, zeroed by clear_probe before the last barrier) counts each
/// probed key in its hash bucket, and each warp adds in its largest group of equal keys (match_any)
/// and the lanes that share its first lane's key. One barrier, then every thread reads the same
/// answer; `most` is the fullest bucket: at least the count of the most frequent key, more where
/// other keys share its bucket (1,024 keys spread evenly fill each of the 256 buckets with about 4).
/// The area is read, not cleared: the caller waits at a barrier before reusing it. An exact count of
/// the warps' top keys (a ballot per key and warp, three barriers) cost 2.5-6 us a call on an H200
/// (perf/results/cuda-h200-2026-11-26-adaptive-probe.md). Without Most (a count of calm::constant
/// values, where adaptive_merge reads first_run only) the buckets are left alone and `most` is 0.
template <int Vec, bool Most, class Block, class K, class KeyMap>
CALM_HD hot_key_probe probe_hot_key(Block const& blk, K const* keys, index_t n, KeyMap const& key_map, std::uint32_t* area) {
  index_t const chunks = n / Vec, threads = blk.threads(), tile_chunks = threads * loads_in_flight;
  index_t first = -1;
  blk.for_each_tile((chunks + tile_chunks - 1) / tile_chunks, [&](index_t tile) {
    if (first < 0) first = tile;
  });
  hot_key_probe r;
  if (first < 0) return r;  // no full chunk: nothing to probe (block 0's last n % Vec items go naive)
  index_t const base = first * tile_chunks;
  r.items = r.run_items = std::min(threads, chunks - base);
  std::uint32_t* const buckets = area;
  std::uint32_t* const runs = area + probe_buckets;
  std::uint32_t* const firsts = runs + 1;
  blk.for_each_warp([&](auto const& w, auto t) {
    auto const c = map([base](int tt) { return base + tt; }, t);
    auto const valid = map([chunks](index_t cc) { return cc < chunks; }, c);
    when(w, valid, [&](auto const& v) {
      auto const key = map_keys(v, key_map, load(v, keys, map([](index_t cc) { return cc * Vec; }, c)));
      // the key's bucket: the top 8 bits of a multiplicative hash of its low 32 bits
      auto const bucket = map([buckets](auto k) { return buckets + (static_cast<std::uint32_t>(k) * 2654435761u >> 24); }, key);
      if constexpr (Most) atomic_update(v, plus{}, scope::block_local{}, bucket, 1u);
      // the warp's largest group of equal keys, its size found bit by bit (a warp has at most 64 lanes)
      auto const group = map([](auto m) { return static_cast<int>(m); }, popc(v, match_any(v, key)));
      int largest = 0;
      for (int b = 6; b >= 0; --b)
        if (any(v, group >= (largest | (1 << b)))) largest |= 1 << b;
      auto const first_key = shuffle(v, key, leader_lane(v));
      auto const same = static_cast<std::uint32_t>(popc(v, ballot(v, key == first_key)));
      when(v, elect_leader(v), [&](auto const& l) {
        atomic_update(l, plus{}, scope::block_local{}, runs, static_cast<std::uint32_t>(largest));
        atomic_update(l, plus{}, scope::block_local{}, firsts, same);
      });
    });
  });
  blk.sync();
  // the fullest bucket, each warp reading them all (a count is at most 1,024: 11 bits, found bit by bit)
  std::uint32_t most = 0;
  if constexpr (Most)
    blk.for_each_warp([&](auto const& w, auto) {
      constexpr int W = std::decay_t<decltype(w)>::size;
      auto const lane = lane_id(w);
      auto m = load(w, buckets, lane);
      for (int i = W; i < probe_buckets; i += W)
        m = map([](std::uint32_t a, std::uint32_t b) { return a > b ? a : b; }, m, load(w, buckets, map([i](int l) { return l + i; }, lane)));
      std::uint32_t top = 0;
      for (int b = 10; b >= 0; --b)
        if (any(w, m >= (top | (1u << b)))) top |= 1u << b;
      most = top;
    });
  r.most = most;
  r.run = runs[0];
  r.first_run = firsts[0];
  return r;
}

}  // namespace detail
}  // namespace calm
