// SPDX-License-Identifier: Apache-2.0
// Test category for the OpenMP-host backend with a warp of CALM_TEST_WARP_SIZE lanes.
#pragma once
#include <calm/calm.hpp>
namespace calm_test {
namespace backend = calm::openmp;
/// Whether the backend counts its operations (atomics per lane, ballots, matches) for tests.
constexpr bool counting = calm::openmp::counting_enabled;
using op_counts = calm::openmp::op_counts;
inline void reset_counts() { calm::openmp::reset_counts(); }
inline op_counts read_counts() { return calm::openmp::read_counts(); }
constexpr char const* name = "openmp";
constexpr int host_warp = CALM_TEST_WARP_SIZE;
/// The execution policy host-callable algorithms launch through.
using exec = calm::openmp::exec<host_warp>;
inline int warp_size() { return host_warp; }
inline std::vector<calm::launch_shape> shapes() { return {calm::launch_shape::linear}; }
template <class Body>
void for_each_index(calm::index_t n, Body body, calm::launch_shape s) { backend::for_each_index<host_warp>(n, body, s); }
template <class Body>
void for_each_block(calm::index_t b, int t, std::size_t bytes, Body body) { backend::for_each_block<host_warp>(b, t, bytes, body); }
}  // namespace calm_test
#include "../support/harness.hpp"
