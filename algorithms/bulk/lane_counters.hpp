// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/lane_counters.hpp: privatize_scatter's counting form for small tables of narrow keys: each lane
// of a warp counts in a column of 32-bit counters of its own in block-local memory (entry s of lane l at s * W + l),
// so that a warp's W updates fall in W different banks and on W different addresses whatever its keys; the columns
// are summed once per block.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../../core/error.hpp"
#include "../../core/exec.hpp"
#include "../../core/ops.hpp"
#include "../../core/warp.hpp"
#include "../block/block_stream.hpp"
#include "key_map.hpp"
#include "thread_counters.hpp"

namespace calm {

/// privatize_scatter's strategy for counts into at most 256 entries (an integer table, values calm::constant(c)):
/// each lane of a warp counts in a column of its own (one block-local atomic a key, never two lanes on one address
/// or bank), the columns summed once per block. Block-local memory: (bins + 1) x W x 4 bytes (33 KiB for 256
/// entries on a 32-lane warp; with 64 lanes 255 entries fill an AMD workgroup's 64 KiB).
///
///   calm::privatize_scatter<calm::lane_counters>(calm::plus{}, keys, calm::constant(1u), n, hist, 256);
struct lane_counters {};

namespace detail {

/// The largest table lane counters take (8-bit keys' tables).
constexpr index_t lane_counters_max_bins = 256;
/// Keys a lane column may count in one call: n at most this times the warp's lanes (32-bit counters).
constexpr index_t lane_counters_column_keys = index_t(1) << 32;

/// Block-local memory of lane counters for `bins` entries and warps of `lanes`: a 32-bit counter per entry and lane,
/// and one more entry for keys outside the table.
constexpr std::size_t lane_counters_bytes(index_t bins, int lanes) { return static_cast<std::size_t>(bins + 1) * static_cast<std::size_t>(lanes) * 4; }

/// The counting program: columns cleared, the block's items counted (keys outside the table in the last entry),
/// each entry's columns summed, times the constant, and added to out with one device atomic per entry that
/// counted any.
template <int Vec, class K, class VS, class T, class KeyMap>
struct lane_counters_program {
  K const* keys;
  VS values;  ///< a same_value
  index_t n;
  T* out;
  index_t bins;
  KeyMap key_map;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    std::uint32_t* const cols = blk.template scratch<std::uint32_t>();
    index_t const nb = bins;
    blk.for_each_warp([&](auto const& w, auto t) {  // the block's threads clear every word, a block's width apart
      constexpr int lanes = std::decay_t<decltype(w)>::size;
      index_t const words = (nb + 1) * lanes;
      for (index_t base = 0; base < words; base += blk.threads())
        when(w, map([base, words](int tt) { return base + tt < words; }, t), [&](auto const& l) { store(l, cols, map([base](int tt) { return base + tt; }, t), 0u); });
    });
    blk.sync();
    KeyMap const m = key_map;
    stream_items<Vec>(blk, keys, values, n, [&](auto const& w, auto const&, auto const& k, auto const&) {
      constexpr int lanes = std::decay_t<decltype(w)>::size;
      auto const at = map([m, nb](auto kk, int lane) { return static_cast<index_t>(counter_entry(m, kk, nb)) * lanes + lane; },
                          k, lane_id(w));
      atomic_update(w, plus{}, scope::block_local{}, map([cols](index_t a) { return cols + a; }, at), 1u);
    });
    merge_into(blk, cols);
  }

  /// A barrier; each entry's columns summed (each lane starting at its own column, so that a warp's lanes read
  /// different banks), times the constant, and added to out where not 0.
  template <class Block>
  CALM_HD void merge_into(Block const& blk, std::uint32_t const* cols) const {
    blk.sync();
    using U = std::make_unsigned_t<T>;
    U const each = static_cast<U>(values.value);
    index_t const nb = bins;
    for (index_t base = 0; base < nb; base += blk.threads())
      blk.for_each_warp([&](auto const& w, auto t) {
        constexpr int lanes = std::decay_t<decltype(w)>::size;
        auto const b = map([base](int tt) { return base + tt; }, t);
        when(w, map([nb](index_t x) { return x < nb; }, b), [&](auto const& l) {
          auto sum = map([](index_t) { return std::uint64_t(0); }, b);
          for (int j = 0; j < lanes; ++j) {
            auto const at = map([j, L = lanes](index_t x, int tt) { return x * L + ((j + tt) & (L - 1)); }, b, t);
            sum = map([](std::uint64_t s, std::uint32_t c) { return s + c; }, sum, load(l, cols, at));
          }
          when(l, map([](std::uint64_t s) { return s != 0; }, sum), [&](auto const& u) {
            atomic_update(u, plus{}, scope::device{}, map([o = out](index_t x) { return o + x; }, b),
                          map([each](std::uint64_t s) { return static_cast<T>(static_cast<U>(s) * each); }, sum));
          });
        });
      });
  }
};

/// lane_counters' block-local bytes for `bins` entries on exec; throws before anything runs where the table is beyond
/// lane_counters_max_bins or the block-local memory, threads beyond 1,024, or n beyond what the 32-bit columns count.
template <class Exec>
std::size_t plan_lane_counters(index_t n, index_t bins, int threads, Exec const& ex) {
  constexpr int lanes = Exec::warp_type::size;
  require(bins >= 0 && bins <= lane_counters_max_bins, errc::out_of_range,
          [&] { return "privatize_scatter<lane_counters>: " + std::to_string(bins) + " entries; it counts into at most 256"; });
  require(threads >= 0 && threads <= 1024, errc::invalid_argument,
          [&] { return "privatize_scatter<lane_counters>: threads must be in [0, 1024], got " + std::to_string(threads); });
  require(n / lanes < lane_counters_column_keys, errc::out_of_range,
          [&] { return "privatize_scatter<lane_counters>: " + std::to_string(n) + " keys; its 32-bit columns count at most 2^32 x " + std::to_string(lanes); });
  std::size_t const bytes = lane_counters_bytes(bins, lanes);
  require(bytes <= ex.block_local_bytes(), errc::out_of_range, [&] {
    return "privatize_scatter<lane_counters>: " + std::to_string(bytes) + " bytes of block-local memory; one block has " + std::to_string(ex.block_local_bytes());
  });
  return bytes;
}

/// Launch lane_counters_program over the resident blocks (planned: `bytes`; n > 0, bins > 0; threads 0: 512).
template <class K, class VS, class T, class KeyMap, class Exec>
void launch_lane_counters(K const* keys, VS const& vals, index_t n, T* table, index_t bins, int threads, std::size_t bytes, KeyMap const& key_map,
                          Exec const& ex) {
  constexpr int vec = thread_counters_chunk<Exec, K>();
  int const t = threads > 0 ? threads : 512;
  ex.for_each_resident_block(blocks_with_work(n, t, vec), t, bytes, lane_counters_program<vec, K, VS, T, KeyMap>{keys, vals, n, table, bins, key_map});
}

}  // namespace detail
}  // namespace calm
