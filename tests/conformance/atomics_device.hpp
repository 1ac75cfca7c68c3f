// SPDX-License-Identifier: Apache-2.0
// Conformance: atomic_update and atomic_fetch_update on device memory for every op and type, under
// full contention (all lanes one address), some (7 addresses) and none (one address per lane); and
// atomic_load of a counter every lane is incrementing.
#pragma once

#include "../support/atomic_reference.hpp"

namespace calm_test {

template <class Op, class T>
void check_device_atomics(index_t n, std::size_t slots, bool fetch, calm::launch_shape shape) {
  auto g = rng(71 + slots + 1000 * fetch);
  auto vals = random_operands<Op, T>(n, g);
  auto init = random_operands<Op, T>(slots, g);
  std::vector<index_t> slot(n);
  for (index_t i = 0; i < n; ++i) slot[i] = static_cast<index_t>(static_cast<std::size_t>(i) % slots);
  buffer<T> dvals(vals), table(init), fetched(n);
  buffer<index_t> dslot(slot);
  T* pt = table.data();
  T* pf = fetched.data();
  T const* pv = dvals.data();
  index_t const* ps = dslot.data();
  for_each_index(n, CALM_LAMBDA(auto const& w, auto i) {
    auto addr = pt + calm::load(w, ps, i);
    auto v = calm::load(w, pv, i);
    if (fetch)
      calm::store(w, pf, i, calm::atomic_fetch_update(w, Op{}, calm::scope::device{}, addr, v));
    else
      calm::atomic_update(w, Op{}, calm::scope::device{}, addr, v);
  }, shape);
  synchronize();
  auto const got_fetch = fetch ? fetched.download() : std::vector<T>{};  // unwritten when not fetching
  verify_atomics<Op, T>(init, vals, slot, table.download(), fetch ? &got_fetch : nullptr, "device atomics");
}

template <class T>
void check_device_atomics_all_ops(index_t n, std::size_t slots, bool fetch, calm::launch_shape shape) {
  check_device_atomics<calm::plus, T>(n, slots, fetch, shape);
  check_device_atomics<calm::min, T>(n, slots, fetch, shape);
  check_device_atomics<calm::max, T>(n, slots, fetch, shape);
  if constexpr (std::is_integral<T>::value) {
    check_device_atomics<calm::bit_and, T>(n, slots, fetch, shape);
    check_device_atomics<calm::bit_or, T>(n, slots, fetch, shape);
    check_device_atomics<calm::bit_xor, T>(n, slots, fetch, shape);
  }
}

/// Every lane adds 1 to one counter (fetching the old value), then reads the counter with atomic_load:
/// the read sees at least the lane's own increment and at most all n; the fetched values are 0..n-1.
template <class T>
void check_atomic_load(index_t n, calm::launch_shape shape) {
  std::vector<T> const zeros(static_cast<std::size_t>(std::max<index_t>(n, 1)), T(0));  // read back whole even where n = 0
  buffer<T> counter(std::vector<T>{T(0)}), before(zeros), seen(zeros);
  T* pc = counter.data();
  T* pb = before.data();
  T* ps = seen.data();
  for_each_index(n, CALM_LAMBDA(auto const& w, auto i) {
    calm::store(w, pb, i, calm::atomic_fetch_update(w, calm::plus{}, calm::scope::device{}, pc, T(1)));
    calm::store(w, ps, i, calm::atomic_load(w, calm::scope::device{}, static_cast<T const*>(pc)));
  }, shape);
  synchronize();
  auto b = before.download();
  auto v = seen.download();
  REQUIRE(counter.download()[0] == static_cast<T>(n));
  std::size_t bad = 0;
  for (index_t i = 0; i < n; ++i)
    if (!(b[static_cast<std::size_t>(i)] < v[static_cast<std::size_t>(i)] && v[static_cast<std::size_t>(i)] <= static_cast<T>(n))) ++bad;
  REQUIRE(bad == 0);
  b.resize(static_cast<std::size_t>(n));
  std::sort(b.begin(), b.end());
  std::size_t misplaced = 0;
  for (index_t i = 0; i < n; ++i) misplaced += b[static_cast<std::size_t>(i)] != static_cast<T>(i);
  REQUIRE(misplaced == 0);
}

}  // namespace calm_test

TEMPLATE_TEST_CASE("atomics on device memory: every op, contention from all lanes to none", "[atomic][device]",
                   std::int32_t, std::uint32_t, std::int64_t, std::uint64_t, float, double) {
  using namespace calm_test;
  index_t const n = GENERATE(0, 1, 33, 1000, 100003);
  std::string const contention = GENERATE("full", "some", "none");
  bool const fetch = GENERATE(false, true);
  calm::launch_shape const shape = GENERATE(from_range(shapes()));
  std::size_t const slots = contention == "full" ? 1 : contention == "some" ? 7 : std::max<index_t>(n, 1);
  CAPTURE(name, warp_size(), n, contention, fetch, calm::to_string(shape));
  check_device_atomics_all_ops<TestType>(n, slots, fetch, shape);
}

TEMPLATE_TEST_CASE("atomic_load sees a counter that every lane increments", "[atomic][device]", std::int32_t, std::uint64_t, double) {
  using namespace calm_test;
  index_t const n = GENERATE(0, 1, 33, 1000, 100003);
  calm::launch_shape const shape = GENERATE(from_range(shapes()));
  CAPTURE(name, warp_size(), n, calm::to_string(shape));
  check_atomic_load<TestType>(n, shape);
}
