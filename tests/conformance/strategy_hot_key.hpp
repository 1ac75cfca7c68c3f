// SPDX-License-Identifier: Apache-2.0
// Conformance: hot_key_scatter (hot table lines matched into a block-local cache, the rest merged by
// peer_reduce into the device table) against the sequential reference: ops and types, key kinds, tables
// from one entry to 2^20, cache sizes, line lengths and vote thresholds, keys outside the table, and the
// errors it gives.
#pragma once

#include <array>

#include "../support/scatter_reference.hpp"

namespace calm_test {

template <class Op, class T, class K = std::uint32_t>
void check_hot_key(keys_kind kind, index_t n, index_t bins, calm::hot_key_options opt = {}, bool weighted = true, bool stray = false,
                   int key_offset = 0) {
  auto g = rng(8111 + static_cast<int>(kind) * 17 + n + bins * 5 + opt.slots + opt.votes + opt.line_entries * 3);
  auto keys = table_keys<K>(n + key_offset, kind, bins, g, stray);
  auto vals = random_operands<Op, T>(n, g);
  auto init = random_operands<Op, T>(bins, g);
  buffer<K> dkeys(keys);
  buffer<T> dvals(vals), table(init);
  INFO("hot keys: " << to_string(kind) << ", n " << n << ", bins " << bins << ", slots " << opt.slots << ", votes " << opt.votes
                    << ", line " << opt.line_entries << ", threads " << opt.threads << ", weighted " << weighted << ", stray " << stray << ", offset " << key_offset);
  K const* pk = dkeys.data() + key_offset;
  if (weighted) {
    calm::hot_key_scatter(Op{}, pk, static_cast<T const*>(dvals.data()), n, table.data(), bins, opt, exec{});
  } else {
    T const one = vals.empty() ? T(1) : vals[0];
    calm::hot_key_scatter(Op{}, pk, calm::constant(one), n, table.data(), bins, opt, exec{});
    std::fill(vals.begin(), vals.end(), one);
  }
  synchronize();
  std::vector<K> used(keys.begin() + key_offset, keys.end());
  verify_scatter<Op, T>(init, used, vals, table.download(), "hot_key_scatter");
}

}  // namespace calm_test

TEST_CASE("hot_key_scatter: ops, types, key kinds and table sizes", "[strategy][hot_key]") {
  using namespace calm_test;
  index_t const n = GENERATE(0, 1, 1001, 40003);
  index_t const bins = GENERATE(1, 7, 4099, 1 << 20);
  keys_kind const kind = GENERATE(from_range(all_key_kinds()));
  CAPTURE(name, warp_size());
  check_hot_key<calm::plus, std::uint32_t>(kind, n, bins, {}, false);
  check_hot_key<calm::plus, float>(kind, n, bins);
  check_hot_key<calm::max, std::int32_t, std::int32_t>(kind, n, bins, {}, true, true);
  check_hot_key<calm::min, double, std::uint16_t>(kind, n, std::min<index_t>(bins, 65536));
}

TEST_CASE("hot_key_scatter: cache sizes, line lengths, vote thresholds, block sizes, unaligned keys", "[strategy][hot_key]") {
  using namespace calm_test;
  int const slots_i = GENERATE(0, 1, 2, 3), line_i = GENERATE(0, 1, 2), votes_i = GENERATE(0, 1, 2), threads_i = GENERATE(0, 1, 2);
  int const kind_i = GENERATE(0, 1, 2, 3);
  if (!runs_in_this_build(static_cast<std::size_t>(slots_i + line_i + votes_i + threads_i + kind_i), 3)) return;
  int const slots = std::array<int, 4>{2, 16, 256, 4096}[slots_i], line = std::array<int, 3>{1, 32, 64}[line_i];
  int const votes = std::array<int, 3>{1, 2, 33}[votes_i], threads = std::array<int, 3>{32, 100, 512}[threads_i];
  keys_kind const kind = std::array<keys_kind, 4>{keys_kind::uniform_many, keys_kind::runs, keys_kind::hot, keys_kind::zipf}[kind_i];
  calm::hot_key_options opt{slots, votes, threads};
  opt.line_entries = line;
  CAPTURE(name, warp_size(), slots, line, votes, threads, to_string(kind));
  if (calm::detail::hot_key_layout<std::uint64_t>{slots, line}.bytes() > exec{}.block_local_bytes()) {  // too large a cache: refused
    std::vector<std::uint64_t> init(64, 7);
    buffer<std::int64_t> dk(std::vector<std::int64_t>(100, 3));
    buffer<std::uint64_t> table(init);
    REQUIRE_THROWS_AS(calm::hot_key_scatter(calm::plus{}, dk.data(), calm::constant(std::uint64_t(1)), 100, table.data(), 64, opt, exec{}), calm::error);
    synchronize();
    require_equal(table.download(), init, "table after a refused cache size");
    return;
  }
  check_hot_key<calm::plus, std::uint64_t, std::int64_t>(kind, 30011, 5000, opt, true, true, 1);
  check_hot_key<calm::plus, float>(kind, 30011, 5000, opt);
  check_hot_key<calm::bit_or, std::uint32_t>(kind, 30011, 100001, opt);
}

