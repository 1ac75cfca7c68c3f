// SPDX-License-Identifier: Apache-2.0
// Conformance: cluster_privatize_scatter (a table spread over a cluster's distributed shared memory on
// sm_90; hot_key_scatter where the backend has no clusters) against the sequential reference: ops,
// key kinds, tables up to what a cluster holds, forced cluster sizes, and the errors it gives.
#pragma once

#include "../support/scatter_reference.hpp"

namespace calm_test {

template <class Op, class T, class K = std::uint32_t, class Strategy = calm::naive>
void check_cluster(keys_kind kind, index_t n, index_t bins, calm::cluster_options opt = {}, Strategy strategy = {}, bool weighted = true,
                   bool stray = false) {
  auto g = rng(6007 + static_cast<int>(kind) * 19 + n + bins * 7 + opt.cluster_size);
  auto keys = table_keys<K>(n, kind, bins, g, stray);
  auto vals = random_operands<Op, T>(n, g);
  auto init = random_operands<Op, T>(bins, g);
  buffer<K> dkeys(keys);
  buffer<T> dvals(vals), table(init);
  INFO("cluster: " << to_string(kind) << ", n " << n << ", bins " << bins << ", cluster size " << opt.cluster_size << ", threads "
                   << opt.threads << ", weighted " << weighted << ", stray " << stray);
  if (weighted) {
    calm::cluster_privatize_scatter(Op{}, dkeys.data(), static_cast<T const*>(dvals.data()), n, table.data(), bins, opt, strategy, exec{});
  } else {
    T const one = vals.empty() ? T(1) : vals[0];
    calm::cluster_privatize_scatter(Op{}, dkeys.data(), calm::constant(one), n, table.data(), bins, opt, strategy, exec{});
    std::fill(vals.begin(), vals.end(), one);
  }
  synchronize();
  verify_scatter<Op, T>(init, keys, vals, table.download(), "cluster_privatize_scatter");
}

}  // namespace calm_test

TEST_CASE("cluster_privatize_scatter: ops, key kinds, table sizes up to a cluster's memory", "[strategy][cluster]") {
  using namespace calm_test;
  keys_kind const kind = GENERATE(from_range(all_key_kinds()));
  index_t const n = GENERATE(0, 1, 3001, 70001);
  // one block holds ~58K floats on an H100: 1 and 8 blocks' worth, and every size between
  index_t const bins = GENERATE(1, 5000, 70000, 200000, 400000);
  CAPTURE(name, warp_size(), exec::has_clusters);
  check_cluster<calm::plus, std::uint32_t>(kind, n, bins, {}, calm::naive{}, false);
  check_cluster<calm::plus, float>(kind, n, bins, {}, calm::peer_reduce{});
  check_cluster<calm::max, std::int32_t, std::int32_t>(kind, n, bins, {}, calm::naive{}, true, true);
  // the bulk path's merging: peer_reduce in the steps with neighbouring lanes on one key
  check_cluster<calm::plus, std::uint32_t>(kind, n, bins, {}, calm::merge_runs{}, false);
  check_cluster<calm::plus, float>(kind, n, bins, {}, calm::merge_runs{});
  check_cluster<calm::max, std::int32_t, std::int32_t>(kind, n, bins, {}, calm::merge_runs{}, true, true);
}

TEST_CASE("cluster_privatize_scatter: forced cluster sizes, block sizes, capacity and errors", "[strategy][cluster]") {
  using namespace calm_test;
  int const cluster = GENERATE(1, 2, 4, 8);
  int const threads = GENERATE(100, 1024);
  CAPTURE(name, warp_size(), exec::has_clusters, cluster, threads);
  check_cluster<calm::plus, double>(keys_kind::hot, 20011, 9001, {cluster, threads});
  check_cluster<calm::bit_xor, std::uint64_t, std::uint16_t>(keys_kind::runs, 20011, 9001, {cluster, threads});
  // 8-byte min and max over the blocks of a cluster, signed values of both signs
  check_cluster<calm::max, std::int64_t, std::int64_t>(keys_kind::uniform_many, 20011, 9001, {cluster, threads}, calm::naive{}, true, true);
  check_cluster<calm::min, std::uint64_t>(keys_kind::hot, 20011, 9001, {cluster, threads});
  if constexpr (exec::has_clusters) {
    index_t const cap = calm::cluster_capacity<float>(exec{});
    REQUIRE(cap > 0);
    check_cluster<calm::plus, float>(keys_kind::uniform_many, 100000, cap, {0, 1024});
    std::vector<float> init(4, 1.0f);
    buffer<float> table(init);
    buffer<std::uint32_t> k(std::vector<std::uint32_t>(10, 1));
    REQUIRE_THROWS_AS(calm::cluster_privatize_scatter(calm::plus{}, k.data(), calm::constant(1.0f), 10, table.data(), cap + 1, {},
                                                      calm::naive{}, exec{}),
                      calm::error);
    REQUIRE_THROWS_AS(calm::cluster_privatize_scatter(calm::plus{}, k.data(), calm::constant(1.0f), 10, table.data(), 4, {16, 256},
                                                      calm::naive{}, exec{}),
                      calm::error);
    REQUIRE_THROWS_AS(calm::cluster_privatize_scatter(calm::plus{}, k.data(), calm::constant(1.0f), -1, table.data(), 4, {},
                                                      calm::naive{}, exec{}),
                      calm::error);
    synchronize();
    require_equal(table.download(), init, "table after rejected calls");
  } else {
    REQUIRE(calm::cluster_capacity<float>(exec{}) == 0);  // reported absent: the call falls back to hot_key_scatter
  }
}
