// SPDX-License-Identifier: Apache-2.0
// calm/kokkos.hpp: calm inside Kokkos. The per-lane calls (calm::update) work in parallel_for bodies,
// and calm::kokkos::ScatterView is a drop-in for Kokkos::Experimental::ScatterView: change the namespace,
// nothing else.
//
//   #include <calm/kokkos.hpp>
//   Kokkos::View<float*> hist("hist", bins);
//   calm::kokkos::ScatterView<float*> sv(hist);              // was Kokkos::Experimental::ScatterView
//   Kokkos::parallel_for(n, KOKKOS_LAMBDA(int i) {
//     auto a = sv.access();
//     a(keys(i)) += weights(i);
//   });
//   calm::kokkos::contribute(hist, sv);                      // was Kokkos::Experimental::contribute
//
// Kokkos 3.4 (Debian's) through 4.x; tested with 3.4.01 (Serial) and 4.6.99 (CUDA). Enabled by CMake
// when find_package(Kokkos) succeeds; a CUDA or HIP Kokkos needs calm built with the same backend
// (-DBACKEND=cuda / hip).
//
// What it does differently from Kokkos's, all within ScatterView's documented contract:
// - GPU spaces (Cuda, HIP): duplicated by default (Kokkos: one atomic per update into the original).
//   Each warp updates one of up to 4,096 copies in device memory, picked by its index, after merging
//   its lanes that share an entry (LaneMerge, a seventh template parameter Kokkos's has not; default
//   sampled_merge: two sampled keys per warp, merged where eight lanes or more share one;
//   calm::peer_reduce matches every lane exactly, better for keys known to be skewed over large
//   tables); contribute() folds the copies. So the view given to the
//   constructor changes only in contribute(), on every space, as Kokkos's contract already requires of
//   portable code. ScatterNonDuplicated keeps Kokkos's behaviour, lanes merged.
// - Host spaces: the same defaults as Kokkos (Serial: updates straight into the view; OpenMP and
//   Threads: a copy per thread), with each copy padded to whole cache lines.
// - ScatterProd is applied with Kokkos's atomics (and /= as Kokkos's division), without merging lanes.
// - resize()/realloc() of a duplicated view start the copies again at the op's identity
//   (Kokkos's resize keeps them): contribute first.
// - No constructor from Kokkos::view_alloc(...) properties; use (space, view) or (name, extents...).
// - contribute_into() of a duplicated view checks that the destination is contiguous and has the
//   view's extents, and throws calm::error before launching if not (Kokkos checks neither).
// - Other device spaces (SYCL, OpenMPTarget) keep Kokkos's defaults and behaviour, lanes unmerged.
// - subview() of a duplicated view is an unmanaged view of the first copy: keep the ScatterView alive.
#pragma once

#include "backends/kokkos/scatter_view.hpp"

namespace calm {
namespace kokkos {

/// A ScatterView of `original` with the defaults for its space (or the given Op / Duplication / Contribution).
template <class Op = ScatterSum, class Duplication = void, class Contribution = void, class RT, class... RP>
auto create_scatter_view(Kokkos::View<RT, RP...> const& original) {
  using traits = Kokkos::ViewTraits<RT, RP...>;
  using space = typename traits::execution_space;
  using dup = std::conditional_t<std::is_void<Duplication>::value, detail::default_duplication<space>, Duplication>;
  using con = std::conditional_t<std::is_void<Contribution>::value, detail::default_contribution<space, dup>, Contribution>;
  return ScatterView<RT, typename traits::array_layout, typename traits::device_type, Op, dup, con>(original);
}
template <class Op, class RT, class... RP>
auto create_scatter_view(Op, Kokkos::View<RT, RP...> const& original) {
  return create_scatter_view<Op>(original);
}
template <class Op, class Duplication, class Contribution, class RT, class... RP>
auto create_scatter_view(Op, Duplication, Contribution, Kokkos::View<RT, RP...> const& original) {
  return create_scatter_view<Op, Duplication, Contribution>(original);
}

/// dest = op(dest, what src gathered): src.contribute_into(space, dest).
template <class DT1, class DT2, class LY, class ES, class OP, class DP, class CT, class LM, class... VP>
void contribute(typename ES::execution_space const& space, Kokkos::View<DT1, VP...>& dest, ScatterView<DT2, LY, ES, OP, DP, CT, LM> const& src) {
  src.contribute_into(space, dest);
}
template <class DT1, class DT2, class LY, class ES, class OP, class DP, class CT, class LM, class... VP>
void contribute(Kokkos::View<DT1, VP...>& dest, ScatterView<DT2, LY, ES, OP, DP, CT, LM> const& src) {
  src.contribute_into(dest);
}

}  // namespace kokkos
}  // namespace calm

namespace Kokkos {
/// Kokkos::resize and Kokkos::realloc of a calm::kokkos::ScatterView, as for Kokkos's own.
template <class DT, class LY, class ES, class OP, class DP, class CT, class LM, class... IS>
void resize(calm::kokkos::ScatterView<DT, LY, ES, OP, DP, CT, LM>& sv, IS... is) {
  sv.resize(is...);
}
template <class DT, class LY, class ES, class OP, class DP, class CT, class LM, class... IS>
void realloc(calm::kokkos::ScatterView<DT, LY, ES, OP, DP, CT, LM>& sv, IS... is) {
  sv.realloc(is...);
}
}  // namespace Kokkos
