// SPDX-License-Identifier: Apache-2.0
// calm/core/ops.hpp: the reduction operators calm merges and applies atomically. Each is an empty
// tag with identity<T>(), a combine call operator, and whether it is idempotent (max/min/and/or).
#pragma once

#include <limits>
#include <type_traits>

#include "config.hpp"

namespace calm {

namespace detail {
/// The largest and smallest values of T (the infinities where T has them), as constants: device code
/// reads them without calling numeric_limits' host functions (nvcc without --expt-relaxed-constexpr).
template <class T>
constexpr T largest = std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
template <class T>
constexpr T smallest = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
/// a + b and a * b modulo 2^bits for integers, signed ones too (as the hardware's atomic add computes
/// them: no undefined behavior on overflow); floating point as it is.
template <class T>
CALM_HD constexpr T wrapping_add(T a, T b) {
  if constexpr (std::is_integral<T>::value && !std::is_same<T, bool>::value) {
    using W = decltype(std::make_unsigned_t<T>{} + 0u);  // unsigned, and no narrower than unsigned int
    return static_cast<T>(static_cast<W>(a) + static_cast<W>(b));
  } else {
    return a + b;
  }
}
template <class T>
CALM_HD constexpr T wrapping_multiply(T a, T b) {
  if constexpr (std::is_integral<T>::value && !std::is_same<T, bool>::value) {
    using W = decltype(std::make_unsigned_t<T>{} + 0u);
    return static_cast<T>(static_cast<W>(a) * static_cast<W>(b));
  } else {
    return a * b;
  }
}
}  // namespace detail

/// a + b. Identity 0. Integer sums wrap modulo 2^bits, signed ones too, as the hardware atomics do.
struct plus {
  static constexpr bool idempotent = false;  ///< op(a, a) == a: a group of equal values may apply one
  /// Whether the op is defined for T.
  template <class T>
  static constexpr bool supports = std::is_arithmetic<T>::value && !std::is_same<T, bool>::value;
  /// The value v with op(v, x) == x for every x.
  template <class T>
  CALM_HD static constexpr T identity() { return T(0); }
  /// The op applied to a and b.
  template <class T>
  CALM_HD constexpr T operator()(T a, T b) const { return detail::wrapping_add(a, b); }
};

/// The smaller of a and b. Identity: the largest value (+infinity for floating point).
struct min {
  static constexpr bool idempotent = true;  ///< op(a, a) == a: a group of equal values may apply one
  /// Whether the op is defined for T.
  template <class T>
  static constexpr bool supports = std::is_arithmetic<T>::value && !std::is_same<T, bool>::value;
  /// The value v with op(v, x) == x for every x.
  template <class T>
  CALM_HD static constexpr T identity() {
    return detail::largest<T>;
  }
  /// The op applied to a and b.
  template <class T>
  CALM_HD constexpr T operator()(T a, T b) const { return b < a ? b : a; }
};

/// The larger of a and b. Identity: the lowest value (-infinity for floating point).
struct max {
  static constexpr bool idempotent = true;  ///< op(a, a) == a: a group of equal values may apply one
  /// Whether the op is defined for T.
  template <class T>
  static constexpr bool supports = std::is_arithmetic<T>::value && !std::is_same<T, bool>::value;
  /// The value v with op(v, x) == x for every x.
  template <class T>
  CALM_HD static constexpr T identity() {
    return detail::smallest<T>;
  }
  /// The op applied to a and b.
  template <class T>
  CALM_HD constexpr T operator()(T a, T b) const { return a < b ? b : a; }
};

/// a | b on integers. Identity 0.
struct bit_or {
  static constexpr bool idempotent = true;  ///< op(a, a) == a: a group of equal values may apply one
  /// Whether the op is defined for T.
  template <class T>
  static constexpr bool supports = std::is_integral<T>::value && !std::is_same<T, bool>::value;
  /// The value v with op(v, x) == x for every x.
  template <class T>
  CALM_HD static constexpr T identity() { return T(0); }
  /// The op applied to a and b.
  template <class T>
  CALM_HD constexpr T operator()(T a, T b) const { return static_cast<T>(a | b); }
};

/// a & b on integers. Identity: all bits set.
struct bit_and {
  static constexpr bool idempotent = true;  ///< op(a, a) == a: a group of equal values may apply one
  /// Whether the op is defined for T.
  template <class T>
  static constexpr bool supports = std::is_integral<T>::value && !std::is_same<T, bool>::value;
  /// The value v with op(v, x) == x for every x.
  template <class T>
  CALM_HD static constexpr T identity() { return static_cast<T>(~T(0)); }
  /// The op applied to a and b.
  template <class T>
  CALM_HD constexpr T operator()(T a, T b) const { return static_cast<T>(a & b); }
};

/// a ^ b on integers. Identity 0. Not idempotent: x ^ x = 0.
struct bit_xor {
  static constexpr bool idempotent = false;  ///< op(a, a) == a: a group of equal values may apply one
  /// Whether the op is defined for T.
  template <class T>
  static constexpr bool supports = std::is_integral<T>::value && !std::is_same<T, bool>::value;
  /// The value v with op(v, x) == x for every x.
  template <class T>
  CALM_HD static constexpr T identity() { return T(0); }
  /// The op applied to a and b.
  template <class T>
  CALM_HD constexpr T operator()(T a, T b) const { return static_cast<T>(a ^ b); }
};

/// True for the six operators above.
template <class Op>
struct is_op : std::false_type {};
template <> struct is_op<plus> : std::true_type {};
template <> struct is_op<min> : std::true_type {};
template <> struct is_op<max> : std::true_type {};
template <> struct is_op<bit_or> : std::true_type {};
template <> struct is_op<bit_and> : std::true_type {};
template <> struct is_op<bit_xor> : std::true_type {};

/// The element types the warp layer applies atomically: int32, uint32, int64, uint64, float, double.
template <class T>
constexpr bool is_atomic_type = std::is_same<T, std::int32_t>::value || std::is_same<T, std::uint32_t>::value ||
                                std::is_same<T, std::int64_t>::value || std::is_same<T, std::uint64_t>::value ||
                                std::is_same<T, float>::value || std::is_same<T, double>::value;

/// Compile-time check that Op can be applied atomically to T (float bit operations cannot).
template <class Op, class T>
CALM_HD constexpr void check_atomic_op() {
  static_assert(is_op<Op>::value, "calm: Op must be one of plus, min, max, bit_or, bit_and, bit_xor");
  static_assert(is_atomic_type<T>, "calm: atomics take int32, uint32, int64, uint64, float or double");
  static_assert(Op::template supports<T>, "calm: this operator is not defined for this type (bit ops need integers)");
}

}  // namespace calm

namespace calm {

/// The read-modify-write of scope::caller (no other lane touches *addr): returns the old value.
template <class Op, class T>
CALM_HD T fetch_update_plain(Op op, T* addr, T value) {
  T old = *addr;
  *addr = op(old, value);
  return old;
}

}  // namespace calm
