// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/workloads/kmeans_update.hpp: the centroid update of k-means (sums and counts per cluster), with one
// vote space per component and the counter, replicated R times in block-local memory, cyclic mapping (001 §4.1).
#pragma once

#include <algorithm>
#include <string>
#include <type_traits>

#include "../../core/error.hpp"
#include "../../core/exec.hpp"
#include "../warp/update.hpp"
#include "../bulk/thread_private.hpp"
#include "../bulk/workspace.hpp"

namespace calm {

/// How kmeans_update accumulates.
enum class kmeans_method {
  automatic,              ///< thread_private on a CPU; on a GPU privatize where the vote spaces fit a block, else peer_reduce
  naive,                  ///< one device atomic per point and component
  peer_reduce,            ///< device atomics, a warp's points of one cluster merged first (002)
  privatize,              ///< vote spaces in block-local memory, R copies, one atomic per point and component
  privatize_peer_reduce,  ///< the same with a warp's points of one cluster merged first
  /// On a CPU: sums and counts private to each thread, merged once (automatic's choice there); on a GPU
  /// as automatic. Sums and counts beyond thread_table_max_bytes a thread: naive.
  thread_private,
};

inline char const* to_string(kmeans_method m) {
  static char const* names[] = {"automatic", "naive", "peer_reduce", "privatize", "privatize_peer_reduce", "thread_private"};
  return names[static_cast<int>(m)];
}

/// What kmeans_update may be told.
struct kmeans_options {
  kmeans_method method = kmeans_method::automatic;  ///< how points are merged (automatic: by the points and centroids)
  /// Copies R of the vote spaces per block (0: the replication rule of privatize.hpp).
  int copies = 0;
  /// Check before anything is written that every assignment is in [0, k) (one pass and a wait);
  /// false: points with an assignment outside are skipped.
  bool check_indices = true;
};

/// The block-local layout of the privatized update: the counter's R copies of k (+ pad) entries, then
/// each component's R copies, copy r of thread t = t mod R (001's cyclic mapping).
struct kmeans_layout {
  index_t k = 0;  ///< centroids
  /// components, copies R, padding between copies
  ///@{
  int d = 0, copies = 1, pad = 0;
  ///@}
  std::size_t counts_bytes = 0;  ///< where the components start (16-byte aligned)
  std::size_t bytes = 0;         ///< all of the block's space
  /// Entries from one copy to the next.
  CALM_HD index_t stride() const { return k + pad; }
  /// Entries of all copies of one component.
  CALM_HD index_t space() const { return stride() * copies; }
};

namespace detail {

template <class Method>
struct kmeans_program;

/// The points of this block, one per lane: f(w, i, a) for lanes with point i assigned to cluster a in
/// [0, k). PerLane: each lane on its own (a scalar loop on the host; the same code on a GPU), for
/// strategies that need no other lane.
template <bool PerLane, class Block, class A, class F>
CALM_HD void for_each_point(Block const& blk, A const* assign, index_t n, index_t k, F&& f) {
  index_t const threads = blk.threads();
  blk.for_each_tile((n + threads - 1) / threads, [&](index_t tile) {
    index_t const base = tile * threads;
    blk.for_each_warp([&](auto const& w, auto t) {
      auto const points = [&](auto const& w1, auto const& t1) {
        auto const i = map([base](int tt) { return base + tt; }, t1);
        when(w1, i < n, [&](auto const& u) {
          auto const a = map(identity_key{}, load(u, assign, i));
          auto const in = map([k](index_t x) { return x >= 0 && x < k; }, a);
          when(u, in, [&](auto const& v) { f(v, i, select(in, a, index_t(0))); });
        });
      };
      if constexpr (PerLane) each_lane(w, points, t);
      else points(w, t);
    });
  });
}

/// Device atomics straight into sums and counts, lanes merged by Strategy (naive or peer_reduce).
template <class Strategy, class T, class A, class C>
struct kmeans_device_program {
  T const* points;
  A const* assign;
  index_t n, k;
  int d;
  T* sums;
  C* counts;
  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    T const* const p = points;
    T* const s = sums;
    C* const c = counts;
    int const dd = d;
    for_each_point<std::is_same<Strategy, naive>::value>(blk, assign, n, k, [&](auto const& w, auto const& i, auto const& a) {
      auto const at = c + a;
      auto const plan = Strategy{}.group(w, at);
      apply(w, plan, plus{}, scope::device{}, at, same_value<C>{C(1)});
      auto const row = s + map([dd](index_t x) { return x * dd; }, a);
      auto const from = map([dd](index_t x) { return x * dd; }, i);
      for (int j = 0; j < dd; ++j) apply(w, plan, plus{}, scope::device{}, row + j, load(w, p, from + j));
    });
  }
};

/// Vote spaces in block-local memory (kmeans_layout), lanes merged by Strategy, merged into sums and
/// counts with one device atomic per nonzero entry and block.
template <class Strategy, class T, class A, class C>
struct kmeans_private_program {
  T const* points;
  A const* assign;
  index_t n;
  kmeans_layout lay;
  T* sums;
  C* counts;
  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    unsigned char* const mem = blk.template scratch<unsigned char>();
    C* const vc = reinterpret_cast<C*>(mem);
    T* const vs = reinterpret_cast<T*>(mem + lay.counts_bytes);
    kmeans_layout const l = lay;
    index_t const space = l.space(), stride = l.stride();
    int const threads = blk.threads();
    for (index_t base = 0; base < space * (l.d + 1); base += threads)  // clear every vote space
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const e = map([base](int tt) { return base + tt; }, t);
        when(w, e < space, [&](auto const& u) { store(u, vc, e, C(0)); });
        when(w, map([space, d = l.d](index_t x) { return x >= space && x < space * (d + 1); }, e), [&](auto const& u) { store(u, vs, e - space, T(0)); });
      });
    blk.sync();
    T const* const p = points;
    for_each_point<std::is_same<Strategy, naive>::value>(blk, assign, n, l.k, [&](auto const& w, auto const& i, auto const& a) {
      auto const copy = map([l](int tt) { return static_cast<index_t>((l.copies & (l.copies - 1)) == 0 ? tt & (l.copies - 1) : tt % l.copies); },
                            i);  // consecutive points (lanes) to consecutive copies
      auto const e = map([stride](index_t r, index_t x) { return r * stride + x; }, copy, a);
      auto const at = vc + e;
      auto const plan = Strategy{}.group(w, at);
      apply(w, plan, plus{}, scope::block_local{}, at, same_value<C>{C(1)});
      auto const from = map([dd = l.d](index_t x) { return x * dd; }, i);
      for (int j = 0; j < l.d; ++j) apply(w, plan, plus{}, scope::block_local{}, vs + (e + j * space), load(w, p, from + j));
    });
    blk.sync();
    T* const s = sums;
    C* const c = counts;
    index_t const entries = l.k * (l.d + 1);
    for (index_t base = 0; base < entries; base += threads)
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const e = map([base](int tt) { return base + tt; }, t);
        when(w, e < l.k, [&](auto const& u) {  // the counter
          auto v = load(u, vc, e);
          for (int r = 1; r < l.copies; ++r) v = v + load(u, vc, e + r * stride);
          when(u, v != C(0), [&](auto const& x) { atomic_update(x, plus{}, scope::device{}, c + e, v); });
        });
        when(w, map([k = l.k, entries](index_t x) { return x >= k && x < entries; }, e), [&](auto const& u) {  // sums[b * d + j], in the output's order
          auto const o = e - l.k;
          auto const b = map([dd = l.d](index_t x) { return x / dd; }, o);
          auto const src = map([dd = l.d, space](index_t x, index_t bb) { return (x - bb * dd) * space + bb; }, o, b);
          auto v = load(u, vs, src);
          for (int r = 1; r < l.copies; ++r) v = v + load(u, vs, src + r * stride);
          when(u, v != T(0), [&](auto const& x) { atomic_update(x, plus{}, scope::device{}, s + o, v); });
        });
      });
  }
};

