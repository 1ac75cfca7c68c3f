// SPDX-License-Identifier: Apache-2.0
// calm/backends/openmp/warp.hpp: the host warp. W lanes are processed by one OpenMP thread; each lane
// value is a lane_array and each operation a short lane loop. ballot returns a real multi-bit mask.
#pragma once

#include <atomic>
#include <cstring>
#include <type_traits>

#include "../../core/lane_mask.hpp"
#include "../../core/varying.hpp"
#include "atomic.hpp"
#include "counters.hpp"
#include "lane_warp.hpp"

/// The default host warp width (8, 16, 32 or 64), set by CMake's CALM_HOST_WARP_SIZE.
#ifndef CALM_HOST_WARP_SIZE
#define CALM_HOST_WARP_SIZE 32
#endif

namespace calm {
namespace openmp {

template <int W>
struct warp {
  static_assert(valid_warp_size(W), "calm::openmp::warp: W must be 8, 16, 32 or 64");
  static constexpr int size = W;
  using lane_mask = lane_mask_t<W>;
  template <class T>
  using varying = lane_array<T, W>;
  static constexpr bool native_match_any = false;
  // Set-up cost s of inequalities (1) and (2) of 000 section 3.1, in reduction steps: measured on the
  // 2-core host of this project (2026-11-22) by perf/bench_setup_cost.cpp (setup_cost in the perf suite).
  static constexpr float scan_reduce_setup_steps = 3.1f;
  static constexpr float vote_reduce_setup_steps = 2.9f;

  /// The lanes taking part.
  lane_mask mask;
  /// Which warp of the launch this is (first index / W).
  index_t group = 0;

  lane_mask active() const { return mask; }
  bool is_active(int lane) const { return (mask >> lane) & lane_mask(1); }
  /// Every lane active: the common case, whose loops need no per-lane test.
  bool is_full() const { return mask == first_lanes<lane_mask>(W); }

  varying<int> lane_id() const {
    varying<int> r;
    CALM_SIMD for (int i = 0; i < W; ++i) r.v[i] = i;
    return r;
  }
  varying<lane_mask> lanes_lt() const {
    varying<lane_mask> r;
    CALM_SIMD for (int i = 0; i < W; ++i) r.v[i] = static_cast<lane_mask>((lane_mask(1) << i) - 1);
    return r;
  }
  varying<lane_mask> lanes_le() const {
    varying<lane_mask> r;
    CALM_SIMD for (int i = 0; i < W; ++i) r.v[i] = static_cast<lane_mask>(((lane_mask(1) << i) - 1) | (lane_mask(1) << i));
    return r;
  }
  varying<lane_mask> lanes_gt() const { return varying<lane_mask>(first_lanes<lane_mask>(W)) & ~lanes_le(); }
  varying<lane_mask> lanes_ge() const { return varying<lane_mask>(first_lanes<lane_mask>(W)) & ~lanes_lt(); }

  int leader() const { return ffs(mask) - 1; }
  varying<bool> is_leader() const { return lane_id() == varying<int>(leader()); }

  // ---- votes ----
  lane_mask ballot(varying<bool> const& p) const {
    CALM_COUNT(ballots);
    lane_mask m = 0;
    for (int i = 0; i < W; ++i) m |= static_cast<lane_mask>(lane_mask(p.v[i]) << i);
    return m & mask;
  }
  lane_mask ballot(bool p) const { return p ? mask : lane_mask(0); }
  template <class P>
  bool any(P const& p) const { return ballot(p) != 0; }
  template <class P>
  bool all(P const& p) const { return ballot(p) == mask; }

  static int popc(lane_mask m) {
    CALM_COUNT(mask_ops);
    return __builtin_popcountll(static_cast<unsigned long long>(m));
  }
  static int ffs(lane_mask m) { return __builtin_ffsll(static_cast<long long>(m)); }
  static int fls(lane_mask m) { return m ? 64 - __builtin_clzll(static_cast<unsigned long long>(m)) : 0; }
  static varying<int> popc(varying<lane_mask> const& m) {
    varying<int> r;
    CALM_SIMD for (int i = 0; i < W; ++i) r.v[i] = popc(m.v[i]);
    return r;
  }
  static varying<int> ffs(varying<lane_mask> const& m) {
    varying<int> r;
    CALM_SIMD for (int i = 0; i < W; ++i) r.v[i] = ffs(m.v[i]);
    return r;
  }
  static varying<int> fls(varying<lane_mask> const& m) {
    varying<int> r;
    CALM_SIMD for (int i = 0; i < W; ++i) r.v[i] = fls(m.v[i]);
    return r;
  }

  index_t group_index() const { return group; }
  std::uint32_t clock() const { return host_clock(); }

  // ---- shuffles (width: a power of two <= W) ----
  template <class T>
  varying<T> shuffle(varying<T> const& v, varying<int> const& src, int width = W) const {
    CALM_COUNT(shuffles);
    varying<T> r;
    for (int i = 0; i < W; ++i) r.v[i] = v.v[(i & ~(width - 1)) + (src.v[i] & (width - 1))];
    return r;
  }
  template <class T>
  varying<T> shuffle_up(varying<T> const& v, int delta, int width = W) const {
    CALM_COUNT(shuffles);
    varying<T> r;
    for (int i = 0; i < W; ++i) r.v[i] = (i & (width - 1)) >= delta ? v.v[i - delta] : v.v[i];
    return r;
  }
  template <class T>
  varying<T> shuffle_down(varying<T> const& v, int delta, int width = W) const {
    CALM_COUNT(shuffles);
    varying<T> r;
    for (int i = 0; i < W; ++i) r.v[i] = (i & (width - 1)) + delta < width ? v.v[i + delta] : v.v[i];
    return r;
  }
  template <class T>
  varying<T> shuffle_xor(varying<T> const& v, int lane_xor, int width = W) const {
    CALM_COUNT(shuffles);
    varying<T> r;
    for (int i = 0; i < W; ++i) {
      int s = i ^ lane_xor;
      r.v[i] = (s < ((i & ~(width - 1)) + width) && s < W) ? v.v[s] : v.v[i];
    }
    return r;
  }

