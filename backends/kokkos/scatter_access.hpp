// SPDX-License-Identifier: Apache-2.0
// calm/backends/kokkos/scatter_access.hpp: what ScatterView::access() returns, and the proxy its
// operator() gives: `a(i) += v` applied as the space wants (GPU: the warp's lanes merged, then atomic).
#pragma once

#include <cstddef>
#include <type_traits>

#include "../per_lane.hpp"
#include "scatter_traits.hpp"

namespace calm {
namespace kokkos {
namespace detail {

/// The proxy `access()(i...)` returns: `a(i) += v` applies op with the update of this space (on a
/// GPU, the warp's lanes merged by LaneMerge first).
template <class T, class Op, class Space, class Contribution, class LaneMerge>
class scatter_value {
 public:
  KOKKOS_INLINE_FUNCTION explicit scatter_value(T* p) : p_(p) {}

  KOKKOS_INLINE_FUNCTION void update(T const& v) const { apply(v); }
  KOKKOS_INLINE_FUNCTION void reset() const { *p_ = op_traits<Op>::template identity<T>(); }

  template <class O = Op, std::enable_if_t<std::is_same<O, ScatterSum>::value, int> = 0>
  KOKKOS_INLINE_FUNCTION void operator+=(T const& v) const { apply(v); }
  template <class O = Op, std::enable_if_t<std::is_same<O, ScatterSum>::value, int> = 0>
  KOKKOS_INLINE_FUNCTION void operator-=(T const& v) const { apply(T(-v)); }
  template <class O = Op, std::enable_if_t<std::is_same<O, ScatterSum>::value, int> = 0>
  KOKKOS_INLINE_FUNCTION void operator++() const { apply(T(1)); }
  template <class O = Op, std::enable_if_t<std::is_same<O, ScatterSum>::value, int> = 0>
  KOKKOS_INLINE_FUNCTION void operator++(int) const { apply(T(1)); }
  template <class O = Op, std::enable_if_t<std::is_same<O, ScatterSum>::value, int> = 0>
  KOKKOS_INLINE_FUNCTION void operator--() const { apply(T(-1)); }
  template <class O = Op, std::enable_if_t<std::is_same<O, ScatterSum>::value, int> = 0>
  KOKKOS_INLINE_FUNCTION void operator--(int) const { apply(T(-1)); }
  template <class O = Op, std::enable_if_t<std::is_same<O, ScatterProd>::value, int> = 0>
  KOKKOS_INLINE_FUNCTION void operator*=(T const& v) const { apply(v); }
  template <class O = Op, std::enable_if_t<std::is_same<O, ScatterProd>::value, int> = 0>
  KOKKOS_INLINE_FUNCTION void operator/=(T const& v) const {  // as Kokkos: a division, atomic where updates are
    if constexpr (is_gpu_space<Space>::value || std::is_same<Contribution, ScatterAtomic>::value) Kokkos::atomic_fetch_div(p_, v);
    else *p_ /= v;
  }

 private:
  KOKKOS_INLINE_FUNCTION void apply(T v) const {
    if constexpr (is_gpu_space<Space>::value) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
      // the lanes of the warp that reach this update together, equal addresses merged first
      if constexpr (merges_lanes<Op, T>()) calm::update<LaneMerge>(typename op_traits<Op>::calm_op{}, p_, v, LaneMerge{});
      else op_traits<Op>::atomic(p_, v);
#else
      op_traits<Op>::atomic(p_, v);  // not reached: GPU bodies run on the GPU
#endif
    } else if constexpr (std::is_same<Contribution, ScatterAtomic>::value) {
      op_traits<Op>::atomic(p_, v);
    } else {
      *p_ = op_traits<Op>::template combine<T>(*p_, v);
    }
  }
  T* p_;
};

/// What ScatterView::access() returns: operator() and [] give the proxy that applies op. On a GPU
/// the warp picks a copy by its index (uniform over the warp, so its lanes still merge); on a host
/// space the thread takes a copy for the handle's life, as Kokkos's does.
template <class View, class Contribution>
class scatter_access {
  using T = typename View::original_value_type;
  using space = typename View::execution_space;
  static constexpr bool takes_token = View::is_duplicated && !is_gpu_space<space>::value;

 public:
  using value_type = scatter_value<T, typename View::scatter_op, space, Contribution, typename View::lane_merge>;

  KOKKOS_FORCEINLINE_FUNCTION explicit scatter_access(View const& v) : view_(v) {
    if constexpr (takes_token) copy_ = static_cast<std::size_t>(v.token_.acquire());
  }
  KOKKOS_FORCEINLINE_FUNCTION ~scatter_access() {
    if constexpr (takes_token)
      if (copy_ != released) view_.token_.release(static_cast<typename View::token_type::size_type>(copy_));
  }
  KOKKOS_FORCEINLINE_FUNCTION scatter_access(scatter_access&& o) : view_(o.view_), copy_(o.copy_) { o.copy_ = released; }
  /// Copies (into a nested lambda, say) as Kokkos allows: not where the handle holds a thread's copy.
  KOKKOS_FORCEINLINE_FUNCTION scatter_access(scatter_access const& o) : view_(o.view_), copy_(o.copy_) {
    static_assert(!takes_token, "calm::kokkos::ScatterView: a duplicated host view's access() holds a thread's copy and cannot be copied");
  }
  scatter_access& operator=(scatter_access const&) = delete;
  scatter_access& operator=(scatter_access&&) = delete;

  template <class... Args>
  KOKKOS_FORCEINLINE_FUNCTION value_type operator()(Args... args) const {
    return value_type(view_.element(copy(), args...));
  }
  template <class Arg, std::enable_if_t<View::original_view_type::rank == 1 && std::is_integral<Arg>::value, int> = 0>
  KOKKOS_FORCEINLINE_FUNCTION value_type operator[](Arg arg) const {
    return value_type(view_.element(copy(), arg));
  }

 private:
  static constexpr std::size_t released = ~std::size_t(0);
  KOKKOS_FORCEINLINE_FUNCTION std::size_t copy() const {
    if constexpr (View::is_duplicated && is_gpu_space<space>::value) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
      return static_cast<std::size_t>(calm::group_index(calm::backend::this_warp<T>())) & (view_.count_ - 1);  // count_ = 2^k
#else
      return 0;
#endif
    } else {
      return copy_;
    }
  }
  View const& view_;
  std::size_t copy_ = 0;
};

}  // namespace detail
}  // namespace kokkos
}  // namespace calm
