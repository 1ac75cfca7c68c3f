// SPDX-License-Identifier: Apache-2.0
// Conformance: partitioned_scatter (items bucketed by range of the table, then each range privatized)
// against the sequential reference: ops, key kinds, keys outside the table, ranges forced small so
// that blocks' parts cross many ranges, the plan's workspace, and the errors it gives.
#pragma once

#include "../support/scatter_reference.hpp"

namespace calm_test {

/// key_offset, value_offset: the keys and values start that many items into their buffers (off a chunk's
/// alignment: items before the first chunk; values off the keys' alignment: every item one by one).
template <class Op, class T, class K = std::uint32_t>
void check_partitioned(keys_kind kind, index_t n, index_t bins, calm::partition_options opt = {}, bool weighted = true, bool stray = false,
                       index_t key_offset = 0, index_t value_offset = 0) {
  auto g = rng(7919 + static_cast<int>(kind) * 23 + n + bins * 3 + opt.range_entries);
  auto keys = table_keys<K>(n + key_offset, kind, bins, g, stray);
  auto vals = random_operands<Op, T>(n + value_offset, g);
  auto init = random_operands<Op, T>(bins, g);
  buffer<K> dkeys(keys);
  buffer<T> dvals(vals), table(init);
  keys.erase(keys.begin(), keys.begin() + key_offset);
  vals.erase(vals.begin(), vals.begin() + value_offset);
  K const* const pk = dkeys.data() + key_offset;
  INFO("partitioned: " << to_string(kind) << ", n " << n << ", bins " << bins << ", range entries " << opt.range_entries << ", threads "
                       << opt.threads << ", weighted " << weighted << ", stray " << stray << ", offsets " << key_offset << " " << value_offset);
  if (weighted) {
    calm::partitioned_scatter(Op{}, pk, static_cast<T const*>(dvals.data()) + value_offset, n, table.data(), bins, opt, exec{});
  } else {
    T const one = vals.empty() ? T(1) : vals[0];
    calm::partitioned_scatter(Op{}, pk, calm::constant(one), n, table.data(), bins, opt, exec{});
    std::fill(vals.begin(), vals.end(), one);
  }
  synchronize();
  verify_scatter<Op, T>(init, keys, vals, table.download(), "partitioned_scatter");
}

}  // namespace calm_test

TEST_CASE("partitioned_scatter: ops, key kinds, tables of one range and of many", "[strategy][partitioned]") {
  using namespace calm_test;
  keys_kind const kind = GENERATE(from_range(all_key_kinds()));
  index_t const n = GENERATE(0, 1, 3001, 70001);
  // ranges of the default size (one range on the host, where a block's memory is large) and of 64 and
  // 4,096 entries: tables of 1 to 1,563 ranges, the last one short
  index_t const bins = GENERATE(1, 5000, 100003);
  index_t const range = GENERATE(0, 64, 4096);
  CAPTURE(name, warp_size());
  check_partitioned<calm::plus, std::uint32_t>(kind, n, bins, {range, 0}, false);
  check_partitioned<calm::plus, float>(kind, n, bins, {range, 0});
  check_partitioned<calm::max, std::int32_t, std::int32_t>(kind, n, bins, {range, 0}, true, true);
}

TEST_CASE("partitioned_scatter: 8-byte values, narrow keys, block sizes, the plan and errors", "[strategy][partitioned]") {
  using namespace calm_test;
  int const threads = GENERATE(32, 100, 1024);
  CAPTURE(name, warp_size(), threads);
  check_partitioned<calm::plus, double>(keys_kind::hot, 20011, 9001, {128, threads});
  check_partitioned<calm::bit_xor, std::uint64_t, std::uint16_t>(keys_kind::runs, 20011, 9001, {256, threads});
  check_partitioned<calm::min, std::int64_t, std::int64_t>(keys_kind::uniform_many, 20011, 9001, {1024, threads}, true, true);
  check_partitioned<calm::plus, std::uint64_t, std::uint8_t>(keys_kind::uniform_many, 20011, 256, {16, threads}, false, true);
  // keys off their chunks (a head of single items), values off the keys' alignment (every item one by one): the
  // counting and bucketing passes must still give each block the same items
  for (index_t key_offset : {1, 3})
    for (index_t value_offset : {0, 1, 2}) {
      check_partitioned<calm::plus, float>(keys_kind::hot, 20011, 9001, {128, threads}, true, false, key_offset, value_offset);
      check_partitioned<calm::max, std::int32_t, std::int32_t>(keys_kind::uniform_many, 70001, 100003, {1024, threads}, true, true, key_offset, value_offset);
    }

  // the plan: ranges over the table, the workspace (counts, then an entry and, weighted, a value per item)
  calm::partition_plan const p = calm::plan_partitioned<float>(100000, 100003, false, {1024, 0}, exec{});
  CHECK(p.range_entries == 1024);
  CHECK(p.shift == 10);
  CHECK(p.ranges == 98);
  CHECK(p.values_at > 0);
  CHECK(p.bytes >= p.values_at + 100000 * sizeof(float));
  calm::partition_plan const counting = calm::plan_partitioned<float>(100000, 100003, true, {1024, 0}, exec{});
  CHECK(counting.values_at == 0);
  CHECK(counting.bytes < p.bytes);

  // bad input: nothing written
  std::vector<float> init(8, 1.0f);
  buffer<float> table(init);
  buffer<std::uint32_t> k(std::vector<std::uint32_t>(10, 1));
  REQUIRE_THROWS_AS(calm::partitioned_scatter(calm::plus{}, k.data(), calm::constant(1.0f), 10, table.data(), 8, {48, 0}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::partitioned_scatter(calm::plus{}, k.data(), calm::constant(1.0f), 10, table.data(), 8, {0, 2000}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::partitioned_scatter(calm::plus{}, k.data(), calm::constant(1.0f), -1, table.data(), 8, {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::partitioned_scatter(calm::plus{}, k.data(), calm::constant(1.0f), 10, static_cast<float*>(nullptr), 8, {}, exec{}),
                    calm::error);
  synchronize();
  require_equal(table.download(), init, "table after rejected calls");
}
