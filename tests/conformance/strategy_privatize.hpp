// SPDX-License-Identifier: Apache-2.0
// Conformance: privatize_scatter (block-local tables with R copies, padding, cyclic and blocked mapping,
// lanes merged by each strategy) against the sequential reference: ops and types, key kinds, table
// sizes from 1 entry to what one block holds, ragged sizes, skipped keys, and the errors it gives.
#pragma once

#include "../support/scatter_reference.hpp"

namespace calm_test {

template <class Op, class T, class K = std::uint32_t, class Strategy = calm::naive>
void check_privatize(keys_kind kind, index_t n, index_t bins, calm::privatize_options opt = {}, Strategy strategy = {},
                     bool weighted = true, bool stray = false, int key_offset = 0) {
  auto g = rng(7001 + static_cast<int>(kind) * 13 + n + bins * 3 + opt.copies);
  auto keys = table_keys<K>(n + key_offset, kind, bins, g, stray);
  auto vals = random_operands<Op, T>(n, g);
  auto init = random_operands<Op, T>(bins, g);
  buffer<K> dkeys(keys);
  buffer<T> dvals(vals), table(init);
  K const* pk = dkeys.data() + key_offset;  // an offset of 1 makes the keys unaligned for chunk loads
  INFO("privatize: keys " << to_string(kind) << ", n " << n << ", bins " << bins << ", copies " << opt.copies << ", pad "
                          << opt.pad << ", " << to_string(opt.mapping) << ", threads " << opt.threads << ", weighted "
                          << weighted << ", stray " << stray << ", key offset " << key_offset);
  std::vector<K> used(keys.begin() + key_offset, keys.end());
  if constexpr (std::is_same<Strategy, calm::thread_counters>::value || std::is_same<Strategy, calm::lane_counters>::value) {  // counts only
    REQUIRE_FALSE(weighted);
    calm::privatize_scatter(Op{}, pk, calm::constant(vals.empty() ? T(1) : vals[0]), n, table.data(), bins, opt, strategy, exec{});
    std::fill(vals.begin(), vals.end(), vals.empty() ? T(1) : vals[0]);
  } else if (weighted) {
    calm::privatize_scatter(Op{}, pk, static_cast<T const*>(dvals.data()), n, table.data(), bins, opt, strategy, exec{});
  } else {
    calm::privatize_scatter(Op{}, pk, calm::constant(vals.empty() ? T(1) : vals[0]), n, table.data(), bins, opt, strategy, exec{});
    std::fill(vals.begin(), vals.end(), vals.empty() ? T(1) : vals[0]);
  }
  synchronize();
  verify_scatter<Op, T>(init, used, vals, table.download(), "privatize_scatter");
}

/// The blocks of privatize_scatter with adaptive_merge `m` that merge (m.merged_blocks set here) on
/// `keys` with `vals` (counting: calm::constant(1)) into a table of `bins` floats, one copy, `threads`
/// threads per block; the table must come out right every time.
inline std::uint32_t blocks_merged(std::vector<std::uint32_t> const& keys, std::vector<float> const& vals, index_t bins, int threads,
                                   calm::adaptive_merge m, bool counting) {
  index_t const n = static_cast<index_t>(keys.size());
  buffer<std::uint32_t> dkeys(keys), count(std::vector<std::uint32_t>(1, 0u));
  buffer<float> dvals(vals);
  std::vector<float> init(static_cast<std::size_t>(bins), 0.5f), used = vals;
  buffer<float> table(init);
  m.merged_blocks = count.data();
  calm::privatize_options const opt{1, 0, calm::copy_mapping::cyclic, threads};
  if (counting) {
    calm::privatize_scatter(calm::plus{}, dkeys.data(), calm::constant(1.0f), n, table.data(), bins, opt, m, exec{});
    std::fill(used.begin(), used.end(), 1.0f);
  } else {
    calm::privatize_scatter(calm::plus{}, dkeys.data(), static_cast<float const*>(dvals.data()), n, table.data(), bins, opt, m, exec{});
  }
  synchronize();
  verify_scatter<calm::plus, float>(init, keys, used, table.download(), "privatize_scatter, adaptive_merge");
  return count.download()[0];
}

}  // namespace calm_test

