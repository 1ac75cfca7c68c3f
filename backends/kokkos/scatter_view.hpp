// SPDX-License-Identifier: Apache-2.0
// calm/backends/kokkos/scatter_view.hpp: calm::kokkos::ScatterView, the implementation behind
// calm/kokkos.hpp (read that header first: it states the contract and where it differs from Kokkos).
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_ScatterView.hpp>

#include <cstddef>
#include <string>
#include <type_traits>

#include "../../core/error.hpp"
#include "scatter_access.hpp"
#include "scatter_traits.hpp"

namespace calm {
namespace kokkos {

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
  /// The types Kokkos's ScatterView names, with the same meaning.
  ///@{
  using execution_space = typename DeviceType::execution_space;
  using memory_space = typename DeviceType::memory_space;
  using device_type = Kokkos::Device<execution_space, memory_space>;
  using original_view_type = Kokkos::View<DataType, Layout, device_type>;
  using original_value_type = typename original_view_type::value_type;
  using original_reference_type = typename original_view_type::reference_type;
  using scatter_op = Op;
  ///@}
  static constexpr bool is_duplicated = std::is_same<Duplication, ScatterDuplicated>::value;  ///< a copy per thread (ScatterDuplicated)
  static_assert(is_duplicated || std::is_same<Duplication, ScatterNonDuplicated>::value,
                "calm::kokkos::ScatterView: Duplication is ScatterDuplicated or ScatterNonDuplicated");
  static_assert(!is_duplicated || std::is_same<Layout, Kokkos::LayoutRight>::value || std::is_same<Layout, Kokkos::LayoutLeft>::value,
                "calm::kokkos::ScatterView: a duplicated view needs LayoutLeft or LayoutRight (as Kokkos's)");

  ScatterView() = default;

  /// Scatter into `original`: duplicated, the copies start at op's identity and `original` is
  /// untouched until contribute(); not duplicated, updates go straight into `original`.
  template <class RT, class... RP>
  ScatterView(Kokkos::View<RT, RP...> const& original) : ScatterView(execution_space(), original) {}  // NOLINT: implicit, as Kokkos's
  /// As ScatterView(original), on `space`.
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

  /// A copy of o, which views the same memory (as Kokkos's conversions between views).
  template <class OtherDataType, class OtherDeviceType>
  KOKKOS_FUNCTION ScatterView(ScatterView<OtherDataType, Layout, OtherDeviceType, Op, Duplication, Contribution, LaneMerge> const& o)
      : target_(o.target_), copies_(o.copies_), copy0_(o.copy0_), stride_(o.stride_), count_(o.count_), token_(o.token_) {}
  /// This view made to view o's memory.
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

  /// Whether the view (or its copies) holds memory.
  KOKKOS_INLINE_FUNCTION constexpr bool is_allocated() const { return is_duplicated ? copies_.is_allocated() : target_.is_allocated(); }

  /// Duplicated: dest = op(dest, every copy; the first is skipped when dest is subview()); the copies
  /// are left as they are (reset() them to start again). Not duplicated: nothing (updates went straight
  /// into the view), as Kokkos's.
  template <class DT, class... RP>
  void contribute_into(Kokkos::View<DT, RP...> const& dest) const {
    contribute_into(execution_space(), dest);
  }
  /// As contribute_into(dest), on `space`.
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
  /// As reset_except(view), on `space`.
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
  /// As resize, the view's contents dropped (as Kokkos::realloc).
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

}  // namespace kokkos
}  // namespace calm