/// thread_private's fill: block b (one CPU thread) clears its own sums (k x d) and counts (k), then adds
/// its slice of the points into them.
template <class T, class A, class C>
struct kmeans_thread_fill_program {
  T const* points;
  A const* assign;
  index_t n, k;
  int d;
  T* sums_tables;
  C* counts_tables;
  index_t sums_stride, counts_stride;  ///< entries from one thread's sums (counts) to the next one's

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    index_t begin, end;
    slice_range(n, blk.count(), blk.index(), begin, end);
    T* const s = sums_tables + blk.index() * sums_stride;
    C* const c = counts_tables + blk.index() * counts_stride;
    for (index_t e = 0; e < k * d; ++e) s[e] = T(0);
    for (index_t e = 0; e < k; ++e) c[e] = C(0);
    switch (d) {  // the common widths with the row's length known
      case 1: return fill<1>(s, c, begin, end);
      case 2: return fill<2>(s, c, begin, end);
      case 3: return fill<3>(s, c, begin, end);
      case 4: return fill<4>(s, c, begin, end);
      case 8: return fill<8>(s, c, begin, end);
      default: return fill_any(s, c, begin, end);
    }
  }

  /// Points [begin, end) into sums s and counts c, rows of D components: each row read whole, added to,
  /// and written whole (one vector load, add and store a row on x86; adding component by component ran
  /// 1.1-1.6x longer on 2 cores, the loop of fill_any 1.1-1.9x).
  template <int D>
  CALM_HD void fill(T* __restrict__ s, C* __restrict__ c, index_t begin, index_t end) const {
    T const* __restrict__ const pts = points;
    A const* __restrict__ const as = assign;
    index_t const kk = k;
    for (index_t i = begin; i < end; ++i) {
      index_t const a = identity_key{}(as[i]);
      if (a < 0 || a >= kk) continue;
      c[a] += C(1);
      T* __restrict__ const row = s + a * D;
      T const* __restrict__ const p = pts + i * D;
      T sum[D];
      CALM_UNROLL_ALWAYS for (int j = 0; j < D; ++j) sum[j] = row[j] + p[j];
      CALM_UNROLL_ALWAYS for (int j = 0; j < D; ++j) row[j] = sum[j];
    }
  }

  /// fill for any d.
  CALM_HD void fill_any(T* __restrict__ s, C* __restrict__ c, index_t begin, index_t end) const {
    T const* __restrict__ const pts = points;
    A const* __restrict__ const as = assign;
    index_t const kk = k;
    int const dd = d;
    for (index_t i = begin; i < end; ++i) {
      index_t const a = identity_key{}(as[i]);
      if (a < 0 || a >= kk) continue;
      c[a] += C(1);
      for (int j = 0; j < dd; ++j) s[a * dd + j] += pts[i * dd + j];
    }
  }
};