TEST_CASE("hot_key_scatter: slots 0 takes the most slots that fit a block and 80 KiB, up to 512", "[strategy][hot_key]") {
  using namespace calm_test;
  using calm::detail::hot_key_layout;
  using calm::detail::hot_key_slots_for;
  calm::hot_key_options opt;
  REQUIRE(opt.slots == 0);
  // 512 slots of 32 4-byte entries (64 KiB of values) and their line numbers: more than 64 KiB, less than 96
  CHECK(hot_key_slots_for<std::uint32_t>(opt, std::size_t(96) << 10) == 512);
  CHECK(hot_key_slots_for<std::uint32_t>(opt, std::size_t(64) << 10) == 256);
  CHECK(hot_key_slots_for<double>(opt, std::size_t(64) << 10) == 128);
  CHECK(hot_key_slots_for<std::uint32_t>(opt, std::size_t(64) << 20) == 512);
  CHECK(hot_key_slots_for<double>(opt, std::size_t(64) << 20) == 256);  // 512 would take 139 KiB
  CHECK(hot_key_slots_for<double>(opt, 100) == 2);  // nothing fits: the smallest cache, which hot_key_scatter then refuses
  for (int line : {1, 8, 32, 64})
    for (std::size_t bytes : {std::size_t(3000), std::size_t(48) << 10, std::size_t(227) << 10, std::size_t(64) << 20}) {
      opt.line_entries = line;
      int const s = hot_key_slots_for<float>(opt, bytes);
      CAPTURE(line, bytes, s);
      CHECK((s >= 2 && s <= 512 && (s & (s - 1)) == 0));
      std::size_t const most = std::min(bytes, calm::detail::hot_key_auto_bytes);
      CHECK((s == 2 || hot_key_layout<float>{s, line}.bytes() <= most));
      CHECK((s == 512 || hot_key_layout<float>{2 * s, line}.bytes() > most));
    }
  calm::hot_key_options set;
  set.slots = 16;
  CHECK(hot_key_slots_for<double>(set, std::size_t(64) << 20) == 16);
  // the default runs on this backend, whatever its block-local memory, and its result is exact
  CAPTURE(name, warp_size());
  for (int line : {1, 64}) {
    calm::hot_key_options o;
    o.line_entries = line;
    check_hot_key<calm::plus, double>(keys_kind::zipf, 50021, 300007, o);
    check_hot_key<calm::plus, std::uint32_t>(keys_kind::uniform_many, 50021, 70001, o, false);
  }
}

TEST_CASE("hot_key_scatter: bad input throws before launching and leaves the table as it was", "[strategy][hot_key]") {
  using namespace calm_test;
  std::vector<float> init(16, 2.5f);
  buffer<std::uint32_t> dk(std::vector<std::uint32_t>(100, 3));
  buffer<float> vals(std::vector<float>(100, 1.0f)), table(init);
  auto scatter = [&](index_t n, std::uint32_t const* k, float* t, index_t bins, calm::hot_key_options o) {
    calm::hot_key_scatter(calm::plus{}, k, static_cast<float const*>(vals.data()), n, t, bins, o, exec{});
  };
  REQUIRE_THROWS_AS(scatter(-1, dk.data(), table.data(), 16, {}), calm::error);
  REQUIRE_THROWS_AS(scatter(100, nullptr, table.data(), 16, {}), calm::error);
  REQUIRE_THROWS_AS(scatter(100, dk.data(), nullptr, 16, {}), calm::error);
  REQUIRE_THROWS_AS(scatter(100, dk.data(), table.data(), -1, {}), calm::error);
  REQUIRE_THROWS_AS(scatter(100, dk.data(), table.data(), 16, {100, 4, 256}), calm::error);
  REQUIRE_THROWS_AS(scatter(100, dk.data(), table.data(), 16, {256, 0, 256}), calm::error);
  REQUIRE_THROWS_AS(scatter(100, dk.data(), table.data(), 16, {256, 4, 0}), calm::error);
  for (int line : {0, 3, 128}) {
    calm::hot_key_options o;
    o.line_entries = line;
    REQUIRE_THROWS_AS(scatter(100, dk.data(), table.data(), 16, o), calm::error);
  }
  calm::hot_key_options huge{4096, 2, 256};
  huge.line_entries = 64;  // 4,096 x 64 floats: 1 MiB, more than a GPU block has (the host's blocks have 64 MiB)
  if (calm::detail::hot_key_layout<float>{huge.slots, huge.line_entries}.bytes() > exec{}.block_local_bytes())
    REQUIRE_THROWS_AS(scatter(100, dk.data(), table.data(), 16, huge), calm::error);
  synchronize();
  require_equal(table.download(), init, "table after rejected calls");
}
