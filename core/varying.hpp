// SPDX-License-Identifier: Apache-2.0
// calm/core/varying.hpp: per-lane values. On a GPU a varying<T> is the lane's own T; on the host it
// is a lane_array<T, W> holding all W lanes, whose element-wise operators are short vectorizable loops.
#pragma once

#include <type_traits>
#include <utility>

#include "config.hpp"

namespace calm {

/// The value of each of W lanes. Operators act lane by lane (inactive lanes compute too: mask
/// their effects with the warp's active set). Comparisons give lane_array<bool, W>.
template <class T, int W>
struct lane_array {
  T v[W];  ///< lane i's value

  lane_array() = default;
  /// Broadcast: every lane holds s (implicit, so `x + 1` reads as on the GPU).
  lane_array(T s) {  // NOLINT(google-explicit-constructor)
    CALM_SIMD for (int i = 0; i < W; ++i) v[i] = s;
  }
  /// Each lane's value converted to T.
  template <class U, class = std::enable_if_t<!std::is_same<U, T>::value && std::is_convertible<U, T>::value>>
  explicit lane_array(lane_array<U, W> const& o) {
    CALM_SIMD for (int i = 0; i < W; ++i) v[i] = static_cast<T>(o.v[i]);
  }

  /// Lane i's value.
  ///@{
  T& operator[](int i) { return v[i]; }
  T const& operator[](int i) const { return v[i]; }
  ///@}
  /// W, the lanes.
  static constexpr int size() { return W; }

#define CALM_LANE_BINARY(OP)                                                           \
  friend lane_array operator OP(lane_array const& a, lane_array const& b) {            \
    lane_array r;                                                                      \
    CALM_SIMD for (int i = 0; i < W; ++i) r.v[i] = static_cast<T>(a.v[i] OP b.v[i]);   \
    return r;                                                                          \
  }                                                                                    \
  lane_array& operator OP##=(lane_array const& b) { return *this = *this OP b; }
#define CALM_LANE_COMPARE(OP)                                                          \
  friend lane_array<bool, W> operator OP(lane_array const& a, lane_array const& b) {   \
    lane_array<bool, W> r;                                                             \
    CALM_SIMD for (int i = 0; i < W; ++i) r.v[i] = a.v[i] OP b.v[i];                   \
    return r;                                                                          \
  }
  /// Lane by lane: lane i's result from lane i's operands (comparisons give lane_array<bool, W>).
  ///@{
  CALM_LANE_BINARY(+)
  CALM_LANE_BINARY(-)
  CALM_LANE_BINARY(*)
  CALM_LANE_BINARY(/)
  CALM_LANE_BINARY(%)
  CALM_LANE_BINARY(&)
  CALM_LANE_BINARY(|)
  CALM_LANE_BINARY(^)
  CALM_LANE_BINARY(<<)
  CALM_LANE_BINARY(>>)
  CALM_LANE_COMPARE(==)
  CALM_LANE_COMPARE(!=)
  CALM_LANE_COMPARE(<)
  CALM_LANE_COMPARE(<=)
  CALM_LANE_COMPARE(>)
  CALM_LANE_COMPARE(>=)
#undef CALM_LANE_BINARY
#undef CALM_LANE_COMPARE

  friend lane_array operator-(lane_array const& a) { return lane_array(T(0)) - a; }
  friend lane_array operator~(lane_array const& a) {
    lane_array r;
    CALM_SIMD for (int i = 0; i < W; ++i) r.v[i] = static_cast<T>(~a.v[i]);
    return r;
  }
  friend lane_array<bool, W> operator!(lane_array const& a) {
    lane_array<bool, W> r;
    CALM_SIMD for (int i = 0; i < W; ++i) r.v[i] = !a.v[i];
    return r;
  }
  ///@}
};

/// Lane-wise pointer arithmetic: `table + keys` is the address each lane updates.
template <class P, class I, int W, class = std::enable_if_t<std::is_integral<I>::value>>
lane_array<P*, W> operator+(P* base, lane_array<I, W> const& idx) {
  lane_array<P*, W> r;
  CALM_SIMD for (int i = 0; i < W; ++i) r.v[i] = base + idx.v[i];
  return r;
}
template <class P, class I, int W, class = std::enable_if_t<std::is_integral<I>::value>>
lane_array<P*, W> operator+(lane_array<P*, W> const& base, lane_array<I, W> const& idx) {
  lane_array<P*, W> r;
  CALM_SIMD for (int i = 0; i < W; ++i) r.v[i] = base.v[i] + idx.v[i];
  return r;
}

template <class P, class I, int W, class = std::enable_if_t<std::is_integral<I>::value>>
lane_array<P*, W> operator+(lane_array<P*, W> const& base, I offset) {
  lane_array<P*, W> r;
  CALM_SIMD for (int i = 0; i < W; ++i) r.v[i] = base.v[i] + offset;
  return r;
}

template <class T>
struct is_lane_array : std::false_type {};
template <class T, int W>
struct is_lane_array<lane_array<T, W>> : std::true_type {};

namespace detail {
template <class... A>
struct lanes_of;
template <>
struct lanes_of<> { static constexpr int value = 0; };
template <class A, class... R>
struct lanes_of<A, R...> { static constexpr int value = lanes_of<R...>::value; };
template <class T, int W, class... R>
struct lanes_of<lane_array<T, W>, R...> { static constexpr int value = W; };

template <class T>
T const& lane_get(T const& x, int) { return x; }
template <class T, int W>
T const& lane_get(lane_array<T, W> const& x, int i) { return x.v[i]; }
}  // namespace detail

/// Apply a scalar function lane by lane: on the GPU `map(f, a, b)` is `f(a, b)`; on the host with
/// any lane_array argument it runs f for each of the W lanes (scalars are broadcast). f must be a
/// pure function of its arguments: the host runs the lanes as one SIMD loop.
template <class F, class... A, std::enable_if_t<detail::lanes_of<std::decay_t<A>...>::value == 0, int> = 0>
CALM_HD auto map(F&& f, A const&... a) {
  return f(a...);
}
template <class F, class... A, int W = detail::lanes_of<std::decay_t<A>...>::value,
          std::enable_if_t<(W > 0), int> = 0>
auto map(F&& f, A const&... a) {
  using R = decltype(f(detail::lane_get(a, 0)...));
  lane_array<R, W> r;
  CALM_SIMD for (int i = 0; i < W; ++i) r.v[i] = f(detail::lane_get(a, i)...);
  return r;
}

/// Lane-wise choice, the masked form of `c ? a : b`.
template <class T>
CALM_HD T select(bool c, T const& a, T const& b) {
  return c ? a : b;
}
template <int W, class A, class B>
auto select(lane_array<bool, W> const& c, A const& a, B const& b) {
  using T = std::common_type_t<std::decay_t<decltype(detail::lane_get(a, 0))>,
                               std::decay_t<decltype(detail::lane_get(b, 0))>>;
  lane_array<T, W> r;
  CALM_SIMD for (int i = 0; i < W; ++i) r.v[i] = c.v[i] ? T(detail::lane_get(a, i)) : T(detail::lane_get(b, i));
  return r;
}

}  // namespace calm