/// kmeans_update's thread_private (n > 0, k > 0): one launch fills each thread's sums and counts, two
/// fold them into sums and counts by ranges of entries (no atomics).
template <class T, class A, class C, class Exec>
void launch_kmeans_thread_private(T const* points, A const* assign, index_t n, int d, index_t k, T* sums, C* counts, Exec const& ex) {
  thread_tables_plan sp, cp;
  sp.blocks = cp.blocks = std::max<index_t>(1, std::min<index_t>(ex.resident_blocks_hint(), n / thread_min_items));
  sp.stride = (k * d + 15) / 16 * 16;
  cp.stride = (k + 15) / 16 * 16;
  std::size_t const sums_bytes = (static_cast<std::size_t>(sp.blocks * sp.stride) * sizeof(T) + 63) / 64 * 64;
  workspace<Exec> ws(ex, sums_bytes + static_cast<std::size_t>(cp.blocks * cp.stride) * sizeof(C));
  T* const st = ws.template at<T>(0);
  C* const ct = ws.template at<C>(sums_bytes);
  ex.for_each_block(sp.blocks, 1, 0, kmeans_thread_fill_program<T, A, C>{points, assign, n, k, d, st, ct, sp.stride, cp.stride});
  auto const merge_blocks = [&](index_t entries) { return std::max<index_t>(1, std::min<index_t>(ex.resident_blocks_hint(), entries / 1024)); };
  ex.for_each_block(merge_blocks(k * d), 1, 0, thread_table_merge_program<plus, T>{plus{}, st, sums, k * d, sp});
  ex.for_each_block(merge_blocks(k), 1, 0, thread_table_merge_program<plus, C>{plus{}, ct, counts, k, cp});
}

}  // namespace detail

/// The layout kmeans_update uses for k clusters of d components on ex (copies: 0 for the rule).
template <class T, class C, class Exec>
kmeans_layout plan_kmeans(index_t k, int d, int copies, Exec const& ex) {
  kmeans_layout l;
  l.k = k;
  l.d = d;
  std::size_t const entry = sizeof(C) + static_cast<std::size_t>(d) * sizeof(T);
  l.copies = copies > 0 ? copies : replication_for(k, entry, ex.replication_budget_bytes(), 32);
  l.pad = l.copies > 1 ? 1 : 0;
  l.counts_bytes = (static_cast<std::size_t>(l.space()) * sizeof(C) + 15) / 16 * 16;
  l.bytes = l.counts_bytes + static_cast<std::size_t>(l.space()) * static_cast<std::size_t>(d) * sizeof(T);
  return l;
}

