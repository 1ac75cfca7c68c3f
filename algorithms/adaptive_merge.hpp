// calm/algorithms/adaptive_merge.hpp: privatize_scatter's lane merging chosen by each block from a probe of its first
// tile (calm's own, beside 002's peer_reduce): the probe finds hot keys and runs of equal keys with match_any and votes.
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
/// most that one offered key takes (`most`: a hot key, wherever it falls), and, of the `run_items` keys
/// of the warps that offer, how many lie in the largest group of equal keys of their warp (`run`: equal
/// keys side by side, as in sorted keys, or one hot key) and how many share their warp's first key
/// (`first_run`: mostly equal keys side by side), each summed over those warps.
struct hot_key_probe {
  index_t most = 0, items = 0, run = 0, run_items = 0, first_run = 0;
};

/// privatize_scatter's lane merging chosen by each block (calm's own): the block probes its first tile
/// (detail::probe_hot_key; a count: detail::probe_runs) and merges a warp's equal keys (peer_reduce)
/// before each block-local atomic only where its probe finds keys that collide enough per copy of the
/// table; elsewhere each lane updates on its own (naive). On an H100 merging cost 3-11x more than not
/// where keys rarely repeat (match_any on every item), and saved up to 8x where one key took a quarter
/// or more of a one-copy table's float updates or runs of equal keys filled the warps
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

/// Block-local bytes of adaptive_merge's probe: up to probe_warps offered keys, their counts and their
/// warps' largest groups and first keys' groups (16 bits each).
constexpr int probe_warps = 64;
constexpr std::size_t probe_bytes = probe_warps * (sizeof(index_t) + 2 * sizeof(std::uint32_t));

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

/// adaptive_merge's probe of this block's first tile (the tile stream_items_with_state starts with):
/// the first item of each thread's first chunk, one key per thread spread over the tile. Each of the
/// first probe_warps warps finds its largest group of equal keys (match_any) and offers that group's
/// key (and counts the lanes that share its first lane's key), and each offered key is counted exactly
/// among all the probed keys. Every thread gets the same answer. Uses `scratch` (probe_bytes of
/// block-local memory), free again when it returns.
template <int Vec, class Block, class K, class KeyMap>
CALM_HD hot_key_probe probe_hot_key(Block const& blk, K const* keys, index_t n, KeyMap const& key_map, unsigned char* scratch) {
  index_t const chunks = n / Vec, threads = blk.threads(), base = first_probed_chunk<Vec>(blk, n);
  hot_key_probe r;
  if (base < 0) return r;  // no full chunk: nothing to probe (block 0's last n % Vec items go naive)
  r.items = std::min(threads, chunks - base);
  constexpr index_t none = std::numeric_limits<index_t>::min();  // no key: a lane without an item, a probe past the last
  index_t* const offered = reinterpret_cast<index_t*>(scratch);
  std::uint32_t* const counts = reinterpret_cast<std::uint32_t*>(scratch + probe_warps * sizeof(index_t));
  std::uint32_t* const groups = counts + probe_warps;
  int const most_probes = probe_warps;  // a value: the device cannot bind a reference to the namespace constant
  int probes = 0, width = 1;
  // thread t's probed key (none where its chunk lies past the last), and whether it has one
  auto const probed = [&](auto const& w, auto const& t) {
    auto const c = map([base](int tt) { return base + tt; }, t);
    auto const valid = map([chunks](index_t cc) { return cc < chunks; }, c);
    return std::make_pair(valid, select(valid, map_keys(w, key_map, load(w, keys, select(valid, c * Vec, index_t(0)))), none));
  };
  blk.for_each_warp([&](auto const& w, auto t) {
    constexpr int W = std::decay_t<decltype(w)>::size;
    probes = std::min(most_probes, (blk.threads() + W - 1) / W);
    width = W;
    auto const warp = map([](int tt) { return tt / W; }, t);
    if (any(w, warp < probes)) {  // the warp's lanes share their warp index
      auto const [valid, key] = probed(w, t);
      // the warp's largest group of equal keys (lanes without a key in none), its size found bit by bit
      auto const group = select(valid, map([](auto c) { return static_cast<int>(c); }, popc(w, match_any(w, key))), 0);
      int largest = 0;
      for (int b = 6; b >= 0; --b)
        if (any(w, group >= (largest | (1 << b)))) largest |= 1 << b;
      int const at = ffs(w, ballot(w, group == largest)) - 1;
      auto const top = shuffle(w, key, at < 0 ? 0 : at);  // none where no lane has a key
      auto const first = static_cast<std::uint32_t>(popc(w, ballot(w, valid & (key == shuffle(w, key, 0)))));
      when(w, lane_id(w) == 0, [&](auto const& l) {
        store(l, offered, warp, top);
        store(l, groups, warp, static_cast<std::uint32_t>(largest) | first << 16);
      });
    }
    when(w, t < most_probes, [&](auto const& l) { store(l, counts, t, 0u); });
  });
  blk.sync();
  blk.for_each_warp([&](auto const& w, auto t) {
    auto const [valid, key] = probed(w, t);
    // each offered key among this warp's keys, four at a time (independent loads and votes)
    auto const offer = [&](int p) { return p < probes ? offered[p] : none; };
    for (int p = 0; p < probes; p += 4) {
      index_t const k0 = offer(p), k1 = offer(p + 1), k2 = offer(p + 2), k3 = offer(p + 3);
      std::uint32_t const hits[4] = {static_cast<std::uint32_t>(popc(w, ballot(w, valid & (key == k0)))),
                                     static_cast<std::uint32_t>(popc(w, ballot(w, valid & (key == k1)))),
                                     static_cast<std::uint32_t>(popc(w, ballot(w, valid & (key == k2)))),
                                     static_cast<std::uint32_t>(popc(w, ballot(w, valid & (key == k3))))};
      for (int j = 0; j < 4; ++j)
        if (hits[j] > 0u)
          when(w, elect_leader(w), [&](auto const& l) { atomic_update(l, plus{}, scope::block_local{}, counts + p + j, hits[j]); });
    }
  });
  blk.sync();
  for (int p = 0; p < probes; ++p) {
    r.most = std::max<index_t>(r.most, counts[p]);
    r.run += groups[p] & 0xffffu;
    r.first_run += groups[p] >> 16;
  }
  r.run_items = std::min<index_t>(r.items, static_cast<index_t>(probes) * width);
  blk.sync();  // every thread has read the counts before the scratch is reused
  return r;
}

