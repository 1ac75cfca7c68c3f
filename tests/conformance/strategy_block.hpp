// SPDX-License-Identifier: Apache-2.0
// Conformance: block-scope scan_reduce and vote_reduce (Alg. 1 and 2 with barriers; VR1 and VRm) against the
// sequential reference: every op on int32 and float, key kinds, block sizes that are not multiples of
// the warp, and threads with no address (a ragged last block).
#pragma once

#include "../support/atomic_reference.hpp"
#include "../support/keys.hpp"

namespace calm_test {

enum class block_algo { scan, scan_forced, vote, vote_forced, vote_m };

template <class Op, class T>
void check_block_reduce(block_algo algo, keys_kind kind, index_t n, int threads) {
  auto g = rng(509 + static_cast<int>(kind) * 5 + threads);
  std::uint32_t bins = 0;
  auto keys = make_keys(n, kind, g, bins);
  auto vals = random_operands<Op, T>(n, g);
  auto init = random_operands<Op, T>(bins, g);
  buffer<std::uint32_t> dkeys(keys);
  buffer<T> dvals(vals), table(init);
  std::uint32_t const* pk = dkeys.data();
  T const* pv = dvals.data();
  T* pt = table.data();
  index_t const blocks = (n + threads - 1) / threads;
  for_each_block(blocks, threads, calm::block_stage<T>::bytes(threads), CALM_LAMBDA(auto const& blk) {
    auto const st = calm::block_stage<T>::carve(blk.template scratch<unsigned char>(), blk.threads());
    index_t const base = blk.index() * blk.threads();
    blk.for_each_warp([&](auto const& w, auto t) {
      auto const i = calm::map([base](int tt) { return base + tt; }, t);
      auto const in = i < n;
      auto const safe = calm::select(in, i, base);
      calm::store(w, st.addr, t, calm::select(in, pt + calm::load(w, pk, safe), static_cast<T*>(nullptr)));
      calm::store(w, st.value, t, calm::load(w, pv, safe));
    });
    blk.sync();
    calm::scope::device const dev;
    if (algo == block_algo::scan) calm::scan_reduce_block(blk, Op{}, dev, st);
    if (algo == block_algo::scan_forced) calm::scan_reduce_block(blk, Op{}, dev, st, 1);
    if (algo == block_algo::vote) calm::vote_reduce_block(blk, Op{}, dev, st, 99u);
    if (algo == block_algo::vote_forced) calm::vote_reduce_block(blk, Op{}, dev, st, 99u, 2);
    if (algo == block_algo::vote_m) calm::vote_reduce_block<4>(blk, Op{}, dev, st, 7u, 2);
  });
  synchronize();
  std::vector<index_t> slot(keys.begin(), keys.end());
  INFO("block algorithm " << static_cast<int>(algo) << ", keys " << to_string(kind) << ", n " << n << ", threads " << threads);
  verify_atomics<Op, T>(init, vals, slot, table.download(), nullptr, "block reduce");
}

}  // namespace calm_test

TEST_CASE("block scope: scan_reduce_block and vote_reduce_block", "[strategy][block_scope]") {
  using namespace calm_test;
  index_t const n = GENERATE(0, 1, 300, 5003);
  int const threads = GENERATE(32, 100, 256);
  keys_kind const kind = GENERATE(from_range(all_key_kinds()));
  block_algo const algo = GENERATE(block_algo::scan, block_algo::scan_forced, block_algo::vote, block_algo::vote_forced, block_algo::vote_m);
  CAPTURE(name, warp_size());
  check_block_reduce<calm::plus, std::int32_t>(algo, kind, n, threads);
  check_block_reduce<calm::max, std::int32_t>(algo, kind, n, threads);
  check_block_reduce<calm::bit_xor, std::int32_t>(algo, kind, n, threads);
  check_block_reduce<calm::plus, float>(algo, kind, n, threads);
  check_block_reduce<calm::min, double>(algo, kind, n, threads);
}