/// For each point i < n of d components (points[i * d + j]) assigned to cluster a = assign[i]:
/// sums[a * d + j] += points[i * d + j] and counts[a] += 1, the centroid update of k-means (divide
/// sums by counts for the new centroids). T: float or double; A, C: integers (C atomic: int32/64,
/// uint32/64). Throws calm::error before anything is written on a null pointer, a size out of range,
/// a privatize method whose vote spaces exceed a block's memory, or (opt.check_indices) an
/// assignment outside [0, k). Asynchronous on a GPU, except the index check's wait.
///
///   calm::kmeans_update(points, assign, n, 2, k, sums, counts);  // point (1, 2) in cluster 3: sums[6] += 1, sums[7] += 2, counts[3] += 1
template <class T, class A, class C, class Exec = default_exec>
void kmeans_update(T const* points, A const* assign, index_t n, int d, index_t k, T* sums, C* counts, kmeans_options const& opt = {},
                   Exec const& ex = Exec{}) {
  static_assert(std::is_floating_point<T>::value, "kmeans_update: points must be float or double");
  static_assert(std::is_integral<A>::value, "kmeans_update: assignments must be integers");
  check_atomic_op<plus, T>();
  check_atomic_op<plus, C>();
  require(n >= 0 && k >= 0, errc::invalid_argument, [&] { return "kmeans_update: negative size (n " + std::to_string(n) + ", k " + std::to_string(k) + ")"; });
  require(d >= 1, errc::invalid_argument, [&] { return "kmeans_update: d = " + std::to_string(d) + " components; at least one is needed"; });
  require(n == 0 || (points != nullptr && assign != nullptr), errc::invalid_argument, "kmeans_update: points or assign is null");
  require(k == 0 || (sums != nullptr && counts != nullptr), errc::invalid_argument, "kmeans_update: sums or counts is null");
  int const mi = static_cast<int>(opt.method);
  require(mi >= 0 && mi <= static_cast<int>(kmeans_method::thread_private), errc::invalid_argument,
          [&] { return "kmeans_update: unknown method " + std::to_string(mi); });
  require(opt.copies >= 0 && opt.copies <= 1024, errc::invalid_argument, "kmeans_update: copies must be in [0, 1024]");
  require(k <= (index_t(1) << 40) / (d + 1), errc::out_of_range,
          [&] { return "kmeans_update: k = " + std::to_string(k) + " clusters of " + std::to_string(d) + " components are more entries than calm indexes (2^40)"; });
  kmeans_layout const lay = plan_kmeans<T, C>(k, d, opt.copies, ex);
  bool const fits = lay.bytes <= ex.block_local_bytes();
  bool const forced_private = opt.method == kmeans_method::privatize || opt.method == kmeans_method::privatize_peer_reduce;
  require(!forced_private || fits, errc::out_of_range,
          [&] { return std::string("kmeans_update: ") + to_string(opt.method) + " needs " + std::to_string(lay.bytes) + " bytes of block-local memory for " +
              std::to_string(lay.copies) + " copies of " + std::to_string(d + 1) + " vote spaces of " + std::to_string(k) + " entries; one block has " +
              std::to_string(ex.block_local_bytes()); });
  if (n == 0) return;
  if (opt.check_indices) detail::require_inside("kmeans_update", "assignments", assign, n, k, ex);
  if (k == 0) return;
  kmeans_method m = opt.method;
  if (m == kmeans_method::automatic && Exec::thread_tables) m = kmeans_method::thread_private;
  if (m == kmeans_method::thread_private && !Exec::thread_tables) m = kmeans_method::automatic;
  if (m == kmeans_method::automatic) m = fits ? kmeans_method::privatize : kmeans_method::peer_reduce;
  if (m == kmeans_method::thread_private && !detail::thread_tables_fit<T, Exec>(k * d)) m = kmeans_method::naive;
  if constexpr (Exec::thread_tables) {
    if (m == kmeans_method::thread_private) return detail::launch_kmeans_thread_private(points, assign, n, d, k, sums, counts, ex);
  }
  constexpr int threads = 512;
  index_t const tiles = (n + threads - 1) / threads;
  switch (m) {
    case kmeans_method::naive:
      ex.for_each_resident_block(tiles, threads, 0, detail::kmeans_device_program<naive, T, A, C>{points, assign, n, k, d, sums, counts});
      break;
    case kmeans_method::automatic:  // resolved above
    case kmeans_method::thread_private:
    case kmeans_method::peer_reduce:
      ex.for_each_resident_block(tiles, threads, 0, detail::kmeans_device_program<peer_reduce, T, A, C>{points, assign, n, k, d, sums, counts});
      break;
    case kmeans_method::privatize:
      ex.for_each_resident_block(tiles, threads, lay.bytes, detail::kmeans_private_program<naive, T, A, C>{points, assign, n, lay, sums, counts});
      break;
    case kmeans_method::privatize_peer_reduce:
      ex.for_each_resident_block(tiles, threads, lay.bytes, detail::kmeans_private_program<peer_reduce, T, A, C>{points, assign, n, lay, sums, counts});
      break;
  }
}

}  // namespace calm
