// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/warp/naive.hpp: one atomic per lane, no merging: the baseline every strategy is measured
// against, and what the others fall back to when collisions are too few to pay (000 section 3.1).
#pragma once

#include "peer_groups.hpp"

namespace calm {

/// No merging: one atomic per lane.
struct naive {
  /// Every lane its own group.
  template <class Warp, class A>
  CALM_HD peer_groups<Warp> group(Warp const& w, A const&) const {
    return {detail::own_lane(w), false};
  }
};

}  // namespace calm
