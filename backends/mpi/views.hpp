// SPDX-License-Identifier: Apache-2.0
// calm/backends/mpi/views.hpp: calm::mpi's tables on Kokkos views (or any one-dimensional view with data(),
// extent(0) and span_is_contiguous()) of host memory.
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "partitioned.hpp"
#include "tables.hpp"

namespace calm {
namespace mpi {
namespace detail {

/// Whether V is a view: data(), extent(0) and span_is_contiguous(), as Kokkos::View has.
template <class V, class = void>
struct is_view : std::false_type {};
template <class V>
struct is_view<V, std::void_t<decltype(std::declval<V const&>().data()), decltype(std::declval<V const&>().extent(0)),
                              decltype(std::declval<V const&>().span_is_contiguous())>> : std::true_type {};

/// A view's data (values: a view, or calm::constant(v) as it is).
template <class V>
auto values_of(V const& v) {
  if constexpr (is_view<V>::value) return v.data();
  else return v;
}

/// Why these views cannot be scattered (empty: they can): not contiguous, or values of another extent than the keys.
template <class KeysView, class Values, class TableView>
std::string view_trouble(KeysView const& keys, Values const& values, TableView const& table) {
  if (!keys.span_is_contiguous() || !table.span_is_contiguous()) return "the keys and the table must be contiguous views";
  if constexpr (is_view<Values>::value) {
    if (!values.span_is_contiguous()) return "the values must be a contiguous view";
    if (values.extent(0) != keys.extent(0))
      return "the values' extent " + std::to_string(values.extent(0)) + " is not the keys' " + std::to_string(keys.extent(0));
  }
  return std::string();
}

}  // namespace detail

/// scatter_replicated over views: keys and values (a view of the keys' extent, or calm::constant(v)) one
/// entry per key, the table's extent its bins. A view that is not contiguous, or values of another
/// extent, is an error on every rank as any bad argument is.
///
///   Kokkos::View<int*, Kokkos::HostSpace> keys("keys", n);  Kokkos::View<double*, Kokkos::HostSpace> table("t", bins);
///   calm::mpi::scatter_replicated(MPI_COMM_WORLD, calm::plus{}, keys, calm::constant(1.0), table);
template <strategy S = strategy::automatic, class Op, class KeysView, class Values, class TableView,
          std::enable_if_t<detail::is_view<KeysView>::value && detail::is_view<TableView>::value, int> = 0>
void scatter_replicated(MPI_Comm comm, Op op, KeysView const& keys, Values const& values, TableView const& table, scatter_options const& opt = {},
                        int root = all_ranks) {
  detail::replicated<S>(comm, op, keys.data(), detail::values_of(values), static_cast<index_t>(keys.extent(0)), table.data(),
                        static_cast<index_t>(table.extent(0)), opt, root, detail::view_trouble(keys, values, table));
}

/// scatter_partitioned over views: keys and values as scatter_replicated's, `part` this rank's entries
/// of a table of `bins` entries (its extent owner.size(rank)).
template <strategy S = strategy::automatic, class Owner = block_owner, class Op, class KeysView, class Values, class PartView,
          std::enable_if_t<detail::is_view<KeysView>::value && detail::is_view<PartView>::value, int> = 0>
exchange_report scatter_partitioned(MPI_Comm comm, Op op, KeysView const& keys, Values const& values, PartView const& part, index_t bins,
                                    scatter_options const& opt = {}) {
  std::string trouble = detail::view_trouble(keys, values, part);
  Owner const owner{bins, detail::size_of(comm)};
  index_t const mine = owner.size(detail::rank_of(comm));
  if (trouble.empty() && static_cast<index_t>(part.extent(0)) != mine)
    trouble = "this rank's part has " + std::to_string(part.extent(0)) + " entries; its owner map gives it " + std::to_string(mine);
  return detail::partitioned<S, Owner>(comm, op, keys.data(), detail::values_of(values), static_cast<index_t>(keys.extent(0)), part.data(), bins, opt,
                                       trouble);
}

}  // namespace mpi
}  // namespace calm
