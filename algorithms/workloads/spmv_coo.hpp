// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/workloads/spmv_coo.hpp: y += A x for a sparse matrix in coordinate (COO) form, the products of
// each row's entries merged in the warp before one atomic per row (000 §2 Fig. 1 and §3.1: atomicSR).
#pragma once

#include <string>
#include <type_traits>

#include "../../core/error.hpp"
#include "../../core/exec.hpp"
#include "../block/run_merge.hpp"
#include "../bulk/workspace.hpp"

namespace calm {

/// How spmv_coo adds the products into y.
enum class spmv_method {
  /// merge_rows where the entries are row-sorted, which the routine does not check: merge_rows.
  automatic,
  /// One device atomic per entry (000 Fig. 1, right): the baseline.
  naive,
  /// Each warp streams a contiguous slice of the entries and reduces runs of one row by a segmented
  /// scan, carrying the open row on: one atomic per row and warp.
  merge_rows,
};

/// What spmv_coo may be told.
struct spmv_options {
  spmv_method method = spmv_method::automatic;  ///< how the products are scattered (automatic: by the matrix)
  /// Check before anything is written that every row index is in [0, rows) and every column index
  /// in [0, cols) (one pass over the indices and a wait); false: entries outside are skipped.
  bool check_indices = true;
};

namespace detail {

/// The items of a COO product: entry e adds vals[e] * x[col[e]] to row[e]; entries with an index
/// outside the matrix are skipped (key -1) and read nothing outside x.
template <class T, class I>
struct coo_source {
  I const* row;
  I const* col;
  T const* vals;
  T const* x;
  index_t rows, cols;
  /// The entries of the table (y), for a CPU's tables per thread.
  CALM_HD index_t entries() const { return rows; }
  /// Row-sorted entries are common, not promised: a CPU's run merge looks (thread_run_merge).
  static constexpr bool ascending_keys = false;
  /// The row of entry p, for that look (any value: a row outside the matrix only makes it cautious).
  template <class Warp, class P>
  CALM_HD auto order_key(Warp const& w, P const& p) const {
    return map(identity_key{}, load(w, row, p));
  }
  /// The item of one entry from its loaded row, column and value.
  template <class Warp, class R, class C, class V>
  CALM_HD auto make(Warp const& w, R const& row_raw, C const& col_raw, V const& v) const {
    auto const r = map(identity_key{}, row_raw);
    auto const c = map(identity_key{}, col_raw);
    auto const in = map([nr = rows, nc = cols](index_t rr, index_t cc) { return rr >= 0 && rr < nr && cc >= 0 && cc < nc; }, r, c);
    auto const xv = load(w, x, select(in, c, index_t(0)));
    return make_run_item(select(in, r, index_t(-1)), map([](T a, T b) { return a * b; }, v, xv));
  }
  template <class Warp, class P>
  CALM_HD auto item(Warp const& w, P const& p) const {
    return make(w, load(w, row, p), load(w, col, p), load(w, vals, p));
  }
  /// The four items of chunk c (entries 4c .. 4c + 3) into key[0..3], value[0..3].
  template <class Warp, class P, class K, class X>
  CALM_HD void chunk_items(Warp const& w, P const& c, K* key, X* value) const {
    auto const rc = load_chunk<4>(w, row, c);
    auto const cc = load_chunk<4>(w, col, c);
    auto const vc = load_chunk<4>(w, vals, c);
    for (int j = 0; j < 4; ++j) {
      auto const it = make(w, component(rc, j), component(cc, j), component(vc, j));
      key[j] = it.key;
      value[j] = it.value;
    }
  }
};

}  // namespace detail

/// y[row[e]] += vals[e] * x[col[e]] for e < nnz: y += A x for the rows x cols matrix A whose entries
/// are given in coordinate form (CUSP's and cuSPARSE's COO). Entries sorted by row (any order within a
/// row) run fastest; any order gives the same y up to the order of float additions. T: float or double;
/// I: a signed or unsigned integer. Throws calm::error before anything is written on a null pointer, a
/// negative size or (opt.check_indices) an index outside the matrix. Asynchronous on a GPU, except
/// the index check, which waits for its count. y is not scaled (for y = A x, zero y first).
///
///   calm::spmv_coo(row, col, vals, nnz, x, y, rows, cols);  // entries (0,0,2) (0,2,1) (1,1,3): y[0] += 2 x[0] + x[2], y[1] += 3 x[1]
template <class T, class I, class Exec = default_exec>
void spmv_coo(I const* row, I const* col, T const* vals, index_t nnz, T const* x, T* y, index_t rows, index_t cols,
              spmv_options const& opt = {}, Exec const& ex = Exec{}) {
  static_assert(std::is_floating_point<T>::value, "spmv_coo: values must be float or double");
  static_assert(std::is_integral<I>::value, "spmv_coo: indices must be integers");
  check_atomic_op<plus, T>();
  require(nnz >= 0 && rows >= 0 && cols >= 0, errc::invalid_argument,
          [&] { return "spmv_coo: negative size (nnz " + std::to_string(nnz) + ", rows " + std::to_string(rows) + ", cols " + std::to_string(cols) + ")"; });
  require(nnz == 0 || (row != nullptr && col != nullptr && vals != nullptr), errc::invalid_argument, "spmv_coo: row, col or vals is null");
  require(nnz == 0 || cols == 0 || x != nullptr, errc::invalid_argument, "spmv_coo: x is null");
  require(rows == 0 || y != nullptr, errc::invalid_argument, "spmv_coo: y is null");
  int const m = static_cast<int>(opt.method);
  require(m >= 0 && m <= static_cast<int>(spmv_method::merge_rows), errc::invalid_argument, [&] { return "spmv_coo: unknown method " + std::to_string(m); });
  if (nnz == 0) return;
  if (opt.check_indices)
    detail::require_inside("spmv_coo", {detail::index_array<I>{"row indices", row, rows}, detail::index_array<I>{"column indices", col, cols}}, nnz, ex);
  if (rows == 0) return;
  detail::coo_source<T, I> const src{row, col, vals, x, rows, cols};
  bool const chunked = detail::chunk_aligned(row) && detail::chunk_aligned(col) && detail::chunk_aligned(vals);
  if (opt.method == spmv_method::naive) detail::launch_run_merge<false>(plus{}, src, nnz, y, chunked, ex);
  else detail::launch_run_merge<true>(plus{}, src, nnz, y, chunked, ex);
}

}  // namespace calm