TEST_CASE("privatize_scatter: ops, types, key kinds and table sizes", "[strategy][privatize]") {
  using namespace calm_test;
  index_t const n = GENERATE(0, 1, 1001, 40003);
  index_t const bins = GENERATE(1, 7, 256, 4099);
  keys_kind const kind = GENERATE(from_range(all_key_kinds()));
  CAPTURE(name, warp_size());
  check_privatize<calm::plus, std::uint32_t>(kind, n, bins, {}, calm::naive{}, false);  // a +1 histogram
  check_privatize<calm::plus, float>(kind, n, bins);
  check_privatize<calm::plus, std::int64_t, std::int32_t>(kind, n, bins, {}, calm::naive{}, true, true);
  check_privatize<calm::max, std::int32_t, std::uint16_t>(kind, n, bins);
  check_privatize<calm::min, double>(kind, n, bins);
  check_privatize<calm::bit_xor, std::uint64_t, std::uint8_t>(kind, n, std::min<index_t>(bins, 256));
  check_privatize<calm::plus, std::uint32_t>(kind, n, bins, {}, calm::adaptive_merge{}, false);
  check_privatize<calm::plus, double>(kind, n, bins, {}, calm::adaptive_merge{});
  check_privatize<calm::plus, float>(kind, n, bins, {}, calm::adaptive_merge{2.0f, 2.0f, nullptr, 2.0f, 0.0f});  // hot keys by ballot
}

TEST_CASE("privatize_scatter: copies, padding, mapping, block sizes and merging strategies", "[strategy][privatize]") {
  using namespace calm_test;
  int const copies = GENERATE(1, 2, 3, 8, 32);
  int const pad = GENERATE(0, 1, 5);
  calm::copy_mapping const mapping = GENERATE(calm::copy_mapping::cyclic, calm::copy_mapping::blocked);
  int const threads = GENERATE(32, 100, 512, 1024);
  keys_kind const kind = GENERATE(keys_kind::uniform_many, keys_kind::runs, keys_kind::hot, keys_kind::image);
  calm::privatize_options const opt{copies, pad, mapping, threads};
  index_t const n = 5003;
  CAPTURE(name, warp_size());
  check_privatize<calm::plus, float>(kind, n, 300, opt);
  check_privatize<calm::plus, float>(kind, n, 300, opt, calm::peer_reduce{});
  check_privatize<calm::plus, std::uint32_t>(kind, n, 300, opt, calm::scan_reduce{}, false);
  check_privatize<calm::plus, float>(kind, n, 300, opt, calm::scan_reduce{});
  check_privatize<calm::max, std::int32_t>(kind, n, 33, opt, calm::vote_reduce<1>{});
  check_privatize<calm::plus, double>(kind, n, 33, opt, calm::vote_reduce<4>{});
  check_privatize<calm::plus, float>(kind, n, 300, opt, calm::adaptive_merge{});
  check_privatize<calm::max, std::int32_t>(kind, n, 33, opt, calm::adaptive_merge{0.0f, 0.0f});  // every block merges
  check_privatize<calm::plus, std::uint32_t>(kind, n, 300, opt, calm::adaptive_merge{0.0f, 0.0f}, false);  // a count: probe_block without the owners
  // the probe's hot keys merged by ballot in every block that has them (no share for every lane)
  calm::adaptive_merge const known{2.0f, 2.0f, nullptr, 2.0f, 0.0f};
  check_privatize<calm::plus, double>(kind, n, 300, opt, known);
  check_privatize<calm::min, std::int32_t>(kind, n, 33, opt, known);
  check_privatize<calm::plus, std::uint32_t>(kind, n, 300, opt, known, false);  // a count: never by known keys
}

