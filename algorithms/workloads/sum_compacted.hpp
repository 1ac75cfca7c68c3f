// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/workloads/sum_compacted.hpp: sum n values into a compacted array of m partial sums, value i to
// output i / ceil(n / m), the output count setting the collision level (000 §4, Summation), runs merged per warp (§3.1).
#pragma once

#include <string>
#include <type_traits>

#include "../../core/error.hpp"
#include "../../core/exec.hpp"
#include "../block/run_merge.hpp"

namespace calm {

/// How sum_compacted adds values into the outputs.
enum class compact_method {
  automatic,  ///< merge_runs
  naive,      ///< one device atomic per value (000 §4's baseline)
  merge_runs, ///< each warp folds its contiguous slice, one atomic per output and warp
};

namespace detail {

/// Value p goes to output p / per. The quotient comes from a double reciprocal and one correction
/// step (exact for p < 2^52): a 64-bit integer division is a long software routine on a GPU, and the
/// run merge needs one per item.
template <class T>
struct compacted_source {
  T const* values;
  index_t per;
  double inverse;  // 1 / per
  /// Value p's output never falls as p grows (thread_run_merge relies on it).
  static constexpr bool ascending_keys = true;
  template <class P>
  CALM_HD auto slice(P const& p) const {
    return map(
        [d = per, r = inverse](index_t i) {
          index_t q = static_cast<index_t>(static_cast<double>(i) * r);
          if (q * d > i) --q;
          else if ((q + 1) * d <= i) ++q;
          return q;
        },
        p);
  }
  template <class Warp, class P>
  CALM_HD auto item(Warp const& w, P const& p) const {
    return make_run_item(slice(p), load(w, values, p));
  }
  /// Whole runs, for a CPU's run merge: the output of value i, where its run ends, and value j.
  CALM_HD index_t run_key(index_t i) const { return slice(i); }
  CALM_HD index_t run_end(index_t i) const { return (slice(i) + 1) * per; }
  CALM_HD T run_value(index_t j) const { return values[j]; }
  /// The four values of chunk c (values 4c .. 4c + 3) into key[0..3], value[0..3].
  template <class Warp, class P, class K, class X>
  CALM_HD void chunk_items(Warp const& w, P const& c, K* key, X* value) const {
    auto const vc = load_chunk<4>(w, values, c);
    CALM_UNROLL_ALWAYS for (int j = 0; j < 4; ++j) {
      key[j] = slice(map([j](index_t cc) { return cc * 4 + j; }, c));
      value[j] = component(vc, j);
    }
  }
};

}  // namespace detail

/// out[j] += values[j * L] + ... + values[min(n, (j + 1) * L) - 1] for j < m, where L = ceil(n / m):
/// the m partial sums of n values over m equal contiguous slices (the last ones shorter or empty).
/// m = 1 is the total; m is the collision level's knob of 000 §4: n / m values meet in each output.
/// T: any type calm::plus is atomic on (int32/64, uint32/64, float, double). Throws calm::error
/// before launching on a null pointer or a size out of range. Asynchronous on a GPU.
///
///   calm::sum_compacted(values, 10, out, 3);  // L = 4: out[0] += v0..v3, out[1] += v4..v7, out[2] += v8 + v9
template <class T, class Exec = default_exec>
void sum_compacted(T const* values, index_t n, T* out, index_t m, compact_method method = compact_method::automatic, Exec const& ex = Exec{}) {
  check_atomic_op<plus, T>();
  require(n >= 0, errc::invalid_argument, [&] { return "sum_compacted: n = " + std::to_string(n) + " is negative"; });
  require(m >= 1, errc::invalid_argument, [&] { return "sum_compacted: m = " + std::to_string(m) + " outputs; at least one is needed"; });
  require(n == 0 || values != nullptr, errc::invalid_argument, "sum_compacted: values is null");
  require(out != nullptr, errc::invalid_argument, "sum_compacted: out is null");
  int const k = static_cast<int>(method);
  require(k >= 0 && k <= static_cast<int>(compact_method::merge_runs), errc::invalid_argument, [&] { return "sum_compacted: unknown method " + std::to_string(k); });
  if (n == 0) return;
  index_t const per = (n + m - 1) / m;
  detail::compacted_source<T> const src{values, per, 1.0 / static_cast<double>(per)};
  // long runs and cheap items: 16 per lane and step, so that the warp's scan is paid once per 16 x W values
  bool const chunked = detail::chunk_aligned(values);
  if (method == compact_method::naive) detail::launch_run_merge<false>(plus{}, src, n, out, chunked, ex);
  else detail::launch_run_merge<true, 16>(plus{}, src, n, out, chunked, ex);
}

}  // namespace calm
