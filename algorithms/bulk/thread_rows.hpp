// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/thread_rows.hpp: scatter_rows on a CPU (a block is one thread): tables private to each
// thread merged once (001 §3), ranges of components owned by one thread each, or one atomic per component.
#pragma once

#include <algorithm>
#include <cstddef>

#include "../../core/exec.hpp"
#include "../../core/warp.hpp"
#include "../warp/naive.hpp"
#include "../warp/update.hpp"
#include "key_map.hpp"
#include "thread_private.hpp"
#include "thread_slices.hpp"
#include "workspace.hpp"

namespace calm {
namespace detail {

/// What scatter_rows reads and writes: n items, item i's key keys[i] and row values[i * d, i * d + d),
/// into a table of `rows` rows of d components.
template <class Op, class K, class T>
struct rows_args {
  Op op;
  K const* keys;
  T const* values;
  index_t n;
  int d;
  index_t rows;
  T* table;

  /// Components [c0, c1) of the rows of items [begin, end) folded into `base` (rows x d) by plain
  /// reads and writes; keys outside the table skipped.
  CALM_HD void fold(T* base, index_t begin, index_t end, int c0, int c1) const {
    int const dd = d;
    for (index_t i = begin; i < end; ++i) {
      index_t const k = identity_key{}(keys[i]);
      if (k < 0 || k >= rows) continue;
      T* const dst = base + k * dd;
      T const* const src = values + i * dd;
      for (int c = c0; c < c1; ++c) dst[c] = op(dst[c], src[c]);
    }
  }
};

/// thread_private's fill: block b (one CPU thread) sets its own table (`stride` entries from one
/// thread's to the next) to the identity and folds its slice of the items into it.
template <class Op, class K, class T>
struct rows_thread_fill_program {
  rows_args<Op, K, T> a;
  T* tables;
  index_t stride;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    index_t begin, end;
    slice_range(a.n, blk.count(), blk.index(), begin, end);
    T* const t = tables + blk.index() * stride;
    for (index_t e = 0; e < a.rows * a.d; ++e) t[e] = Op::template identity<T>();
    a.fold(t, begin, end, 0, a.d);
  }
};

/// scatter_rows' thread_private (n > 0, rows > 0): one launch fills each thread's table, one folds them
/// into the table by ranges of entries (no atomics).
template <class Op, class K, class T, class Exec>
void launch_rows_thread_private(rows_args<Op, K, T> const& a, Exec const& ex) {
  thread_tables_plan plan;
  plan.blocks = std::max<index_t>(1, std::min<index_t>(ex.resident_blocks_hint(), a.n / thread_min_items));
  plan.stride = (a.rows * a.d + 15) / 16 * 16;
  workspace<Exec> ws(ex, static_cast<std::size_t>(plan.blocks * plan.stride) * sizeof(T));
  T* const tables = ws.template at<T>(0);
  ex.for_each_block(plan.blocks, 1, 0, rows_thread_fill_program<Op, K, T>{a, tables, plan.stride});
  ex.for_each_block(std::max<index_t>(1, std::min<index_t>(ex.resident_blocks_hint(), a.rows * a.d / 1024)), 1, 0,
                    thread_table_merge_program<Op, T>{a.op, tables, a.table, a.rows * a.d, plan});
}

/// scatter_rows' columns: block b (one CPU thread) folds its range of whole cache lines of components
/// of every item's row; no two blocks write one component.
template <class Op, class K, class T>
struct rows_columns_program {
  rows_args<Op, K, T> a;
  int units;  ///< ranges of components_per_unit components
  static constexpr int components_per_unit = 64 / sizeof(T) > 0 ? int(64 / sizeof(T)) : 1;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    index_t u0, u1;
    slice_range(units, blk.count(), blk.index(), u0, u1);
    a.fold(a.table, 0, a.n, static_cast<int>(u0) * components_per_unit, std::min(a.d, static_cast<int>(u1) * components_per_unit));
  }
};

template <class Op, class K, class T, class Exec>
void launch_rows_columns(rows_args<Op, K, T> const& a, Exec const& ex) {
  constexpr int per = rows_columns_program<Op, K, T>::components_per_unit;
  int const units = (a.d + per - 1) / per;
  index_t const blocks = std::max<index_t>(1, std::min<index_t>(ex.resident_blocks_hint(), units));
  ex.for_each_block(blocks, 1, 0, rows_columns_program<Op, K, T>{a, units});
}

/// scatter_rows' naive on a CPU: block b (one thread) a slice of the items, one atomic per component.
template <class Op, class K, class T>
struct rows_atomic_program {
  rows_args<Op, K, T> a;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    blk.for_each_warp([&](auto const& w, auto) {
      each_lane(w, [&](auto const& w1, int) {
        index_t begin, end;
        slice_range(a.n, blk.count(), blk.index(), begin, end);
        for (index_t i = begin; i < end; ++i) {
          index_t const k = identity_key{}(a.keys[i]);
          if (k < 0 || k >= a.rows) continue;
          for (int c = 0; c < a.d; ++c) update(w1, a.op, scope::device{}, a.table + k * a.d + c, a.values[i * a.d + c], naive{});
        }
      }, lane_id(w));
    });
  }
};

template <class Op, class K, class T, class Exec>
void launch_rows_atomic(rows_args<Op, K, T> const& a, Exec const& ex) {
  index_t const blocks = std::max<index_t>(1, std::min<index_t>(ex.resident_blocks_hint(), a.n / thread_min_items));
  ex.for_each_block(blocks, 1, 0, rows_atomic_program<Op, K, T>{a});
}

}  // namespace detail
}  // namespace calm
