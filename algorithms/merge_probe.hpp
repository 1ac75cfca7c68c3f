// calm/algorithms/merge_probe.hpp: whether a block of a direct scatter merges its warps' equal keys before the device
// atomics, from a probe of its first tile (calm's own, beside 002's peer_reduce): repeats of a key on a table line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "../core/exec.hpp"
#include "../core/ops.hpp"
#include "../core/scope.hpp"
#include "block_stream.hpp"
#include "key_map.hpp"

namespace calm {
namespace detail {

/// The first chunk of this block's first tile (the tile stream_items_with_state starts with), -1
/// where the block has no full chunk. Every thread gets the same answer. (adaptive_merge's probe keeps
/// its own copy of this and of probed_key: through these functions its kernels under a 64-register
/// cap spilled on sm_90.)
template <class Block>
CALM_HD index_t first_tile_chunk(Block const& blk, index_t chunks) {
  index_t const tile_chunks = blk.threads() * loads_in_flight;
  index_t first = -1;
  blk.for_each_tile((chunks + tile_chunks - 1) / tile_chunks, [&](index_t tile) {
    if (first < 0) first = tile;
  });
  return first < 0 ? -1 : first * tile_chunks;
}

/// Thread t's probed key: the first item of its chunk base + t, as the warp's first update of the
/// tile sees it (lanes Vec items apart), and whether it has one (`none` where its chunk lies past the last).
template <int Vec, class Warp, class T, class K, class KeyMap>
CALM_HD auto probed_key(Warp const& w, T const& t, index_t base, index_t chunks, K const* keys, KeyMap const& key_map, index_t none) {
  auto const c = map([base](int tt) { return base + tt; }, t);
  auto const valid = map([chunks](index_t cc) { return cc < chunks; }, c);
  return std::make_pair(valid, select(valid, map_keys(w, key_map, load(w, keys, select(valid, c * Vec, index_t(0)))), none));
}

/// Block-local bytes of probe_lines.
constexpr std::size_t line_probe_bytes = 2 * sizeof(std::uint32_t);

/// What a block's probe found (probe_lines): repeats summed over its probed warps.
struct line_probe {
  std::uint32_t repeats = 0;
  std::uint32_t warps = 0;
  /// Repeats per warp; negative where no warp was probed.
  CALM_HD float per_warp() const { return warps > 0u ? static_cast<float>(repeats) / static_cast<float>(warps) : -1.0f; }
};

/// What the warps of this block's first tile (one key per thread, as probed_key) serialize in device
/// atomics beyond one per table line: for each warp and each line of line_entries entries that its
/// keys fall on, the most lanes that hold one key there, less one, summed; and the warps probed (none
/// where the block has no full chunk). A warp's atomics on one line are served together, but lanes on
/// one key wait for each other; peer_reduce turns each line's cost into one step and costs a match of
/// its own. A warp of keys 0..31 in lanes 0..31: 0 (one key per lane); runs of 8 equal keys, one line
/// each: 16 lines of two lanes each: 16; one key throughout: 31. Every thread gets the same answer.
/// Uses `scratch` (line_probe_bytes of block-local memory), free again when it returns. Returns
/// finish(line_probe), taken before the block's last barrier (so only its result lives across it).
template <int Vec, class Block, class K, class KeyMap, class Finish>
CALM_HD auto probe_lines(Block const& blk, K const* keys, index_t n, KeyMap const& key_map, index_t line_entries, unsigned char* scratch,
                         Finish const& finish) {
  index_t const chunks = n / Vec;
  index_t const base = first_tile_chunk(blk, chunks);
  if (base < 0) return finish(line_probe{});
  std::uint32_t* const sums = reinterpret_cast<std::uint32_t*>(scratch);  // repeats, probed warps
  blk.for_each_warp([&](auto const& w, auto t) {
    when(w, t < 2, [&](auto const& l) { store(l, sums, t, 0u); });
  });
  blk.sync();
  blk.for_each_warp([&](auto const& w, auto t) {
    auto const probed = probed_key<Vec>(w, t, base, chunks, keys, key_map, index_t(-1));
    auto const& key = probed.second;  // not a structured binding: C++17 lambdas cannot capture those
    when(w, probed.first, [&](auto const& v) {
      auto const group = map([](auto c) { return static_cast<int>(c); }, popc(v, match_any(v, key)));
      auto const line = match_any(v, map([line_entries](index_t k) { return k / line_entries; }, key));
      auto const most = reduce_peers(v, max{}, line, group);  // the line's lowest lane holds its most
      auto const first = (line & lanes_lt(v)) == decltype(line)(0);
      when(v, first, [&](auto const& f) {
        atomic_update(f, plus{}, scope::block_local{}, sums, map([](int m) { return static_cast<std::uint32_t>(m - 1); }, most));
      });
      when(v, elect_leader(v), [&](auto const& l) { atomic_update(l, plus{}, scope::block_local{}, sums + 1, 1u); });
    });
  });
  blk.sync();
  auto const result = finish(line_probe{sums[0], sums[1]});
  blk.sync();  // every thread has read the sums before the scratch is reused
  return result;
}

/// probe_lines as repeats per warp: negative where the block has no full chunk.
template <int Vec, class Block, class K, class KeyMap>
CALM_HD float probe_line_repeats(Block const& blk, K const* keys, index_t n, KeyMap const& key_map, index_t line_entries, unsigned char* scratch) {
  return probe_lines<Vec>(blk, keys, n, key_map, line_entries, scratch, [](line_probe p) { return p.per_warp(); });
}

}  // namespace detail

/// How a direct scatter's blocks choose between naive and peer_reduce when automatic picks peer_reduce
/// (calm's own): a block merges where its probe (detail::probe_lines) finds more than
/// `min_line_repeats` repeats per warp; 0 merges in every block, as strategy::peer_reduce does.
/// The bulk calls take it from scatter_options::min_line_repeats (negative, the default: resolved()).
struct line_merge_rule {
  float min_line_repeats = 0.0f;

