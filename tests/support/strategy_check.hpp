// SPDX-License-Identifier: Apache-2.0
// Runs one strategy on random keys and checks the table (and fetched values) against a sequential
// reference: the shared body of the strategy conformance tests.
#pragma once

#include "atomic_reference.hpp"
#include "keys.hpp"

namespace calm_test {

inline char const* strategy_name(calm::naive) { return "naive"; }
inline char const* strategy_name(calm::peer_reduce) { return "peer_reduce"; }
inline char const* strategy_name(calm::peer_reduce_if s) { return s.merge ? "peer_reduce_if (merging)" : "peer_reduce_if (not merging)"; }
inline char const* strategy_name(calm::scan_reduce) { return "scan_reduce"; }
template <int M>
char const* strategy_name(calm::vote_reduce<M>) { return M == 1 ? "vote_reduce<1>" : "vote_reduce<M>"; }

struct strategy_case {
  index_t n;
  keys_kind keys;
  bool sparse;    // only a random half of the lanes take part (calm::when)
  bool constant;  // every lane passes the same value (calm::constant)
  bool fetch;     // fetch_update, and check the fetched values
  calm::launch_shape shape;
  bool keyed = false;  // update_keyed with the lanes' keys (not fetch)
};

template <class Op, class T, class S>
void check_strategy(S strategy, strategy_case const& c) {
  auto g = rng(131 + static_cast<int>(c.keys) * 7 + c.sparse + 2 * c.constant + 4 * c.fetch);
  std::uint32_t bins = 0;
  auto keys = make_keys(c.n, c.keys, g, bins);
  auto vals = random_operands<Op, T>(c.n, g);
  T const same = vals.empty() ? T(1) : vals[0];
  if (c.constant) std::fill(vals.begin(), vals.end(), same);
  auto sel = random_flags(c.n, g, c.sparse ? 0.5 : 1.0);
  auto init = random_operands<Op, T>(bins, g);
  buffer<std::uint32_t> dkeys(keys);
  buffer<T> dvals(vals), table(init), fetched(c.n);
  buffer<int> dsel(sel);
  std::uint32_t const* pk = dkeys.data();
  T const* pv = dvals.data();
  T *pt = table.data(), *pf = fetched.data();
  int const* ps = dsel.data();
  bool const constant = c.constant, fetch = c.fetch, keyed = c.keyed && !c.fetch;
  for_each_index(c.n, CALM_LAMBDA(auto const& w, auto i) {
    calm::when(w, calm::load(w, ps, i) != 0, [&](auto const& s) {
      auto const addr = pt + calm::load(s, pk, i);
      calm::scope::device const dev;
      if (fetch && constant) calm::store(s, pf, i, calm::fetch_update(s, Op{}, dev, addr, calm::constant(same), strategy));
      if (fetch && !constant) calm::store(s, pf, i, calm::fetch_update(s, Op{}, dev, addr, calm::load(s, pv, i), strategy));
      if (!fetch && !keyed && constant) calm::update(s, Op{}, dev, addr, calm::constant(same), strategy);
      if (!fetch && !keyed && !constant) calm::update(s, Op{}, dev, addr, calm::load(s, pv, i), strategy);
      if (keyed && constant) calm::update_keyed(s, Op{}, dev, addr, calm::load(s, pk, i), calm::constant(same), strategy);
      if (keyed && !constant) calm::update_keyed(s, Op{}, dev, addr, calm::load(s, pk, i), calm::load(s, pv, i), strategy);
    });
  }, c.shape);
  synchronize();
  // the reference sees the selected lanes only, in index order
  std::vector<T> rvals, rfetched;
  std::vector<index_t> rslot;
  auto got_fetch = fetched.download();
  for (index_t i = 0; i < c.n; ++i)
    if (sel[i]) rvals.push_back(vals[i]), rslot.push_back(keys[i]), rfetched.push_back(got_fetch[i]);
  INFO("strategy " << strategy_name(strategy) << ", keys " << to_string(c.keys) << ", n " << c.n << (c.sparse ? ", sparse" : "")
                   << (c.constant ? ", constant value" : "") << (c.fetch ? ", fetch" : "") << (keyed ? ", keyed" : "") << ", "
                   << calm::to_string(c.shape));
  verify_atomics<Op, T>(init, rvals, rslot, table.download(), c.fetch ? &rfetched : nullptr, "strategy");
}

template <class T, class S>
void check_strategy_all_ops(S strategy, strategy_case const& c) {
  check_strategy<calm::plus, T>(strategy, c);
  check_strategy<calm::min, T>(strategy, c);
  check_strategy<calm::max, T>(strategy, c);
  if constexpr (std::is_integral<T>::value) {
    check_strategy<calm::bit_and, T>(strategy, c);
    check_strategy<calm::bit_or, T>(strategy, c);
    check_strategy<calm::bit_xor, T>(strategy, c);
  }
}

}  // namespace calm_test

/// The call a strategy test makes (0 update, 1 update_keyed, 2 fetch_update): each for every other
/// choice; in a sanitizer build one of them per choice, in turn (each still meets every size, key kind,
/// sparse warp and value kind), as the sanitizers' run of the whole matrix took twice as long as the rest.
#if defined(CALM_TEST_SANITIZED)
#define CALM_STRATEGY_CALL(n, keys, sparse, constant) static_cast<int>(((n) + static_cast<int>(keys) + 2 * (sparse) + (constant)) % 3)
#else
#define CALM_STRATEGY_CALL(n, keys, sparse, constant) GENERATE(0, 1, 2)
#endif

/// One Catch2 test per strategy: every op and type, all key kinds, sparse and ragged warps, plain and
/// constant values, update, update_keyed (the lanes grouped by their keys) and fetch_update.
#define CALM_STRATEGY_TEST(title, tag, strategy_expr)                                                                 \
  TEMPLATE_TEST_CASE(title, "[strategy]" tag, std::int32_t, std::uint32_t, std::int64_t, std::uint64_t, float, double) { \
    using namespace calm_test;                                                                                         \
    index_t const n = GENERATE(0, 37, 5003);                                                                           \
    keys_kind const keys = GENERATE(from_range(all_key_kinds()));                                                      \
    bool const sparse = GENERATE(false, true);                                                                         \
    bool const constant = GENERATE(false, true);                                                                       \
    int const call = CALM_STRATEGY_CALL(n, keys, sparse, constant); /* update, update_keyed, fetch_update */          \
    calm::launch_shape const shape = GENERATE(from_range(shapes()));                                                   \
    CAPTURE(name, warp_size());                                                                                        \
    check_strategy_all_ops<TestType>(strategy_expr, strategy_case{n, keys, sparse, constant, call == 2, shape, call == 1}); \
  }
