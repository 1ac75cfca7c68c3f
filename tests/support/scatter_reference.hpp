// The reference of the bulk scatters (privatize_scatter, hot_key_scatter): keys folded into a table of
// any size, some outside it, and the sequential fold that skips those.
#pragma once

#include "atomic_reference.hpp"
#include "keys.hpp"

namespace calm_test {

/// The reference: keys outside [0, bins) are skipped, the rest fold into the table in index order.
template <class Op, class T, class K>
void verify_scatter(std::vector<T> const& init, std::vector<K> const& keys, std::vector<T> const& vals,
                    std::vector<T> const& got, char const* what) {
  std::vector<T> kept;
  std::vector<index_t> slot;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    long long const k = static_cast<long long>(keys[i]);
    if (k < 0 || k >= static_cast<long long>(init.size())) continue;
    kept.push_back(vals[i]);
    slot.push_back(static_cast<index_t>(k));
  }
  verify_atomics<Op, T>(init, kept, slot, got, nullptr, what);
}

/// Keys of `kind` folded into [0, bins); with `stray`, about 1 in 50 lands outside the table.
template <class K, class G>
std::vector<K> table_keys(std::size_t n, keys_kind kind, index_t bins, G& g, bool stray) {
  std::uint32_t kind_bins = 0;
  auto raw = make_keys(n, kind, g, kind_bins);
  std::vector<K> keys(n);
  std::uniform_int_distribution<int> pick(0, 49);
  for (std::size_t i = 0; i < n; ++i) {
    keys[i] = static_cast<K>(raw[i] % static_cast<std::uint64_t>(bins));
    if (stray && pick(g) == 0) keys[i] = std::is_signed<K>::value && (i & 1) ? static_cast<K>(-1 - static_cast<long long>(i % 5)) : static_cast<K>(bins + i % 3);
  }
  return keys;
}

}  // namespace calm_test
