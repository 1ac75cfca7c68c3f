// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/arguments.hpp: the argument checks of the bulk calls, made before anything is launched.
// The checks are plain functions over numbers and null tests; the call's types only read them out.
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>

#include "../../core/error.hpp"
#include "../../core/exec.hpp"

namespace calm {
namespace detail {

/// The sizes of a bulk scatter: n and bins non-negative and small enough that no size computed from
/// them overflows (n <= 2^62 keys, bins <= 2^48 entries); else calm::error naming who.
inline void check_scatter_sizes(char const* who, index_t n, index_t bins) {
  require(n >= 0, errc::invalid_argument, [&] { return std::string(who) + ": n = " + std::to_string(n) + " is negative"; });
  require(bins >= 0, errc::invalid_argument, [&] { return std::string(who) + ": negative table size " + std::to_string(bins); });
  require(n <= (index_t(1) << 62), errc::out_of_range, [&] { return std::string(who) + ": n = " + std::to_string(n) + " is more keys than calm indexes (2^62)"; });
  require(bins <= (index_t(1) << 48), errc::out_of_range,
          [&] { return std::string(who) + ": a table of " + std::to_string(bins) + " entries is larger than calm indexes (2^48)"; });
}

/// The sizes, and the arrays a bulk scatter reads and writes: keys where n > 0, the table where bins > 0,
/// values where n > 0 and the values are an array (`values_array`).
inline void check_scatter_arrays(char const* who, index_t n, index_t bins, bool keys_null, bool values_array, bool values_null, bool table_null) {
  check_scatter_sizes(who, n, bins);
  require(n == 0 || !keys_null, errc::invalid_argument, [&] { return std::string(who) + ": keys is null"; });
  require(bins == 0 || !table_null, errc::invalid_argument, [&] { return std::string(who) + ": table is null"; });
  require(n == 0 || !values_array || !values_null, errc::invalid_argument, [&] { return std::string(who) + ": values is null"; });
}

/// The argument checks every bulk scatter makes before launching (the table size is checked by the plan).
template <class K, class Values, class T>
void check_scatter_arguments(char const* who, index_t n, K const* keys, Values const& values, T const* table, index_t bins) {
  bool values_null = false;
  if constexpr (std::is_pointer<Values>::value) values_null = values == nullptr;
  check_scatter_arrays(who, n, bins, keys == nullptr, std::is_pointer<Values>::value, values_null, table == nullptr);
}

/// A bulk call's options and its strategy's room, its types read into numbers: min_line_repeats not
/// NaN; a block-local strategy (`block_local`) only on a table that fits a block (`fits_block`, of
/// `block_capacity` entries); cluster_privatize over clusters (`cluster_capacity` >= 0) only on a table
/// that fits a cluster.
inline void check_bulk_options(char const* who, char const* strategy_name, index_t bins, float min_line_repeats, bool block_local, bool fits_block,
                               std::size_t entry_bytes, index_t block_capacity, index_t cluster_capacity) {
  require(min_line_repeats == min_line_repeats, errc::invalid_argument,  // NaN
          [&] { return std::string(who) + ": min_line_repeats is NaN; give a number of repeats, or a negative value for the exec's default"; });
  require(!block_local || fits_block, errc::out_of_range,
          [&] { return std::string(who) + ": strategy " + strategy_name + " needs the table in one block's memory; " + std::to_string(bins) + " entries of " +
              std::to_string(entry_bytes) + " bytes exceed " + std::to_string(block_capacity); });
  require(cluster_capacity < 0 || bins <= cluster_capacity, errc::out_of_range,
          [&] { return std::string(who) + ": strategy cluster_privatize needs the table in one cluster's memory; " + std::to_string(bins) + " entries exceed " +
              std::to_string(cluster_capacity); });
}

}  // namespace detail
}  // namespace calm
