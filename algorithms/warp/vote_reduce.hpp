// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/warp/vote_reduce.hpp: sample a lane, ballot the lanes sharing its key, merge them if there
// are enough, the rest go naive (VR1); VRm samples M keys. Follows 000 section 3.1, Alg. 2.
#pragma once

#include <cstdint>

#include "peer_groups.hpp"
#include "../choice/thresholds.hpp"

namespace calm {

namespace detail {
/// The full-cycle random sequence of Alg. 2, computed instead of stored: murmur3's finalizer is a
/// bijection of the 32-bit integers, so rand[p] = fmix32(p) visits every value once per 2^32 steps.
/// (A stored table would need a backend qualifier such as __constant__; this needs none.)
CALM_HD constexpr std::uint32_t full_cycle_sequence(std::uint32_t p) {
  p ^= p >> 16;
  p *= 0x85ebca6bu;
  p ^= p >> 13;
  p *= 0xc2b2ae35u;
  p ^= p >> 16;
  return p;
}
}  // namespace detail

/// M: keys sampled per warp (VR1 for M = 1). seed: the seed position kbase of Alg. 2, the same for a
/// whole launch; warp g uses rand[kbase + g * M + k] for its k-th sample. Leave it at seed_from_clock to
/// take it from the clock (each warp reads its own), or set it for reproducible runs.
/// threshold: lanes the sampled key must have to be merged; 0 (default) solves inequality (2) with the
/// backend's measured set-up cost (Warp::vote_reduce_setup_steps).
template <int M = 1>
struct vote_reduce {
  static_assert(M >= 1, "vote_reduce samples at least one key");
  static constexpr std::uint32_t seed_from_clock = 0xffffffffu;  ///< seed: draw the samples from the clock
  std::uint32_t seed = seed_from_clock;                           ///< the samples' seed
  int threshold = 0;  ///< the lanes a sampled key needs to be merged (0: the backend's measured threshold)

  /// The lanes of each sampled key that reaches the threshold, merged; the rest alone.
  template <class Warp, class A>
  CALM_HD peer_groups<Warp> group(Warp const& w, A const& addr) const {
    using mask_t = typename Warp::lane_mask;
    mask_t remaining = active_mask(w);
    peer_groups<Warp> g{detail::own_lane(w), false};
    std::uint32_t const kbase = seed == seed_from_clock ? calm::clock(w) : seed;
    std::uint32_t const position = kbase + static_cast<std::uint32_t>(group_index(w)) * M;
    // inequality (2) for the warp's N active lanes, solved once per call (N <= 64: a few steps)
    int const need = threshold > 0 ? threshold : vote_reduce_threshold(w, popc(w, remaining), Warp::vote_reduce_setup_steps);
    for (int k = 0; k < M && remaining; ++k) {
      // the sampled lane: the first remaining lane at or after a random lane, wrapping around
      int const r = static_cast<int>(detail::full_cycle_sequence(position + k) % Warp::size);
      mask_t const after = static_cast<mask_t>(remaining & ~first_lanes<mask_t>(r));
      int const src = ffs(w, after ? after : remaining) - 1;
      auto const sampled = shuffle(w, addr, src);
      mask_t const voters = ballot(w, addr == sampled) & remaining;
      int const x = popc(w, voters);
      if (x >= need && x > 1) {
        g.peers = select((detail::own_lane(w) & voters) != decltype(g.peers)(0), decltype(g.peers)(voters), g.peers);
        g.merged = true;
      }
      remaining = static_cast<mask_t>(remaining & ~voters);
    }
    return g;
  }
};

}  // namespace calm
