// calm/backends/kokkos/scatter_view.hpp: calm::kokkos::ScatterView, the implementation behind
// calm/kokkos.hpp (read that header first: it states the contract and where it differs from Kokkos).
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_ScatterView.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../../core/error.hpp"
#include "../../core/ops.hpp"
#include "../per_lane.hpp"

namespace calm {
namespace kokkos {

using Kokkos::Experimental::ScatterAtomic;
using Kokkos::Experimental::ScatterDuplicated;
using Kokkos::Experimental::ScatterMax;
using Kokkos::Experimental::ScatterMin;
using Kokkos::Experimental::ScatterNonAtomic;
using Kokkos::Experimental::ScatterNonDuplicated;
using Kokkos::Experimental::ScatterProd;
using Kokkos::Experimental::ScatterSum;

namespace detail {

/// Whether an execution space runs on a GPU, where updates go through calm's warp merges.
template <class Space>
struct is_gpu_space : std::false_type {};
#if defined(KOKKOS_ENABLE_CUDA)
template <>
struct is_gpu_space<Kokkos::Cuda> : std::true_type {};
#endif
#if defined(KOKKOS_ENABLE_HIP)
#if KOKKOS_VERSION >= 40000
template <>
struct is_gpu_space<Kokkos::HIP> : std::true_type {};
#else
template <>
struct is_gpu_space<Kokkos::Experimental::HIP> : std::true_type {};
#endif
#endif

template <class Space>
struct is_serial_space : std::false_type {};
#if defined(KOKKOS_ENABLE_SERIAL)
template <>
struct is_serial_space<Kokkos::Serial> : std::true_type {};
#endif

/// On Cuda and HIP: duplicated copies in device memory, updated atomically. Every other space keeps
/// Kokkos's defaults (Serial: neither; OpenMP and Threads: duplicated, not atomic; SYCL, OpenMPTarget:
/// atomic, not duplicated).
template <class Space>
using default_duplication = std::conditional_t<is_gpu_space<Space>::value, ScatterDuplicated,
                                               typename Kokkos::Impl::Experimental::DefaultDuplication<Space>::type>;
template <class Space, class Duplication>
using default_contribution = std::conditional_t<is_gpu_space<Space>::value, ScatterAtomic,
                                                typename Kokkos::Impl::Experimental::DefaultContribution<Space, Duplication>::type>;

/// What each Scatter op is: its identity, its plain and atomic forms, and the calm op that merges lanes.
template <class Op>
struct op_traits;
template <>
struct op_traits<ScatterSum> {
  using calm_op = calm::plus;
  template <class T> static KOKKOS_INLINE_FUNCTION T identity() { return Kokkos::reduction_identity<T>::sum(); }
  template <class T> static KOKKOS_INLINE_FUNCTION T combine(T a, T b) { return a + b; }
  template <class T> static KOKKOS_INLINE_FUNCTION void atomic(T* p, T v) { Kokkos::atomic_add(p, v); }
};
template <>
struct op_traits<ScatterProd> {
  using calm_op = void;  // no warp merge: Kokkos's atomic multiply
  template <class T> static KOKKOS_INLINE_FUNCTION T identity() { return Kokkos::reduction_identity<T>::prod(); }
  template <class T> static KOKKOS_INLINE_FUNCTION T combine(T a, T b) { return a * b; }
  template <class T> static KOKKOS_INLINE_FUNCTION void atomic(T* p, T v) { Kokkos::atomic_fetch_mul(p, v); }
};
template <>
struct op_traits<ScatterMax> {
  using calm_op = calm::max;
  template <class T> static KOKKOS_INLINE_FUNCTION T identity() { return Kokkos::reduction_identity<T>::max(); }
  template <class T> static KOKKOS_INLINE_FUNCTION T combine(T a, T b) { return a < b ? b : a; }
  template <class T> static KOKKOS_INLINE_FUNCTION void atomic(T* p, T v) { Kokkos::atomic_fetch_max(p, v); }
};
template <>
struct op_traits<ScatterMin> {
  using calm_op = calm::min;
  template <class T> static KOKKOS_INLINE_FUNCTION T identity() { return Kokkos::reduction_identity<T>::min(); }
  template <class T> static KOKKOS_INLINE_FUNCTION T combine(T a, T b) { return b < a ? b : a; }
  template <class T> static KOKKOS_INLINE_FUNCTION void atomic(T* p, T v) { Kokkos::atomic_fetch_min(p, v); }
};

/// Whether calm merges a warp's lanes for this op and type (calm's atomic ops and types).
template <class Op, class T>
constexpr bool merges_lanes() {
  using C = typename op_traits<Op>::calm_op;
  if constexpr (std::is_void<C>::value) return false;
  else return calm::is_atomic_type<T> && C::template supports<T>;
}

/// Copies of the table on a GPU: enough that the copies hold about 2^17 entries, so that the device
/// atomics of different warps rarely meet (2^26 uniform keys: 15 GB/s into 256 entries, 360 GB/s
/// into 65,536 on an H200), at most 4,096; and at least 8 copies while they hold at most 2^22 entries
/// (16 MiB of floats), which spread the lanes a sampled merge misses on a hot key of a large table.
/// Each copy is padded to whole 128-byte lines.
inline std::size_t gpu_copies(std::size_t padded_span) {
  std::size_t r = 1;
  while (r < 4096 && 2 * r * padded_span <= (std::size_t(1) << 17)) r *= 2;
  while (r < 8 && 2 * r * padded_span <= (std::size_t(1) << 22)) r *= 2;
  return r;
}

/// out[i] = op(out[i], copies[r * stride + i] for r in [first, copies)), i < n: contribute_into.
template <class Op, class T>
struct combine_copies {
  T* out;
  T const* copies;
  std::size_t stride, first, count;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const {
    T v = out[i];
    for (std::size_t r = first; r < count; ++r) v = op_traits<Op>::template combine<T>(v, copies[r * stride + i]);
    out[i] = v;
  }
};

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

/// Bytes each copy of a table is padded to: a GPU's 128-byte line, a CPU's 64-byte cache line.
template <class Space>
constexpr std::size_t copy_alignment = is_gpu_space<Space>::value ? 128 : 64;

template <class View, class Contribution>
class scatter_access;

}  // namespace detail

/// The default lane merge of a GPU ScatterView: two sampled keys per warp (calm::vote_reduce<2>, from a
/// fixed seed), each merged when at least eight lanes share it, the rest one atomic each. On an H100
/// (perf/results/cuda-h100-2026-11-22-kokkos.md): sampling is free on keys that do not collide, where
/// calm::peer_reduce's exact match costs a third of the throughput; merging small groups costs more
/// than it saves (image-like keys at 65,536 bins: 800 GB/s unmerged; 505, 555, 656 merging groups from
/// two, four, eight lanes; Kokkos 561), while a hot key shared by many lanes must be merged (half the
/// keys on one bin: 199 against 75 unmerged).
struct sampled_merge {
  static constexpr std::uint32_t seed = 0x9e3779b9u;
  static constexpr int min_lanes = 8;
  template <class Warp, class A>
  CALM_HD auto group(Warp const& w, A const& addr) const {
    return calm::vote_reduce<2>{seed, min_lanes}.group(w, addr);
  }
};

/// A drop-in for Kokkos::Experimental::ScatterView (same parameters, tags, members; see calm/kokkos.hpp).
template <class DataType, class Layout = Kokkos::DefaultExecutionSpace::array_layout, class DeviceType = Kokkos::DefaultExecutionSpace,
          class Op = ScatterSum, class Duplication = detail::default_duplication<typename DeviceType::execution_space>,
          class Contribution = detail::default_contribution<typename DeviceType::execution_space, Duplication>,
          class LaneMerge = sampled_merge>
class ScatterView {
 public:
  /// How a GPU warp's lanes that update one entry merge before the atomic (calm's strategies; a
  /// seventh parameter Kokkos's ScatterView does not have, defaulted).
  using lane_merge = LaneMerge;
  using execution_space = typename DeviceType::execution_space;
  using memory_space = typename DeviceType::memory_space;
  using device_type = Kokkos::Device<execution_space, memory_space>;
  using original_view_type = Kokkos::View<DataType, Layout, device_type>;
  using original_value_type = typename original_view_type::value_type;
  using original_reference_type = typename original_view_type::reference_type;
  using scatter_op = Op;
  static constexpr bool is_duplicated = std::is_same<Duplication, ScatterDuplicated>::value;
  static_assert(is_duplicated || std::is_same<Duplication, ScatterNonDuplicated>::value,
                "calm::kokkos::ScatterView: Duplication is ScatterDuplicated or ScatterNonDuplicated");
  static_assert(!is_duplicated || std::is_same<Layout, Kokkos::LayoutRight>::value || std::is_same<Layout, Kokkos::LayoutLeft>::value,
                "calm::kokkos::ScatterView: a duplicated view needs LayoutLeft or LayoutRight (as Kokkos's)");

