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
