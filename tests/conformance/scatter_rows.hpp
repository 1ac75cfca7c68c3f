// SPDX-License-Identifier: Apache-2.0
// Conformance: scatter_rows (rows of d components into a table of rows) against the sequential fold of each
// component, for every method, several ops, types and widths d (under, at and over a warp), every key
// distribution, ragged sizes, keys outside the table and at the extremes of their type, overwrite, and bad input.
#pragma once

#include <vector>

#include "../support/scatter_reference.hpp"

namespace calm_test {

/// One scatter_rows call on fresh keys and rows, checked against verify_atomics over the components.
/// warps (n > 0, no overwrite): the GPU's program itself, grouped (peer_reduce) or not (naive), whatever
/// the backend runs for the method.
template <class Op, class T, class K>
void check_rows(calm::rows_method method, keys_kind kind, index_t n, int d, index_t rows, bool overwrite, bool warps = false) {
  auto g = rng(1234 + static_cast<int>(kind) * 7 + static_cast<int>(n) * 3 + d * 11 + static_cast<int>(rows) * 13 + static_cast<int>(method) * 101);
  auto const keys = table_keys<K>(static_cast<std::size_t>(n), kind, rows, g, true);
  auto const vals = random_operands<Op, T>(static_cast<std::size_t>(n * d), g);
  auto init = random_operands<Op, T>(static_cast<std::size_t>(rows * d), g);
  buffer<K> dk(keys);
  buffer<T> dv(vals), dt(init);
  calm::rows_options opt;
  opt.method = method;
  opt.overwrite = overwrite;
  INFO("scatter_rows " << calm::to_string(method) << ", " << to_string(kind) << ", n " << n << ", d " << d << ", rows " << rows << ", overwrite "
                       << overwrite << ", " << sizeof(K) << "-byte keys");
  calm::detail::rows_args<Op, K, T> const args{Op{}, dk.data(), dv.data(), n, d, rows, dt.data()};
  if (warps && method == calm::rows_method::naive)
    calm::detail::launch_rows_warps<false>(args, exec{});
  else if (warps)
    calm::detail::launch_rows_warps<true>(args, exec{});
  else
    calm::scatter_rows(Op{}, static_cast<K const*>(dk.data()), static_cast<T const*>(dv.data()), n, d, dt.data(), rows, opt, exec{});
  synchronize();
  if (overwrite) std::fill(init.begin(), init.end(), Op::template identity<T>());
  std::vector<T> kept;
  std::vector<index_t> slot;
  for (index_t i = 0; i < n; ++i) {
    long long const k = static_cast<long long>(keys[static_cast<std::size_t>(i)]);
    if (k < 0 || k >= rows) continue;
    for (int c = 0; c < d; ++c) kept.push_back(vals[static_cast<std::size_t>(i * d + c)]), slot.push_back(static_cast<index_t>(k * d + c));
  }
  verify_atomics<Op, T>(init, kept, slot, dt.download(), nullptr, "scatter_rows");
}

}  // namespace calm_test

TEST_CASE("scatter_rows: rows of d components against a sequential fold, every method", "[bulk][rows]") {
  using namespace calm_test;
  std::size_t const mi = GENERATE(range(0, 5));
  std::size_t const ki = GENERATE(range(0, 4));
  index_t const n = GENERATE(0, 1, 45, 3001);
  int const d = GENERATE(1, 3, 33, 70);
  index_t const rows = GENERATE(1, 17, 2000);
  if (!runs_in_this_build(mi + ki + static_cast<std::size_t>(d % 5), 3)) return;
  auto const method = static_cast<calm::rows_method>(mi);
  keys_kind const kind = std::vector<keys_kind>{keys_kind::uniform_few, keys_kind::hot, keys_kind::runs, keys_kind::zipf}[ki];
  CAPTURE(name, warp_size());
  check_rows<calm::plus, float, std::int32_t>(method, kind, n, d, rows, false);
  check_rows<calm::plus, double, std::uint64_t>(method, kind, n, d, rows, ki % 2 == 1);
  check_rows<calm::max, std::int32_t, std::int64_t>(method, kind, n, d, rows, ki % 2 == 0);
  check_rows<calm::min, float, std::uint32_t>(method, kind, n, d, rows, false);
  if (n > 0 && mi <= 2) check_rows<calm::plus, double, std::int32_t>(method, kind, n, d, rows, false, true);
}

TEST_CASE("scatter_rows: enough items for every thread of a CPU's thread_private", "[bulk][rows]") {
  using namespace calm_test;
  std::size_t const mi = GENERATE(range(0, 5));
  int const d = GENERATE(2, 5);
  index_t const rows = GENERATE(17, 2000);
  CAPTURE(name, warp_size());
  auto const method = static_cast<calm::rows_method>(mi);
  check_rows<calm::plus, float, std::int32_t>(method, keys_kind::zipf, 50001, d, rows, false);
  check_rows<calm::max, std::int64_t, std::uint32_t>(method, keys_kind::uniform_many, 40003, d, rows, true);
}

TEST_CASE("scatter_rows: bad arguments throw before anything is written", "[bulk][rows]") {
  using namespace calm_test;
  std::vector<float> const t0{1, 2, 3, 4, 5, 6};
  buffer<float> table(t0), vals(std::vector<float>{10, 20, 30, 40});
  buffer<int> keys(std::vector<int>{2, 0});
  int const* k = keys.data();
  float const* v = vals.data();
  REQUIRE_THROWS_AS(calm::scatter_rows(calm::plus{}, k, v, -1, 2, table.data(), 3, {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::scatter_rows(calm::plus{}, k, v, 2, 0, table.data(), 3, {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::scatter_rows(calm::plus{}, k, v, 2, 2, table.data(), -3, {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::scatter_rows(calm::plus{}, static_cast<int const*>(nullptr), v, 2, 2, table.data(), 3, {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::scatter_rows(calm::plus{}, k, static_cast<float const*>(nullptr), 2, 2, table.data(), 3, {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::scatter_rows(calm::plus{}, k, v, 2, 2, static_cast<float*>(nullptr), 3, {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::scatter_rows(calm::plus{}, k, v, index_t(1) << 40, 1 << 30, table.data(), 3, {}, exec{}), calm::error);
  calm::rows_options bad;
  bad.method = static_cast<calm::rows_method>(9);
  bad.overwrite = true;
  REQUIRE_THROWS_AS(calm::scatter_rows(calm::plus{}, k, v, 2, 2, table.data(), 3, bad, exec{}), calm::error);
  synchronize();
  require_equal(table.download(), t0, "table after rejected calls");
  // empty ranges with null pointers are accepted; an overwrite of no rows still sets the table
  calm::scatter_rows(calm::plus{}, static_cast<int const*>(nullptr), static_cast<float const*>(nullptr), 0, 2, table.data(), 3, {}, exec{});
  calm::rows_options over;
  over.overwrite = true;
  calm::scatter_rows(calm::max{}, static_cast<int const*>(nullptr), static_cast<float const*>(nullptr), 0, 2, table.data(), 3, over, exec{});
  synchronize();
  std::vector<float> const lowest(6, calm::max::identity<float>());
  require_equal(table.download(), lowest, "an overwrite of no rows");
  calm::scatter_rows(calm::plus{}, k, v, 2, 2, table.data(), 3, over, exec{});
  synchronize();
  require_equal(table.download(), std::vector<float>{30, 40, 0, 0, 10, 20}, "two rows into a fresh table");
}