  ScatterView() = default;

  /// Scatter into `original`: duplicated, the copies start at op's identity and `original` is
  /// untouched until contribute(); not duplicated, updates go straight into `original`.
  template <class RT, class... RP>
  ScatterView(Kokkos::View<RT, RP...> const& original) : ScatterView(execution_space(), original) {}  // NOLINT: implicit, as Kokkos's
  template <class RT, class... RP>
  ScatterView(execution_space const& space, Kokkos::View<RT, RP...> const& original) {
    if constexpr (is_duplicated) {
      allocate(space, "duplicated_" + original.label(), original.layout());
      reset(space);
    } else {
      target_ = original;
    }
  }
  /// A view of its own, of the given extents (Kokkos initializes it; duplicated copies start at identity).
  template <class... Dims>
  ScatterView(std::string const& name, Dims... dims) {
    if constexpr (is_duplicated) {
      allocate(execution_space(), name, Layout(static_cast<std::size_t>(dims)...));
      reset();
    } else {
      target_ = original_view_type(name, static_cast<std::size_t>(dims)...);
    }
  }

  template <class OtherDataType, class OtherDeviceType>
  KOKKOS_FUNCTION ScatterView(ScatterView<OtherDataType, Layout, OtherDeviceType, Op, Duplication, Contribution, LaneMerge> const& o)
      : target_(o.target_), copies_(o.copies_), copy0_(o.copy0_), stride_(o.stride_), count_(o.count_), token_(o.token_) {}
  template <class OtherDataType, class OtherDeviceType>
  KOKKOS_FUNCTION ScatterView& operator=(ScatterView<OtherDataType, Layout, OtherDeviceType, Op, Duplication, Contribution, LaneMerge> const& o) {
    target_ = o.target_, copies_ = o.copies_, copy0_ = o.copy0_, stride_ = o.stride_, count_ = o.count_, token_ = o.token_;
    return *this;
  }