TEST_CASE("privatize_scatter: peer_reduce matches no lanes where each lane of a warp has a copy of its own", "[strategy][privatize]") {
  using namespace calm_test;
  int const W = warp_size();
  index_t const n = 5003;
  CAPTURE(name, W);
  for (int copies : {1, W / 2, W, 2 * W}) {  // W is at least 8
    for (calm::copy_mapping mapping : {calm::copy_mapping::cyclic, calm::copy_mapping::blocked}) {
      calm::privatize_options const opt{copies, 1, mapping, 128};
      if constexpr (counting) reset_counts();
      check_privatize<calm::plus, float>(keys_kind::hot, n, 100, opt, calm::peer_reduce{});
      if constexpr (counting) {
        INFO("copies " << copies << (mapping == calm::copy_mapping::cyclic ? ", cyclic" : ", blocked"));
        // cyclic copies in a multiple of W: the lanes of a warp update W different copies, so no match;
        // otherwise a match per warp and item
        bool const own = mapping == calm::copy_mapping::cyclic && copies % W == 0;
        if (own) CHECK(read_counts().matches == 0u);
        else CHECK(read_counts().matches > 0u);
      }
    }
  }
}

TEST_CASE("privatize_scatter: adaptive_merge merges in the blocks whose probe finds a hot key, and only there", "[strategy][privatize]") {
  using namespace calm_test;
  index_t const n = GENERATE(3, 1001, 40003, 300007);
  int const threads = GENERATE(32, 100, 512);
  CAPTURE(name, warp_size(), n, threads);
  auto g = rng(7411 + n + threads);
  index_t const bins = 4099;
  std::vector<std::uint32_t> one(static_cast<std::size_t>(n), 17u), spread(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < spread.size(); ++i) spread[i] = static_cast<std::uint32_t>((i * 2654435761u) % bins);  // no key twice in 4,099
  std::vector<float> vals = random_operands<calm::plus, float>(n, g);
  buffer<float> dvals(vals);
  // the blocks that merge (every lane or their hot keys), for keys, thresholds (every share `share`, or
  // the weighted run share `run_share` where given) and values (counting: calm::constant)
  auto merged = [&](std::vector<std::uint32_t> const& keys, float share, bool counting = false, float run_share = -2.0f) {
    calm::adaptive_merge m;
    m.weighted_share = m.counting_share = m.known_key_share = share;
    m.weighted_run_share = run_share > -2.0f ? run_share : share;
    return blocks_merged(keys, vals, bins, threads, m, counting);
  };
  std::uint32_t const probed = merged(spread, 0.0f);  // share 0: every block with a probed tile merges
  CHECK(probed >= (n >= 4 ? 1u : 0u));              // n = 3 has no full chunk of four keys: nothing to probe
  CHECK(merged(one, 0.5f) == probed);                // one key: every probed block sees it everywhere
  CHECK(merged(one, 1.0f) == probed);                // ... all of its probed keys, so even a share of 1
  CHECK(merged(spread, 0.5f) == 0u);                 // no key twice: no block merges
  CHECK(merged(one, 1.01f) == 0u);                   // no share above 1
  // the defaults (a negative share): on a GPU the blocks of one key merge; on the host no block merges
  // (a host block runs on one core, where a hot key contends with nothing)
  bool const host = exec::family == calm::device_family::host;
  CHECK(merged(one, -1.0f) == (host ? 0u : probed));
  CHECK(merged(one, -1.0f, true) == (host ? 0u : probed));
  CHECK(merged(spread, -1.0f) == 0u);
  // no key twice: every offered key is counted exactly, once (a probe that counted keys by hash
  // bucket merged here: two keys of one bucket reach 5% of a block of 32 threads), and a key seen once
  // merges no block (a last tile of 16 chunks, n = 40,003 over 32 threads, gives each key 6%)
  CHECK(merged(spread, 0.05f, false, 1.01f) == 0u);
  // counting: a block merges on the lanes that share their warp's first key
  CHECK(merged(spread, 0.0f, true) == probed);
  CHECK(merged(one, 1.0f, true) == probed);  // every lane shares it
  CHECK(merged(spread, 0.5f, true) == 0u);   // no lane shares it (but the first)
  // values: a block also merges on its warps' largest groups, where no key is hot across the block:
  // runs of 256 equal keys (a warp's probed keys span at most two runs, so its largest group holds at
  // least half of them)
  std::vector<std::uint32_t> runs(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < runs.size(); ++i) runs[i] = static_cast<std::uint32_t>((i / 256) % bins);
  CHECK(merged(runs, 1.01f, false, 0.45f) == probed);
  CHECK(merged(runs, 1.01f, false, 1.01f) == 0u);
  CHECK(merged(spread, 1.01f, false, 0.1f) == 0u);  // groups of one key: 1/W of a full warp, 1/16 at most in these blocks
  // a table of two copies halves every share: a share of 0.6 per copy is out of reach
  buffer<std::uint32_t> dkeys(one), count(std::vector<std::uint32_t>(1, 0u));
  std::vector<float> init(static_cast<std::size_t>(bins), 0.5f);
  buffer<float> table(init);
  calm::privatize_scatter(calm::plus{}, dkeys.data(), static_cast<float const*>(dvals.data()), n, table.data(), bins,
                          calm::privatize_options{2, 1, calm::copy_mapping::cyclic, threads}, calm::adaptive_merge{0.6f, 0.6f, count.data(), 0.6f, 0.6f}, exec{});
  synchronize();
  verify_scatter<calm::plus, float>(init, one, vals, table.download(), "privatize_scatter, adaptive_merge, two copies");
  CHECK(count.download()[0] == 0u);
}

