// SPDX-License-Identifier: Apache-2.0
// Conformance: atomics on block-local memory inside block programs (init, barrier, update, barrier,
// write out), every op and type, block sizes that are not multiples of the warp, contention from all
// threads of a block on one slot to none.
#pragma once

#include "../support/atomic_reference.hpp"

namespace calm_test {

template <class Op, class T>
void check_block_atomics(index_t blocks, int threads, int slots) {
  auto g = rng(97 + threads + slots);
  index_t const n = blocks * threads;
  auto vals = random_operands<Op, T>(n, g);
  auto init = random_operands<Op, T>(blocks * slots, g);
  buffer<T> dvals(vals), dinit(init), table(blocks * slots), fetched(n);
  table.fill_bytes(0xff);
  T const *pv = dvals.data(), *pi = dinit.data();
  T *pt = table.data(), *pf = fetched.data();
  for_each_block(blocks, threads, slots * sizeof(T), CALM_LAMBDA(auto const& blk) {
    T* s = blk.template scratch<T>();
    int const b = static_cast<int>(blk.index());
    blk.for_each_warp([&](auto const& w, auto tid) {
      calm::when(w, tid < slots, [&](auto const& v) { calm::store(v, s, tid, calm::load(v, pi, b * slots + tid)); });
    });
    blk.sync();
    blk.for_each_warp([&](auto const& w, auto tid) {
      auto old = calm::atomic_fetch_update(w, Op{}, calm::scope::block_local{}, s + tid % slots, calm::load(w, pv, b * threads + tid));
      calm::store(w, pf, b * threads + tid, old);
    });
    blk.sync();
    blk.for_each_warp([&](auto const& w, auto tid) {
      calm::when(w, tid < slots, [&](auto const& v) { calm::store(v, pt, b * slots + tid, calm::load(v, s, tid)); });
    });
  });
  synchronize();
  // the whole grid as one reference: block b's thread t updates slot b * slots + t % slots
  std::vector<index_t> slot(n);
  for (index_t i = 0; i < n; ++i) slot[i] = (i / threads) * slots + (i % threads) % slots;
  auto got_fetch = fetched.download();
  verify_atomics<Op, T>(init, vals, slot, table.download(), &got_fetch, "block-local atomics");
}

template <class T>
void check_block_atomics_all_ops(index_t blocks, int threads, int slots) {
  check_block_atomics<calm::plus, T>(blocks, threads, slots);
  check_block_atomics<calm::min, T>(blocks, threads, slots);
  check_block_atomics<calm::max, T>(blocks, threads, slots);
  if constexpr (std::is_integral<T>::value) {
    check_block_atomics<calm::bit_and, T>(blocks, threads, slots);
    check_block_atomics<calm::bit_or, T>(blocks, threads, slots);
    check_block_atomics<calm::bit_xor, T>(blocks, threads, slots);
  }
}

}  // namespace calm_test

TEMPLATE_TEST_CASE("atomics on block-local memory: every op, contention from all threads to none", "[atomic][block]",
                   std::int32_t, std::uint32_t, std::int64_t, std::uint64_t, float, double) {
  using namespace calm_test;
  index_t const blocks = GENERATE(1, 3, 37);
  int const threads = GENERATE(1, 32, 100, 256, 1000);
  std::string const contention = GENERATE("full", "some", "none");
  int const slots = contention == "full" ? 1 : contention == "some" ? std::min(7, threads) : threads;
  CAPTURE(name, warp_size(), blocks, threads, contention);
  check_block_atomics_all_ops<TestType>(blocks, threads, slots);
}
