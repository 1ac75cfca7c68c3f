// SPDX-License-Identifier: Apache-2.0
// calm/backends/openmp/counters.hpp: counts of the warp operations the host backend performs (atomics
// per lane, ballots, matches, shuffles), so tests can check how many atomics a strategy issues.
// Compiled in only with CALM_COUNT_OPERATIONS=1; otherwise CALM_COUNT is nothing.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <initializer_list>

namespace calm {
namespace openmp {

struct op_counts {
  std::uint64_t atomics = 0;   // one per lane that applied an atomic
  std::uint64_t ballots = 0;   // ballot, any, all
  std::uint64_t matches = 0;   // match_any
  std::uint64_t shuffles = 0;  // shuffle, shuffle_up, shuffle_down, shuffle_xor
  std::uint64_t mask_ops = 0;  // popc of a uniform mask
};

namespace counters {
inline std::atomic<std::uint64_t> atomics{0}, ballots{0}, matches{0}, shuffles{0}, mask_ops{0};
}  // namespace counters

inline op_counts read_counts() {
  return {counters::atomics.load(), counters::ballots.load(), counters::matches.load(), counters::shuffles.load(),
          counters::mask_ops.load()};
}
inline void reset_counts() {
  for (auto* c : {&counters::atomics, &counters::ballots, &counters::matches, &counters::shuffles, &counters::mask_ops})
    c->store(0);
}
constexpr bool counting_enabled =
#if defined(CALM_COUNT_OPERATIONS) && CALM_COUNT_OPERATIONS
    true;
#define CALM_COUNT(field) ::calm::openmp::counters::field.fetch_add(1, std::memory_order_relaxed)
#else
    false;
#define CALM_COUNT(field) ((void)0)
#endif

/// The host's free-running clock for calm::clock(w): nanoseconds, truncated to 32 bits.
inline std::uint32_t host_clock() {
  return static_cast<std::uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

}  // namespace openmp
}  // namespace calm
