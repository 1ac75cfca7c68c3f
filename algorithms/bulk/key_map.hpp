// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/key_map.hpp: how a bulk scatter turns what it loads into a table index: the key itself,
// or the bin of a sample under even binning (CUB's HistogramEven). Index -1 (or >= bins) is skipped.
#pragma once

#include <type_traits>

#include "../../core/config.hpp"
#include "../../core/varying.hpp"

namespace calm {
namespace detail {

/// The key map of a plain scatter: the key is the table index.
struct identity_key {
  template <class K>
  CALM_HD index_t operator()(K k) const {
    if constexpr (std::is_signed<K>::value) return static_cast<index_t>(k);
    else return static_cast<index_t>(static_cast<std::make_unsigned_t<K>>(k));
  }
};

/// The key map of an even histogram (CUB's HistogramEven): samples in [lower, upper) fall in `bins`
/// bins of equal width, the others map to -1 (skipped).
template <class S>
struct even_bin_key {
  double lower, upper, scale;  // scale = bins / (upper - lower)
  index_t bins;
  CALM_HD index_t operator()(S s) const {
    double const x = static_cast<double>(s);
    if (!(x >= lower && x < upper)) return -1;  // NaN too
    index_t const b = static_cast<index_t>((x - lower) * scale);
    return b < bins ? b : bins - 1;  // rounding just below upper
  }
};

/// Keys mapped to table indices for the active lanes (-1 or >= bins: outside the table).
template <class Map, class Warp, class K>
CALM_HD auto map_keys(Warp const&, Map const& m, K const& k) {
  return map([m](auto x) { return m(x); }, k);
}

}  // namespace detail
}  // namespace calm
