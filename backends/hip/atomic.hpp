// SPDX-License-Identifier: Apache-2.0
// calm/backends/hip/atomic.hpp: one lane's atomic read-modify-write on an AMD GPU, per scope, through
// clang's scoped __hip_atomic builtins (ROCm 5.2): workgroup scope for LDS, agent scope for device memory.
#pragma once

#include <hip/hip_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../../core/ops.hpp"
#include "../../core/scope.hpp"

// What each (op, type) compiles to (relaxed order; scope::caller is a plain read-modify-write):
//
//   op       | int32 uint32 int64 uint64       | float     | double
//   ---------+---------------------------------+-----------+----------
//   plus     | __hip_atomic_fetch_add (native) | native    | native (gfx90a; CAS loop in hardware elsewhere)
//   min, max | __hip_atomic_fetch_min / _max   | CAS loop  | CAS loop
//   bit_*    | __hip_atomic_fetch_and/or/xor   | (not defined)
//
// The CAS loop returns early without writing when op leaves the value unchanged (max/min).

namespace calm {
namespace hip {
namespace detail {

__device__ constexpr int memory_scope(scope::block_local) { return __HIP_MEMORY_SCOPE_WORKGROUP; }
__device__ constexpr int memory_scope(scope::device) { return __HIP_MEMORY_SCOPE_AGENT; }

template <class T, int S> __device__ T fetch_native(plus, T* a, T v) { return __hip_atomic_fetch_add(a, v, __ATOMIC_RELAXED, S); }
template <class T, int S> __device__ T fetch_native(min, T* a, T v) { return __hip_atomic_fetch_min(a, v, __ATOMIC_RELAXED, S); }
template <class T, int S> __device__ T fetch_native(max, T* a, T v) { return __hip_atomic_fetch_max(a, v, __ATOMIC_RELAXED, S); }
template <class T, int S> __device__ T fetch_native(bit_and, T* a, T v) { return __hip_atomic_fetch_and(a, v, __ATOMIC_RELAXED, S); }
template <class T, int S> __device__ T fetch_native(bit_or, T* a, T v) { return __hip_atomic_fetch_or(a, v, __ATOMIC_RELAXED, S); }
template <class T, int S> __device__ T fetch_native(bit_xor, T* a, T v) { return __hip_atomic_fetch_xor(a, v, __ATOMIC_RELAXED, S); }

template <class To, class From>
__device__ inline To bit_cast(From const& f) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast between types of one size");
  To t;
  memcpy(&t, &f, sizeof(To));
  return t;
}

template <int S, class Op, class T>
__device__ T cas_loop(Op op, T* addr, T value) {
  using U = std::conditional_t<sizeof(T) == 4, unsigned int, unsigned long long>;
  U* ua = reinterpret_cast<U*>(addr);
  U old = __hip_atomic_load(ua, __ATOMIC_RELAXED, S);
  for (;;) {
    U desired = bit_cast<U>(op(bit_cast<T>(old), value));
    if (Op::idempotent && desired == old) return bit_cast<T>(old);
    if (__hip_atomic_compare_exchange_strong(ua, &old, desired, __ATOMIC_RELAXED, __ATOMIC_RELAXED, S))
      return bit_cast<T>(old);  // on success `old` still holds the value replaced
  }
}

}  // namespace detail

/// *addr read atomically at the given scope, relaxed.
template <class Scope, class T>
__device__ T atomic_read(Scope, T const* addr) {
  static_assert(is_atomic_type<T>, "calm: atomic_load takes int32, uint32, int64, uint64, float or double");
  if constexpr (std::is_same<Scope, scope::caller>::value) {
    return *addr;
  } else {
    constexpr int s = detail::memory_scope(Scope{});
    return __hip_atomic_load(const_cast<T*>(addr), __ATOMIC_RELAXED, s);
  }
}

/// *addr = op(*addr, value) atomically at the given scope; returns the old value.
template <class Op, class Scope, class T>
__device__ T atomic_fetch(Op op, Scope, T* addr, T value) {
  check_atomic_op<Op, T>();
  if constexpr (std::is_same<Scope, scope::caller>::value) {
    return fetch_update_plain(op, addr, value);
  } else {
    constexpr int s = detail::memory_scope(Scope{});
    if constexpr (std::is_floating_point<T>::value && !std::is_same<Op, plus>::value)
      return detail::cas_loop<s>(op, addr, value);
    else
      return detail::fetch_native<T, s>(op, addr, value);
  }
}

}  // namespace hip
}  // namespace calm