TEST_CASE("privatize_scatter: adaptive_merge's probe counts the key of the warps' largest groups where another key shares its slot", "[strategy][privatize]") {
  using namespace calm_test;
  // full first tiles of 512 threads (2,048 chunks of four keys), the probed key of chunk c its first:
  // warps of even index hold the hot key in their first W/4 lanes (an eighth of the probed keys),
  // warps of odd index a larger key of the hot key's owner slot in their first W/4 - 1 lanes (less
  // than 12%), the other keys distinct. The owner keeps the larger group: the hot key, counted
  // exactly, reaches a share of 12%; had the larger key won the slot, no block would merge.
  int const threads = 512, W = warp_size();
  CAPTURE(name, W);
  index_t const bins = 4099, n = 3 * threads * 4 * 4;
  std::uint32_t const hot = 5;
  std::uint32_t rival = hot + 1;
  while (calm::detail::probe_slot(rival) != calm::detail::probe_slot(hot)) ++rival;
  REQUIRE(rival < bins);
  std::vector<std::uint32_t> keys(static_cast<std::size_t>(n)), spread(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    std::size_t const c = i / 4, warp = c / static_cast<std::size_t>(W), lane = c % static_cast<std::size_t>(W);
    std::uint32_t other = static_cast<std::uint32_t>((i * 2654435761u) % bins);
    if (other == hot || other == rival) other = bins - 1;  // a filler key, at most twice a block
    spread[i] = static_cast<std::uint32_t>((i * 2654435761u) % bins);
    keys[i] = warp % 2 == 0 ? (lane < static_cast<std::size_t>(W / 4) ? hot : other) : (lane + 1 < static_cast<std::size_t>(W / 4) ? rival : other);
  }
  auto g = rng(7451 + W);
  std::vector<float> vals = random_operands<calm::plus, float>(n, g);
  calm::adaptive_merge every, at_12;
  every.weighted_share = every.weighted_run_share = 0.0f;
  at_12.weighted_share = 0.12f;
  at_12.weighted_run_share = at_12.known_key_share = 1.01f;
  std::uint32_t const probed = blocks_merged(spread, vals, bins, threads, every, false);
  CHECK(probed >= 1u);
  CHECK(blocks_merged(keys, vals, bins, threads, at_12, false) == probed);
  at_12.weighted_share = 0.13f;  // above an eighth: out of reach
  CHECK(blocks_merged(keys, vals, bins, threads, at_12, false) == 0u);
  // the same share for the hot key's lanes alone (known_keys), where no share for every lane is reached
  calm::adaptive_merge known;
  known.weighted_share = known.weighted_run_share = known.counting_share = 2.0f;
  known.known_key_share = 0.12f;
  CHECK(blocks_merged(keys, vals, bins, threads, known, false) == probed);
  CHECK(blocks_merged(keys, vals, bins, threads, known, true) == 0u);  // a count: never
  known.known_key_share = 0.13f;
  CHECK(blocks_merged(keys, vals, bins, threads, known, false) == 0u);
  CHECK(blocks_merged(spread, vals, bins, threads, known, false) == 0u);  // no key twice
  // the default: 4% per copy on a GPU; never on the host
  known.known_key_share = -1.0f;
  bool const host = exec::family == calm::device_family::host;
  CHECK(known.resolved(exec::family).known_key_share == (host ? calm::adaptive_merge::never : calm::adaptive_merge::gpu_known_key_share));
  CHECK(blocks_merged(keys, vals, bins, threads, known, false) == (host ? 0u : probed));  // one copy: 12% reaches 4%
}

