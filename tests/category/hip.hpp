// SPDX-License-Identifier: Apache-2.0
// Test category for the HIP backend (wave64 or wave32, read from the device at run time).
#pragma once
#include <calm/calm.hpp>
namespace calm_test {
namespace backend = calm::hip;
/// Whether the backend counts its operations (atomics per lane, ballots, matches) for tests.
constexpr bool counting = false;
/// This backend does not count its operations (see `counting`).
struct op_counts { std::uint64_t atomics = 0, ballots = 0, matches = 0, shuffles = 0, mask_ops = 0; };
inline void reset_counts() {}
inline op_counts read_counts() { return {}; }
/// The execution policy host-callable algorithms launch through.
using exec = calm::hip::exec;
constexpr char const* name = "hip";
inline int warp_size() {
  int dev = 0, w = 0;
  CALM_HIP_CHECK(hipGetDevice(&dev));
  CALM_HIP_CHECK(hipDeviceGetAttribute(&w, hipDeviceAttributeWarpSize, dev));
  return w;
}
inline std::vector<calm::launch_shape> shapes() { return {calm::launch_shape::linear, calm::launch_shape::kokkos_range}; }
template <class Body>
void for_each_index(calm::index_t n, Body body, calm::launch_shape s) { backend::for_each_index(n, body, s); }
template <class Body>
void for_each_block(calm::index_t b, int t, std::size_t bytes, Body body) { backend::for_each_block(b, t, bytes, body); }
}  // namespace calm_test
#include "../support/harness.hpp"
