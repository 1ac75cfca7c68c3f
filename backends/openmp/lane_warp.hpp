// SPDX-License-Identifier: Apache-2.0
// calm/backends/openmp/lane_warp.hpp: a warp of one lane, for per-lane calls from scalar host code
// (a Kokkos Serial/OpenMP body, a plain loop): every strategy degrades to one plain atomic.
#pragma once

#include <atomic>
#include <cstdint>

#include "atomic.hpp"
#include "counters.hpp"

namespace calm {
namespace openmp {

struct lane_warp {
  static constexpr int size = 1;
  using lane_mask = std::uint32_t;
  template <class T>
  using varying = T;
  static constexpr bool native_match_any = true;
  static constexpr float scan_reduce_setup_steps = 0.0f;  // nothing to merge: the strategies' checks are trivial
  static constexpr float vote_reduce_setup_steps = 0.0f;

  lane_mask active() const { return 1; }
  int lane_id() const { return 0; }
  lane_mask lanes_lt() const { return 0; }
  lane_mask lanes_le() const { return 1; }
  lane_mask lanes_gt() const { return 0; }
  lane_mask lanes_ge() const { return 1; }
  int leader() const { return 0; }
  bool is_leader() const { return true; }
  index_t group_index() const { return 0; }
  std::uint32_t clock() const { return host_clock(); }

  lane_mask ballot(bool p) const { return p ? 1u : 0u; }
  bool any(bool p) const { return p; }
  bool all(bool p) const { return p; }
  static int popc(lane_mask m) { return m & 1u; }
  static int ffs(lane_mask m) { return m & 1u; }
  static int fls(lane_mask m) { return m & 1u; }

  template <class T>
  T shuffle(T const& v, int, int = 1) const { return v; }
  template <class T>
  T shuffle_up(T const& v, int, int = 1) const { return v; }
  template <class T>
  T shuffle_down(T const& v, int, int = 1) const { return v; }
  template <class T>
  T shuffle_xor(T const& v, int, int = 1) const { return v; }
  template <class K>
  lane_mask match_any(K const&) const { return 1; }
  template <class F>
  void when(bool p, F&& f) const {
    if (p) f(*this);
  }

  template <class F, class... A>
  void each_lane(F&& f, A const&... a) const { f(*this, a...); }

  template <class T, class I>
  std::remove_cv_t<T> load(T* p, I i) const { return p[i]; }
  template <class T, class I, class V>
  void store(T* p, I i, V const& v) const { p[i] = static_cast<T>(v); }
  template <class Op, class Scope, class T, class V>
  void atomic_update(Op op, Scope s, T* addr, V const& value) const {
    CALM_COUNT(atomics);
    atomic_fetch(op, s, addr, static_cast<T>(value));
  }
  template <class Op, class Scope, class T, class V>
  T atomic_fetch_update(Op op, Scope s, T* addr, V const& value) const {
    CALM_COUNT(atomics);
    return atomic_fetch(op, s, addr, static_cast<T>(value));
  }
  template <class Scope, class T>
  T atomic_load(Scope s, T const* addr) const { return atomic_read(s, addr); }
  template <class Scope>
  void fence(Scope) const { std::atomic_thread_fence(std::memory_order_seq_cst); }
};

/// The warp of a per-lane call from scalar host code.
template <class Tag = void>
inline lane_warp this_warp() { return {}; }

}  // namespace openmp
}  // namespace calm
