// calm/algorithms/device_choice.hpp: strategy::automatic finished on the device: the sampled statistics
// (000 §3.3) summed and the fitted tree walked by one warp, whose choice selects the strategy that runs.
#pragma once

#include <type_traits>

#include "../core/exec.hpp"
#include "choose.hpp"
#include "collision_stats.hpp"
#include "group_reduce.hpp"
#include "workspace.hpp"

namespace calm {
namespace detail {

/// The automatic choice finished on the device, in one block of one working warp launched after the
/// sampling (launch_sample, same stream): the warp sums the sampled groups' totals (lane l takes groups
/// l, l + W, ..., then the lanes are reduced; integers, so the sum is the host's), its first lane walks
/// the rest of the tree and writes the strategy to `decided`, and to `report` if given.
struct choice_program {
  collision_totals const* totals = nullptr;
  index_t groups = 0;
  tree_walk walk;
  strategy* decided = nullptr;
  strategy* report = nullptr;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    auto* const sum = blk.template scratch<collision_totals>();
    collision_totals const* const part = totals;
    index_t const count = groups;
    blk.for_each_warp([&](auto const& w, auto t) {
      if (!any(w, t == 0)) return;  // the first warp
      using Warp = std::decay_t<decltype(w)>;
      auto const lane = lane_id(w);
      auto mine = map([](int) { return collision_totals{}; }, lane);
      for (index_t base = 0; base < count; base += Warp::size) {
        auto const g = map([base](int l) { return base + l; }, lane);
        auto const in = map([count](index_t x) { return x < count; }, g);
        auto const p = load(w, part, select(in, g, index_t(0)));  // group 0 exists: every lane loads
        mine = select(in, map(add_totals{}, mine, p), mine);
      }
      auto const all = ballot(w, true);
      auto const total = reduce_peers(w, add_totals{}, map([all](int) { return all; }, lane), mine);
      when(w, t == 0, [&](auto const& l) {
        store(l, sum, 0, total);
        strategy const s = walk.finish(statistics_of(sum, 1));
        *decided = s;
        if (report != nullptr) *report = s;
      });
    });
  }
};

/// Threads and block-local bytes of the choice_program launch.
constexpr int choice_threads = 64;
constexpr std::size_t choice_bytes = sizeof(collision_totals);

/// A block program that runs `program` if the strategy at `decided` (written by choice_program earlier
/// on the same stream) is `id`, and else ends at once: a launch not chosen costs an empty grid. calm
/// launches each strategy on its own, so that each keeps the registers and occupancy it has forced.
template <class Program>
struct chosen_program {
  strategy const* decided;
  strategy id;
  Program program;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    if (*decided == id) program(blk);
  }
};

template <class Program>
chosen_program<Program> run_if_chosen(strategy const* decided, strategy id, Program const& program) {
  return {decided, id, program};
}

template <class Exec, class = void>
struct records_launches : std::false_type {};
template <class Exec>
struct records_launches<Exec, std::enable_if_t<Exec::has_launch_graphs>> : std::true_type {};

/// launches(ex, ws) with ws `bytes` of workspace: the launches of a call decided on the device (the
/// sampling, choice_program, each strategy it may pick behind run_if_chosen). Where the exec records
/// graphs (CUDA) and the call repeats with the same key (make_key(), built only there), they run as
/// one recorded graph; else they are launched one by one with a workspace of this call's.
template <class Exec, class MakeKey, class Launches>
void launch_decided(Exec const& ex, MakeKey const& make_key, std::size_t bytes, Launches const& launches) {
  if constexpr (records_launches<Exec>::value)
    if (Exec::launch_recorded(ex, make_key, bytes, launches)) return;
  workspace<Exec> ws(ex, bytes);
  launches(ex, ws.template at<unsigned char>(0));
}

}  // namespace detail
}  // namespace calm