TEST_CASE("privatize_scatter: adaptive_merge chooses between every lane, the hot keys and none from the probe", "[strategy][privatize]") {
  using choice = calm::adaptive_merge::choice;
  calm::adaptive_merge m;
  m.weighted_share = 0.075f, m.counting_share = 0.5f, m.weighted_run_share = 0.25f, m.known_key_share = 0.04f;
  auto const of = [&](calm::hot_key_probe const& p, int copies, bool counting = false) {
    choice const c = m.merge_for(p, copies, counting);
    return c.every_lane ? -1 : c.known;
  };
  using calm::index_t;
  auto const probe = [](index_t most, index_t next, index_t run, index_t first_run = 0, index_t third = 1) {
    calm::hot_key_probe p{most, 1024, run, 1024, first_run};
    p.hot[0] = 7, p.hot[1] = 9, p.next = next, p.third = third;
    return p;
  };
  // half the keys on one (its lanes are most of the warps' largest groups): that key alone, even where
  // merging every lane is reached (50% >= 7.5% per copy); two keys of a quarter each: both
  CHECK(of(probe(512, 2, 540), 1) == 1);
  CHECK(of(probe(512, 2, 540), 4) == 1);
  CHECK(of(probe(256, 250, 300), 1) == 2);
  CHECK(of(probe(256, 30, 300), 4) == 1);  // the second below 4% of 4 copies
  CHECK(of(probe(256, 250, 300), 8) == 0);  // 25% below 4% of 8 copies: and below 7.5% of them, so nothing
  // runs of equal keys: the warps' largest groups are more than twice the hot keys' updates: every lane
  CHECK(of(probe(64, 60, 1024), 1) == -1);
  CHECK(of(probe(500, 2, 1000), 1) == 1);   // twice the hot key exactly: still the hot key
  CHECK(of(probe(500, 2, 1001), 1) == -1);
  CHECK(of(probe(64, 60, 200), 1) == 2);    // groups below the run share (25%): the hot keys
  // a third key of the share: more hot keys than two (four runs in the tile): every lane where merges()
  CHECK(of(probe(256, 256, 1024, 0, 256), 1) == -1);
  CHECK(of(probe(256, 256, 300, 0, 256), 1) == -1);  // 25% >= 7.5% of one copy
  CHECK(of(probe(64, 60, 200, 0, 50), 1) == 0);      // under 7.5% and the run share: none
  CHECK(of(probe(64, 60, 200, 0, 40), 1) == 2);      // the third below 4%
  // half the lanes share their warp's first key (sorted keys): the hot keys of this tile are not those
  // of the next, so every lane where merges() (here 50% >= 7.5%), else none
  CHECK(of(probe(512, 2, 540, 512), 1) == -1);
  CHECK(of(probe(512, 2, 540, 511), 1) == 1);
  CHECK(of(probe(64, 60, 200, 600), 1) == 0);
  // no key twice, nothing probed, a count
  CHECK(of(probe(1, 1, 32), 1) == 0);
  CHECK(of(calm::hot_key_probe{}, 1) == 0);
  CHECK(of(probe(512, 2, 540, 600), 1, true) == -1);  // a count merges every lane on first runs, never by hot keys
  CHECK(of(probe(512, 2, 540, 100), 1, true) == 0);
  // could_merge: a key of half the updates reaches 4% per copy up to 12 copies; 7.5% of one key up to 13
  CHECK(m.could_merge(12, false));
  CHECK(m.could_merge(13, false));
  CHECK(!m.could_merge(14, false));
  m.weighted_share = 2.0f;
  CHECK(m.could_merge(12, false));
  CHECK(!m.could_merge(13, false));
  CHECK(m.could_merge(1, true));  // a count: 50% of first runs per copy, up to 2 copies; never by hot keys
  CHECK(!m.could_merge(3, true));
}

