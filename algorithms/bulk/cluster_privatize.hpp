// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/cluster_privatize.hpp: a table spread over the block-local memory of a thread-block
// cluster (Hopper distributed shared memory), for tables larger than one block holds; calm's own technique.
#pragma once

#include <string>
#include <type_traits>

#include "../../core/error.hpp"
#include "../../core/exec.hpp"
#include "hot_key_cache.hpp"
#include "privatize.hpp"

namespace calm {

/// What cluster_privatize_scatter may be told.
struct cluster_options {
  int cluster_size = 0;  ///< blocks per cluster (0: the fewest that hold the table)
  int threads = 1024;    ///< threads per block
};

/// cluster_privatize_scatter's lane merging in calm::scatter's cluster_privatize: a warp's lanes on one key are
/// merged (peer_reduce, matching the 4-byte entries) in the steps where two neighbouring lanes hold one key (runs,
/// a hot key), and update on their own elsewhere. An update of another block's memory costs about a device atomic,
/// lanes on one address queue, and a float's is a compare-and-swap loop.
struct merge_runs {};

namespace detail {

/// Block r of a cluster holds bins [r * per, (r + 1) * per) and, after them, a discard entry for keys
/// outside the table. Every block streams its own items and updates whichever block holds the key.
template <int Vec, class Strategy, class Op, class K, class Values, class T>
struct cluster_scatter_program {
  Op op;
  K const* keys;
  Values values;
  index_t n;
  T* out;
  index_t bins;
  index_t per;
  Strategy strategy;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    T* const mine = blk.template scratch<T>();
    index_t const part = per, nbins = bins;
    for (index_t b0 = 0; b0 <= part; b0 += blk.threads())
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const e = map([b0](int tt) { return b0 + tt; }, t);
        when(w, e <= part, [&](auto const& l) { store(l, mine, e, Op::template identity<T>()); });
      });
    blk.cluster_sync();  // every part cleared before any block updates it
    stream_items<Vec>(blk, keys, values, n, [&](auto const& w, auto const&, auto const& k, auto const& v) {
      auto const key = map([](auto kk) { return static_cast<index_t>(kk); }, k);
      auto const in = map([nbins](auto kk) { return key_in_table(kk, nbins); }, k);
      auto const owner = map([part](index_t kk, bool i) { return i ? static_cast<int>(kk / part) : 0; }, key, in);
      auto const addr = select(in, blk.template cluster_scratch<T>(owner) + (key - owner * part), mine + part);
      if constexpr (std::is_same<Strategy, merge_runs>::value) {
        auto const entry = select(in, key, index_t(-1));  // every key outside the table on the discard entry
        bool const runs = any(w, (lane_id(w) > 0) & (shuffle_up(w, entry, 1) == entry));
        update_keyed(w, op, scope::device{}, addr, map([](index_t e) { return static_cast<std::uint32_t>(e); }, entry), v, peer_reduce_if{runs});
      } else {
        update(w, op, scope::device{}, addr, v, strategy);
      }
    });
    blk.cluster_sync();  // every update landed; after this no block touches another's memory
    index_t const first = static_cast<index_t>(blk.cluster_rank()) * part;
    for (index_t b0 = 0; b0 < part; b0 += blk.threads())
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const b = map([b0](int tt) { return b0 + tt; }, t);
        when(w, (b < part) & (b + first < nbins), [&](auto const& l) {
          auto const v = load(l, mine, b);
          when(l, v != Op::template identity<T>(), [&](auto const& u) { atomic_update(u, op, scope::device{}, out + first + b, v); });
        });
      });
  }
};

/// Whether Exec runs cluster programs that apply Op to T (the backend says which ops it trusts).
template <class Exec, class Op, class T>
constexpr bool clusters_for() {
  if constexpr (Exec::has_clusters) return Exec::template cluster_atomic<Op, T>;
  else return false;
}

/// The clusters of cluster_privatize_scatter: c blocks of `per` entries each.
struct cluster_plan {
  int size = 1;
  index_t per = 1;
};