/// Block-local memory of adaptive_merge's probe of a count (calm::constant values, where adaptive_merge
/// reads first_run only): the sums over the warps of their largest groups and of their first keys' groups.
constexpr std::size_t run_probe_bytes = 2 * sizeof(std::uint32_t);

/// run_probe_bytes at `area` to zero, without a barrier (the caller's next barrier orders them before
/// probe_runs).
template <class Block>
CALM_HD void clear_run_probe(Block const& blk, std::uint32_t* area) {
  blk.for_each_warp([&](auto const& w, auto t) {
    when(w, t == 0, [&](auto const& l) {
      store(l, area, 0, 0u);
      store(l, area, 1, 0u);
    });
  });
}

/// probe_hot_key for a count (calm::constant values): the same first tile, each warp's largest group
/// of equal keys (match_any) and the lanes that share its first lane's key, summed in `area`
/// (run_probe_bytes of block-local memory, zeroed by clear_run_probe before the last barrier) by one
/// block-local atomic each per warp; one barrier, and no count of the offered keys (`most` stays 0:
/// a count does not read it). Every thread gets the same answer; the area is read, not cleared. On an
/// H100 privatize_adaptive's histograms ran 0.5-3.6 us faster a call than with probe_hot_key's three
/// barriers and its loops over the offered keys (2.1-2.6 us on sorted keys:
/// perf/results/cuda-h100-2026-11-26-adaptive-probe.md).
template <int Vec, class Block, class K, class KeyMap>
CALM_HD hot_key_probe probe_runs(Block const& blk, K const* keys, index_t n, KeyMap const& key_map, std::uint32_t* area) {
  index_t const chunks = n / Vec, threads = blk.threads(), base = first_probed_chunk<Vec>(blk, n);
  hot_key_probe r;
  if (base < 0) return r;  // no full chunk: nothing to probe (block 0's last n % Vec items go naive)
  r.items = r.run_items = std::min(threads, chunks - base);
  std::uint32_t* const runs = area;
  std::uint32_t* const firsts = area + 1;
  blk.for_each_warp([&](auto const& w, auto t) {
    auto const c = map([base](int tt) { return base + tt; }, t);
    when(w, map([chunks](index_t cc) { return cc < chunks; }, c), [&](auto const& v) {
      auto const key = map_keys(v, key_map, load(v, keys, map([](index_t cc) { return cc * Vec; }, c)));
      // the warp's largest group of equal keys, its size found bit by bit (a warp has at most 64 lanes)
      auto const group = map([](auto m) { return static_cast<int>(m); }, popc(v, match_any(v, key)));
      int largest = 0;
      for (int b = 6; b >= 0; --b)
        if (any(v, group >= (largest | (1 << b)))) largest |= 1 << b;
      auto const same = static_cast<std::uint32_t>(popc(v, ballot(v, key == shuffle(v, key, leader_lane(v)))));
      when(v, elect_leader(v), [&](auto const& l) {
        atomic_update(l, plus{}, scope::block_local{}, runs, static_cast<std::uint32_t>(largest));
        atomic_update(l, plus{}, scope::block_local{}, firsts, same);
      });
    });
  });
  blk.sync();
  r.run = runs[0];
  r.first_run = firsts[0];
  return r;
}

}  // namespace detail
}  // namespace calm
