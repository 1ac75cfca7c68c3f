// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/warp/peer_reduce.hpp: exact grouping of the warp's lanes by key (address), reduction
// sub-trees per group and one atomic per distinct key. Follows 002 (get_peers stage 1, add_peers stage 2).
#pragma once

#include "naive.hpp"
#include "peer_groups.hpp"

namespace calm {

/// Stage 1 is match_any: one instruction where the backend has it (Warp::native_match_any, CUDA
/// sm_70+), the get_peers ballot loop otherwise (one round per distinct key; HIP on ROCm 5).
/// Stage 2 reduces each group in ceil(log2(group size)) rounds. Every distinct address gets exactly one
/// atomic per warp. Example (002, 16 lanes, three keys): lanes {0,4,7,10,12,13} with values
/// {9,2,4,1,7,8} add 31 from lane 0; {1,2,5,8,14} add 28 from lane 1; {3,6,9,11,15} add 28 from lane 3.
struct peer_reduce {
  /// The lanes grouped by equal addresses (match_any).
  template <class Warp, class A>
  CALM_HD peer_groups<Warp> group(Warp const& w, A const& addr) const {
    return {match_any(w, addr), true};
  }
};

/// peer_reduce where `merge` holds, naive where it does not (uniform over the warp): one program for
/// both, picked at run time. strategy::automatic launches it once behind a choice on the device that
/// may end at either, instead of one launch for each (detail::chosen_merge_program).
struct peer_reduce_if {
  bool merge = true;  ///< peer_reduce (true) or naive
  /// peer_reduce's groups or naive's, as merge says.
  template <class Warp, class A>
  CALM_HD peer_groups<Warp> group(Warp const& w, A const& addr) const {
    if (merge) return peer_reduce{}.group(w, addr);
    return naive{}.group(w, addr);
  }
};

}  // namespace calm