  /// The default on a GPU, measured on an H100 (perf/results/cuda-h100-2026-11-25-line-rule.md): runs
  /// of 1 to 8 keys (8.65 repeats) ran 6-8% faster naive, and every clustered training input the tree
  /// sends to peer_reduce (runs of 8 and more, COO rows: 12 repeats and more) kept merging; at 12, COO
  /// rows into 1.5M bins began to run naive (1.6x slower), at 14 sorted keys into 300,000 bins (2.8x).
  static constexpr float gpu_min_line_repeats = 10.0f;
  /// Whether a block whose probe found `p` merges: more than min_line_repeats repeats per warp, or no
  /// warp probed, or a rule of 0. One rounded product and a comparison, no division: two kernels that
  /// split the blocks between them (detail::chosen_split_program) agree under any float flags (fast
  /// math approximates division; a product of a float and a small count is always rounded the same).
  CALM_HD bool merges(detail::line_probe p) const {
    if (!(min_line_repeats > 0.0f) || p.warps == 0u) return true;
    return static_cast<float>(p.repeats) > min_line_repeats * static_cast<float>(p.warps);  // both exact: counts below 2^24
  }
  /// Above this many bytes of table the default for 8-byte values is 0 (see resolved).
  static constexpr std::uint64_t gpu_wide_max_table_bytes = std::uint64_t(16) << 20;
  /// The rule of scatter_options::min_line_repeats `option` on an exec of `family` for keys of
  /// `key_bytes`, values of `value_bytes` and a table of `table_bytes`. A negative option is the
  /// default: 0 on the host (not measured there); on a GPU gpu_min_line_repeats for 4-byte keys and
  /// values; for 8-byte values the same up to gpu_wide_max_table_bytes, where the probe counts a warp's
  /// repeated keys (launch_chosen), and 0 above, where merging pays whatever the probe finds; 0 for
  /// 8-byte keys (not measured). Measured on an H100 (cuda-h100-2026-11-25-line-rule-f64-keys.md):
  /// runs of 1 to 8 doubles into 300,000 entries (2.4 MB) went from 0.880 to 0.947 of the best; into
  /// 5,000,000 (40 MB) the rule took them from 0.971 to 0.871; the 76 training inputs with doubles
  /// where automatic merges kept merging and paid the probe, 1-3% a call.
  static line_merge_rule resolved(float option, device_family family, std::size_t key_bytes = 4, std::size_t value_bytes = 4,
                                  std::uint64_t table_bytes = 0) {
    if (option >= 0.0f) return {option + 0.0f};  // -0 as 0
    bool const on = family != device_family::host && key_bytes <= 4 && (value_bytes <= 4 || table_bytes <= gpu_wide_max_table_bytes);
    return {on ? gpu_min_line_repeats : 0.0f};
  }
};

}  // namespace calm
