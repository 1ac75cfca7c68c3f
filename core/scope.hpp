// SPDX-License-Identifier: Apache-2.0
// calm/core/scope.hpp: memory-scope tags chosen by overload (desul style). The scope names who may
// touch the address at the same time, and so which atomic (if any) an update needs.
#pragma once

#include <type_traits>

namespace calm {
namespace scope {

/// Only the calling lane touches the address: a plain read-modify-write, no atomic. This is what a
/// privatized per-thread table needs.
struct caller {};

/// Block-local memory (CUDA shared memory, HIP LDS, the host backend's per-thread block buffer):
/// lanes of one block contend, other blocks never see it.
struct block_local {};

/// Device (global) memory: any lane of any block may contend.
struct device {};

}  // namespace scope

template <class S>
struct is_scope : std::false_type {};
template <> struct is_scope<scope::caller> : std::true_type {};
template <> struct is_scope<scope::block_local> : std::true_type {};
template <> struct is_scope<scope::device> : std::true_type {};

}  // namespace calm
