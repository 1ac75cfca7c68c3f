// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/workloads/global_extremum.hpp: the global maximum and minimum of an array, by calm's choice among
// the four schemes of 003 (two_level.hpp): block_reduce, which the H100 measurements favour at every size.
#pragma once

#include "two_level.hpp"

namespace calm {

/// The scheme global_max and global_min use: each thread folds its values in registers, lanes and
/// warps merge in block-local memory, one device atomic per block (003's "smart" scheme). Measured
/// against the other three and cub::DeviceReduce in perf/bench_workloads.cpp.
constexpr two_level global_extremum_scheme = two_level::block_reduce;

/// *out = max(*out, values[0], ..., values[n-1]) (set *out to the type's lowest value first for the
/// plain maximum). T: int32/64, uint32/64, float, double. Throws calm::error before launching on a
/// null pointer or negative n; asynchronous on a GPU.
///
///   calm::global_max(values, n, result);  // values {3, 9, 4}, *result 0: *result becomes 9
template <class T, class Exec = default_exec>
void global_max(T const* values, index_t n, T* out, Exec const& ex = Exec{}) {
  reduce_idempotent(max{}, values, n, out, global_extremum_scheme, 256, ex);
}

/// *out = min(*out, values[0], ..., values[n-1]); as global_max.
template <class T, class Exec = default_exec>
void global_min(T const* values, index_t n, T* out, Exec const& ex = Exec{}) {
  reduce_idempotent(min{}, values, n, out, global_extremum_scheme, 256, ex);
}

}  // namespace calm