TEST_CASE("privatize_scatter: unaligned keys, keys outside the table, the largest table", "[strategy][privatize]") {
  using namespace calm_test;
  keys_kind const kind = GENERATE(from_range(all_key_kinds()));
  CAPTURE(name, warp_size());
  // keys one element off the 16-byte boundary go item by item
  check_privatize<calm::plus, float>(kind, 9999, 1000, {}, calm::naive{}, true, false, 1);
  check_privatize<calm::plus, std::uint32_t, std::uint32_t>(kind, 9999, 1000, {}, calm::peer_reduce{}, false, true, 3);
  // negative and too-large keys are skipped
  check_privatize<calm::plus, std::int32_t, std::int32_t>(kind, 20000, 64, {}, calm::naive{}, true, true);
  check_privatize<calm::plus, float, std::int64_t>(kind, 20000, 64, {}, calm::peer_reduce{}, true, true);
  // one copy of the largest table one block holds (capped on the host, whose blocks hold 64 MiB)
  index_t const cap = std::min<index_t>(calm::privatize_capacity<float>(exec{}), 1 << 20);
  check_privatize<calm::plus, float>(kind, 50000, cap, {1, 0, calm::copy_mapping::cyclic, 256});
  // adaptive_merge, every block merging; its probe's area beside the table, or over it where the
  // table fills the block (on a GPU the largest table does)
  check_privatize<calm::plus, float>(kind, 50000, cap, {1, 0, calm::copy_mapping::cyclic, 256}, calm::adaptive_merge{0.0f, 0.0f});
  index_t const cap_u32 = std::min<index_t>(calm::privatize_capacity<std::uint32_t>(exec{}), 1 << 20);
  check_privatize<calm::plus, std::uint32_t>(kind, 50000, cap_u32, {1, 0, calm::copy_mapping::cyclic, 256}, calm::adaptive_merge{0.0f, 0.0f}, false);
  check_privatize<calm::plus, std::uint32_t>(kind, 50000, 1000, {1, 0, calm::copy_mapping::cyclic, 256}, calm::adaptive_merge{0.0f, 0.0f}, false);
}

