// SPDX-License-Identifier: Apache-2.0
// The bulk front door's checks, shared by conformance/bulk_scatter.hpp and bulk_automatic.hpp: one
// bulk call against the sequential reference, and the launches behind a choice made on the device.
#pragma once

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "scatter_reference.hpp"

namespace calm_test {

inline std::vector<calm::strategy> all_strategies() {
  std::vector<calm::strategy> s;
  for (int i = 0; i < calm::strategy_count; ++i) s.push_back(static_cast<calm::strategy>(i));
  return s;
}
/// Whether forcing s on `bins` entries of T must throw: a block-local strategy on a table larger than a
/// block holds, or cluster_privatize on one larger than a cluster holds (where it runs over clusters).
template <class T, class Op = calm::plus>
bool forced_too_big(calm::strategy s, index_t bins) {
  if (calm::is_block_local(s)) return bins > calm::privatize_capacity<T>(exec{});
  if (s == calm::strategy::cluster_privatize && calm::detail::clusters_for<exec, Op, T>()) return bins > calm::cluster_capacity<T>(exec{});
  return false;
}

/// An operand that changes any entry of Op it reaches (an item read that is not the call's shows).
template <class Op, class T>
T poison() {
  if constexpr (std::is_same<Op, calm::min>::value) return std::numeric_limits<T>::lowest();
  else if constexpr (std::is_same<Op, calm::max>::value) return std::numeric_limits<T>::max();
  else return T(1);
}
/// items in a buffer `offset` elements from its start, with `fill` before and four after them.
template <class T>
buffer<T> padded(std::vector<T> const& items, std::size_t offset, T fill) {
  std::vector<T> all(offset, fill);
  all.insert(all.end(), items.begin(), items.end());
  all.insert(all.end(), 4, fill);
  return buffer<T>(all);
}

/// One bulk call on random keys of `kind`, checked against the reference; a block-local strategy
/// forced on a table too large for a block must throw and leave the table as it was. Integer sums are
/// histograms (weighted false), every other op and type has a value per key (weighted true). The keys
/// start key_offset elements and the values value_offset elements into their buffers, which hold key
/// 0 and poison<Op, T>() around them.
template <class Op, class T, class K = std::uint32_t>
void check_bulk(calm::strategy s, keys_kind kind, index_t n, index_t bins, bool weighted, bool stray, bool ordered = false, int key_offset = 0,
                int value_offset = 0) {
  auto g = rng(9001 + static_cast<int>(kind) * 13 + n + bins * 3 + static_cast<int>(s) * 101);
  auto keys = table_keys<K>(static_cast<std::size_t>(n), kind, bins, g, stray);
  auto vals = random_operands<Op, T>(static_cast<std::size_t>(n), g);
  auto init = random_operands<Op, T>(static_cast<std::size_t>(bins), g);
  buffer<K> dkeys_all = padded<K>(keys, static_cast<std::size_t>(key_offset), K(0));
  buffer<T> dvals_all = padded<T>(vals, static_cast<std::size_t>(value_offset), poison<Op, T>()), table(init);
  K const* const dkeys = dkeys_all.data() + key_offset;
  T const* const dvals = dvals_all.data() + value_offset;
  buffer<std::uint64_t> skipped(1);
  skipped.fill_bytes(0);
  buffer<calm::strategy> chosen(std::vector<calm::strategy>{calm::strategy::automatic});
  std::vector<index_t> order;
  if (ordered) {
    std::vector<std::uint32_t> k32(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) k32[i] = static_cast<std::uint32_t>(keys[i]);
    order = calm::set_scatter(k32.data(), n);
  }
  buffer<index_t> dorder(order);
  calm::scatter_options opt;
  opt.skipped = skipped.data();
  opt.order = ordered ? dorder.data() : nullptr;
  opt.chosen = chosen.data();
  INFO("bulk " << calm::to_string(s) << ": " << to_string(kind) << ", n " << n << ", bins " << bins << ", weighted " << weighted
               << ", stray " << stray << ", ordered " << ordered << ", key offset " << key_offset
               << ", value offset " << value_offset);
  bool const too_big = forced_too_big<T, Op>(s, bins);
  // one value source a type: integer sums as histograms (calm::constant), the rest a value per key
  constexpr bool counts = std::is_same<Op, calm::plus>::value && std::is_integral<T>::value;
  REQUIRE(weighted != counts);
  auto call = [&] {
    return calm::for_strategy(s, [&](auto c) {
      if constexpr (counts) return calm::scatter<c()>(Op{}, dkeys, calm::constant(T(1)), n, table.data(), bins, opt, exec{});
      else return calm::scatter<c()>(Op{}, dkeys, dvals, n, table.data(), bins, opt, exec{});
    });
  };
  if (too_big) {
    REQUIRE_THROWS_AS(call(), calm::error);
    synchronize();
    require_equal(table.download(), init, "table after a rejected block-local strategy");
    return;
  }
  calm::strategy ran = call();
  synchronize();
  if (ran == calm::strategy::automatic) {  // chosen on the device
    CHECK(s == calm::strategy::automatic);
    ran = chosen.download()[0];
    CHECK(ran != calm::strategy::automatic);
  }
  if (s != calm::strategy::automatic && n > 0 && bins > 0) CHECK(ran == s);
  if (!weighted) std::fill(vals.begin(), vals.end(), T(1));
  verify_scatter<Op, T>(init, keys, vals, table.download(), calm::to_string(s));
  std::uint64_t outside = 0;
  for (K k : keys) outside += static_cast<long long>(k) < 0 || static_cast<long long>(k) >= bins;
  CHECK(skipped.download()[0] == (n > 0 && bins > 0 ? outside : 0u));
}

/// Launches of a direct scatter behind a choice, `launch(decided, keys, values, table, bins)` (plus,
/// T values, K keys), each decision in turn: decided one of the strategies they hold (`held`), the table
/// against the sequential reference; decided another (naive, scan_reduce, peer_reduce, hot_key,
/// privatize), the table as it was. `counting`: the launches add 1 for every key, not the values.
template <class T, class K = std::uint32_t, class Launch>
void check_chosen_direct(keys_kind kind, index_t n, int seed, char const* what, Launch const& launch,
                         std::vector<calm::strategy> const& held = {calm::strategy::naive, calm::strategy::peer_reduce}, bool counting = false) {
  auto g = rng(seed + static_cast<int>(kind) * 7 + n);
  index_t const bins = 4099;
  auto keys = table_keys<K>(static_cast<std::size_t>(n), kind, bins, g, true);
  auto vals = random_operands<calm::plus, T>(static_cast<std::size_t>(n), g);
  if (counting) std::fill(vals.begin(), vals.end(), T(1));
  auto init = random_operands<calm::plus, T>(static_cast<std::size_t>(bins), g);
  buffer<K> dk(keys);
  buffer<T> dv(vals);
  for (calm::strategy s : {calm::strategy::naive, calm::strategy::scan_reduce, calm::strategy::peer_reduce, calm::strategy::hot_key,
                           calm::strategy::privatize}) {
    bool const holds = std::find(held.begin(), held.end(), s) != held.end();
    INFO("decided " << calm::to_string(s) << (holds ? ", held" : ", not held"));
    buffer<T> table(init);
    buffer<calm::strategy> decided(std::vector<calm::strategy>{s});
    launch(static_cast<calm::strategy const*>(decided.data()), static_cast<K const*>(dk.data()), static_cast<T const*>(dv.data()), table.data(), bins);
    synchronize();
    if (!holds) require_equal(table.download(), init, (std::string(what) + ", whose strategy was not chosen").c_str());
    else verify_scatter<calm::plus, T>(init, keys, vals, table.download(), what);
  }
}

}  // namespace calm_test
