// SPDX-License-Identifier: Apache-2.0
// calm/backends/openmp/atomic.hpp: one lane's atomic read-modify-write on the host, per scope.
// A host block is run by one OpenMP thread, so block-local updates need no atomic instruction.
#pragma once

#include <cstdint>
#include <cstring>

#include "../../core/ops.hpp"
#include "../../core/scope.hpp"

// What each (op, type) compiles to at scope::device (GCC/Clang __atomic builtins, relaxed order):
//
//   op       | int32 uint32 int64 uint64 | float double
//   ---------+---------------------------+--------------
//   plus     | fetch_add                 | CAS loop
//   min, max | CAS loop                  | CAS loop
//   bit_*    | fetch_and / or / xor      | (not defined)
//
// The CAS loop returns early without writing when op leaves the value unchanged (max/min).
// scope::block_local and scope::caller: a plain read-modify-write (one thread owns the block buffer).

namespace calm {
namespace openmp {
namespace detail {

template <class Op, class T>
T cas_loop(Op op, T* addr, T value) {
  T expected;
  __atomic_load(addr, &expected, __ATOMIC_RELAXED);
  for (;;) {
    T desired = op(expected, value);
    // max/min that would not change the value need not write (nor take the line exclusively).
    if (Op::idempotent && std::memcmp(&desired, &expected, sizeof(T)) == 0) return expected;
    if (__atomic_compare_exchange(addr, &expected, &desired, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return expected;
  }
}

template <class T> T native(plus, T* a, T v) { return __atomic_fetch_add(a, v, __ATOMIC_RELAXED); }
template <class T> T native(bit_and, T* a, T v) { return __atomic_fetch_and(a, v, __ATOMIC_RELAXED); }
template <class T> T native(bit_or, T* a, T v) { return __atomic_fetch_or(a, v, __ATOMIC_RELAXED); }
template <class T> T native(bit_xor, T* a, T v) { return __atomic_fetch_xor(a, v, __ATOMIC_RELAXED); }
template <class Op> constexpr bool has_native_integer_form = !std::is_same<Op, min>::value && !std::is_same<Op, max>::value;

}  // namespace detail

/// *addr = op(*addr, value), atomically against every other thread; returns the old value.
template <class Op, class T>
T atomic_fetch(Op op, scope::device, T* addr, T value) {
  check_atomic_op<Op, T>();
  if constexpr (std::is_integral<T>::value && detail::has_native_integer_form<Op>)
    return detail::native(op, addr, value);
  else
    return detail::cas_loop(op, addr, value);
}

/// *addr read atomically (relaxed) against every other thread.
template <class T>
T atomic_read(scope::device, T const* addr) {
  static_assert(is_atomic_type<T>, "calm: atomic_load takes int32, uint32, int64, uint64, float or double");
  T v;
  __atomic_load(addr, &v, __ATOMIC_RELAXED);
  return v;
}
/// Block-local and caller-scope memory: only this thread writes it.
template <class Scope, class T>
T atomic_read(Scope, T const* addr) {
  static_assert(is_atomic_type<T>, "calm: atomic_load takes int32, uint32, int64, uint64, float or double");
  return *addr;
}

/// Block-local memory belongs to the one thread running the block: a plain update.
template <class Op, class T>
T atomic_fetch(Op op, scope::block_local, T* addr, T value) {
  check_atomic_op<Op, T>();
  return fetch_update_plain(op, addr, value);
}

template <class Op, class T>
T atomic_fetch(Op op, scope::caller, T* addr, T value) {
  check_atomic_op<Op, T>();
  return fetch_update_plain(op, addr, value);
}

}  // namespace openmp
}  // namespace calm
