// SPDX-License-Identifier: Apache-2.0
// Conformance: the launch helpers. Block programs run every block and thread once with phases in order;
// bad launch arguments throw calm::error before anything runs and leave memory as it was.
#pragma once

TEST_CASE("launch: block programs cover every block and thread, phases in order", "[launch][block]") {
  using namespace calm_test;
  index_t const blocks = GENERATE(0, 1, 5, 300);
  int const threads = GENERATE(1, 31, 33, 64, 257, 1024);
  CAPTURE(name, warp_size(), blocks, threads);
  buffer<int> hits(blocks * threads), order(blocks * threads);
  hits.fill_bytes(0);
  int *ph = hits.data(), *po = order.data();
  for_each_block(blocks, threads, threads * sizeof(int), CALM_LAMBDA(auto const& blk) {
    int* s = blk.template scratch<int>();
    index_t const base = blk.index() * blk.threads();
    blk.for_each_warp([&](auto const& w, auto tid) { calm::store(w, s, tid, tid); });
    blk.sync();
    // reversed read: a phase sees every write of the phase before
    blk.for_each_warp([&](auto const& w, auto tid) {
      calm::atomic_update(w, calm::plus{}, calm::scope::device{}, ph + base + tid, 1);
      calm::store(w, po, base + tid, calm::load(w, s, blk.threads() - 1 - tid) + 1000 * static_cast<int>(blk.count() == blocks));
    });
  });
  synchronize();
  std::vector<int> e_order(blocks * threads);
  for (index_t i = 0; i < blocks * threads; ++i) e_order[i] = threads - 1 - static_cast<int>(i % threads) + 1000;
  require_equal(hits.download(), std::vector<int>(blocks * threads, 1), "each block thread runs once");
  require_equal(order.download(), e_order, "block-local writes visible after sync");
}

TEST_CASE("launch: group_index is uniform over each warp and distinct between warps, any block size", "[launch][block]") {
  using namespace calm_test;
  int const threads = GENERATE(1, 31, 100, 257, 1024);
  index_t const blocks = 7;
  CAPTURE(name, warp_size(), threads);
  int const warps_per_block = (threads + warp_size() - 1) / warp_size();
  buffer<long long> gid(blocks * threads), same(blocks * threads);
  long long *pg = gid.data(), *ps = same.data();
  for_each_block(blocks, threads, 0, CALM_LAMBDA(auto const& blk) {
    index_t const base = blk.index() * blk.threads();
    blk.for_each_warp([&](auto const& w, auto tid) {
      long long const g = static_cast<long long>(calm::group_index(w));
      calm::store(w, pg, base + tid, g);
      // every active lane agrees with the leader's value
      auto const agree = calm::ballot(w, calm::shuffle(w, calm::varying<std::decay_t<decltype(w)>, long long>(g), calm::leader_lane(w)) == g);
      calm::store(w, ps, base + tid, static_cast<long long>(agree == calm::active_mask(w)));
    });
  });
  synchronize();
  auto const g = gid.download();
  require_equal(same.download(), std::vector<long long>(blocks * threads, 1), "group_index uniform over the warp");
  std::set<long long> distinct;
  for (index_t b = 0; b < blocks; ++b)
    for (int w = 0; w < warps_per_block; ++w) distinct.insert(g[b * threads + w * warp_size()]);
  REQUIRE(distinct.size() == static_cast<std::size_t>(blocks * warps_per_block));
}

TEST_CASE("launch: for_each_tile gives each tile to one block, resident launches cover every tile", "[launch][block]") {
  using namespace calm_test;
  index_t const tiles = GENERATE(0, 1, 7, 1000, 100003);
  int const threads = GENERATE(32, 100);
  CAPTURE(name, warp_size(), tiles, threads);
  buffer<int> hits(tiles);
  hits.fill_bytes(0);
  int* ph = hits.data();
  exec{}.for_each_resident_block(std::max<index_t>(tiles, 1), threads, 0, CALM_LAMBDA(auto const& blk) {
    blk.for_each_tile(tiles, [&](index_t t) {
      blk.for_each_warp([&](auto const& w, auto tid) {
        calm::when(w, tid == 0, [&](auto const& l) { calm::atomic_update(l, calm::plus{}, calm::scope::device{}, ph + t, 1); });
      });
    });
  });
  synchronize();
  require_equal(hits.download(), std::vector<int>(tiles, 1), "each tile once");
}

