// Conformance: bulk calls at the edges of their key types: keys at the extremes of 8- to 64-bit types,
// signed and unsigned (a -1 stored unsigned, 2^63 and above, INT64_MIN, 2^32 + 3), through every
// strategy, against the sequential reference: keys outside the table are skipped and counted, none lands
// in an entry or outside the table's memory.
#pragma once

#include <limits>

#include "../support/bulk_check.hpp"

namespace calm_test {

/// n keys of K, most in [0, bins), the rest the type's extremes and values whose low bits name an entry.
template <class K>
std::vector<K> extreme_keys(std::size_t n, index_t bins, std::mt19937_64& g) {
  using lim = std::numeric_limits<K>;
  std::vector<K> odd = {lim::max(), lim::min(), static_cast<K>(lim::max() - 1), static_cast<K>(bins), static_cast<K>(~K(0))};
  if (sizeof(K) == 8) {
    odd.push_back(static_cast<K>((std::uint64_t(1) << 63) + 3));
    odd.push_back(static_cast<K>((std::uint64_t(1) << 32) + 3));
    odd.push_back(static_cast<K>(std::uint64_t(1) << 32));
  }
  if (sizeof(K) >= 4) odd.push_back(static_cast<K>((std::uint64_t(1) << 31) + 1));
  std::vector<K> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = (g() & 3) == 0 ? odd[g() % odd.size()] : static_cast<K>(g() % static_cast<std::uint64_t>(bins));
  return keys;
}

/// A histogram of extreme_keys<K> through strategy s into `bins` entries, against the reference, with the
/// keys outside counted.
template <class K>
void check_extreme_keys(calm::strategy s, index_t n, index_t bins) {
  auto g = rng(8101 + static_cast<int>(s) * 7 + n + bins + sizeof(K) * 131 + std::is_signed<K>::value);
  auto const keys = extreme_keys<K>(static_cast<std::size_t>(n), bins, g);
  auto const init = random_operands<calm::plus, std::uint32_t>(static_cast<std::size_t>(bins), g);
  buffer<K> dk(keys);
  buffer<std::uint32_t> table(init);
  buffer<std::uint64_t> skipped(1);
  skipped.fill_bytes(0);
  calm::scatter_options opt;
  opt.skipped = skipped.data();
  INFO(calm::to_string(s) << ": " << sizeof(K) << "-byte " << (std::is_signed<K>::value ? "signed" : "unsigned") << " keys, n " << n << ", bins " << bins);
  calm::for_strategy(s, [&](auto c) { calm::histogram<c()>(static_cast<K const*>(dk.data()), n, table.data(), bins, opt, exec{}); });
  synchronize();
  std::vector<std::uint32_t> ones(keys.size(), 1u), want = init;
  std::uint64_t outside = 0;
  for (K k : keys) {
    bool const in = std::is_signed<K>::value ? (static_cast<long long>(k) >= 0 && static_cast<long long>(k) < bins)
                                             : static_cast<unsigned long long>(k) < static_cast<unsigned long long>(bins);
    if (in) ++want[static_cast<std::size_t>(k)];
    else ++outside;
  }
  require_equal(table.download(), want, "histogram of keys at their type's extremes");
  CHECK(skipped.download()[0] == outside);
}

}  // namespace calm_test

TEST_CASE("bulk calls: keys at the extremes of their type are skipped and counted by every strategy", "[bulk][edges]") {
  using namespace calm_test;
  calm::strategy const s = GENERATE(from_range(all_strategies()));
  index_t const n = GENERATE(1, 1001, 40003);
  index_t const bins = GENERATE(8, 4099);
  CAPTURE(name, warp_size());
  if (calm::is_block_local(s) && bins > calm::privatize_capacity<std::uint32_t>(exec{})) return;
  check_extreme_keys<std::uint64_t>(s, n, bins);
  check_extreme_keys<std::int64_t>(s, n, bins);
  check_extreme_keys<std::uint32_t>(s, n, bins);
  check_extreme_keys<std::int8_t>(s, n, bins);
}
