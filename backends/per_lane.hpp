// SPDX-License-Identifier: Apache-2.0
// calm/backends/per_lane.hpp: the per-lane front door without a warp argument, for code written one
// lane at a time (a CUDA/HIP kernel, a Kokkos parallel_for body): the warp is the lanes that reach the
// call together on a GPU, and a warp of one (a plain atomic) in scalar host code.
#pragma once

#include "../algorithms/warp/update.hpp"
#include "backend.hpp"

namespace calm {

/// *addr = op(*addr, value) at device scope, lanes merged by Strategy:
///   calm::update<calm::peer_reduce>(calm::plus{}, &table[key], weight);
template <class Strategy = peer_reduce, class Op, class T, class V>
CALM_HD void update(Op op, T* addr, V const& value, Strategy strategy = {}) {
  update<Strategy>(backend::this_warp<T>(), op, scope::device{}, addr, value, strategy);
}

/// The fetch form of the per-lane update (see calm::fetch_update with a warp for the order guarantee).
template <class Strategy = peer_reduce, class Op, class T, class V>
CALM_HD T fetch_update(Op op, T* addr, V const& value, Strategy strategy = {}) {
  return fetch_update<Strategy>(backend::this_warp<T>(), op, scope::device{}, addr, value, strategy);
}

}  // namespace calm
