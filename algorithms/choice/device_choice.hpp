// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/choice/device_choice.hpp: strategy::automatic finished on the device: the sampled statistics
// (000 §3.3) summed and the fitted tree walked by the sampling's last block, whose choice selects the strategy that runs.
#pragma once

#include <algorithm>
#include <type_traits>
#include <utility>

#include "../../core/exec.hpp"
#include "../../core/launch.hpp"
#include "choose.hpp"
#include "collision_stats.hpp"
#include "line_merge_rule.hpp"
#include "../warp/group_reduce.hpp"
#include "../warp/peer_reduce.hpp"
#include "../warp/update.hpp"
#include "../bulk/workspace.hpp"

namespace calm {
namespace detail {

/// The automatic choice finished on the device, by the sampling's last block (the finish of
/// launch_sample, which has summed the groups' totals at `sum`; no launch of its own): one lane turns
/// the sum into ratios (ratios_of), walks the rest of the tree testing them by products (no division:
/// 0.3 us less a call than statistics_of's divisions on an H100) and writes the
/// strategy to `decided`, and to `report` if given. Where the walk ends at peer_reduce and `rule` says
/// the sampled line repeats do not merge (the sampling counted them: merge_lines), naive instead.
struct choice_program {
  collision_totals const* sum = nullptr;
  tree_walk walk;
  strategy* decided = nullptr;
  strategy* report = nullptr;
  line_merge_rule rule = {};  ///< 0: peer_reduce stays

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    blk.for_each_warp([&](auto const& w, auto t) {
      when(w, t == 0, [&](auto const&) {
        collision_totals const total = *sum;
        strategy s = walk.finish(ratios_of(total));
        if (s == strategy::peer_reduce && !rule.merges(line_repeats_of(total))) s = strategy::naive;
        *decided = s;
        if (report != nullptr) *report = s;
      });
    });
  }
};

/// The strategy at `decided` read past the block's cache: a launch that reads it without waiting for the
/// launch before it (chosen_program's `settled`) must see this call's choice, not a line kept from the last.
CALM_HD inline strategy settled_choice(strategy const* decided) { return *static_cast<strategy const volatile*>(decided); }

/// A block program that runs `program` if the strategy at `decided` (written by choice_program earlier
/// on the same stream) is `id`, and else ends at once: a launch not chosen costs an empty grid; decided
/// nullptr: chosen on the host, it runs (so a call need not compile the program's plain launch as well). calm
/// launches each strategy on its own, so that each keeps the registers and occupancy it has forced.
///
/// The launches behind one choice overlap where the exec lets them (detail::overlapping): the chosen one
/// lets the next launch begin as soon as it has read the choice (allow_next_launch), so the launches
/// after it are set up and their blocks placed while it runs. The first launch after the sampling waits
/// for it before it reads the choice. Each later one (`settled`) began only once every block before it
/// had read the choice, so it reads the choice at once. A block not chosen then ends at once if the
/// chosen launch comes later, and else waits for the launch before it first, so that no launch ends
/// before the chosen one (the last launch's end is the call's end, which the stream's next work waits
/// for). A chosen block still waits for the launch before it: in a variant that ran at once, calls
/// where hot_key is best took 0.3-3.3 us longer (medians of three held-out runs on an H200), where this
/// one was within 0.5 us of launches that did not overlap (perf/results/cuda-h200-2026-11-29-chosen-launch-overlap.md).
/// Where the launches end as one (`as_one`: recorded into a graph, which ends when all of its launches
/// have ended: launches_end_as_one), a block not chosen ends at once wherever the chosen launch is: a
/// launch after the chosen one then no longer ends after it, about 1 us a call where a direct scatter
/// runs with hot_key's launch after it (perf/results/cuda-h200-2026-12-01-graph-tail.md).
template <class Program>
struct chosen_program {
  strategy const* decided;
  strategy id;
  Program program;
  bool settled = false;  ///< the choice was final when this launch began (not the first behind it)
  unsigned earlier = 0;  ///< the strategies launched before this one behind the same choice (bits)
  bool as_one = false;   ///< the launches end as one: no block not chosen waits
  /// the program's register cap, if it asks for one (core/launch.hpp)
  static constexpr int resident_1024_blocks = resident_1024_blocks_of<Program>::value;
  static constexpr int resident_512_blocks = resident_512_blocks_of<Program>::value;
  static constexpr bool awaits_prior_launch = true;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    if (chosen(blk)) program(blk);
  }

