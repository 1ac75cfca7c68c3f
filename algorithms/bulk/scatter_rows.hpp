// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/scatter_rows.hpp: scatter rows of d components (messages into the nodes of a graph, embedding
// gradients): a warp's items grouped by key once (002's peer groups), each group's rows folded with the lanes over components.
#pragma once

#include <algorithm>
#include <limits>
#include <string>
#include <type_traits>

#include "../../core/error.hpp"
#include "../../core/exec.hpp"
#include "../../core/ops.hpp"
#include "../../core/warp.hpp"
#include "../block/run_merge.hpp"
#include "key_map.hpp"
#include "table_fill.hpp"
#include "thread_rows.hpp"
#include "workspace.hpp"

namespace calm {

/// How scatter_rows merges the rows of equal keys.
enum class rows_method {
  /// On a CPU (detail::cpu_rows_method): columns on one thread; thread_private where the threads'
  /// tables cost at most half of what the values take, else columns where a row spans two cache lines
  /// or more, else naive; on a GPU peer_reduce.
  automatic,
  /// Each item's row straight into the table: one atomic per component (torch's index_add_).
  naive,
  /// A warp's items of one key found once (match_any) and their rows summed in registers, the lanes
  /// over the components: one atomic per key, warp and component.
  peer_reduce,
  /// On a CPU: a table private to each thread, merged once (on a GPU: as peer_reduce).
  thread_private,
  /// On a CPU: each thread a range of the components (whole cache lines) of every row, no atomics (on
  /// a GPU: as peer_reduce).
  columns,
};

inline char const* to_string(rows_method m) {
  static char const* names[] = {"automatic", "naive", "peer_reduce", "thread_private", "columns"};
  return names[static_cast<int>(m)];
}

/// What scatter_rows may be told.
struct rows_options {
  rows_method method = rows_method::automatic;  ///< how rows of equal keys are merged
  /// true: the table is set to the op's identity first and holds this call's result alone (as
  /// torch_scatter's out-of-place form); false: the rows are folded into what the table holds.
  bool overwrite = false;
};

namespace detail {

/// Rows of the items a warp holds, one item a lane: grouped by key where Merge (peer_reduce), one
/// group an item otherwise; for each group the whole warp walks the components, W at a time.
template <bool Merge, class Op, class K, class T>
struct rows_program {
  rows_args<Op, K, T> a;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    int const threads = blk.threads();
    blk.for_each_tile((a.n + threads - 1) / threads, [&](index_t tile) {
      index_t const base = tile * threads;
      blk.for_each_warp([&](auto const& w, auto th) { warp_rows(w, map([base](int x) { return base + x; }, th)); });
    });
  }

  /// The rows of items `item` (consecutive over the warp's lanes; items n and beyond hold none).
  template <class Warp, class I>
  CALM_HD void warp_rows(Warp const& w, I const& item) const {
    auto const has = map([nn = a.n](index_t i) { return i < nn; }, item);
    auto const raw = map(identity_key{}, load(w, a.keys, select(has, item, index_t(0))));
    auto const key = select(has, raw, index_t(-1));
    auto const valid = map([r = a.rows](index_t k) { return k >= 0 && k < r; }, key);
    int const lead = leader_lane(w);
    index_t const item0 = uniform_value(shuffle(w, item, lead)) - lead;  // the item of lane 0
    auto const peers = Merge ? match_any(w, key) : decltype(match_any(w, key)){};
    using mask_t = std::decay_t<decltype(ballot(w, true))>;
    mask_t groups;
    if constexpr (Merge) groups = ballot(w, map([](bool v, auto p, auto lt) { return v && (p & lt) == 0; }, valid, peers, lanes_lt(w)));
    else groups = ballot(w, valid);
    while (groups != 0) {
      int const l = ffs(w, groups) - 1;
      groups &= groups - 1;
      mask_t const members = Merge ? static_cast<mask_t>(uniform_value(shuffle(w, peers, l))) : static_cast<mask_t>(mask_t(1) << l);
      fold_group(w, uniform_value(shuffle(w, key, l)), members, item0);
    }
  }