  // ---- match ----
  template <class K>
  varying<lane_mask> match_any(varying<K> const& key) const {
    static_assert(std::is_trivially_copyable<K>::value, "match_any keys must be trivially copyable");
    CALM_COUNT(matches);
    varying<lane_mask> r;
    for (int i = 0; i < W; ++i) {
      lane_mask m = 0;
      if (is_active(i))
        for (int j = 0; j < W; ++j)
          if (is_active(j) && std::memcmp(&key.v[i], &key.v[j], sizeof(K)) == 0) m |= lane_mask(1) << j;
      r.v[i] = m;
    }
    return r;
  }

  // ---- divergence ----
  template <class F>
  void when(varying<bool> const& p, F&& f) const {
    lane_mask m = ballot(p);
    if (m) f(warp{m, group});
  }
  template <class F>
  void when(bool p, F&& f) const {
    if (p && mask) f(*this);
  }

  /// f(lane_warp, lane values...) for each active lane, in lane order: a scalar loop.
  template <class F, class... A>
  void each_lane(F&& f, A const&... a) const {
    if (is_full()) {
      for (int i = 0; i < W; ++i) f(lane_warp{}, calm::detail::lane_get(a, i)...);
    } else {
      for (lane_mask m = mask; m; m &= m - 1) {
        int const i = ffs(m) - 1;
        f(lane_warp{}, calm::detail::lane_get(a, i)...);
      }
    }
  }

  // ---- memory ----
  template <class T, class I>
  varying<std::remove_cv_t<T>> load(T* p, varying<I> const& idx) const {
    varying<std::remove_cv_t<T>> r;
    if (is_full()) {
      CALM_SIMD for (int i = 0; i < W; ++i) r.v[i] = p[idx.v[i]];
    } else {
      for (int i = 0; i < W; ++i) r.v[i] = is_active(i) ? p[idx.v[i]] : std::remove_cv_t<T>{};
    }
    return r;
  }
  template <class T, class I, class V>
  void store(T* p, varying<I> const& idx, V const& v) const {
    if (is_full()) {  // in lane order: of lanes storing to one element the highest remains
      for (int i = 0; i < W; ++i) p[idx.v[i]] = static_cast<T>(calm::detail::lane_get(v, i));
    } else {
      for (int i = 0; i < W; ++i)
        if (is_active(i)) p[idx.v[i]] = static_cast<T>(calm::detail::lane_get(v, i));
    }
  }

  /// A uniform index: every active lane reads (writes) the same element; of several writers the
  /// highest active lane's value remains (on a GPU one of them, unspecified which).
  template <class T, class I, class = std::enable_if_t<std::is_integral<I>::value>>
  varying<std::remove_cv_t<T>> load(T* p, I idx) const {
    return mask ? varying<std::remove_cv_t<T>>(p[idx]) : varying<std::remove_cv_t<T>>(std::remove_cv_t<T>{});
  }
  template <class T, class I, class V, class = std::enable_if_t<std::is_integral<I>::value>>
  void store(T* p, I idx, V const& v) const {
    for (int i = 0; i < W; ++i)
      if (is_active(i)) p[idx] = static_cast<T>(calm::detail::lane_get(v, i));
  }

  template <class Op, class Scope, class A, class V>
  void atomic_update(Op op, Scope s, A const& addr, V const& value) const {
    using P = std::decay_t<decltype(calm::detail::lane_get(addr, 0))>;
    using T = std::remove_pointer_t<P>;
    if (is_full()) {  // lanes in order, one after another (equal addresses see each other's updates)
      for (int i = 0; i < W; ++i) {
        CALM_COUNT(atomics);
        atomic_fetch(op, s, calm::detail::lane_get(addr, i), static_cast<T>(calm::detail::lane_get(value, i)));
      }
      return;
    }
    for (int i = 0; i < W; ++i)
      if (is_active(i)) {
        CALM_COUNT(atomics);
        atomic_fetch(op, s, calm::detail::lane_get(addr, i), static_cast<T>(calm::detail::lane_get(value, i)));
      }
  }
  template <class Op, class Scope, class A, class V>
  auto atomic_fetch_update(Op op, Scope s, A const& addr, V const& value) const {
    using P = std::decay_t<decltype(calm::detail::lane_get(addr, 0))>;
    using T = std::remove_pointer_t<P>;
    varying<T> r(T{});
    for (int i = 0; i < W; ++i)
      if (is_active(i)) {
        CALM_COUNT(atomics);
        r.v[i] = atomic_fetch(op, s, calm::detail::lane_get(addr, i), static_cast<T>(calm::detail::lane_get(value, i)));
      }
    return r;
  }
  template <class Scope, class T>
  T atomic_load(Scope s, T const* addr) const { return atomic_read(s, addr); }
  template <class Scope>
  void fence(Scope) const { std::atomic_thread_fence(std::memory_order_seq_cst); }
};

}  // namespace openmp
}  // namespace calm
