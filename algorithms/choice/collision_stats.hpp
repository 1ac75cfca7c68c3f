// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/choice/collision_stats.hpp: how much a key array's updates collide, measured on the device
// from a sample: intra-warp, intra-block and all-thread collision levels and clustering (000 §3.3),
// and the table lines a warp's keys touch and a direct scatter's lanes wait on (line_share, line_repeats: calm's own).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "../../core/error.hpp"
#include "../../core/exec.hpp"
#include "../warp/group_reduce.hpp"
#include "../bulk/key_map.hpp"
#include "line_merge_rule.hpp"
#include "../block/private_table.hpp"
#include "collision_sample_program.hpp"
#include "collision_totals.hpp"
#include "../bulk/workspace.hpp"

namespace calm {
namespace detail {

/// Where a sample of n keys lies: `groups` groups of block_items consecutive keys, group g starting at
/// key g * stride.
struct sample_plan {
  index_t groups = 0, stride = 0, block_items = 0;
};

/// Checks the sampling arguments and plans the groups: evenly spread over the array, starting on
/// multiples of block_items (so on warp boundaries); all of the array when n <= opt.items.
template <class K>
sample_plan plan_sample(K const* keys, index_t n, index_t bins, collision_sample_options const& opt) {
  require(n >= 0, errc::invalid_argument, [&] { return "collision_stats: n = " + std::to_string(n) + " is negative"; });
  require(bins >= 0, errc::invalid_argument, [&] { return "collision_stats: negative table size " + std::to_string(bins); });
  require(n == 0 || keys != nullptr, errc::invalid_argument, "collision_stats: keys is null");
  require(opt.block_items >= 32 && opt.block_items <= 1024, errc::invalid_argument, "collision_stats: block_items must be in [32, 1024]");
  require(opt.items >= opt.block_items, errc::invalid_argument, "collision_stats: items must be at least block_items");
  require(opt.line_vec >= 0 && opt.line_vec <= 64, errc::invalid_argument, "collision_stats: line_vec must be in [0, 64]");
  require(opt.line_entries >= 1, errc::invalid_argument, "collision_stats: line_entries must be at least 1");
  sample_plan p;
  p.block_items = opt.block_items;
  if (n == 0) return p;
  index_t const bi = opt.block_items;
  index_t const want = (std::min(n, opt.items) + bi - 1) / bi;
  index_t const all = (n + bi - 1) / bi;
  p.groups = std::min(want, all);
  p.stride = p.groups == all ? bi : (all / p.groups) * bi;
  return p;
}

/// Block-local bytes of a sampling block: its keys, its counters, then each warp's distinct keys,
/// their counts and how many each warp has (the block level's).
inline std::size_t sample_block_bytes(sample_plan const& p) {
  std::size_t const items = static_cast<std::size_t>(p.block_items);
  std::size_t const warps = items;  // at most one a key
  return items * sizeof(index_t) + sample_counter_words * sizeof(std::uint32_t) + items * (sizeof(index_t) + sizeof(std::uint32_t)) +
         warps * sizeof(std::uint32_t);
}

/// Launches the sampling of plan (groups > 0) on ex: group g's totals to totals[g]; distinct keys
/// counted in `bitset` (bits bits, cleared by the caller) unless it is nullptr. With a meeting place
/// `meet` (zero, and zero again when the launch ends), the groups' totals are summed there instead and
/// the last block to finish runs finish(blk) on the sum. The block level is left out (0) unless
/// block_level; line repeats are counted where lines.vec > 0; the hot share where hot_counts (its
/// collision_hot_slots counters, zero; with a meeting place left zero again) is not nullptr.
/// Asynchronous on a GPU.
template <class K, class KeyMap, class Exec, class Finish = no_finish>
void launch_sample(K const* keys, index_t n, index_t bins, sample_plan const& p, KeyMap const& key_map, collision_totals* totals,
                   std::uint32_t* bitset, index_t bits, Exec const& ex, sample_meeting* meet = nullptr, Finish const& finish = {},
                   bool block_level = true, merge_lines lines = {}, std::uint32_t* hot_counts = nullptr) {
  ex.for_each_block(p.groups, static_cast<int>(p.block_items), sample_block_bytes(p),
                    collision_sample_program<K, KeyMap, Finish>{keys, n, bins, p.groups, p.stride, static_cast<int>(p.block_items), bits, totals,
                                                                bitset, key_map, meet, finish, block_level, lines, hot_counts});
}

/// collision_stats with the keys mapped to table indices by key_map: sampled on the device, the
/// groups' totals copied back (a wait) and summed here.
template <class K, class KeyMap, class Exec>
collision_statistics sample_collisions(K const* keys, index_t n, index_t bins, collision_sample_options const& opt, KeyMap const& key_map, Exec const& ex) {
  sample_plan const p = plan_sample(keys, n, bins, opt);
  if (p.groups == 0) return {};
  index_t const bits = std::max<index_t>(32, std::min(bins, collision_bitset_bits));
  std::size_t const set_bytes = static_cast<std::size_t>((bits + 31) / 32) * 4;
  std::size_t const hot_bytes = static_cast<std::size_t>(collision_hot_slots) * 4;
  std::size_t const totals_bytes = static_cast<std::size_t>(p.groups) * sizeof(collision_totals);
  std::vector<collision_totals> t(static_cast<std::size_t>(p.groups));
  workspace<Exec> const mem(ex, totals_bytes + set_bytes + hot_bytes);
  auto* const totals = mem.template at<collision_totals>(0);
  auto* const set = mem.template at<std::uint32_t>(totals_bytes);
  auto* const hot = mem.template at<std::uint32_t>(totals_bytes + set_bytes);
  ex.fill(set, 0, set_bytes + hot_bytes);
  launch_sample(keys, n, bins, p, key_map, totals, set, bits, ex, nullptr, no_finish{}, true, merge_lines{opt.line_vec, opt.line_entries}, hot);
  ex.to_host(t.data(), totals, totals_bytes);
  return statistics_of(t.data(), p.groups);
}

}  // namespace detail

/// The collision statistics (000 §3.3) of keys[0, n) scattered into a table of `bins` entries,
/// measured on the device (ex's stream) over a sample of opt.items keys in groups of opt.block_items
/// consecutive keys spread evenly over the array (all of it when n <= opt.items), then copied to the
/// host: the call waits for ex's stream. Throws calm::error on bad arguments.
///
///   calm::collision_statistics s = calm::collision_stats(keys, n, 256);
///   std::puts(s.to_string().c_str());  // "sampled 65536 (...): warp 0.0938, block 0.0195, all-thread 256.00, ..."
template <class K, class Exec = default_exec>
collision_statistics collision_stats(K const* keys, index_t n, index_t bins, collision_sample_options const& opt = {}, Exec const& ex = Exec{}) {
  static_assert(std::is_integral<K>::value, "collision_stats: keys must be integers");
  return detail::sample_collisions(keys, n, bins, opt, detail::identity_key{}, ex);
}

}  // namespace calm