  /// The handle a parallel_for body updates through: `auto a = sv.access(); a(i) += v;`.
  template <class OverrideContribution = Contribution>
  KOKKOS_FORCEINLINE_FUNCTION detail::scatter_access<ScatterView, OverrideContribution> access() const {
    return detail::scatter_access<ScatterView, OverrideContribution>(*this);
  }

  /// Not duplicated: the view updates go to. Duplicated: the first copy, with the original's extents
  /// (an unmanaged view: keep the ScatterView alive while using it); contribute_into(subview())
  /// folds the other copies into it.
  original_view_type subview() const { return is_duplicated ? copy0_ : target_; }

  KOKKOS_INLINE_FUNCTION constexpr bool is_allocated() const { return is_duplicated ? copies_.is_allocated() : target_.is_allocated(); }

  /// Duplicated: dest = op(dest, every copy; the first is skipped when dest is subview()); the copies
  /// are left as they are (reset() them to start again). Not duplicated: nothing (updates went straight
  /// into the view), as Kokkos's.
  template <class DT, class... RP>
  void contribute_into(Kokkos::View<DT, RP...> const& dest) const {
    contribute_into(execution_space(), dest);
  }
  template <class DT, class... RP>
  void contribute_into(execution_space const& space, Kokkos::View<DT, RP...> const& dest) const {
    using dest_type = Kokkos::View<DT, RP...>;
    static_assert(std::is_same<typename dest_type::array_layout, Layout>::value, "ScatterView contribute destination has different layout");
    static_assert(Kokkos::SpaceAccessibility<execution_space, typename dest_type::memory_space>::accessible,
                  "ScatterView contribute destination memory space not accessible");
    // not duplicated, there is nothing to fold: Kokkos's does nothing, whatever dest is
    if constexpr (is_duplicated) {
      bool same_extents = dest.span_is_contiguous() && static_cast<int>(dest_type::rank) == static_cast<int>(original_view_type::rank);
      for (int r = 0; same_extents && r < static_cast<int>(original_view_type::rank); ++r)
        same_extents = dest.extent(r) == copy0_.extent(r);
      calm::require(same_extents, calm::errc::invalid_argument,
                    "calm::kokkos::ScatterView::contribute_into: the destination must be contiguous and have the view's extents");
      std::size_t const first = dest.data() == copies_.data() ? 1 : 0;
      Kokkos::parallel_for("calm::kokkos::ScatterView::contribute",
                           Kokkos::RangePolicy<execution_space, Kokkos::IndexType<std::size_t>>(space, 0, copy0_.span()),
                           detail::combine_copies<Op, original_value_type>{dest.data(), copies_.data(), stride_, first, count_});
    }
  }