 private:
  /// Whether this launch runs, after the waits that keep the order above.
  template <class Block>
  CALM_HD bool chosen(Block const& blk) const {
    if (decided == nullptr) {  // chosen on the host (launch_chosen): as the program's own launch
      blk.await_prior_launch();
      return true;
    }
    if (!settled) blk.await_prior_launch();
    strategy const s = settled ? settled_choice(decided) : *decided;
    if (s != id) {
      if (settled && !as_one && reaches(earlier, s)) blk.await_prior_launch();
      return false;
    }
    if (settled) blk.await_prior_launch();
    blk.allow_next_launch();
    return true;
  }
};

/// Set a direct scatter's run-time merge to strategy s, if it holds s: peer_reduce_if holds naive and
/// peer_reduce, switch_merge scan_reduce too.
CALM_HD inline bool select_merge(peer_reduce_if& m, strategy s) {
  if (s != strategy::naive && s != strategy::peer_reduce) return false;
  m.merge = s == strategy::peer_reduce;
  return true;
}
CALM_HD inline bool select_merge(switch_merge& m, strategy s) {
  if (s != strategy::naive && s != strategy::scan_reduce && s != strategy::peer_reduce) return false;
  m.kind = s == strategy::naive ? merge_kind::none : s == strategy::scan_reduce ? merge_kind::runs : merge_kind::peers;
  return true;
}

/// A direct scatter program whose warp strategy is a peer_reduce_if (`strategy`), run if the strategy
/// at `decided` is naive or peer_reduce, and else ended at once (a switch_merge: scan_reduce too, where
/// the choice may end at it). Both direct scatters in one launch:
/// on an H100 each launch behind the choice that is not chosen costs 1.2 to 1.4 us
/// (perf/results/cuda-h100-2026-11-24-bulk-path-mechanics.md). Which of the two runs the choice has
/// said, line rule included (choice_program): the blocks probe nothing.
/// The launch keeps about the occupancy of the direct scatters' own launches (2 to 3 blocks of 512 an
/// SM): with 4-byte values it asks for two blocks of 512 (64 registers; 61-68 uncapped for float sums,
/// one block), and a counting program over plain keys (one value for every key, no key map: histograms)
/// for three (40 registers, no spills on sm_90; the three merges' own launches take 34-46). On an H200,
/// hist_u32 sorted over 300,000 entries with 2^26 keys ran peer_reduce here in 104 us, as its own launch
/// does, against 117 us capped at 32 registers (4 blocks, 40 bytes spilled) or at 64 (2 blocks)
/// (perf/results/cuda-h200-2026-11-28-shared-launch-occupancy.md). With 8-byte values, no request.
/// On HIP the request becomes the kernel's launch bounds there (not measured on an AMD GPU).
template <class Program>
struct chosen_merge_program {
  strategy const* decided;
  Program program;
  unsigned reach = ~0u;  ///< the strategies (bits) this launch runs, of those it can: a choice's reach
  using value_type = std::remove_pointer_t<decltype(std::declval<Program>().out)>;
  static constexpr bool counts_plain_keys = is_same_value<std::decay_t<decltype(std::declval<Program>().values)>>::value &&
                                            std::is_same<std::decay_t<decltype(std::declval<Program>().key_map)>, identity_key>::value;
  static constexpr bool asks_itself = resident_1024_blocks_of<Program>::value > 0 || resident_512_blocks_of<Program>::value > 0;
  static constexpr int resident_1024_blocks = resident_1024_blocks_of<Program>::value;
  static constexpr int resident_512_blocks = asks_itself ? resident_512_blocks_of<Program>::value
                                             : sizeof(value_type) > 4 ? 0
                                             : counts_plain_keys ? 3
                                                                 : 2;