TEST_CASE("launch: launches that overlap the one before them still start after it and see its writes", "[launch][block]") {
  using namespace calm_test;
  // calm::detail::overlapping: CUDA's programmatic dependent launch where the device has it (each block
  // waits for the launch before); the other execs launch as usual. Each launch reads what the one
  // before it wrote, without atomics: a launch that began early would lose increments.
  index_t const n = GENERATE(0, 1, 1000, 100003);
  int const threads = GENERATE(64, 256);
  int const launches = 8;
  CAPTURE(name, warp_size(), n, threads);
  buffer<int> a(n);
  a.fill_bytes(0);
  int* pa = a.data();
  auto const ex = calm::detail::overlapping(exec{});
  auto const flag_set = [](auto const& e) {  // CUDA and HIP: overlapping sets the exec's flag (the host's exec has none)
    if constexpr (calm::detail::has_overlap_launches<std::decay_t<decltype(e)>>::value) return bool(e.overlap_launches);
    else return true;
  };
  REQUIRE(flag_set(ex));
  for (int j = 0; j < launches; ++j) {
    int const scale = j % 2 == 0 ? 1 : 3;  // odd launches triple, even ones add one: the order shows in the result
    ex.for_each_resident_block(std::max<index_t>(1, (n + threads - 1) / threads), threads, 0, CALM_LAMBDA(auto const& blk) {
      blk.for_each_tile((n + blk.threads() - 1) / blk.threads(), [&](index_t t) {
        blk.for_each_warp([&](auto const& w, auto tid) {
          auto const i = calm::map([t, bt = blk.threads()](int x) { return t * bt + x; }, tid);
          calm::when(w, i < n, [&](auto const& u) {
            auto const v = calm::load(u, pa, i);
            calm::store(u, pa, i, scale == 1 ? v + 1 : v * 3);
          });
        });
      });
    });
  }
  synchronize();
  int expect = 0;
  for (int j = 0; j < launches; ++j) expect = j % 2 == 0 ? expect + 1 : expect * 3;
  require_equal(a.download(), std::vector<int>(n, expect), "every launch after the one before it");
}

namespace calm_test {
/// A block program that waits itself for the launch before it (calm::awaits_prior_launch_of): it reads
/// `add`, which no launch writes, then waits, then doubles `a` (which the launch before it wrote) and adds.
struct self_waiting_step {
  static constexpr bool awaits_prior_launch = true;
  int const* add;
  int* a;
  index_t n;
  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    blk.for_each_tile((n + blk.threads() - 1) / blk.threads(), [&](index_t t) {
      blk.for_each_warp([&](auto const& w, auto tid) {
        auto const i = calm::map([t, bt = blk.threads()](int x) { return t * bt + x; }, tid);
        calm::when(w, i < n, [&](auto const& u) {
          auto const d = calm::load(u, add, i);
          blk.await_prior_launch();
          calm::store(u, a, i, calm::load(u, a, i) * 2 + d);
        });
      });
    });
    blk.await_prior_launch();  // every thread, also one without items
  }
};

/// A direct scatter whose stream passes a gate (calm::detail::gate_with) that marks its block and answers `open`.
template <class Program>
struct gated_scatter {
  Program program;
  int* passed;
  index_t* count;
  bool open;
  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    program(blk, calm::detail::gate_with([&] {
      passed[blk.index()] = 1;
      *count = blk.count();
      return open;
    }));
  }
};
}  // namespace calm_test

TEST_CASE("launch: a program that waits itself reads first what no launch writes, then sees the launch before it", "[launch][block]") {
  using namespace calm_test;
  index_t const n = GENERATE(0, 1, 1000, 100003);
  int const threads = GENERATE(64, 256);
  CAPTURE(name, warp_size(), n, threads);
  auto g = rng(0x5e1f);
  std::vector<int> add_h(n);
  for (auto& x : add_h) x = static_cast<int>(g() % 7);
  buffer<int> a(n), add(add_h);
  a.fill_bytes(0);
  int* pa = a.data();
  auto const ex = calm::detail::overlapping(exec{});
  index_t const blocks = std::max<index_t>(1, (n + threads - 1) / threads);
  for (int j = 0; j < 6; ++j) {
    if (j % 2 == 0) {
      ex.for_each_resident_block(blocks, threads, 0, CALM_LAMBDA(auto const& blk) {  // waits at its start
        blk.for_each_tile((n + blk.threads() - 1) / blk.threads(), [&](index_t t) {
          blk.for_each_warp([&](auto const& w, auto tid) {
            auto const i = calm::map([t, bt = blk.threads()](int x) { return t * bt + x; }, tid);
            calm::when(w, i < n, [&](auto const& u) { calm::store(u, pa, i, calm::load(u, pa, i) + 1); });
          });
        });
      });
    } else {
      ex.for_each_resident_block(blocks, threads, 0, self_waiting_step{add.data(), pa, n});
    }
  }
  synchronize();
  std::vector<int> expect(n, 0);
  for (int j = 0; j < 6; ++j)
    for (index_t i = 0; i < n; ++i) expect[i] = j % 2 == 0 ? expect[i] + 1 : expect[i] * 2 + add_h[i];
  require_equal(a.download(), expect, "each launch after the one before it");
}