TEST_CASE("privatize_scatter<thread_counters>: key kinds and types, tables up to 256 entries, more keys than a counter holds", "[strategy][privatize]") {
  using namespace calm_test;
  keys_kind const kind = GENERATE(from_range(all_key_kinds()));
  index_t const bins = GENERATE(1, 7, 100, 256);
  CAPTURE(name, warp_size());
  calm::thread_counters const tc;
  for (index_t n : {0, 1, 999, 40003}) {
    check_privatize<calm::plus, std::uint32_t, std::uint8_t>(kind, n, bins, {}, tc, false);
    check_privatize<calm::plus, std::int64_t, std::int32_t>(kind, n, bins, {0, -1, calm::copy_mapping::cyclic, 32}, tc, false, true);
  }
  check_privatize<calm::plus, std::uint64_t, std::uint32_t>(kind, 9999, bins, {0, -1, calm::copy_mapping::cyclic, 128}, tc, false, true, 1);
  // more items on one entry than a thread's counter holds: a launch that let a thread count past 255 (too few
  // blocks) fails here; the host runs few threads (a block's lanes on one), a GPU many more
  if (kind == keys_kind::one || kind == keys_kind::hot) {
    index_t const many = exec::thread_tables ? 300007 : (index_t(1) << 26) + 3;
    check_privatize<calm::plus, std::uint32_t, std::uint8_t>(kind, many, bins, {0, -1, calm::copy_mapping::cyclic, 32}, tc, false, true);
  }
}

TEST_CASE("privatize_scatter<thread_counters>: a table beyond 256 entries or threads not a power of two throw before launching", "[strategy][privatize]") {
  using namespace calm_test;
  std::vector<std::uint32_t> init(300, 7u);
  buffer<std::uint8_t> dk(std::vector<std::uint8_t>(100, 3));
  buffer<std::uint32_t> table(init);
  auto count = [&](index_t bins, int threads) {
    calm::privatize_scatter<calm::thread_counters>(calm::plus{}, static_cast<std::uint8_t const*>(dk.data()), calm::constant(1u), 100, table.data(), bins,
                                                   {0, -1, calm::copy_mapping::cyclic, threads}, {}, exec{});
  };
  REQUIRE_THROWS_AS(count(257, 0), calm::error);
  REQUIRE_THROWS_AS(count(16, 48), calm::error);
  REQUIRE_THROWS_AS(count(16, 16), calm::error);
  synchronize();
  require_equal(table.download(), init, "table after rejected calls");
}

TEST_CASE("privatize_scatter<lane_counters>: key kinds and types, tables up to 256 entries, block sizes, errors", "[strategy][privatize]") {
  using namespace calm_test;
  keys_kind const kind = GENERATE(from_range(all_key_kinds()));
  index_t const bins = GENERATE(1, 7, 100, 256);
  CAPTURE(name, warp_size());
  calm::lane_counters const lc;
  for (index_t n : {0, 1, 999, 40003}) {
    check_privatize<calm::plus, std::uint32_t, std::uint8_t>(kind, n, bins, {}, lc, false);
    check_privatize<calm::plus, std::int64_t, std::int32_t>(kind, n, bins, {0, -1, calm::copy_mapping::cyclic, 96}, lc, false, true);
  }
  check_privatize<calm::plus, std::uint64_t, std::uint32_t>(kind, 9999, bins, {0, -1, calm::copy_mapping::cyclic, 1024}, lc, false, true, 1);
  // a column of one lane takes many keys of one entry
  if (kind == keys_kind::one || kind == keys_kind::hot)
    check_privatize<calm::plus, std::uint32_t, std::uint8_t>(kind, exec::thread_tables ? 300007 : (index_t(1) << 24) + 3, bins, {}, lc, false, true);
  if (kind != keys_kind::uniform_many || bins != 256) return;
  std::vector<std::uint32_t> init(300, 7u);
  buffer<std::uint8_t> dk(std::vector<std::uint8_t>(100, 3));
  buffer<std::uint32_t> table(init);
  auto count = [&](index_t b, int threads) {
    calm::privatize_scatter<calm::lane_counters>(calm::plus{}, static_cast<std::uint8_t const*>(dk.data()), calm::constant(1u), 100, table.data(), b,
                                                 {0, -1, calm::copy_mapping::cyclic, threads}, {}, exec{});
  };
  REQUIRE_THROWS_AS(count(257, 0), calm::error);
  REQUIRE_THROWS_AS(count(16, 1025), calm::error);
  REQUIRE_THROWS_AS(count(-1, 0), calm::error);
  synchronize();
  require_equal(table.download(), init, "table after rejected calls");
}

