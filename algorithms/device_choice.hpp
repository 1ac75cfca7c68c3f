// calm/algorithms/device_choice.hpp: strategy::automatic finished on the device: the sampled statistics
// (000 §3.3) summed and the fitted tree walked at the start of each block, so the host never waits.
#pragma once

#include <type_traits>

#include "../core/exec.hpp"
#include "choose.hpp"
#include "collision_stats.hpp"
#include "group_reduce.hpp"

namespace calm {
namespace detail {

/// What a block needs to finish the automatic choice: the sampled groups' totals (written by
/// launch_sample earlier on the same stream), the rest of the tree walk, and where block 0 reports the
/// choice (nullptr: nowhere).
struct device_choice {
  collision_totals const* totals = nullptr;
  index_t groups = 0;
  tree_walk walk;
  strategy* report = nullptr;
};

/// Block-local bytes a chosen_program needs after its program's own: the summed totals and the choice.
constexpr std::size_t choice_bytes = sizeof(collision_totals) + 16;
/// Where they start after the program's `bytes` (16-byte aligned).
constexpr std::size_t choice_offset(std::size_t bytes) { return (bytes + 15) / 16 * 16; }

/// A block program that decides, then runs `program` if the choice is `id` (if not, the block ends at
/// once, so a launch not chosen costs an empty grid; calm launches each strategy on its own, so that
/// each keeps its own registers and occupancy). The first warp of each block sums the groups' totals
/// (lane l takes groups l, l + W, ..., then the lanes are reduced), its first lane walks the tree into
/// block-local memory at `offset` (after the program's own), and after a barrier every thread reads
/// the choice.
template <class Program>
struct chosen_program {
  device_choice choice;
  strategy id;
  Program program;
  std::size_t offset;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    auto* const sum = reinterpret_cast<collision_totals*>(blk.template scratch<unsigned char>() + offset);
    auto* const chosen = reinterpret_cast<strategy*>(sum + 1);
    collision_totals const* const part = choice.totals;
    index_t const groups = choice.groups;
    blk.for_each_warp([&](auto const& w, auto t) {
      if (!any(w, t == 0)) return;  // the first warp
      using Warp = std::decay_t<decltype(w)>;
      auto const lane = lane_id(w);
      auto mine = map([](int) { return collision_totals{}; }, lane);
      for (index_t base = 0; base < groups; base += Warp::size) {
        auto const g = map([base](int l) { return base + l; }, lane);
        auto const in = map([groups](index_t x) { return x < groups; }, g);
        auto const p = load(w, part, select(in, g, index_t(0)));  // group 0 exists: every lane loads
        mine = select(in, map(add_totals{}, mine, p), mine);
      }
      auto const all = ballot(w, true);
      auto const total = reduce_peers(w, add_totals{}, map([all](int) { return all; }, lane), mine);
      when(w, t == 0, [&](auto const& l) {
        store(l, sum, 0, total);
        strategy const s = choice.walk.finish(statistics_of(sum, 1));
        *chosen = s;
        if (choice.report != nullptr && blk.index() == 0) *choice.report = s;
      });
    });
    blk.sync();
    if (*chosen == id) program(blk);
  }
};

/// `program` (which asks for `bytes` of block-local memory) behind the choice, run if it is `id`;
/// launch it with choice_offset(bytes) + choice_bytes.
template <class Program>
chosen_program<Program> run_if_chosen(device_choice const& c, strategy id, Program const& program, std::size_t bytes) {
  return {c, id, program, choice_offset(bytes)};
}

}  // namespace detail
}  // namespace calm