  /// The launch waits for the choice itself: each thread loads its first tile of keys (and values)
  /// before it waits for the sampling (they are not what the sampling writes), so those loads overlap the
  /// sampling, which lets this launch begin at its own start (collision_sample_program). On an H100 a
  /// stand-in ran 0.3-2.1 us sooner so at 2^24 keys (perf/probe_prefetch_before_wait.cu). It is the
  /// first launch behind the choice (launch_chosen); chosen, it lets the next begin (chosen_program).
  static constexpr bool awaits_prior_launch = true;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    Program p = program;
    p(blk, gate_with([&] {  // after the first tile's loads: wait for the choice, then set the merge or end
      blk.await_prior_launch();
      strategy const s = *decided;
      bool const chosen = reaches(reach, s) && select_merge(p.strategy, s);
      if (chosen) blk.allow_next_launch();  // the launches after this one may be placed now (chosen_program)
      return chosen;
    }));
  }
};

/// chosen_program: `settled` for every launch behind the choice but the first, `earlier` the strategies
/// launched before it, `as_one` where the launches end as one (launches_end_as_one).
template <class Program>
chosen_program<Program> run_if_chosen(strategy const* decided, strategy id, Program const& program, bool settled = false, unsigned earlier = 0,
                                      bool as_one = false) {
  return {decided, id, program, settled, earlier, as_one};
}

template <class Exec, class = void>
struct has_ends_as_one : std::false_type {};
template <class Exec>
struct has_ends_as_one<Exec, std::void_t<decltype(std::declval<Exec const&>().ends_as_one)>> : std::true_type {};

/// Whether the launches made through ex end as one (the exec's ends_as_one, where it has one: CUDA while
/// a call's launches are recorded into a graph, whose end waits for every launch in it; core/exec.hpp).
/// Elsewhere false: the stream's next work waits for the last launch alone, so none may end before the
/// chosen one.
template <class Exec>
bool launches_end_as_one(Exec const& ex) {
  if constexpr (has_ends_as_one<Exec>::value) return ex.ends_as_one;
  else return false;
}

template <class Exec, class = void>
struct has_overlap_launches : std::false_type {};
template <class Exec>
struct has_overlap_launches<Exec, std::void_t<decltype(std::declval<Exec&>().overlap_launches = true)>> : std::true_type {};

/// ex with each launch allowed to overlap the end of the one before it on its stream (the exec's
/// overlap_launches, where it has one: CUDA on sm_90): the launches behind a choice made on the device
/// each still wait for the last, but their set-up overlaps its end; on an H100 calls with two
/// strategies not chosen took 0.9 to 1.3 us less (perf/results/cuda-h100-2026-11-24-bulk-path-overlap.md).
/// Other execs are returned as they are.
template <class Exec>
Exec overlapping(Exec ex) {
  if constexpr (has_overlap_launches<Exec>::value) ex.overlap_launches = true;
  return ex;
}

template <class Exec, class = void>
struct records_launches : std::false_type {};
template <class Exec>
struct records_launches<Exec, std::enable_if_t<Exec::has_launch_graphs>> : std::true_type {};

/// What an exec without recorded graphs gives a plan to hold: nothing to record.
struct no_recorder {};
template <class Exec, class = void>
struct recorder_type {
  using type = no_recorder;
};
template <class Exec>
struct recorder_type<Exec, std::enable_if_t<Exec::has_launch_graphs>> {
  using type = typename Exec::recorder;
};
/// The recorder a plan of Exec holds (Exec::recorder, or no_recorder).
template <class Exec>
using recorder_of = typename recorder_type<Exec>::type;

/// launches(ex, ws) with ws `bytes` of workspace whose first `zeroed` bytes are zero (launches must
/// leave them zero: a ticket the last block resets): the launches of a call decided on the device (the
/// sampling that finishes with choice_program, each strategy it may pick behind run_if_chosen). Where
/// a plan's recorder is given (rec: CUDA) and the call repeats with the same key (make_key(), built only
/// there), they run as one recorded graph, whose workspace is zeroed once when it is allocated; else
/// they are launched one by one with a workspace of this call's, its first `zeroed` bytes filled.
template <class Exec, class MakeKey, class Launches>
void launch_decided(Exec const& ex, recorder_of<Exec>* rec, MakeKey const& make_key, std::size_t bytes, std::size_t zeroed, Launches const& launches) {
  if constexpr (records_launches<Exec>::value)
    if (rec != nullptr && rec->launch(ex, make_key, bytes, launches)) return;
  workspace<Exec> ws(ex, bytes);
  if (zeroed > 0) ex.fill(ws.template at<unsigned char>(0), 0, zeroed);
  launches(ex, ws.template at<unsigned char>(0));
}

}  // namespace detail
}  // namespace calm