TEST_CASE("launch: a stream's gate is passed by every block after its first loads; closed, nothing is written", "[launch][block]") {
  using namespace calm_test;
  index_t const n = GENERATE(0, 1, 7, 4099, 100003);
  bool const open = GENERATE(true, false);
  index_t const bins = 1000;
  CAPTURE(name, warp_size(), n, open);
  auto g = rng(0x6a7e);
  std::vector<std::uint32_t> keys_h(n);
  for (auto& k : keys_h) k = static_cast<std::uint32_t>(g() % bins);
  buffer<std::uint32_t> keys(keys_h), table(bins);
  table.fill_bytes(0);
  index_t const max_blocks = 40;
  buffer<int> passed(max_blocks);
  passed.fill_bytes(0);
  buffer<index_t> count(1);
  count.fill_bytes(0);
  using program_t = calm::detail::direct_scatter_program<4, calm::naive, calm::plus, std::uint32_t, calm::same_value<std::uint32_t>, std::uint32_t,
                                                         calm::detail::identity_key>;
  program_t const program{calm::plus{}, keys.data(), calm::same_value<std::uint32_t>{1}, n, table.data(), bins, {}, {}};
  exec{}.for_each_resident_block(max_blocks, 128, 0, gated_scatter<program_t>{program, passed.data(), count.data(), open});
  synchronize();
  index_t const blocks = count.download()[0];
  REQUIRE(blocks >= 1);
  REQUIRE(blocks <= max_blocks);
  std::vector<int> want_passed(max_blocks, 0);
  std::fill(want_passed.begin(), want_passed.begin() + blocks, 1);
  require_equal(passed.download(), want_passed, "every block passes the gate");
  std::vector<std::uint32_t> want(bins, 0);
  if (open)
    for (auto k : keys_h) ++want[k];
  require_equal(table.download(), want, open ? "an open gate: the whole scatter" : "a closed gate: nothing written");
}

TEST_CASE("launch: bad arguments throw before launching and leave memory as it was", "[launch][errors]") {
  using namespace calm_test;
  CAPTURE(name);
  std::vector<int> before{1, 2, 3, 4};
  buffer<int> out(before);
  int* po = out.data();
  auto body = CALM_LAMBDA(auto const& w, auto i) { calm::store(w, po, i, 0); };
  auto expect_error = [&](auto&& call, calm::errc code) {
    try {
      call();
      FAIL("no error was reported");
    } catch (calm::error const& e) {
      INFO(e.what());
      REQUIRE(e.code() == code);
      REQUIRE(std::string(e.what()).rfind("calm: ", 0) == 0);
    }
  };
  for (auto shape : shapes()) expect_error([&] { for_each_index(-1, body, shape); }, calm::errc::invalid_argument);
  auto block_body = CALM_LAMBDA(auto const& blk) {
    blk.for_each_warp([&](auto const& w, auto tid) { calm::store(w, po, tid, 0); });
  };
  expect_error([&] { for_each_block(-1, 32, 0, block_body); }, calm::errc::invalid_argument);
  expect_error([&] { for_each_block(1, 0, 0, block_body); }, calm::errc::invalid_argument);
  expect_error([&] { for_each_block(1, 1025, 0, block_body); }, calm::errc::invalid_argument);
  expect_error([&] { for_each_block(1, 32, std::size_t(1) << 40, block_body); }, calm::errc::out_of_range);
  expect_error([&] { out.upload(std::vector<int>(3)); }, calm::errc::invalid_argument);
  synchronize();
  require_equal(out.download(), before, "memory after rejected launches");
}
