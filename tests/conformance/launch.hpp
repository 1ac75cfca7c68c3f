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