/// Checks the options against the table and plans the clusters (throws calm::error before any launch).
template <class T, class Exec>
cluster_plan plan_clusters(index_t bins, cluster_options const& opt, Exec const& ex) {
  require(opt.threads >= 1 && opt.threads <= 1024, errc::invalid_argument, "cluster_privatize_scatter: threads must be in [1, 1024]");
  require(opt.cluster_size >= 0 && opt.cluster_size <= ex.max_cluster_size(), errc::invalid_argument,
          [&] { return "cluster_privatize_scatter: cluster size must be in [0, " + std::to_string(ex.max_cluster_size()) + "]"; });
  index_t const cap = privatize_capacity<T>(ex);
  int c = opt.cluster_size;
  // the fewest blocks that hold the table: on an H100 an update of another block's memory costs
  // about what a device atomic does, so every block added to the cluster slows the scatter (a third
  // of a block's memory per part measured 1.8x slower at 32K-64K bins than the fewest blocks)
  if (c == 0)
    for (c = 1; c < ex.max_cluster_size() && (bins + c - 1) / c > cap; c *= 2) {
    }
  index_t const per = std::max<index_t>(1, (bins + c - 1) / c);
  require(per <= cap, errc::out_of_range,
          [&] { return "cluster_privatize_scatter: " + std::to_string(bins) + " entries over " + std::to_string(c) +
              " blocks exceed the block-local memory of a cluster (" + std::to_string(cap) + " entries per block)"; });
  return {c, per};
}

/// The block-local bytes of one block of the plan: its part of the table and a discard entry.
template <class T>
std::size_t cluster_bytes(cluster_plan const& plan) {
  return static_cast<std::size_t>(plan.per + 1) * sizeof(T);
}

/// Launch program (a cluster program over the plan's clusters, items read in chunks of `vec`, `bytes`
/// of block-local memory per block) on ex's resident clusters (n > 0).
template <class Program, class Exec>
void launch_clusters(Program const& program, cluster_plan const& plan, index_t n, int threads, std::size_t bytes, int vec, Exec const& ex) {
  index_t const blocks = blocks_with_work(n, threads, vec);
  ex.for_each_resident_cluster((blocks + plan.size - 1) / plan.size, plan.size, threads, bytes, program);
}

}  // namespace detail

/// The entries of T one cluster holds on exec (0 where the backend has no clusters).
template <class T, class Exec>
index_t cluster_capacity(Exec const& ex) {
  if constexpr (Exec::has_clusters) return static_cast<index_t>(ex.max_cluster_size()) * privatize_capacity<T>(ex);
  else return 0;
}

/// As privatize_scatter for tables larger than one block holds: the table is spread over the
/// block-local memory of a cluster of blocks (CUDA on sm_90: distributed shared memory), each key
/// updated in the block that holds it, then each block's part merged into the device table. Where the
/// backend has no clusters (Exec::has_clusters is false: HIP, the host), or does not trust its
/// cluster atomics for Op on T (Exec::cluster_atomic: 64-bit bit operations on CUDA), it falls back to
/// hot_key_scatter. Throws calm::error before launching on bad arguments, or if the table exceeds
/// cluster_capacity.
template <class Strategy = naive, class Op, class K, class Values, class T, class Exec = default_exec>
void cluster_privatize_scatter(Op op, K const* keys, Values values, index_t n, T* table, index_t bins,
                               cluster_options const& opt = {}, Strategy strategy = {}, Exec const& ex = Exec{}) {
  check_atomic_op<Op, T>();
  static_assert(std::is_integral<K>::value, "cluster_privatize_scatter: keys must be integers");
  if constexpr (!detail::clusters_for<Exec, Op, T>()) {
    (void)strategy;
    hot_key_options h;
    h.threads = opt.threads > 0 && opt.threads <= 1024 ? opt.threads : 512;
    hot_key_scatter(op, keys, values, n, table, bins, h, ex);
  } else {
    detail::check_scatter_arguments("cluster_privatize_scatter", n, keys, values, table, bins);
    detail::cluster_plan const plan = detail::plan_clusters<T>(bins, opt, ex);
    if (n == 0 || bins == 0) return;
    auto const vals = detail::as_value_source<T>(values);
    using VS = std::decay_t<decltype(vals)>;
    constexpr int vec = detail::chunk_items<Exec, K, VS>();
    detail::cluster_scatter_program<vec, Strategy, Op, K, VS, T> const program{op, keys, vals, n, table, bins, plan.per, strategy};
    detail::launch_clusters(program, plan, n, opt.threads, detail::cluster_bytes<T>(plan), vec, ex);
  }
}

}  // namespace calm