  /// Every copy (not duplicated: the view itself) to op's identity.
  void reset(execution_space const& space = execution_space()) {
    if constexpr (is_duplicated) Kokkos::deep_copy(space, copies_, identity());
    else Kokkos::deep_copy(space, target_, identity());
  }
  /// As reset(), but leaves `view` alone when it is the view updates go to (not duplicated) or the first copy.
  template <class DT, class... RP>
  void reset_except(Kokkos::View<DT, RP...> const& view) {
    reset_except(execution_space(), view);
  }
  template <class DT, class... RP>
  void reset_except(execution_space const& space, Kokkos::View<DT, RP...> const& view) {
    if constexpr (is_duplicated) {
      if (view.data() != copies_.data()) return reset(space);
      Kokkos::deep_copy(space, Kokkos::subview(copies_, std::make_pair(stride_, copies_.extent(0))), identity());
    } else {
      if (view.data() != target_.data()) reset(space);
    }
  }

  /// New extents. Not duplicated: Kokkos::resize / realloc of the view. Duplicated: new copies at op's
  /// identity (partial contributions are dropped by both: contribute before resizing).
  void resize(std::size_t n0 = unset, std::size_t n1 = unset, std::size_t n2 = unset, std::size_t n3 = unset,
              std::size_t n4 = unset, std::size_t n5 = unset, std::size_t n6 = unset, std::size_t n7 = unset) {
    if constexpr (is_duplicated) reshape(Layout(n0, n1, n2, n3, n4, n5, n6, n7));
    else Kokkos::resize(target_, n0, n1, n2, n3, n4, n5, n6, n7);
  }
  void realloc(std::size_t n0 = unset, std::size_t n1 = unset, std::size_t n2 = unset, std::size_t n3 = unset,
               std::size_t n4 = unset, std::size_t n5 = unset, std::size_t n6 = unset, std::size_t n7 = unset) {
    if constexpr (is_duplicated) reshape(Layout(n0, n1, n2, n3, n4, n5, n6, n7));
    else Kokkos::realloc(target_, n0, n1, n2, n3, n4, n5, n6, n7);
  }

  /// The entry `args` of copy `copy` (0 when not duplicated).
  template <class... Args>
  KOKKOS_FORCEINLINE_FUNCTION original_value_type* element(std::size_t copy, Args... args) const {
    if constexpr (is_duplicated) return &copy0_(args...) + copy * stride_;
    else return &target_(args...);
  }
  /// The number of copies (1 when not duplicated).
  KOKKOS_INLINE_FUNCTION std::size_t copies() const { return is_duplicated ? count_ : 1; }

 private:
  template <class, class, class, class, class, class, class>
  friend class ScatterView;
  template <class, class>
  friend class detail::scatter_access;
  // a host space's threads take copies by a unique token; elsewhere no token is needed
  struct no_token {
    using size_type = int;
    static constexpr int size() { return 1; }
  };
  using token_type = std::conditional_t<is_duplicated && !detail::is_gpu_space<execution_space>::value,
                                        Kokkos::Experimental::UniqueToken<execution_space, Kokkos::Experimental::UniqueTokenScope::Global>,
                                        no_token>;

  /// An extent not given (Kokkos's marker; Kokkos 3.4 refuses explicit zeros past the view's rank).
  static constexpr std::size_t unset = KOKKOS_IMPL_CTOR_DEFAULT_ARG;
  static original_value_type identity() { return detail::op_traits<Op>::template identity<original_value_type>(); }

  void allocate(execution_space const& space, std::string const& label, Layout const& layout) {
    original_view_type const shape(nullptr, layout);  // unmanaged, null: only its span
    std::size_t const align = detail::copy_alignment<execution_space> / sizeof(original_value_type);
    std::size_t const span = shape.span();
    stride_ = align > 1 ? (span + align - 1) / align * align : span;
    if constexpr (detail::is_gpu_space<execution_space>::value) count_ = detail::gpu_copies(stride_);
    else count_ = static_cast<std::size_t>(token_.size());
    copies_ = Kokkos::View<original_value_type*, device_type>(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label), stride_ * count_);
    copy0_ = original_view_type(copies_.data(), layout);
  }
  void reshape(Layout const& layout) {
    allocate(execution_space(), copies_.label(), layout);
    reset();
  }

  original_view_type target_;                                  // not duplicated: where updates go
  Kokkos::View<original_value_type*, device_type> copies_;     // duplicated: count_ copies of stride_ entries
  original_view_type copy0_;                                   // duplicated: the first copy, unmanaged
  std::size_t stride_ = 0, count_ = 1;
  token_type token_;                                           // duplicated on a host space: which copy a thread takes
};

namespace detail {

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