TEST_CASE("privatize_scatter: adaptive_merge's probe keeps its area after the table where both fit a block", "[strategy][privatize]") {
  using calm::detail::probe_area_bytes;
  calm::privatize_plan plan;
  plan.bytes = 4001;
  for (bool const counting : {true, false}) {
    CAPTURE(counting);
    std::size_t const area = probe_area_bytes(counting);
    CHECK(calm::detail::probe_offset(plan, 1 << 16, counting) == 4016);  // rounded up to 16 bytes
    CHECK(calm::detail::program_bytes(plan, calm::adaptive_merge{}, counting, 4016) == 4016 + area);
    CHECK(calm::detail::probe_offset(plan, 4016 + area, counting) == 4016);
    CHECK(calm::detail::probe_offset(plan, 4016 + area - 1, counting) == 0);  // over the table
    CHECK(calm::detail::program_bytes(plan, calm::adaptive_merge{}, counting, 0) == std::max<std::size_t>(4001, area));
    CHECK(calm::detail::program_bytes(plan, calm::naive{}, counting, 0) == 4001);  // other strategies: the table
  }
  // a table smaller than the area of values' probe, over it: the area
  plan.bytes = 100;
  CHECK(calm::detail::program_bytes(plan, calm::adaptive_merge{}, false, 0) == probe_area_bytes(false));
  CHECK(probe_area_bytes(false) > probe_area_bytes(true));
}

TEST_CASE("privatize_scatter: bad input throws before launching and leaves the table as it was", "[strategy][privatize]") {
  using namespace calm_test;
  std::vector<std::uint32_t> keys(100, 3);
  std::vector<float> init(16, 2.5f);
  buffer<std::uint32_t> dk(keys);
  buffer<float> vals(std::vector<float>(100, 1.0f)), table(init);
  auto scatter = [&](index_t n, std::uint32_t const* k, float* t, index_t bins, calm::privatize_options o) {
    calm::privatize_scatter(calm::plus{}, k, static_cast<float const*>(vals.data()), n, t, bins, o, calm::naive{}, exec{});
  };
  index_t const too_big = calm::privatize_capacity<float>(exec{}) + 1;
  REQUIRE_THROWS_AS(scatter(100, dk.data(), table.data(), too_big, {}), calm::error);
  REQUIRE_THROWS_AS(scatter(-1, dk.data(), table.data(), 16, {}), calm::error);
  REQUIRE_THROWS_AS(scatter(100, nullptr, table.data(), 16, {}), calm::error);
  REQUIRE_THROWS_AS(scatter(100, dk.data(), nullptr, 16, {}), calm::error);
  REQUIRE_THROWS_AS(scatter(100, dk.data(), table.data(), -4, {}), calm::error);
  REQUIRE_THROWS_AS(scatter(100, dk.data(), table.data(), 16, {2000, -1, calm::copy_mapping::cyclic, 0}), calm::error);
  REQUIRE_THROWS_AS(scatter(100, dk.data(), table.data(), 16, {0, -1, calm::copy_mapping::cyclic, 2048}), calm::error);
  try {
    scatter(100, dk.data(), table.data(), too_big, {});
  } catch (calm::error const& e) {
    CHECK(std::string(e.what()).find("block-local memory") != std::string::npos);
  }
  synchronize();
  require_equal(table.download(), init, "table after rejected calls");
}
