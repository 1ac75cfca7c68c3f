// SPDX-License-Identifier: Apache-2.0
// Conformance: bulk calls at the edges of their key types: keys at the extremes of 8- to 64-bit types,
// signed and unsigned (a -1 stored unsigned, 2^63 and above, INT64_MIN, 2^32 + 3), through every
// strategy, against the sequential reference: keys outside the table are skipped and counted, none lands
// in an entry or outside the table's memory.
#pragma once

#include <cmath>
#include <limits>
#include <utility>

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

TEST_CASE("bulk calls: sizes that overflow, bounds that cannot bin, and errors that leave every output as it was", "[bulk][edges]") {
  using namespace calm_test;
  CAPTURE(name, warp_size());
  std::vector<std::uint32_t> const init{5, 6, 7, 8};
  buffer<std::uint32_t> keys(std::vector<std::uint32_t>{0, 1, 9, 3}), table(init);
  buffer<float> samples(std::vector<float>{0.5f, 1.5f, -1.0f, 2.0f});
  index_t const huge = index_t(1) << 62;
  // sizes no product of which may overflow: n near 2^63, tables of 2^62 entries, forced or automatic
  REQUIRE_THROWS_AS(calm::histogram(static_cast<std::uint32_t const*>(keys.data()), huge + 1, table.data(), 4, {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::histogram(static_cast<std::uint32_t const*>(keys.data()), std::numeric_limits<index_t>::max(), table.data(), 4, {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::histogram(static_cast<std::uint32_t const*>(keys.data()), 4, table.data(), huge, {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::histogram<calm::strategy::privatize>(static_cast<std::uint32_t const*>(keys.data()), 4, table.data(), huge, {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::privatize_scatter(calm::plus{}, static_cast<std::uint32_t const*>(keys.data()), calm::constant(1u), 4, table.data(), huge, {}, calm::naive{}, exec{}),
                    calm::error);
  std::vector<std::uint32_t> const host_keys{0};
  REQUIRE_THROWS_AS(calm::set_scatter(host_keys.data(), huge), calm::error);
  // histogram_even: infinite bounds, or finite ones whose width is not
  for (auto b : std::vector<std::pair<double, double>>{{-INFINITY, INFINITY}, {0.0, INFINITY}, {-1e308, 1e308}, {0.0, NAN}})
    REQUIRE_THROWS_AS(calm::histogram_even(static_cast<float const*>(samples.data()), 4, table.data(), 4, b.first, b.second, {}, exec{}), calm::error);
  synchronize();
  require_equal(table.download(), init, "the table after rejected calls");
  // a table of no entries: every key is outside it, and counted
  buffer<std::uint64_t> skipped(1);
  skipped.fill_bytes(0);
  calm::scatter_options opt;
  opt.skipped = skipped.data();
  calm::histogram(static_cast<std::uint32_t const*>(keys.data()), 4, table.data(), 0, opt, exec{});
  calm::histogram<calm::strategy::naive>(static_cast<std::uint32_t const*>(keys.data()), 3, table.data(), 0, opt, exec{});
  synchronize();
  CHECK(skipped.download()[0] == 7);
  // count_duplicates: a count table too large to make, or one a forced block-local strategy cannot take
  buffer<index_t> num(std::vector<index_t>{12345});
  buffer<std::uint32_t> unique(4), counts(4);
  calm::count_options unchecked;
  unchecked.check_indices = false;
  REQUIRE_THROWS_AS(calm::count_duplicates(static_cast<std::uint32_t const*>(keys.data()), 4, huge, unique.data(), counts.data(), num.data(), unchecked, exec{}),
                    calm::error);
  index_t const too_big = calm::privatize_capacity<std::uint32_t>(exec{}) + 1;
  REQUIRE_THROWS_AS(calm::count_duplicates<calm::strategy::privatize>(static_cast<std::uint32_t const*>(keys.data()), 4, too_big, unique.data(), counts.data(),
                                                                       num.data(), unchecked, exec{}),
                    calm::error);
  synchronize();
  CHECK(num.download()[0] == 12345);
  // reduce_idempotent of an unknown scheme; kmeans with no clusters for its points, or too many
  buffer<float> out(std::vector<float>{-1.0f});
  REQUIRE_THROWS_AS(calm::reduce_idempotent(calm::max{}, static_cast<float const*>(samples.data()), 4, out.data(), static_cast<calm::two_level>(7), 256, exec{}),
                    calm::error);
  buffer<float> sums(std::vector<float>(8, 0.0f));
  buffer<std::int32_t> assign(std::vector<std::int32_t>{0, 0}), cluster_counts(std::vector<std::int32_t>(4, 0));
  REQUIRE_THROWS_AS(calm::kmeans_update(static_cast<float const*>(samples.data()), static_cast<std::int32_t const*>(assign.data()), 2, 2, 0, sums.data(),
                                        cluster_counts.data(), {}, exec{}),
                    calm::error);
  REQUIRE_THROWS_AS(calm::kmeans_update(static_cast<float const*>(samples.data()), static_cast<std::int32_t const*>(assign.data()), 2, 2, huge, sums.data(),
                                        cluster_counts.data(), {}, exec{}),
                    calm::error);
  synchronize();
  CHECK(out.download()[0] == -1.0f);
  require_equal(sums.download(), std::vector<float>(8, 0.0f), "k-means sums after rejected calls");
}

TEST_CASE("bulk calls: signed integer sums wrap modulo 2^bits, as the hardware's atomic add", "[bulk][edges]") {
  using namespace calm_test;
  CAPTURE(name, warp_size());
  index_t const n = 40003;
  std::int32_t const v = std::int32_t(1) << 30;
  std::vector<std::uint32_t> keys(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = i % 5 == 0 ? 1u : 0u;
  std::vector<std::int32_t> const vals(keys.size(), v), init{-7, 3};
  std::vector<std::uint32_t> sum{static_cast<std::uint32_t>(init[0]), static_cast<std::uint32_t>(init[1])};
  for (std::uint32_t k : keys) sum[k] += static_cast<std::uint32_t>(v);
  std::vector<std::int32_t> const want{static_cast<std::int32_t>(sum[0]), static_cast<std::int32_t>(sum[1])};
  buffer<std::uint32_t> dk(keys);
  buffer<std::int32_t> dv(vals);
  auto check = [&](auto run, char const* what) {
    buffer<std::int32_t> table(init);
    run(table.data());
    synchronize();
    require_equal(table.download(), want, what);
  };
  auto const* k = static_cast<std::uint32_t const*>(dk.data());
  auto const* p = static_cast<std::int32_t const*>(dv.data());
  check([&](std::int32_t* t) { calm::scatter(calm::plus{}, k, p, n, t, 2, {}, exec{}); }, "automatic");
  check([&](std::int32_t* t) { calm::scatter<calm::strategy::privatize>(calm::plus{}, k, p, n, t, 2, {}, exec{}); }, "privatize");
  check([&](std::int32_t* t) { calm::scatter<calm::strategy::scan_reduce>(calm::plus{}, k, p, n, t, 2, {}, exec{}); }, "scan_reduce");
  check([&](std::int32_t* t) { calm::scatter<calm::strategy::peer_reduce>(calm::plus{}, k, calm::constant(v), n, t, 2, {}, exec{}); }, "peer_reduce, constant");
}
