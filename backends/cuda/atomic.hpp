// SPDX-License-Identifier: Apache-2.0
// calm/backends/cuda/atomic.hpp: one lane's atomic read-modify-write on an NVIDIA GPU, per scope.
// Native instructions where CUDA has them (the _block forms for block-local memory), else a CAS loop.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../../core/ops.hpp"
#include "../../core/scope.hpp"

// What each (op, type) compiles to (sm_70 and newer; relaxed order; scope::block_local uses the
// *_block forms, scope::device the plain ones, scope::caller a plain read-modify-write):
//
//   op       | int32 | uint32 | int64            | uint64 | float    | double
//   ---------+-------+--------+------------------+--------+----------+---------
//   plus     | atomicAdd      | atomicAdd as u64 | atomicAdd         (native)
//   min, max | atomicMin / atomicMax (native, all four integers)     | CAS loop | CAS loop
//   bit_*    | atomicAnd / Or / Xor | as u64     | native | (not defined)
//
// The CAS loop returns early without writing when op leaves the value unchanged (max/min).

namespace calm {
namespace cuda {
namespace detail {

#define CALM_CUDA_ATOMIC(Tag, Fn, N)                                                                             \
  __device__ inline N fetch_native(Tag, scope::device, N* a, N v) { return Fn(a, v); }                        \
  __device__ inline N fetch_native(Tag, scope::block_local, N* a, N v) { return Fn##_block(a, v); }
CALM_CUDA_ATOMIC(plus, atomicAdd, int)
CALM_CUDA_ATOMIC(plus, atomicAdd, unsigned int)
CALM_CUDA_ATOMIC(plus, atomicAdd, unsigned long long)
CALM_CUDA_ATOMIC(plus, atomicAdd, float)
CALM_CUDA_ATOMIC(plus, atomicAdd, double)
CALM_CUDA_ATOMIC(min, atomicMin, int)
CALM_CUDA_ATOMIC(min, atomicMin, unsigned int)
CALM_CUDA_ATOMIC(min, atomicMin, long long)
CALM_CUDA_ATOMIC(min, atomicMin, unsigned long long)
CALM_CUDA_ATOMIC(max, atomicMax, int)
CALM_CUDA_ATOMIC(max, atomicMax, unsigned int)
CALM_CUDA_ATOMIC(max, atomicMax, long long)
CALM_CUDA_ATOMIC(max, atomicMax, unsigned long long)
CALM_CUDA_ATOMIC(bit_and, atomicAnd, int)
CALM_CUDA_ATOMIC(bit_and, atomicAnd, unsigned int)
CALM_CUDA_ATOMIC(bit_and, atomicAnd, unsigned long long)
CALM_CUDA_ATOMIC(bit_or, atomicOr, int)
CALM_CUDA_ATOMIC(bit_or, atomicOr, unsigned int)
CALM_CUDA_ATOMIC(bit_or, atomicOr, unsigned long long)
CALM_CUDA_ATOMIC(bit_xor, atomicXor, int)
CALM_CUDA_ATOMIC(bit_xor, atomicXor, unsigned int)
CALM_CUDA_ATOMIC(bit_xor, atomicXor, unsigned long long)
#undef CALM_CUDA_ATOMIC

__device__ inline unsigned int cas(scope::device, unsigned int* a, unsigned int c, unsigned int v) { return atomicCAS(a, c, v); }
__device__ inline unsigned int cas(scope::block_local, unsigned int* a, unsigned int c, unsigned int v) { return atomicCAS_block(a, c, v); }
__device__ inline unsigned long long cas(scope::device, unsigned long long* a, unsigned long long c, unsigned long long v) { return atomicCAS(a, c, v); }
__device__ inline unsigned long long cas(scope::block_local, unsigned long long* a, unsigned long long c, unsigned long long v) { return atomicCAS_block(a, c, v); }

template <class To, class From>
__device__ inline To bit_cast(From const& f) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast between types of one size");
  To t;
  memcpy(&t, &f, sizeof(To));
  return t;
}

/// The CUDA type whose atomic functions take T: int64 add and bit ops go through the unsigned form.
template <class Op, class T>
using native_t = std::conditional_t<
    std::is_integral<T>::value,
    std::conditional_t<sizeof(T) == 4, std::conditional_t<std::is_signed<T>::value, int, unsigned int>,
                       std::conditional_t<std::is_signed<T>::value && (std::is_same<Op, min>::value || std::is_same<Op, max>::value),
                                          long long, unsigned long long>>,
    T>;

template <class Op, class Scope, class T>
__device__ T cas_loop(Op op, Scope s, T* addr, T value) {
  using U = std::conditional_t<sizeof(T) == 4, unsigned int, unsigned long long>;
  U* ua = reinterpret_cast<U*>(addr);
  U old = *ua;
  for (;;) {
    U desired = bit_cast<U>(op(bit_cast<T>(old), value));
    if (Op::idempotent && desired == old) return bit_cast<T>(old);
    U seen = cas(s, ua, old, desired);
    if (seen == old) return bit_cast<T>(old);
    old = seen;
  }
}

}  // namespace detail

/// *addr read at the given scope, relaxed: a volatile load (ld.volatile: from L2 for global memory,
/// never a stale L1 line), which is atomic for the aligned 4- and 8-byte types calm uses.
template <class Scope, class T>
__device__ T atomic_read(Scope, T const* addr) {
  static_assert(is_atomic_type<T>, "calm: atomic_load takes int32, uint32, int64, uint64, float or double");
  return *static_cast<T const volatile*>(addr);
}

/// *addr = op(*addr, value) atomically at the given scope; returns the old value. When the result is
/// unused the compiler emits the reduction form (RED) instead of a fetching atomic.
template <class Op, class Scope, class T>
__device__ T atomic_fetch(Op op, Scope s, T* addr, T value) {
  check_atomic_op<Op, T>();
  if constexpr (std::is_same<Scope, scope::caller>::value) {
    return fetch_update_plain(op, addr, value);
  } else if constexpr (std::is_floating_point<T>::value && !std::is_same<Op, plus>::value) {
    return detail::cas_loop(op, s, addr, value);
  } else {
    using N = detail::native_t<Op, T>;
    return static_cast<T>(detail::fetch_native(op, s, reinterpret_cast<N*>(addr), static_cast<N>(value)));
  }
}

}  // namespace cuda
}  // namespace calm
