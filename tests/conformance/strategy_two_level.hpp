// SPDX-License-Identifier: Apache-2.0
// Conformance: reduce_idempotent, the four two-level schemes of 003 (naive, cull, block_reduce,
// block_atomic), against a sequential fold: idempotent ops and types, orders that defeat culling, ragged
// and unaligned inputs, n = 0, and the errors it gives before launching.
#pragma once

#include "../support/atomic_reference.hpp"

namespace calm_test {

enum class value_order { random, increasing, decreasing, equal };

template <class Op, class T>
void check_two_level(calm::two_level scheme, value_order order, index_t n, int offset, int threads) {
  auto g = rng(9001 + static_cast<int>(order) * 7 + n + offset + threads);
  auto vals = random_operands<Op, T>(n + offset, g);
  if (order == value_order::increasing) std::sort(vals.begin(), vals.end());
  if (order == value_order::decreasing) std::sort(vals.rbegin(), vals.rend());
  if (order == value_order::equal && !vals.empty()) std::fill(vals.begin(), vals.end(), vals[0]);
  T const init = random_operands<Op, T>(1, g)[0];
  buffer<T> dv(vals), out(std::vector<T>{init});
  calm::reduce_idempotent(Op{}, static_cast<T const*>(dv.data()) + offset, n, out.data(), scheme, threads, exec{});
  synchronize();
  Op op;
  T expect = init;
  for (index_t i = 0; i < n; ++i) expect = op(expect, vals[offset + i]);
  INFO("two-level " << to_string(scheme) << ", op " << op_name(op) << ", " << sizeof(T) << "-byte, order " << static_cast<int>(order)
                    << ", n " << n << ", offset " << offset << ", threads " << threads);
  require_equal(out.download(), std::vector<T>{expect}, "reduced value");
}

}  // namespace calm_test

TEST_CASE("reduce_idempotent: the four schemes of 003 against a sequential fold", "[strategy][two_level]") {
  using namespace calm_test;
  calm::two_level const scheme = GENERATE(calm::two_level::naive, calm::two_level::cull, calm::two_level::block_reduce, calm::two_level::block_atomic);
  value_order const order = GENERATE(value_order::random, value_order::increasing, value_order::decreasing, value_order::equal);
  index_t const n = GENERATE(0, 1, 37, 1001, 100003);
  int const offset = GENERATE(0, 1);
  int const threads = GENERATE(64, 100, 256);
  CAPTURE(name, warp_size());
  check_two_level<calm::max, std::int32_t>(scheme, order, n, offset, threads);
  check_two_level<calm::min, float>(scheme, order, n, offset, threads);
  check_two_level<calm::max, double>(scheme, order, n, offset, threads);
  check_two_level<calm::bit_or, std::uint64_t>(scheme, order, n, offset, threads);
  check_two_level<calm::bit_and, std::uint32_t>(scheme, order, n, offset, threads);
  check_two_level<calm::min, std::uint32_t>(scheme, order, n, offset, threads);
}

TEST_CASE("reduce_idempotent: bad input throws before launching", "[strategy][two_level]") {
  using namespace calm_test;
  buffer<float> v(std::vector<float>(10, 1.0f)), out(std::vector<float>{3.0f});
  float const* pv = v.data();
  REQUIRE_THROWS_AS(calm::reduce_idempotent(calm::max{}, pv, -1, out.data(), calm::two_level::block_reduce, 256, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::reduce_idempotent(calm::max{}, static_cast<float const*>(nullptr), 10, out.data(), calm::two_level::cull, 256, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::reduce_idempotent(calm::max{}, pv, 10, static_cast<float*>(nullptr), calm::two_level::naive, 256, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::reduce_idempotent(calm::max{}, pv, 10, out.data(), calm::two_level::naive, 0, exec{}), calm::error);
  synchronize();
  require_equal(out.download(), std::vector<float>{3.0f}, "result after rejected calls");
}