  /// table[k * d + c] = op(table[k * d + c], op over the members' values[i * d + c]) for c < d.
  template <class Warp, class M>
  CALM_HD void fold_group(Warp const& w, index_t k, M members, index_t item0) const {
    Op const o = a.op;
    int const d = a.d;
    T* const row = a.table + k * d;
    for (int c0 = 0; c0 < d; c0 += Warp::size) {
      auto const c = map([c0](int ln) { return c0 + ln; }, lane_id(w));
      auto const on = map([d](int x) { return x < d; }, c);
      auto const at = select(on, c, 0);
      auto acc = map([](int) { return Op::template identity<T>(); }, c);
      for (M m = members; m != 0; m &= m - 1) {
        T const* const src = a.values + (item0 + (ffs(w, m) - 1)) * d;
        acc = map(o, acc, load(w, src, at));
      }
      when(w, on, [&](auto const& u) { atomic_update(u, o, scope::device{}, row + at, acc); });
    }
  }
};

/// rows_program over n > 0 items, a warp's items one a lane (on the host too, where the tests run it).
template <bool Merge, class Op, class K, class T, class Exec>
void launch_rows_warps(rows_args<Op, K, T> const& a, Exec const& ex) {
  constexpr int threads = 256;
  ex.for_each_resident_block((a.n + threads - 1) / threads, threads, 0, rows_program<Merge, Op, K, T>{a});
}

/// automatic's method on a CPU of `threads` threads: columns on one thread (a plain loop); else
/// thread_private where the threads' tables (cleared and merged) cost at most half of what the values
/// take; else columns where a row spans at least two cache lines (two threads get a share); else naive.
template <class T>
rows_method cpu_rows_method(index_t n, int d, index_t rows, index_t threads) {
  double const table_bytes = static_cast<double>(rows) * d * sizeof(T), values_bytes = static_cast<double>(n) * d * sizeof(T);
  index_t const used = std::max<index_t>(1, std::min<index_t>(threads, n / thread_min_items));
  if (threads <= 1) return rows_method::columns;
  if (table_bytes * static_cast<double>(used) * 2 <= values_bytes) return rows_method::thread_private;
  if (static_cast<std::size_t>(d) * sizeof(T) >= 128) return rows_method::columns;
  return rows_method::naive;
}

}  // namespace detail

/// table[keys[i] * d + c] = op(table[keys[i] * d + c], values[i * d + c]) for every item i < n and
/// component c < d: n rows of d components (row-major) scattered into a table of `rows` rows, as
/// torch_scatter's scatter(src, index, dim=0) and index_add_ over rows do. Keys outside [0, rows) are
/// skipped. The rows of one key are combined in any order (float sums may differ in the last bits from
/// run to run). Op: any op calm applies atomically to T; K: an integer type. Throws calm::error before
/// anything is written on a null pointer, a negative size, d < 1, sizes whose products pass 2^62, or an
/// unknown method. Asynchronous on a GPU.
///
///   calm::scatter_rows(calm::plus{}, dst, msg, edges, 64, node_sum, nodes);  // messages of 64 floats summed into their nodes
template <class Op, class K, class T, class Exec = default_exec>
void scatter_rows(Op op, K const* keys, T const* values, index_t n, int d, T* table, index_t rows, rows_options const& opt = {}, Exec const& ex = Exec{}) {
  static_assert(std::is_integral<K>::value, "scatter_rows: keys must be integers");
  check_atomic_op<Op, T>();
  require(n >= 0 && rows >= 0, errc::invalid_argument, [&] { return "scatter_rows: negative size (n " + std::to_string(n) + ", rows " + std::to_string(rows) + ")"; });
  require(d >= 1, errc::invalid_argument, [&] { return "scatter_rows: d = " + std::to_string(d) + " components; at least one is needed"; });
  index_t const most = std::max(n, rows);
  require(most <= (index_t(1) << 62) / d, errc::out_of_range,
          [&] { return "scatter_rows: " + std::to_string(most) + " rows of " + std::to_string(d) + " components are more entries than calm indexes (2^62)"; });
  require(n == 0 || (keys != nullptr && values != nullptr), errc::invalid_argument, "scatter_rows: keys or values is null");
  require(rows == 0 || table != nullptr, errc::invalid_argument, "scatter_rows: table is null");
  int const mi = static_cast<int>(opt.method);
  require(mi >= 0 && mi <= static_cast<int>(rows_method::columns), errc::invalid_argument,
          [&] { return "scatter_rows: unknown method " + std::to_string(mi); });
  if (opt.overwrite) detail::fill_identity<Op>(table, rows * d, ex);
  if (n == 0 || rows == 0) return;
  rows_method m = opt.method;
  bool const on_cpu = Exec::thread_tables;
  if (m == rows_method::automatic) m = on_cpu ? detail::cpu_rows_method<T>(n, d, rows, ex.resident_blocks_hint()) : rows_method::peer_reduce;
  if ((m == rows_method::thread_private || m == rows_method::columns) && !on_cpu) m = rows_method::peer_reduce;
  if (m == rows_method::thread_private && !detail::thread_tables_fit<T, Exec>(rows * d)) m = rows_method::naive;
  detail::rows_args<Op, K, T> const a{op, keys, values, n, d, rows, table};
  if constexpr (Exec::thread_tables) {
    if (m == rows_method::thread_private) return detail::launch_rows_thread_private(a, ex);
    if (m == rows_method::columns) return detail::launch_rows_columns(a, ex);
    if (m == rows_method::naive) return detail::launch_rows_atomic(a, ex);
  }
  if (m == rows_method::naive) detail::launch_rows_warps<false>(a, ex);
  else detail::launch_rows_warps<true>(a, ex);
}

}  // namespace calm
